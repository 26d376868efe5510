"""Corrupted model files: every case ends in a clear error naming the field, never in a
crash, a hang or garbage. The cases run in one subprocess (a crash shows as its return
code, with the case that caused it), with and without numba's JIT (without it, an
out-of-bounds access would raise IndexError instead of corrupting memory)."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from treekit_core import TreeClassifier

TREE_FIELDS = {
    # field: (element to mutate, value out of range)
    "child_start": ((1,), 10**9),
    "child_ids": ((0,), 10**9),
    "child_shares": ((0,), -0.5),
    "question": ((0,), 10**9),
    "feature": ((0,), 10**9),
    "threshold": ((0,), "inf"),
    "class_sums": ((0, 0), -1.0),
    "weight": ((0,), -1.0),
    "n_samples": ((0,), -1),
    "impurity": ((0,), "inf"),
    "depth": ((0,), 10**9),
    "value": ((0, 0), -1.0),
    "decision": ((0,), 10**9),
}


def fitted_payload():
    rng = np.random.default_rng(0)
    n = 300
    colour = rng.integers(0, 4, n).astype(float)
    size = rng.normal(size=n)
    y = ((colour % 2 == 0) ^ (size > 0)).astype(int)
    X = np.column_stack([colour, size, rng.normal(size=n)])
    X[rng.random(X.shape) < 0.05] = np.nan
    model = TreeClassifier(criterion="entropy", max_depth=4, categorical_features=[0]).fit(X, y)
    return json.loads(model.to_json()), X


def _set(container, index, value):
    for i in index[:-1]:
        container = container[i]
    container[index[-1]] = value


def cases(payload):
    """(name, field the message must name, corrupted payload)."""
    out = []

    def add(name, expected, mutate):
        copy = json.loads(json.dumps(payload))
        mutate(copy)
        out.append((name, expected, copy))

    for key, (index, bad) in TREE_FIELDS.items():
        add(f"{key} truncated", key, lambda p, k=key: p["tree"][k].pop())
        add(f"{key} extended", key, lambda p, k=key: p["tree"][k].append(p["tree"][k][-1]))
        add(f"{key} NaN", key, lambda p, k=key, i=index: _set(p["tree"][k], i, "nan"))
        add(f"{key} wrong type", key, lambda p, k=key, i=index: _set(p["tree"][k], i, "x"))
        add(f"{key} out of range", key, lambda p, k=key, i=index, b=bad: _set(p["tree"][k], i, b))
        add(f"{key} missing", key, lambda p, k=key: p["tree"].pop(k))
    for key in payload["tree"]["node_fields"]:
        add(f"node field {key} truncated", key, lambda p, k=key: p["tree"]["node_fields"][k].pop())
        add(
            f"node field {key} extended",
            key,
            lambda p, k=key: p["tree"]["node_fields"][k].append(0.0),
        )
    add("feature as a float index", "feature", lambda p: _set(p["tree"]["feature"], (0,), 1.5))
    add(
        "two parents share a child",
        "child_ids",
        lambda p: _set(p["tree"]["child_ids"], (1,), p["tree"]["child_ids"][0]),
    )
    add(
        "unknown question kind",
        "question",
        lambda p: _set(p["tree"]["questions"], (0,), "os.system"),
    )
    add("question kinds not names", "questions", lambda p: _set(p["tree"], ("questions",), [1]))
    add("n_features zero", "n_features", lambda p: _set(p["tree"], ("n_features",), 0))
    add("n_features text", "n_features", lambda p: _set(p["tree"], ("n_features",), "3"))
    add("classes repeated", "classes", lambda p: _set(p, ("classes",), [0, 0]))
    add(
        "classes truncated by dtype",
        "classes_dtype",
        lambda p: (_set(p, ("classes",), ["aa", "bb"]), _set(p, ("classes_dtype",), "<U1")),
    )
    add("class count mismatch", "class", lambda p: _set(p, ("classes",), [0, 1, 2]))
    add("reject threshold NaN", "reject_threshold", lambda p: _set(p, ("reject_threshold",), "nan"))
    add("categories bad", "categories", lambda p: _set(p, ("categories",), [[99, ["a"]]]))
    add("feature names short", "feature_names", lambda p: _set(p, ("feature_names",), ["a"]))
    add("tree missing", "tree", lambda p: p.pop("tree"))
    add("tree not an object", "tree", lambda p: _set(p, ("tree",), [1, 2]))
    add("unknown criterion", "criterion", lambda p: _set(p["params"], ("criterion",), "os.system"))
    return out


RUNNER = textwrap.dedent("""
    import json, sys
    import numpy as np
    from treekit_core import TreeClassifier
    cases = json.load(open(sys.argv[1]))
    X = np.array(json.load(open(sys.argv[2])), dtype=float)
    for name, expected, payload in cases:
        print("CASE", name, flush=True)
        try:
            model = TreeClassifier.from_json(json.dumps(payload))
            model.predict_proba(X)
            print("LOADED", name, flush=True)
        except Exception as exc:
            print("REFUSED", json.dumps([name, expected, type(exc).__name__, str(exc)]), flush=True)
    print("DONE", flush=True)
""")


@pytest.mark.parametrize("jit", ["on", "off"])
def test_every_corrupted_model_file_is_refused_naming_the_field(tmp_path, jit):
    payload, X = fitted_payload()
    TreeClassifier.from_json(json.dumps(payload))  # the uncorrupted file loads
    all_cases = cases(payload)
    (tmp_path / "cases.json").write_text(json.dumps(all_cases))
    (tmp_path / "X.json").write_text(json.dumps(np.where(np.isnan(X), None, X).tolist()))
    env = {**os.environ, "TREEKIT_LOAD_PLUGINS": ""}
    if jit == "off":
        env["NUMBA_DISABLE_JIT"] = "1"
    else:
        env.pop("NUMBA_DISABLE_JIT", None)
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(tmp_path / "cases.json"), str(tmp_path / "X.json")],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    lines = done.stdout.splitlines()
    last_case = next((line for line in reversed(lines) if line.startswith("CASE")), None)
    assert done.returncode == 0 and lines[-1] == "DONE", (
        f"the process died (return code {done.returncode}) at {last_case}:\n{done.stderr[-2000:]}"
    )
    loaded = [line for line in lines if line.startswith("LOADED")]
    assert not loaded, "corrupted files were accepted:\n" + "\n".join(loaded)
    refused = [json.loads(line[len("REFUSED ") :]) for line in lines if line.startswith("REFUSED")]
    assert len(refused) == len(all_cases)
    vague = [
        f"{name}: {kind}: {message}"
        for name, expected, kind, message in refused
        if expected not in message or kind in ("IndexError", "KeyError", "RecursionError")
    ]
    assert not vague, "errors that do not name the field:\n" + "\n".join(vague)


def test_deep_nesting_and_broken_json_are_refused_before_parsing():
    with pytest.raises(ValueError, match="nests 100001 levels deep"):
        TreeClassifier.from_json("{" + '"a":' * 0 + "[" * 100000 + "]" * 100000 + "}")
    with pytest.raises(ValueError, match="not valid JSON"):
        TreeClassifier.from_json('{"format": ')

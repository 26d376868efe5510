"""Corrupted model files: every case ends in a clear error naming the field, never in a
crash, a hang or garbage. The cases run in one subprocess (a crash shows as its return
code, with the case that caused it), with and without numba's JIT (without it, an
out-of-bounds access would raise IndexError instead of corrupting memory)."""

import json

import numpy as np
import pytest

from treekit_core import TreeClassifier
from treekit_core.engine.tree import binary_links
from treekit_core.estimators import model_file
from treekit_core.registry import get_registry
from treekit_core.testing import check_corrupted_model_files

TREE_FIELDS = {
    # field: (element to mutate, value out of range)
    "child_start": ((1,), 10**9),
    "child_ids": ((0,), 10**9),
    "child_shares": ((0,), -0.5),
    "question": ((0,), 10**9),
    "feature": ((0,), 10**9),
    "threshold": ((0,), "inf"),
    "statistics": ((0, 0), -1.0),
    "weight": ((0,), -1.0),
    "n_samples": ((0,), -1),
    "impurity": ((0,), "inf"),
    "depth": ((0,), 10**9),
    "value": ((0, 0), -1.0),
    "decision": ((0,), 10**9),
    # tree format 4 (a binary tree's links)
    "children_left": ((0,), 10**9),
    "children_right": ((0,), 10**9),
    "left_shares": ((0,), -0.5),
}


def as_tree_format(payload, tree_format):
    """The model file with its tree in ``tree_format``: 3 (child lists, every share), or
    4 with every share written (the writer leaves out the shares the weights give)."""
    tree = model_file.tree_from_dict(payload["tree"], get_registry().question)
    out = {k: v for k, v in payload["tree"].items() if k not in model_file.LINK_FIELDS}
    out["tree_format"] = tree_format
    if tree_format == 3:
        for name in ("child_start", "child_ids", "child_shares"):
            out[name] = model_file.encode_floats(getattr(tree, name))
    else:
        left, right, shares, right_shares = binary_links(tree)
        first = tree.child_start[:-1][left >= 0]
        out.update(
            children_left=left.tolist(),
            children_right=right.tolist(),
            left_shares=tree.child_shares[first].tolist(),
        )
    return dict(payload, version=tree_format, tree=out)


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
        if key not in payload["tree"]:
            continue  # the other format's field
        add(f"{key} truncated", key, lambda p, k=key: p["tree"][k].pop())
        add(f"{key} extended", key, lambda p, k=key: p["tree"][k].append(p["tree"][k][-1]))
        add(f"{key} NaN", key, lambda p, k=key, i=index: _set(p["tree"][k], i, "nan"))
        add(f"{key} wrong type", key, lambda p, k=key, i=index: _set(p["tree"][k], i, "x"))
        add(f"{key} out of range", key, lambda p, k=key, i=index, b=bad: _set(p["tree"][k], i, b))
        if key != "left_shares":  # optional: without it the training weights give them
            add(f"{key} missing", key, lambda p, k=key: p["tree"].pop(k))
    for key in payload["tree"]["node_fields"]:
        add(f"node field {key} truncated", key, lambda p, k=key: p["tree"]["node_fields"][k].pop())
        add(
            f"node field {key} extended",
            key,
            lambda p, k=key: p["tree"]["node_fields"][k].append(0.0),
        )
    for key in payload["tree"]["node_fields"]:  # issue 33: loaded, then a TypeError in use
        for how, value in (("null", None), ("text", "x"), ("a boolean", True)):
            add(
                f"node field {key} {how}",
                key,
                lambda p, k=key, v=value: _set(p["tree"]["node_fields"][k], (0,), v),
            )
        add(
            f"node field {key} nested three deep",
            key,
            lambda p, k=key: _set(
                p["tree"]["node_fields"], (k,), [[[v]] for v in p["tree"]["node_fields"][k]]
            ),
        )
    add("node_fields a list", "node_fields", lambda p: _set(p["tree"], ("node_fields",), []))
    add(
        "pruner state a list",
        "component_state",
        lambda p: _set(p["tree"], ("component_state",), {"pruner": []}),
    )
    add("n_features 10**30", "n_features", lambda p: _set(p["tree"], ("n_features",), 10**30))
    add("class 1e308 as int64", "classes_dtype", lambda p: _set(p, ("classes",), [1e308, 1]))
    add("params from a newer version", "new_param", lambda p: _set(p["params"], ("new_param",), 1))
    add("params calibration 3", "calibration", lambda p: _set(p["params"], ("calibration",), 3))
    add("feature as a float index", "feature", lambda p: _set(p["tree"]["feature"], (0,), 1.5))
    if "child_ids" in payload["tree"]:
        add(
            "two parents share a child",
            "child_ids",
            lambda p: _set(p["tree"]["child_ids"], (1,), p["tree"]["child_ids"][0]),
        )
    else:
        add(
            "two parents share a child",
            "child_ids",
            lambda p: _set(p["tree"]["children_right"], (0,), p["tree"]["children_left"][0]),
        )
        add(
            "a node with one child",
            "children_right",
            lambda p: _set(p["tree"]["children_right"], (0,), -1),
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


def pruner_cases():
    """The pruners' state (the pruning path, the MDL objective), broken."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] + rng.normal(0, 0.5, 200) > 0).astype(int)
    out = []
    for pruner, params in (("cost_complexity", {}), ("mdl", {"alpha": 0.001})):
        payload = json.loads(
            TreeClassifier(pruner=pruner, pruner_params=params).fit(X, y).to_json()
        )
        if pruner == "cost_complexity":
            cost_complexity = payload
        for key, value in payload["tree"]["component_state"]["pruner"].items():
            for how in ("nan", "text", "truncate"):
                if how == "truncate" and not isinstance(value, list):
                    continue
                copy = json.loads(json.dumps(payload))
                state = copy["tree"]["component_state"]["pruner"]
                if how == "nan":
                    if isinstance(value, list):
                        state[key][0] = "nan"
                    else:
                        state[key] = "nan"
                elif how == "text":
                    state[key] = "x"
                else:
                    state[key] = value[:-1]
                out.append((f"{pruner} {key} {how}", "pruner.", copy))
    # issue 33: a missing cv_std_error loaded, then a KeyError in pruning_path_
    copy = json.loads(json.dumps(cost_complexity))
    del copy["tree"]["component_state"]["pruner"]["cv_std_error"]
    out.append(("cost_complexity cv_std_error missing", "pruner.cv_std_error", copy))
    return out, X


@pytest.mark.parametrize("jit", [True, False])
def test_corrupted_pruner_state_is_refused(jit):
    cases, X = pruner_cases()
    check_corrupted_model_files(cases, X, jit=jit, plugins="")


@pytest.mark.parametrize("tree_format", [3, 4])
@pytest.mark.parametrize("jit", [True, False])
def test_every_corrupted_model_file_is_refused_naming_the_field(jit, tree_format):
    payload, X = fitted_payload()
    payload = as_tree_format(payload, tree_format)
    TreeClassifier.from_json(json.dumps(payload))  # the uncorrupted file loads
    check_corrupted_model_files(cases(payload), X, jit=jit, plugins="")


def test_deep_nesting_and_broken_json_are_refused_before_parsing():
    with pytest.raises(ValueError, match="nests 100001 levels deep"):
        TreeClassifier.from_json("{" + '"a":' * 0 + "[" * 100000 + "]" * 100000 + "}")
    with pytest.raises(ValueError, match="not valid JSON"):
        TreeClassifier.from_json('{"format": ')


def test_brackets_inside_strings_with_escaped_quotes_do_not_count_as_nesting():
    from treekit_core.estimators.model_file import _nesting

    assert _nesting('{"a": "x\\" [[[[", "b": [1]}') == 2


def surrogate_cases():
    """A surrogate tree's fields, broken (issue 33: null, text and 10**30 in
    surrogate_feature or primary_seen loaded, then failed in predict_proba)."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    X[rng.random(X.shape) < 0.1] = np.nan
    payload = json.loads(
        TreeClassifier(propagator="surrogate", evaluator="surrogate", max_depth=3)
        .fit(X, y)
        .to_json()
    )
    out = []
    for key in ("surrogate_feature", "primary_seen", "majority_branch", "surrogate_below"):
        for how, value in (("null", None), ("text", "x"), ("10**30", 10**30)):
            copy = json.loads(json.dumps(payload))
            values = copy["tree"]["node_fields"][key]
            if isinstance(values[0], list):
                values[0][0] = value
            else:
                values[0] = value
            out.append((f"{key} {how}", key, copy))
    return out, X


@pytest.mark.parametrize("jit", [True, False])
def test_corrupted_surrogate_fields_are_refused(jit):
    cases, X = surrogate_cases()
    check_corrupted_model_files(cases, X, jit=jit, plugins="")


def test_the_nesting_check_is_linear_in_time_and_bounded_in_memory():
    """Issue 33: a 80 KB file of escaped quotes took 20 s (1 MB: about 50 minutes), and a
    100 MB file of [] peaked at 2.5 GB. One pass now: 2 MB of each kind, checked in a
    subprocess that must end well within a bound far below the old times, with the check's
    own allocations (not the text's) measured by tracemalloc."""
    import subprocess
    import sys

    script = (
        "import tracemalloc\n"
        "from treekit_core.estimators.model_file import _nesting\n"
        "texts = ['{' + '\\\\\"' * 1_000_000, '{' + '\"\\\\' * 1_000_000, '[]' * 1_000_000 + '{']\n"
        "tracemalloc.start()\n"
        "depths = [_nesting(text) for text in texts]\n"
        "print(depths, tracemalloc.get_traced_memory()[1])\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    depths, peak = run.stdout.split("]")
    assert depths == "[1, 1, 1"
    assert int(peak) < 40 * 2**20  # a 1 MiB slice at a time, not a list of every bracket

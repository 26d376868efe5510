"""Importing compiles nothing; a new process loads kernels from numba's cache."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

PROBE = textwrap.dedent("""
    import json, sys, numpy as np
    from treekit_core import TreeClassifier
    from treekit_core.builtins.criteria import Entropy
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4)); y = (X[:, 0] > 0).astype(int)
    proba = TreeClassifier(criterion=Entropy(), max_depth=3).fit(X, y).predict_proba(X)
    from treekit_core.kernels import routing
    from treekit_core.kernels.specialised import criterion_kernels
    kernels = [criterion_kernels(Entropy()).grow_subtree, routing.walk_thresholds,
               Entropy().compiled_impurity()]
    print(json.dumps({k.__name__: [sum(k.stats.cache_hits.values()),
                                   sum(k.stats.cache_misses.values())] for k in kernels}
                     | {"registries": "numba.np.arraymath" in sys.modules,
                        "proba": proba.round(12).tolist()}))
""")


def _run(code, env=None):
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    return out.stdout


def test_import_compiles_nothing_and_imports_no_numba():
    code = (
        "import sys, treekit_core; "
        "print(sorted(m for m in ('numba', 'scipy', 'llvmlite') if m in sys.modules))"
    )
    assert _run(code).strip() == "[]"


def test_second_process_hits_the_cache(tmp_path):
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
        "TREEKIT_KERNEL_DIR": str(tmp_path / "kernels"),
    }
    env.pop("NUMBA_DISABLE_JIT", None)
    first = json.loads(_run(PROBE, env).strip().splitlines()[-1])
    second = json.loads(_run(PROBE, env).strip().splitlines()[-1])
    assert first.pop("proba") == second.pop("proba")
    # a compile loads numba's compiler registries; loading machine code does not
    # (compiling.load_without_registries: 0.3 s of a warm process's first fit)
    assert first.pop("registries") and not second.pop("registries")
    assert all(misses >= 1 for hits, misses in first.values()), first
    assert all(hits >= 1 and misses == 0 for hits, misses in second.values()), second


ROUTING_PROBE = textwrap.dedent("""
    import json, warnings, numpy as np
    from treekit_core import TreeClassifier
    from treekit_core.builtins.questions import Multiway, Subset, Threshold
    from treekit_core.kernels.question_routing import routing_kernels
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 4, 300), rng.normal(size=300)]).astype(float)
    y = (X[:, 0] % 2 == 0).astype(int)
    X[::7, 1] = np.nan
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = TreeClassifier(categorical_features=[0],
                               splitter_params={"nominal_split": "multiway"}).fit(X, y)
        model.predict_proba(X)
    kinds = tuple(type(q) for q in model.tree_.questions)
    module = routing_kernels(kinds)
    kernels = [module.mixture, module.branches]
    print(json.dumps({"notices": [str(w.message) for w in caught
                                  if "treekit: compiling" in str(w.message)],
                      "kernels": {k.__name__: [sum(k.stats.cache_hits.values()),
                                               sum(k.stats.cache_misses.values())]
                                  for k in kernels}}))
""")


def test_generated_routing_kernels_compile_once_per_machine_and_say_so(tmp_path):
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
        "TREEKIT_KERNEL_DIR": str(tmp_path / "kernels"),
    }
    env.pop("NUMBA_DISABLE_JIT", None)
    first = json.loads(_run(ROUTING_PROBE, env).strip().splitlines()[-1])
    second = json.loads(_run(ROUTING_PROBE, env).strip().splitlines()[-1])
    # one notice per kernel family in the process that compiles, naming it; none later
    notices = first["notices"]
    assert len(notices) == len(set(notices)) >= 2 and second["notices"] == []
    assert any("routing kernels for the question kinds" in notice for notice in notices)
    assert sum("a first run takes" in notice for notice in notices) == 1
    assert all(misses >= 1 for hits, misses in first["kernels"].values()), first
    assert all(hits >= 1 and misses == 0 for hits, misses in second["kernels"].values()), second


NOMINAL_PROBE = textwrap.dedent("""
    import json, numpy as np, pandas as pd
    from treekit_core import TreeClassifier
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": pd.Categorical(rng.integers(0, 4, 80)),
                      "b": pd.Categorical(rng.integers(0, 3, 80)), "c": rng.normal(size=80)})
    y = rng.integers(0, 3, 80)
    with_missing = X.copy()
    with_missing.iloc[::9, 0] = np.nan
    # the node-by-node loop's nominal search first (compiled for its entry point), then
    # the presorted grower's subset search of the same criterion, in one process
    first = TreeClassifier(criterion="entropy").fit(with_missing, y)
    second = TreeClassifier(criterion="entropy").fit(X, y)
    print(json.dumps([first.get_n_leaves(), second.get_n_leaves(),
                      [q.name for q in second.tree_.questions]]))
""")


def test_both_nominal_searches_compile_in_one_process_in_either_order(tmp_path):
    """The loop's nominal search and the presorted grower's subset search live in one
    generated module: compiling the loop's entry point first (which then takes no other
    signature) leaves the grower's search compilable (it calls the shared body, not the
    entry point), on a machine that has compiled neither."""
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
        "TREEKIT_KERNEL_DIR": str(tmp_path / "kernels"),
    }
    env.pop("NUMBA_DISABLE_JIT", None)
    leaves_with_missing, leaves, kinds = json.loads(_run(NOMINAL_PROBE, env).splitlines()[-1])
    assert leaves_with_missing > 1 and leaves > 1
    assert "subset" in kinds


def test_jit_with_and_without_parentheses_makes_cached_dispatchers():
    import pytest
    from numba.core.dispatcher import Dispatcher

    from treekit_core.kernels import compiling

    if compiling.JIT_DISABLED:
        pytest.skip("NUMBA_DISABLE_JIT: jit returns the plain function")
    jit, RuntimeOnlyCache = compiling.jit, compiling.RuntimeOnlyCache

    def twice(x):
        return 2 * x

    bare, called = jit(twice), jit()(twice)
    for kernel in (bare, called):
        assert isinstance(kernel, Dispatcher)
        assert isinstance(kernel._cache, RuntimeOnlyCache)
        assert kernel(3) == 6
    typed = jit("int64(int64)")(twice)
    assert typed(4) == 8 and not typed._can_compile  # a signature compiles at once, alone


def test_prefetch_changes_nothing_and_faults_on_no_index():
    """``kernels.prefetch`` is a hint: a kernel asking for rows ahead, past the array's end
    too (an address nothing maps may follow it), computes what it computes without."""
    import numba
    import numpy as np

    from treekit_core.kernels import prefetch
    from treekit_core.kernels.compiling import JIT_DISABLED

    @numba.njit
    def running_total(values, ahead):
        total = 0.0
        for j in range(values.shape[0]):
            if ahead > 0:
                prefetch(values, j + ahead)
            total += values[j]
        return total

    values = np.random.default_rng(0).normal(size=10_000)
    expected = 0.0
    for value in values:
        expected += value
    assert running_total(values, 0) == expected
    assert running_total(values, 16) == expected
    assert running_total(values, 1 << 40) == expected
    assert running_total(values, np.int32(3)) == expected  # any integer index

    @numba.njit
    def on_a_table(table):
        prefetch(table, 0)

    if not JIT_DISABLED:  # plain Python ignores the hint
        with pytest.raises(numba.core.errors.TypingError):
            on_a_table(np.zeros((2, 2)))  # a 1-D array only: one index gives no element


def test_add_lanes_adds_as_scalar_adds_do():
    """``kernels.add_lanes`` (one vector add of 2 or 4 floats into consecutive entries)
    leaves the bits scalar adds leave, at any offset (unaligned ones too), mixed float
    widths in the tuple included; other widths, arrays and indices are refused when the
    kernel compiles."""
    import numba
    import numpy as np

    from treekit_core.kernels import add_lanes
    from treekit_core.kernels.compiling import JIT_DISABLED

    @numba.njit
    def add_rows(run, at, values):
        for j in range(values.shape[0]):
            add_lanes(run, at[j], (1.0, values[j]))
            add_lanes(run, at[j] + 2, (values[j], np.float32(0.5), -values[j], 0.0))

    rng = np.random.default_rng(5)
    values = rng.normal(size=500) * 10.0 ** rng.integers(-8, 9, size=500)
    at = rng.integers(0, 40, size=500)  # overlapping, odd offsets
    run = rng.normal(size=46)
    expected = run.copy()
    for j in range(values.size):
        for lane, value in enumerate((1.0, values[j], 0.0, 0.0)[:2]):
            expected[at[j] + lane] += value
        for lane, value in enumerate((values[j], 0.5, -values[j], 0.0)):
            expected[at[j] + 2 + lane] += value
    add_rows(run, at, values)
    assert run.tobytes() == expected.tobytes()

    if JIT_DISABLED:  # plain Python: no types to refuse
        return

    @numba.njit
    def three_lanes(run):
        add_lanes(run, 0, (1.0, 2.0, 3.0))

    @numba.njit
    def on_a_table(table):
        add_lanes(table, 0, (1.0, 2.0))

    @numba.njit
    def at_a_float(run):
        add_lanes(run, 0.0, (1.0, 2.0))

    for kernel, argument in (
        (three_lanes, np.zeros(4)),
        (on_a_table, np.zeros((2, 2))),
        (at_a_float, np.zeros(4)),
        (three_lanes, np.zeros(4, np.float32)),
    ):
        with pytest.raises(numba.core.errors.TypingError):
            kernel(argument)

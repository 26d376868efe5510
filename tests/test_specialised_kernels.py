"""Kernels specialised per criterion grow the function-value kernels' trees exactly; trees
grown with threads equal the one-thread tree; the thread count follows its caps."""

import json
import os
import subprocess
import sys
import textwrap
import threading
from typing import ClassVar
from unittest import mock

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fused_builder import assert_same_tree

from treekit_core import Criterion, TreeClassifier, hookimpl, jit, registered
from treekit_core.kernels import growth, python_function
from treekit_core.kernels.specialised import criterion_kernels, specialised_source
from treekit_core.kernels.usable_cpus import fit_threads


def tilted_impurity(class_sums, total_weight, params):
    """An impurity that is not symmetric in the classes (weights params[k]) and calls a
    helper: a third-party criterion of the kind the specialisation must get right."""
    if total_weight <= 0.0:
        return 0.0
    h = 0.0
    for k in range(class_sums.shape[0]):
        h += _tilted_term(class_sums[k] / total_weight, params[k])
    return h


@jit()
def _tilted_term(p, w):
    return p * (1.0 - p) / ((1.0 - 2.0 * w) * p + w * w)


@attrs.define(slots=False)
class Tilted(Criterion):
    name: ClassVar[str] = "tilted"
    impurity = staticmethod(tilted_impurity)

    def impurity_params(self, n_classes):
        return np.linspace(0.2, 0.4, n_classes)


class TiltedPlugin:
    @hookimpl
    def treekit_criteria(self):
        return [Tilted]


CRITERIA = ["gini", "entropy", "misclassification", "variance", "tilted"]


def _data(seed, n, d, k, levels):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, d)).astype(float) + rng.normal(scale=0.01, size=(n, d))
    X[:, 0] = np.round(X[:, 0])  # ties
    y = (X[:, 0] + X[:, -1] + rng.normal(size=n) > levels - 1).astype(int)
    if k > 2:
        y = y + (X[:, 1 % d] > levels / 2)
    return X, y


def _fit(criterion, X, y, sample_weight=None, **params):
    with registered(TiltedPlugin()):
        return TreeClassifier(criterion=criterion, **params).fit(X, y, sample_weight)


def _fit_on_threads(threads, criterion, X, y, **params):
    """Fit with exactly ``threads`` threads, whatever this machine's CPU count, taking the
    threaded path at any size and with small subtree tasks (so many pieces are numbered)."""
    from treekit_core.kernels import builder

    with (
        mock.patch("treekit_core.kernels.usable_cpus.fit_threads", lambda requested: threads),
        mock.patch.multiple(builder, PARALLEL_MIN_WORK=0, MIN_TASK_ROWS=50),
    ):
        return _fit(criterion, X, y, **params)


@pytest.mark.parametrize("criterion", CRITERIA)
def test_specialised_kernels_grow_the_function_value_tree(criterion, monkeypatch):
    X, y = _data(0, 600, 5, 2, 12)
    weights = np.random.default_rng(1).uniform(0.2, 3.0, size=y.size)
    settings_ = {"min_samples_leaf": 2}
    monkeypatch.setenv("TREEKIT_SPECIALISE", "1")
    special = _fit(criterion, X, y, weights, **settings_)
    monkeypatch.setenv("TREEKIT_SPECIALISE", "0")
    by_value = _fit(criterion, X, y, weights, **settings_)
    assert special.tree_.n_nodes > 20
    assert_same_tree(special.tree_, by_value.tree_)
    np.testing.assert_array_equal(special.tree_.threshold, by_value.tree_.threshold)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    offset=st.sampled_from([0.0, 1e6, -3e8]),
    levels=st.sampled_from([3, 40, 10_000]),
    weighted=st.booleans(),
    missing=st.booleans(),
)
def test_squared_errors_drop_bound_grows_the_unbounded_tree(
    seed, offset, levels, weighted, missing
):
    """Criterion.drop_bound and Criterion.fixed_statistics: the kernels specialised to
    squared error skip the drops of cuts whose bound cannot beat the best one, and hold
    its two statistics as a constant; the function-value kernels have no bound, score
    every cut and loop over as many statistics as the rows hold. The same trees to the
    last bit, thresholds and improvements included, on responses far from 0 (a drop is
    then a small difference of large sums), with ties among the values and the responses,
    weights, and missing values (the node-by-node search)."""
    from treekit_core import TreeRegressor
    from treekit_core.builtins.criteria import SquaredError

    kernels = criterion_kernels(SquaredError(), n_statistics=2)
    assert kernels.specialised
    grower = python_function(kernels.grow_subtree.dispatcher)  # also without the JIT
    assert "criterion_drop_bound" in grower.__globals__
    fixed = python_function(grower.__globals__["n_statistics"])
    assert fixed(np.zeros(2)) == 2
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(300, 3)).astype(float)
    if missing:
        X[rng.random(X.shape) < 0.1] = np.nan
    y = offset + np.round(X[:, 0] % 7 + rng.normal(size=300), 1)
    y[np.isnan(y)] = offset
    w = rng.uniform(0.2, 3.0, size=300) if weighted else None
    bounded = TreeRegressor(min_samples_leaf=2).fit(X, y, w)
    with mock.patch.dict(os.environ, {"TREEKIT_SPECIALISE": "0"}):
        unbounded = TreeRegressor(min_samples_leaf=2).fit(X, y, w)
    assert not criterion_kernels(SquaredError(), specialised=False).specialised
    assert_same_tree(bounded.tree_, unbounded.tree_, rtol=0, atol=0)
    np.testing.assert_array_equal(bounded.tree_.threshold, unbounded.tree_.threshold)
    np.testing.assert_array_equal(
        bounded.tree_.node_fields["improvement"], unbounded.tree_.node_fields["improvement"]
    )


def test_fixed_statistics_kernels_refuse_rows_of_another_width():
    """Kernels holding squared error's two statistics as a constant refuse a node's sums
    of another length (numba checks no bounds: they would read past the rows' columns);
    a fit never gives them such rows, as criterion_kernels picks them by the rows' width."""
    from treekit_core.builtins.criteria import SquaredError

    kernels = criterion_kernels(SquaredError(), n_statistics=2)
    fixed = python_function(
        python_function(kernels.grow_subtree.dispatcher).__globals__["n_statistics"]
    )
    with pytest.raises(ValueError, match="compiled for 2 statistics"):
        fixed(np.zeros(3))
    X = np.arange(40.0).reshape(20, 2)
    order = np.argsort(X, axis=0, kind="stable").T.astype(np.int32).copy()
    values = np.take_along_axis(X.T, order.astype(np.int64), axis=1).copy()
    rows = growth.row_table(np.ones((20, 3)), np.ones(20))  # three statistics, not two
    rules = np.array([1.0, 0.0, 2.0, 5.0, 0.0, np.nan, 0.0, 20.0])
    with pytest.raises(ValueError, match="compiled for 2 statistics"):
        kernels.grow_subtree(
            np.zeros(1),
            values,
            rows,
            order,
            0,
            20,
            0,
            rules,
            2,
            0,
            np.zeros(20, dtype=np.uint8),
            np.zeros(2),
            np.array([-np.inf, np.inf]),
            *_no_nominal_search(2),
            np.empty((0, 0)),
        )


def _no_nominal_search(d):
    from treekit_core.kernels.builder import no_nominal_search

    return no_nominal_search(), np.zeros(d, dtype=np.int64), -1, 0, False


def test_fixed_statistics_belong_to_the_impurity_they_are_declared_with():
    """Criterion.fixed_statistics_count: the number where the class defining the impurity
    declares it (squared error, Poisson: 2), none for a class with an impurity of its own
    (several outputs' pairs of sums), and none asked for rows of another width."""
    from treekit_core.builtins.criteria import Poisson, SquaredError, SquaredErrorOfOutputs

    @attrs.define(slots=False)
    class Renamed(SquaredError):
        name: ClassVar[str] = "renamed_squared_error"

    @attrs.define(slots=False)
    class OwnImpurity(SquaredError):
        name: ClassVar[str] = "own_impurity"
        impurity = staticmethod(tilted_impurity)

    assert SquaredError().fixed_statistics_count() == 2 == Poisson().fixed_statistics_count()
    assert Renamed().fixed_statistics_count() == 2
    assert SquaredErrorOfOutputs().fixed_statistics_count() is None
    assert OwnImpurity().fixed_statistics_count() is None
    assert Criterion.fixed_statistics is None
    source = specialised_source("x", "y", statistics=2)
    compile(source, "generated", "exec")
    assert source.count("def n_statistics(") == 1
    assert "n_statistics," not in source.split("def n_statistics(")[0]  # no import left


@pytest.mark.parametrize("criterion", ["gini", "tilted"])
def test_node_by_node_search_is_specialised_too(criterion, monkeypatch):
    """Missing values take the node-by-node search; both kernels give the same tree."""
    X, y = _data(2, 400, 4, 3, 8)
    X[::9, 1] = np.nan
    monkeypatch.setenv("TREEKIT_SPECIALISE", "1")
    special = _fit(criterion, X, y)
    monkeypatch.setenv("TREEKIT_SPECIALISE", "0")
    by_value = _fit(criterion, X, y)
    assert_same_tree(special.tree_, by_value.tree_)


def test_the_kernels_are_specialised_only_where_a_source_file_identifies_them():
    assert criterion_kernels(Tilted()).specialised
    namespace = {}
    exec(  # a criterion typed at a prompt: no source file to key a cache on
        "def typed(class_sums, total_weight, params):\n    return 0.0\n", namespace
    )

    @attrs.define(slots=False)
    class Typed(Criterion):
        name: ClassVar[str] = "typed"
        impurity = staticmethod(namespace["typed"])

    assert not criterion_kernels(Typed()).specialised


def test_a_specialised_module_file_holds_the_text_its_identity_stands_for():
    """Specialised modules are named by what their text is made from (not by the text,
    which takes tens of milliseconds to make in every process): the file a fit loads is
    the text made now from the same recipe, whole."""
    from treekit_core.kernels import generated, growth
    from treekit_core.kernels.specialised import ENTRY_POINTS, _identity, _stamp

    kernels = criterion_kernels(Tilted())
    assert kernels.specialised
    path = kernels.grow_subtree.dispatcher.py_func.__code__.co_filename
    header, body = open(path, encoding="utf-8").read().split("\n", 1)
    assert header + "\n" == generated._whole_header(body)
    function = type(Tilted()).impurity
    name = f"{function.__module__}.{function.__qualname__}"
    recipe = (name, _stamp(()), growth, ENTRY_POINTS, False)
    assert body == specialised_source(*recipe)
    # a change to any input of the text changes the identity, hence the file
    assert _identity(*recipe) != _identity(name, _stamp(()), growth, ENTRY_POINTS[:3], False)
    assert growth.__file__ and open(growth.__file__).read() in _identity(*recipe)


def test_generated_source_has_no_impurity_parameter_left():
    source = specialised_source("x", "y")
    compile(source, "generated", "exec")
    assert "(impurity," not in source.replace(" ", "")
    assert "impurity(" in source  # still called, as the global
    # the entry points: grow_subtree, scan_features, best_split_of_node and, for monotonic
    # constraints, best_split_within_bounds
    assert source.count("@jit()") == 4


# -- threads -------------------------------------------------------------------------


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(200, 5_000),
    k=st.integers(2, 4),
    criterion=st.sampled_from(["gini", "entropy", "tilted"]),
    min_samples_leaf=st.integers(1, 30),
    max_depth=st.one_of(st.none(), st.integers(1, 14)),
    levels=st.integers(3, 400),
    threads=st.integers(2, 5),
)
def test_threads_grow_the_one_thread_tree(
    seed, n, k, criterion, min_samples_leaf, max_depth, levels, threads
):
    X, y = _data(seed, n, 10, k, levels)
    params = {"min_samples_leaf": min_samples_leaf, "max_depth": max_depth}
    one = _fit_on_threads(1, criterion, X, y, **params)
    many = _fit_on_threads(threads, criterion, X, y, **params)
    assert_same_tree(one.tree_, many.tree_)
    np.testing.assert_array_equal(one.tree_.threshold, many.tree_.threshold)


def test_threaded_growth_really_hands_out_subtrees(monkeypatch):
    """The threaded path is taken (and numbers the pieces right) on data of this size."""
    from treekit_core.kernels import builder

    calls = []
    original = builder._Growth.with_threads
    monkeypatch.setattr(
        builder._Growth,
        "with_threads",
        lambda self, n, rows: calls.append(n) or original(self, n, rows),
    )
    X, y = _data(5, 30_000, 10, 2, 50)
    many = _fit_on_threads(3, "gini", X, y)
    assert calls == [3]
    one = _fit_on_threads(1, "gini", X, y)
    assert calls == [3]
    assert_same_tree(one.tree_, many.tree_)


def test_the_large_nodes_buffers_are_freed_before_the_subtree_tasks_run(monkeypatch):
    """Each pool thread's buffers for the large nodes (as long as the data) are freed once
    the large nodes are split, before the subtree tasks fill the node table, so they do
    not add to the fit's peak memory; the tree is the one-thread tree."""
    import weakref

    from treekit_core.kernels import builder

    made, alive_at_tasks = [], []

    class Recorded(builder._Scratch):
        def get(self):
            buffers = super().get()
            made.append(weakref.ref(buffers[0]))
            return buffers

    original = builder._Growth.subtree

    def subtree(self, *args, **kwargs):
        alive_at_tasks.append(sum(ref() is not None for ref in made))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(builder, "_Scratch", Recorded)
    monkeypatch.setattr(builder._Growth, "subtree", subtree)
    X, y = _data(5, 30_000, 10, 2, 50)
    many = _fit_on_threads(2, "gini", X, y)
    assert made and alive_at_tasks  # the large-node path and the tasks both ran
    assert max(alive_at_tasks) == 0
    monkeypatch.undo()
    assert_same_tree(_fit_on_threads(1, "gini", X, y).tree_, many.tree_)


def test_number_depth_first_numbers_pieces_like_one_thread():
    """Hand-made pieces in their blocks of one table (room for 1, 5 and 3 nodes): root
    split here, its left child a 3-node subtree, its right a leaf subtree; depth-first ids
    0 | 1 2 3 | 4, each piece's rows moved down in place (no second table)."""
    from treekit_core.kernels import number_depth_first

    width = growth.SUMS + 2
    big = np.full((9, width), np.nan)
    starts = (0, 1, 6)

    def piece(start, rows, marks):
        t = big[start : start + len(rows)]
        t[:, growth.LEFT : growth.RIGHT + 1] = rows
        t[:, growth.WEIGHT] = marks  # tells each row apart once moved
        return t

    root = piece(starts[0], [[1, 2]], [10])  # children are piece indices
    left_subtree = piece(starts[1], [[1, 2], [-1, -1], [-1, -1]], [11, 12, 13])
    right_leaf = piece(starts[2], [[-1, -1]], [14])
    numbered = number_depth_first(big, [root, left_subtree, right_leaf], [True, False, False])
    np.testing.assert_array_equal(
        numbered[:, growth.LEFT : growth.RIGHT + 1],
        [[1, 4], [2, 3], [-1, -1], [-1, -1], [-1, -1]],
    )
    np.testing.assert_array_equal(numbered[:, growth.WEIGHT], [10, 11, 12, 13, 14])
    assert np.shares_memory(numbered, big)


def test_n_threads_is_validated_by_name():
    X, y = _data(0, 50, 2, 2, 5)
    for bad in (0, -2, 1.5, True, "2"):
        with pytest.raises(ValueError, match="n_threads"):
            TreeClassifier(n_threads=bad).fit(X, y)


def test_fit_threads_caps():
    usable = fit_threads()
    assert 1 <= usable <= (os.cpu_count() or 1)
    assert fit_threads(1) == 1
    assert fit_threads(-1) == usable
    assert fit_threads(10_000) == usable


def test_one_thread_inside_a_joblib_worker_thread():
    from joblib import Parallel, delayed

    seen = Parallel(n_jobs=2, prefer="threads")(delayed(fit_threads)() for _ in range(2))
    assert seen == [1, 1]
    # a plain thread of the user's is not a joblib worker
    result = []
    worker = threading.Thread(target=lambda: result.append(fit_threads()))
    worker.start()
    worker.join()
    assert result == [fit_threads()]


CRITERION_PROBE = textwrap.dedent("""
    import json, sys, warnings, numpy as np
    sys.path.insert(0, sys.argv[1])
    from test_specialised_kernels import Tilted, TiltedPlugin, _fit, _data
    from treekit_core.kernels.specialised import criterion_kernels
    X, y = _data(0, 300, 4, 2, 10)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _fit("tilted", X, y)
    kernel = criterion_kernels(Tilted()).grow_subtree
    print(json.dumps({"notices": sum("split-search kernels" in str(w.message) for w in caught),
                      "hits": sum(kernel.stats.cache_hits.values()),
                      "misses": sum(kernel.stats.cache_misses.values())}))
""")


def test_a_python_criterion_compiles_once_per_machine_and_says_so(tmp_path):
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
        "TREEKIT_KERNEL_DIR": str(tmp_path / "kernels"),
        "TREEKIT_LOAD_PLUGINS": "",
    }
    env.pop("NUMBA_DISABLE_JIT", None)
    here = os.path.dirname(__file__)

    def run():
        out = subprocess.run(
            [sys.executable, "-c", CRITERION_PROBE, here],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(out.stdout.strip().splitlines()[-1])

    first, second = run(), run()
    assert first["notices"] == 1 and first["misses"] >= 1, first
    assert second == {"notices": 0, "hits": 1, "misses": 0}, second


def test_c_fortran_and_read_only_x_grow_the_same_tree_without_copying_x():
    X, y = _data(3, 500, 4, 2, 20)
    read_only = X.copy()
    read_only.flags.writeable = False
    trees = [
        TreeClassifier(min_samples_leaf=3).fit(data, y).tree_
        for data in (X, np.asfortranarray(X), read_only)
    ]
    for tree in trees[1:]:
        assert_same_tree(trees[0], tree)
    from treekit_core.engine.validation import kernel_layout

    assert kernel_layout(X) is X and kernel_layout(np.asfortranarray(X)).flags.f_contiguous
    assert kernel_layout(read_only).flags.writeable


def test_numba_kernels_run_on_the_capped_threads_in_fit_and_predict():
    import numba

    from treekit_core.kernels import usable_cpus

    before = numba.get_num_threads()
    with usable_cpus.numba_threads_capped(1):
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    seen = []
    real = usable_cpus.numba_threads_capped
    X, y = _data(4, 200, 3, 2, 10)
    with mock.patch.object(
        usable_cpus, "numba_threads_capped", lambda count: seen.append(count) or real(count)
    ):
        model = TreeClassifier(n_threads=1).fit(X, y)
        model.predict(X)
        TreeClassifier.from_json(model.to_json()).predict_proba(X)
    assert seen == [1, 1, 1]


def test_a_kernel_module_importing_the_sweep_alone_gets_what_it_calls(tmp_path, monkeypatch):
    """A plugin's kernel module specialised to a criterion copies the core's kernels it
    imports that take the impurity; what those call from their own module comes with
    them (the sweep ``scan_within_bounds``, which takes the impurity too, is copied; the
    helpers it loops with are imported), so importing ``scan_sorted_feature`` alone is
    enough. The best cut of four rows, by hand: gini 0.5 at the root, both sides pure."""
    from numba import types

    from treekit_core.builtins.criteria import Gini
    from treekit_core.kernels import impurity_kernels
    from treekit_core.kernels.compiling import F1, F2C

    (tmp_path / "sweep_only_kernels.py").write_text(
        textwrap.dedent(
            """
            import numpy as np
            from treekit_core.kernels import generic_jit, scan_sorted_feature

            @generic_jit
            def best_cut(impurity, params, values, weighted, weights, sums, weight):
                left, right = np.empty(sums.shape[0]), np.empty(sums.shape[0])
                parent = impurity(sums, weight, params)
                return scan_sorted_feature(
                    impurity, params, values, weighted, weights, sums, weight, parent, 1, 0.0,
                    left, right,
                )
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import sweep_only_kernels

    result = types.Tuple((types.float64, types.float64, types.int64))
    signature = result(F1, F1, F2C, F1, F1, types.float64)
    kernels = impurity_kernels(sweep_only_kernels, {"best_cut": signature}, Gini())
    assert kernels.specialised
    values = np.array([1.0, 2.0, 3.0, 4.0])
    weighted = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    drop, threshold, position = kernels.best_cut(
        Gini().impurity_params(2), values, weighted, np.ones(4), np.array([2.0, 2.0]), 4.0
    )
    assert (drop, threshold, position) == (0.5, 2.5, 2)

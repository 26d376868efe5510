"""Bad input gets a clear error naming the parameter (and column) and what was expected."""

from typing import ClassVar

import attrs
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treekit_core import TreeClassifier, hookimpl, registered
from treekit_core.builtins.splitters import Exhaustive

X_OK = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [3.0, 0.0]])
Y_OK = np.array([0, 0, 1, 1])


@pytest.mark.parametrize(
    "X,y,message",
    [
        (
            np.array([[0.0, 1.0], [np.inf, 0.0]]),
            [0, 1],
            r"X contains infinity in column 0 \(row 1\)",
        ),
        (np.array([0.0, 1.0, 2.0]), [0, 1, 1], r"X must be 2-D.*reshape\(-1, 1\)"),
        ([[0.0, 1.0], [1.0]], [0, 1], "ragged"),
        (np.empty((0, 2)), [], "X is empty"),
        (np.empty((3, 0)), [0, 1, 0], "0 feature"),
        (X_OK, [0, 1, 1], "y has 3 labels but X has 4 samples"),
        (X_OK, [1, 1, 1, 1], r"y has one class \(1\)"),
        (X_OK, [[0, 1], [1, 1], [0, 1], [1, 1]], r"y column 1 has one class \(1\)"),
        (X_OK, [0.0, np.nan, 1.0, 1.0], "y contains NaN at row 1"),
        (
            [["a", "b"], ["c", "d"]],
            [0, 1],
            r"X column 0 holds 'a' \(row 0\), which is not a number",
        ),
    ],
)
def test_bad_training_input(X, y, message):
    with pytest.raises(ValueError, match=message):
        TreeClassifier().fit(X, y)


@attrs.define(slots=False)
class NoMissing(Exhaustive):
    """An exhaustive splitter that does not claim to handle missing values."""

    name: ClassVar[str] = "no_missing"
    handles_missing: ClassVar[bool] = False


class Plugin:
    @hookimpl
    def treekit_splitters(self):
        return [NoMissing]


def test_nan_is_refused_naming_the_column_and_the_components_that_cannot_handle_it():
    frame = pd.DataFrame({"age": [1.0, 2.0, np.nan], "dose": [1.0, 2.0, 3.0]})
    with registered(Plugin(), name="no-missing"):
        with pytest.raises(
            ValueError,
            match=r"X contains NaN in column 0 \('age'\) \(1 rows, first row 2\); "
            r"splitter 'no_missing' does not handle missing values",
        ):
            TreeClassifier(splitter="no_missing").fit(frame, [0, 1, 0])


def test_dataframe_errors_name_the_column():
    odd = pd.DataFrame({"age": [1.0, 2.0, 3.0], "colour": [{"r": 1}, {"b": 2}, {"r": 1}]})
    with pytest.raises(ValueError, match=r"column 1 \('colour'\).*not numbers"):
        TreeClassifier().fit(odd, [0, 1, 0])


@pytest.mark.parametrize(
    "weight,message",
    [
        ([1.0, 1.0], r"sample_weight must have shape \(4,\)"),
        ([1.0, -1.0, 1.0, 1.0], "non-negative; row 1"),
        ([1.0, np.nan, 1.0, 1.0], "NaN or infinity at row 1"),
        ([0.0, 0.0, 0.0, 0.0], "sums to zero"),
    ],
)
def test_bad_sample_weight(weight, message):
    with pytest.raises(ValueError, match=message):
        TreeClassifier().fit(X_OK, Y_OK, sample_weight=weight)


@pytest.mark.parametrize(
    "params,message",
    [
        ({"max_depth": 0}, "max_depth must be None or an int >= 1, got 0"),
        ({"max_depth": 2.5}, "max_depth"),
        ({"min_samples_split": 1}, "min_samples_split must be an int >= 2"),
        ({"min_samples_split": 1.5}, "min_samples_split"),
        ({"min_samples_leaf": 0}, "min_samples_leaf must be an int >= 1"),
        (
            {"min_weight_fraction_leaf": 0.7},
            r"min_weight_fraction_leaf must be a float in \[0, 0.5\]",
        ),
        ({"min_impurity_decrease": -1.0}, "min_impurity_decrease must be a finite float >= 0"),
        ({"min_gain": float("nan")}, "min_gain must be None or a finite float"),
        ({"criterion_params": [1, 2]}, "criterion_params must be a dict"),
        ({"criterion_params": {"w": 0.3}}, "criterion 'gini' has no parameter 'w'"),
    ],
)
def test_parameters_out_of_range(params, message):
    with pytest.raises(ValueError, match=message):
        TreeClassifier(**params).fit(X_OK, Y_OK)


def test_prediction_input_checked():
    model = TreeClassifier().fit(X_OK, Y_OK)
    with pytest.raises(
        ValueError, match="X has 3 features, but TreeClassifier is expecting 2 features"
    ):
        model.predict(np.zeros((2, 3)))
    assert model.predict(np.array([[np.nan, 0.0]])).shape == (1,)  # C4.5's missing-value rule


def test_variance_with_three_classes_is_refused():
    with pytest.raises(ValueError, match="'variance' is defined for two classes only"):
        TreeClassifier(criterion="variance").fit(np.arange(6.0).reshape(-1, 1), [0, 1, 2, 0, 1, 2])


def test_zero_weight_rows_are_removed_rows():
    model = TreeClassifier().fit(X_OK, Y_OK, sample_weight=[1.0, 0.0, 1.0, 1.0])
    assert model.tree_.n_samples[0] == 3 and model.tree_.weight[0] == 3.0
    removed = TreeClassifier().fit(np.delete(X_OK, 1, axis=0), np.delete(Y_OK, 1))
    np.testing.assert_array_equal(model.tree_.threshold, removed.tree_.threshold)


def test_weights_and_thresholds_that_would_silently_break_results_are_refused():
    from treekit_core import ForestClassifier

    X = np.random.default_rng(0).normal(size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="sample_weight sums to inf.*rescale"):
        TreeClassifier().fit(X, y, sample_weight=np.full(30, 1e308))
    with pytest.raises(ValueError, match="reject threshold must be a finite number"):
        TreeClassifier(reject=float("nan")).fit(X, y)
    for bad in (float("nan"), -1.0):
        with pytest.raises(ValueError, match="class_weight for class 0 is"):
            ForestClassifier(class_weight={0: bad}).fit(X, y)


def test_labels_that_numpy_would_silently_reinterpret_are_refused():
    X = np.random.default_rng(0).normal(size=(6, 1))
    with pytest.raises(ValueError, match="y contains infinity at row 5"):
        TreeClassifier().fit(X, [0, 1, 0, 1, 0, np.inf])
    with pytest.raises(ValueError, match="mixes text and number labels.*'1' and 1"):
        TreeClassifier().fit(X, ["1", 1, "0", 0, "1", 1])
    with pytest.raises(ValueError, match="Unknown label type: continuous.*0.2"):
        TreeClassifier().fit(X, np.linspace(0, 1, 6))
    with pytest.warns(UserWarning, match="column-vector y"):
        model = TreeClassifier().fit(X, np.array([[0], [1], [0], [1], [0], [1]]))
    assert model.classes_.tolist() == [0, 1]
    assert TreeClassifier().fit(X, [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]).classes_.tolist() == [0, 1]


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda: TreeClassifier().fit(X_OK, Y_OK, sample_weight="abc"), "sample_weight must be"),
        (lambda: TreeClassifier().fit(X_OK + 1j, Y_OK), "X holds complex numbers"),
        (
            lambda: TreeClassifier().fit(
                pd.DataFrame({"a": X_OK[:, 0] + 1j, "b": X_OK[:, 1]}), Y_OK
            ),
            r"X column 0 \('a'\) holds complex numbers",
        ),
        (lambda: TreeClassifier(random_state=-1).fit(X_OK, Y_OK), "random_state must be None"),
        (lambda: TreeClassifier(random_state="a").fit(X_OK, Y_OK), "random_state must be None"),
        (lambda: TreeClassifier(random_state=1.5).fit(X_OK, Y_OK), "random_state must be None"),
        (
            lambda: TreeClassifier(splitter="c45", splitter_params={"min_objects": "2"}).fit(
                X_OK, Y_OK
            ),
            r"min_objects must be a number > 0 \(J48's -M",
        ),
        (
            lambda: TreeClassifier(splitter="c45", splitter_params={"min_objects": True}).fit(
                X_OK, Y_OK
            ),
            "min_objects must be a number > 0",
        ),
    ],
)
def test_unclear_errors_now_name_the_parameter(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_sparse_input_is_densified_and_predicts_as_the_dense_array():
    sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4)) * (rng.random((80, 4)) < 0.4)
    y = (X[:, 0] + X[:, 2] > 0).astype(int)
    dense = TreeClassifier(random_state=0).fit(X, y)
    for kind in (sparse.csr_matrix, sparse.csc_matrix, sparse.coo_array):
        model = TreeClassifier(random_state=0).fit(kind(X), y)
        assert model.export_text() == dense.export_text()
        np.testing.assert_array_equal(model.predict_proba(kind(X)), dense.predict_proba(X))


def test_huge_counts_in_stopping_rules_act_as_unlimited_or_as_the_data_size():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    grown = TreeClassifier().fit(X, y)
    assert TreeClassifier(max_depth=10**30).fit(X, y).export_text() == grown.export_text()
    for params in ({"min_samples_leaf": 10**30}, {"min_samples_split": 10**30}):
        assert TreeClassifier(**params).fit(X, y).get_n_leaves() == 1


def test_random_state_takes_a_generator_or_a_big_int():
    from treekit_core import ForestClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)

    def forest(seed):
        model = ForestClassifier(n_estimators=3, random_state=seed).fit(X, y)
        return model.predict_proba(X)

    np.testing.assert_array_equal(
        forest(np.random.default_rng(5)), forest(np.random.default_rng(5))
    )
    np.testing.assert_array_equal(forest(2**70), forest(2**70))


def test_integer_column_labels_are_checked_at_predict_like_names():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(120, 3)))
    y = (frame[0] - frame[2] > 0).astype(int)
    model = TreeClassifier().fit(frame, y)
    assert not hasattr(model, "feature_names_in_")  # scikit-learn: only string names
    np.testing.assert_array_equal(model.predict(frame), model.predict(frame.to_numpy()))
    with pytest.raises(ValueError, match=r"X has the columns \[2, 1, 0\].*\[0, 1, 2\]"):
        model.predict(frame[[2, 1, 0]])
    loaded = TreeClassifier.from_json(model.to_json())
    with pytest.raises(ValueError, match=r"X has the columns \[2, 1, 0\]"):
        loaded.predict(frame[[2, 1, 0]])
    np.testing.assert_array_equal(loaded.predict(frame), model.predict(frame))


def test_a_feature_narrower_than_the_value_tolerance_warns_and_matches_scikit_learn():
    sklearn_tree = pytest.importorskip("sklearn.tree")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 2))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    with pytest.warns(UserWarning, match=r"column 0 \(and 1 more\) spans only .* within 1e-07"):
        tiny = TreeClassifier().fit(X * 1e-8, y)
    reference = sklearn_tree.DecisionTreeClassifier(random_state=0).fit(X * 1e-8, y)
    assert tiny.get_n_leaves() == reference.get_n_leaves() == 1
    assert TreeClassifier().fit(X, y).get_n_leaves() > 1


def test_known_finite_trusts_only_that_array_and_only_within_the_block():
    from treekit_core.engine.validation import all_finite, known_finite

    X = np.array([[np.nan, 1.0]])
    assert not all_finite(X)
    with known_finite(X):
        assert all_finite(X)
        assert not all_finite(X.copy())
    assert not all_finite(X)


def test_a_target_with_a_class_per_row_is_refused_before_anything_is_allocated():
    """Issue 33: an ID column as the target built an n x n evidence matrix (10 000 rows:
    2.4 GB). It is refused up front, naming the classes and the memory."""
    import resource

    from treekit_core import ForestClassifier, TreeClassifier

    n = 10_000
    X = np.random.default_rng(0).normal(size=(n, 3))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for estimator in (TreeClassifier(), ForestClassifier(n_estimators=2)):
        with pytest.raises(ValueError, match=r"10000 classes among 10000 rows.*2\.2 GiB.*ID col"):
            estimator.fit(X, np.arange(n))
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 200 * 1024  # nothing near the n x n matrix (763 MiB) was allocated


def test_the_class_statistics_limit_follows_rows_times_classes(monkeypatch):
    from treekit_core import TreeClassifier
    from treekit_core.engine import validation

    X = np.zeros((40, 1))
    y = np.arange(40) % 8
    monkeypatch.setattr(validation, "MAX_STATISTICS_BYTES", 3 * 40 * 8 * 8)
    TreeClassifier().fit(X, y)  # exactly at the limit: fitted
    with pytest.raises(ValueError, match="9 classes among 40 rows") as refused:
        TreeClassifier().fit(X, np.arange(40) % 9)
    assert "ID column" not in str(refused.value)  # 9 classes in 40 rows is no ID column


def test_counterexamples_with_too_many_classes_are_refused_by_the_same_rule(monkeypatch):
    """The class-statistics limit applies to counterexample rows too (the plugin that reads
    them, registered here, since core tests start from the built-ins only)."""
    plugin = pytest.importorskip("treekit_counterexample")
    from treekit_core.engine import validation

    monkeypatch.setattr(validation, "MAX_STATISTICS_BYTES", 3 * 40 * 8 * 8)
    with registered(plugin, name="treekit-counterexample"):
        model = TreeClassifier(criterion="counterexample_entropy", labeler="complementary")
        with pytest.raises(ValueError, match="counterexamples has 9 classes among 40 rows"):
            model.fit(np.zeros((40, 1)), counterexamples=np.eye(40, 9))
        model.fit(np.zeros((40, 1)), counterexamples=np.eye(40, 8))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 300),
    d=st.integers(1, 6),
    missing=st.floats(0.0, 1.0),
    fortran=st.booleans(),
    threads=st.sampled_from([1, 2]),
)
def test_column_spans_are_numpy_s_nan_skipping_max_minus_min(
    seed, n, d, missing, fortran, threads, monkeypatch
):
    """One compiled pass (blocks of rows on threads) gives fmax - fmin down the rows:
    NaN skipped, NaN for an all-missing column, infinities as numpy takes them."""
    from treekit_core.engine import validation

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 10.0 ** rng.integers(-8, 8, size=d)
    X[rng.random(X.shape) < missing] = np.nan
    if seed % 5 == 0:
        X[0, 0] = np.inf
    if fortran:
        X = np.asfortranarray(X)
    from treekit_core.kernels import row_chunks, usable_cpus

    monkeypatch.setattr(validation, "PARALLEL_SPAN_VALUES", 1)
    monkeypatch.setattr(usable_cpus, "fit_threads", lambda: threads)
    monkeypatch.setattr(row_chunks, "PARALLEL_ROWS", 0)  # blocks of a few rows on threads
    with np.errstate(invalid="ignore"):
        expected = np.fmax.reduce(X, axis=0) - np.fmin.reduce(X, axis=0)
    np.testing.assert_array_equal(validation.column_spans(X), expected)

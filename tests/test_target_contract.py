"""A target kind written here through the public contract only (issue 35): two
measurements per sample, a node stores both means. It fits, predicts, prunes, saves and
loads without a line of the core knowing it; scikit-learn's multi-output regression tree
is the peer (its squared error is the mean of the outputs' variances, ours their sum: the
same splits, and cost-complexity alphas twice scikit-learn's)."""

import json
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeRegressor

from treekit_core import (
    Criterion,
    ForestClassifier,
    Target,
    TargetRows,
    TreeClassifier,
    hookimpl,
    registered,
)


def summed_variance(sums, total_weight, params):
    """Variance of the first output plus that of the second; rows are (y1, y2, y1², y2²)."""
    if total_weight <= 0.0:
        return 0.0
    total = 0.0
    for j in range(2):
        mean = sums[j] / total_weight
        total += sums[2 + j] / total_weight - mean * mean
    return total if total > 0.0 else 0.0


class SummedVariance(Criterion):
    name = "summed_variance"
    evidence = "two_means"
    default_target = "two_means"
    impurity = staticmethod(summed_variance)


class TwoMeans(Target):
    name = "two_means"
    evidence = "two_means"
    decides_with_labeler = False

    def encode(self, y, n_samples, **given):
        y = np.asarray(y, dtype=np.float64)
        if y.shape != (n_samples, 2) or not np.isfinite(y).all():
            raise ValueError(f"y must be {n_samples} rows of two finite numbers")
        return TargetRows(np.column_stack([y, y**2]))

    def node_values(self, statistics, weights, labeler):
        return statistics[:, :2] / weights[:, None], np.zeros(len(weights), dtype=np.int64)

    def decide(self, values, labeler):
        return np.zeros(values.shape[0], dtype=np.int64)

    def predictions(self, values, decisions, labels):
        return values

    def node_risk(self, statistics, weights, labeler):
        return (statistics[:, 2:] - statistics[:, :2] ** 2 / weights[:, None]).sum(axis=1)

    def sample_loss(self, rows, values, decisions, labeler):
        return ((rows[:, :2] - values) ** 2).sum(axis=1)

    def strata(self, rows, labeler):
        return np.zeros(rows.shape[0], dtype=np.int64)

    def check_tree(self, tree, labels):
        if tree.statistics.shape[1] != 4:
            raise ValueError("tree field 'statistics' must have 4 columns (y1, y2, y1², y2²)")


class ToyPlugin:
    @hookimpl
    def treekit_targets(self):
        return [TwoMeans]

    @hookimpl
    def treekit_criteria(self):
        return [SummedVariance]


@pytest.fixture
def toy():
    with registered(ToyPlugin(), name="toy-target"):
        yield


def data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.column_stack(
        [np.where(X[:, 0] > 0, 2.0, -1.0) + X[:, 1], np.where(X[:, 2] > 0.5, 5.0, 0.0)]
    ) + rng.normal(scale=0.3, size=(n, 2))
    return X, y


def model(**params):
    return TreeClassifier(criterion="summed_variance", **params)


def test_the_target_follows_from_the_criterion_and_leaves_hold_both_means(toy):
    X, y = data()
    fitted = model(max_depth=3).fit(X, y)
    assert fitted.composition_.target.name == "two_means"
    assert not hasattr(fitted, "classes_")
    predicted = fitted.predict(X)
    leaves = fitted.apply(X)
    for leaf in np.unique(leaves):  # hand computation: the mean of each leaf's rows
        rows = leaves == leaf
        expected = np.broadcast_to(y[rows].mean(axis=0), (rows.sum(), 2))
        np.testing.assert_allclose(predicted[rows], expected, rtol=1e-12)


def test_the_tree_is_scikit_learns_multi_output_regression_tree(toy):
    X, y = data(seed=1)
    ours = model(max_depth=4, min_samples_leaf=5).fit(X, y)
    peer = DecisionTreeRegressor(max_depth=4, min_samples_leaf=5).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), peer.predict(X), rtol=1e-10, atol=1e-10)
    assert ours.tree_.n_nodes == peer.tree_.node_count


def test_cost_complexity_pruning_prunes_as_scikit_learn_at_twice_its_alpha(toy):
    X, y = data(seed=2)
    peer = DecisionTreeRegressor(random_state=0).fit(X, y)
    alphas = peer.cost_complexity_pruning_path(X, y).ccp_alphas
    for alpha in alphas[[-4, -3, -2]]:
        peer = DecisionTreeRegressor(ccp_alpha=alpha * 1.000001, random_state=0).fit(X, y)
        ours = model(pruner="cost_complexity", pruner_params={"alpha": 2 * alpha * 1.000001})
        ours.fit(X, y)
        assert ours.get_n_leaves() == peer.get_n_leaves()
        np.testing.assert_allclose(ours.predict(X), peer.predict(X), rtol=1e-9, atol=1e-9)


def test_cross_validated_pruning_chooses_among_the_subtrees(toy):
    X, y = data(seed=3)
    ours = model(pruner="cost_complexity", pruner_params={"cv": 3, "seed": 0}).fit(X, y)
    path = ours.pruning_path_
    assert np.isfinite(path["cv_error"]).all()
    # the error of a subtree is the held-out squared error, summed over both outputs
    assert path["cv_error"].min() < path["cv_error"][-1]  # better than the root alone
    assert 1 < ours.get_n_leaves() < ours._grown_tree.n_leaves


def test_saved_and_pickled_models_predict_identically(toy):
    X, y = data(seed=4)
    fitted = model(max_depth=5, pruner="cost_complexity", pruner_params={"alpha": 0.05})
    fitted.fit(X, y)
    text = fitted.to_json()
    assert json.loads(text)["params"]["target"] is None
    assert json.loads(text)["composition"]["target"]["name"] == "two_means"
    for copy in (TreeClassifier.from_json(text), pickle.loads(pickle.dumps(fitted))):
        np.testing.assert_array_equal(copy.predict(X), fitted.predict(X))
    payload = json.loads(text)
    payload["tree"]["statistics"] = [row[:3] for row in payload["tree"]["statistics"]]
    with pytest.raises(ValueError, match="'statistics' must have 4 columns"):
        TreeClassifier.from_json(json.dumps(payload))


def test_score_is_minus_the_mean_loss_and_label_methods_refuse(toy):
    X, y = data(seed=5)
    fitted = model(max_depth=3).fit(X, y)
    expected = -((fitted.predict(X) - y) ** 2).sum(axis=1).mean()
    assert fitted.score(X, y) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="target 'two_means' predicts values"):
        fitted.predict_proba(X)
    # issue 38: a tree predicting values prints them, as scikit-learn prints a regressor's
    leaf = int(np.flatnonzero(fitted.tree_.is_leaf)[0])
    value = ", ".join(f"{v:.4f}" for v in fitted.tree_.value[leaf])
    assert f"value: [{value}]" in fitted.export_text()
    with pytest.raises(ValueError, match="ForestClassifier needs a target .* 'two_means'"):
        ForestClassifier(criterion="summed_variance", n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="y must be 400 rows of two finite numbers"):
        model().fit(X, y[:, 0])


def test_a_criterion_of_other_rows_is_refused_naming_both(toy):
    X, y = data()
    with pytest.raises(ValueError, match="target 'two_means' cannot be combined with criterion"):
        TreeClassifier(target="two_means").fit(X, y)
    with pytest.raises(ValueError, match="target 'class_labels' cannot be combined with"):
        TreeClassifier(criterion="summed_variance", target="class_labels").fit(X, y[:, 0] > 0)


def test_the_conformance_kit_passes_the_toy_target_and_the_built_in_one(toy):
    from treekit_core.builtins import ClassLabels
    from treekit_core.testing import check_component, small_data

    X, _ = small_data(2)
    y = np.column_stack([X[:, 0], X[:, 1] * 2.0])
    check_component(TwoMeans, y=y)
    check_component(SummedVariance, y=y)
    check_component(ClassLabels)


def test_the_conformance_kit_catches_a_risk_that_grows_by_splitting(toy):
    from treekit_core.testing import ConformanceError, check_target, small_data

    class Broken(TwoMeans):
        name = "broken_means"

        def node_risk(self, statistics, weights, labeler):
            return np.sqrt(weights)  # a split's two square roots exceed the parent's

    X, _ = small_data(2)
    with pytest.raises(ConformanceError, match="splitting a node raised its risk"):
        check_target(Broken, y=np.column_stack([X[:, 0], X[:, 1]]), criterion="summed_variance")


def test_a_file_without_labels_for_a_target_with_labels_is_refused():
    from treekit_core import ModelFileError

    X, y = data()
    payload = json.loads(TreeClassifier(max_depth=2).fit(X, y[:, 0] > 0).to_json())
    payload["classes"] = None
    with pytest.raises(ModelFileError, match="'classes' is null, but target 'class_labels'"):
        TreeClassifier.from_json(json.dumps(payload))


def test_the_conformance_kit_catches_a_category_order_column_the_order_does_not_follow():
    """The subset search computes a declared order column's shares in its kernel instead of
    calling ``category_order``: a declaration the order does not follow is caught; the
    built-in targets' declarations (class shares, means) agree with their orders."""
    from treekit_core.builtins.targets import ClassLabels, Mean
    from treekit_core.testing import ConformanceError, check_target, small_data

    class WrongColumn(ClassLabels):
        name = "wrong_column"

        def category_order_column(self, n_statistics):
            return 0  # the default order reads the share of column 1

    with pytest.raises(ConformanceError, match="category_order_column says column 0"):
        check_target(WrongColumn)
    assert ClassLabels().category_order_column(2) == 1
    assert ClassLabels().category_order_column(3) == -1  # no known order for 3 classes

    class ClaimsNoOrder(Mean):
        name = "claims_no_order"

        def category_order_column(self, n_statistics):
            return -1  # but Mean orders categories by their means

    with pytest.raises(ConformanceError, match="says -1 \\(no order\\)"):
        check_target(ClaimsNoOrder, y=small_data(2)[0][:, 0], criterion="squared_error")
    assert Mean().category_order_column(2) == 0
    X, _ = small_data(2)
    check_target(Mean, y=X[:, 0], criterion="squared_error")


@settings(max_examples=30, deadline=None)
@given(
    width=st.integers(1, 6),
    n=st.integers(0, 50),
    fortran=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_row_table_is_the_weight_then_the_weighted_rows(width, n, fortran, seed):
    """kernels.row_table, what every grower reads: the weight, then each row times its
    weight, bit for bit numpy's product, however it is computed (a column at a time for
    up to three statistics, the whole block beyond)."""
    from treekit_core.kernels import row_table

    rng = np.random.default_rng(seed)
    evidence = rng.normal(size=(n, width))
    if fortran:
        evidence = np.asfortranarray(evidence)
    weight = rng.random(n) * 3
    table = row_table(evidence, weight)
    assert table.shape == (n, 1 + width) and table.flags.c_contiguous
    assert np.array_equal(table, np.column_stack([weight, evidence * weight[:, None]]))

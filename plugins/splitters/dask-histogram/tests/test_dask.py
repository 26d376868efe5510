"""The Dask estimators grow the in-memory histogram tree exactly (integer-valued data,
partitions of unequal sizes, a DataFrame with a category column), predict Dask and NumPy
inputs alike, hand over the local model, and refuse what they cannot do by name."""

import functools
import json
import os

import numpy as np
import pandas as pd
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

from treekit_dask import DaskTreeClassifier, DaskTreeRegressor  # noqa: E402

from treekit_core import CompositionError, TreeClassifier, TreeRegressor  # noqa: E402

CHUNKS = (70, 13, 150, 1, 66)  # unequal partitions, one of a single row


def integer_data(seed=0, n=300, d=5, missing=False):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 12, size=(n, d)).astype(np.float64)
    if missing:
        X[rng.random((n, d)) < 0.08] = np.nan
    signal = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) + rng.integers(-3, 4, size=n)
    return X, signal


def same_tree(a, b, statistics_rtol=0.0, statistics_atol=0.0):
    """The same tree: questions, rows per node and node sums (exactly, unless the target's
    rows or weights are not integers: Poisson's y log y, balanced class weights, sum to the
    last bits in partition order)."""
    for field in ("feature", "threshold", "n_samples", "child_ids"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
    np.testing.assert_allclose(
        a.statistics, b.statistics, rtol=statistics_rtol, atol=statistics_atol
    )


@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize(
    "params",
    [{}, {"criterion": "entropy", "min_samples_leaf": 5}, {"max_depth": 4, "min_samples_split": 9}],
)
def test_classifier_grows_the_in_memory_histogram_tree(client, params, missing):
    X, signal = integer_data(missing=missing)
    y = np.where(signal > 0, "yes", "no")
    local = TreeClassifier(splitter="histogram", **params).fit(X, y)
    model = DaskTreeClassifier(**params).fit(
        da.from_array(X, chunks=(CHUNKS, 5)), da.from_array(y, chunks=(CHUNKS,))
    )
    same_tree(model.to_local().tree_, local.tree_)
    X_test, _ = integer_data(seed=1, missing=missing)
    np.testing.assert_array_equal(model.predict_proba(X_test), local.predict_proba(X_test))
    assert list(model.classes_) == ["no", "yes"]


def test_regressor_grows_the_in_memory_histogram_tree(client):
    X, signal = integer_data(seed=2)
    y = signal * 3  # integer responses: sums are exact in any order
    for params in ({}, {"criterion": "poisson", "min_samples_leaf": 4}):
        response = y - y.min() if params else y
        local = TreeRegressor(splitter="histogram", **params).fit(X, response)
        model = DaskTreeRegressor(**params).fit(
            da.from_array(X, chunks=(CHUNKS, 5)), da.from_array(response, chunks=(CHUNKS,))
        )
        same_tree(model.to_local().tree_, local.tree_, 1e-13 if params else 0.0)
        np.testing.assert_array_equal(model.predict(X), local.predict(X))


def test_float_responses_agree_to_rounding(client):
    X, signal = integer_data(seed=3)
    y = signal + np.random.default_rng(3).normal(scale=0.1, size=signal.size)
    local = TreeRegressor(splitter="histogram", min_samples_leaf=5).fit(X, y)
    model = DaskTreeRegressor(min_samples_leaf=5).fit(
        da.from_array(X, chunks=(CHUNKS, 5)), da.from_array(y, chunks=(CHUNKS,))
    )
    np.testing.assert_allclose(model.predict(X), local.predict(X), rtol=0, atol=1e-9)


def test_a_dataframe_with_a_category_column(client):
    X, signal = integer_data(seed=4, d=3)
    rng = np.random.default_rng(4)
    site = rng.choice(["north", "south", "east", "west"], size=X.shape[0])
    effect = pd.Series(site).map({"north": 4, "south": -4, "east": 1, "west": 0}).to_numpy()
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(site=pd.Categorical(site))
    y = (signal + effect > 0).astype(int)
    local = TreeClassifier(splitter="histogram", min_samples_leaf=3).fit(frame, y)
    assert "subset" in [q.name for q in local.tree_.questions]  # the category is asked
    parts = dd.from_pandas(frame, npartitions=4)
    labels = dd.from_pandas(pd.Series(y), npartitions=4)
    model = DaskTreeClassifier(min_samples_leaf=3).fit(parts, labels)
    same_tree(model.to_local().tree_, local.tree_)
    predicted = model.predict_proba(parts)
    assert isinstance(predicted, da.Array)
    np.testing.assert_array_equal(predicted.compute(), local.predict_proba(frame))


def test_predict_returns_dask_for_dask_and_numpy_for_numpy(client):
    X, signal = integer_data(seed=5)
    y = (signal > 0).astype(int)
    model = DaskTreeClassifier(max_depth=3).fit(da.from_array(X, chunks=(CHUNKS, 5)), y)
    lazy = model.predict(da.from_array(X, chunks=(100, 5)))
    assert isinstance(lazy, da.Array)
    eager = model.predict(X)
    assert isinstance(eager, np.ndarray)
    np.testing.assert_array_equal(lazy.compute(), eager)


def test_to_local_keeps_json_and_pruning(client):
    X, signal = integer_data(seed=6)
    y = (signal > 0).astype(int)
    params = {"pruner": "cost_complexity", "pruner_params": {"alpha": 0.01}}
    model = DaskTreeClassifier(**params).fit(da.from_array(X, chunks=(CHUNKS, 5)), y)
    local = TreeClassifier(splitter="histogram", **params).fit(X, y)
    same_tree(model.to_local().tree_, local.tree_)
    again = TreeClassifier.from_json(model.to_local().to_json())
    np.testing.assert_array_equal(again.predict_proba(X), local.predict_proba(X))
    assert json.loads(model.to_local().to_json())["params"]["splitter"] == "histogram"


def test_levels_report_what_travels(client):
    X, signal = integer_data(seed=7)
    model = DaskTreeClassifier(max_depth=3).fit(
        da.from_array(X, chunks=(CHUNKS, 5)), (signal > 0).astype(int)
    )
    assert [level.depth for level in model.levels_] == [0, 1, 2]
    for level in model.levels_:
        # one histogram per node asked: features x (bins + 1) x (count, weight, 2 sums)
        assert level.bytes_to_client == level.histograms * 5 * 256 * 4 * 8


def test_refusals_name_what_is_missing(client):
    X, signal = integer_data(seed=8)
    y = (signal > 0).astype(int)
    dX = da.from_array(X, chunks=(CHUNKS, 5))
    with pytest.raises(CompositionError, match="splitter 'exhaustive' cannot grow"):
        DaskTreeClassifier(splitter="exhaustive").fit(dX, y)
    with pytest.raises(CompositionError, match="propagator 'surrogate' cannot grow"):
        DaskTreeClassifier(propagator="surrogate").fit(dX, y)
    with pytest.raises(CompositionError, match="pruner 'pessimistic'"):
        DaskTreeClassifier(pruner="pessimistic").fit(dX, y)
    with pytest.raises(ValueError, match="max_bins"):
        DaskTreeClassifier(max_bins=1).fit(dX, y)
    bad = X.copy()
    bad[3, 2] = np.inf
    with pytest.raises(ValueError, match="X column 2 holds an infinite value"):
        DaskTreeClassifier().fit(da.from_array(bad, chunks=(CHUNKS, 5)), y)
    with pytest.raises(ValueError, match="sample_weight"):
        DaskTreeClassifier().fit(dX, y, sample_weight=-np.ones(X.shape[0]))
    with pytest.raises(ValueError, match="y has 2 columns of class labels"):
        DaskTreeClassifier().fit(dX, np.column_stack([y, 1 - y]))


def _weights_killing_a_worker(block, marker):
    """Unit weights, but the first call on this machine kills the worker running it (a
    call on an empty block is Dask working out the output's type, in the caller)."""
    if block.shape[0] > 0 and (marker is None or not os.path.exists(marker)):
        if marker is not None:
            open(marker, "w").close()
        os._exit(1)
    return np.ones(block.shape[0])


def test_a_worker_lost_mid_fit_is_replaced_and_the_fit_completes(client, tmp_path):
    X, signal = integer_data(seed=9)
    y = (signal > 0).astype(int)
    dX = da.from_array(X, chunks=(CHUNKS, 5))
    weights = dX.map_blocks(
        _weights_killing_a_worker, str(tmp_path / "killed"), drop_axis=1, dtype=float
    )
    model = DaskTreeClassifier(min_samples_leaf=3).fit(dX, y, sample_weight=weights)
    assert (tmp_path / "killed").exists()  # a worker died on the way
    local = TreeClassifier(splitter="histogram", min_samples_leaf=3).fit(X, y)
    same_tree(model.to_local().tree_, local.tree_)


def test_a_task_that_keeps_killing_workers_fails_the_fit_clearly(client):
    X, signal = integer_data(seed=10, n=40)
    dX = da.from_array(X, chunks=(20, 5))
    weights = dX.map_blocks(_weights_killing_a_worker, None, drop_axis=1, dtype=float)
    with pytest.raises(RuntimeError, match="killed every worker"):
        DaskTreeClassifier().fit(dX, (signal > 0).astype(int), sample_weight=weights)
    client.wait_for_workers(2, timeout=60)


@pytest.mark.parametrize("regression", [False, True])
def test_cv_folds_grow_in_the_same_passes_and_choose_as_in_memory(client, regression):
    """Cost-complexity pruning chosen by 5-fold CV: the fold trees grow over the cluster
    beside the tree; their held-out errors equal those of fold trees grown in memory on the
    same folds (few values per feature, so every fold's bins are the whole data's)."""
    from treekit_dask.partitions import folds_of

    from treekit_core import apply_tree
    from treekit_core.builtins import CostComplexity

    rng = np.random.default_rng(11)
    X = rng.integers(0, 5, size=(400, 4)).astype(np.float64)
    signal = X[:, 0] - X[:, 1] + rng.integers(-2, 3, size=400)
    y = signal.astype(float) if regression else (signal > 0).astype(int)
    estimator, local_class = (
        (DaskTreeRegressor, TreeRegressor) if regression else (DaskTreeClassifier, TreeClassifier)
    )
    params = {"pruner": "cost_complexity", "pruner_params": {"cv": 5, "rule": "one_se"}}
    model = estimator(**params).fit(da.from_array(X, chunks=((90, 110, 200), 4)), y)

    # the same computation in memory, fold by fold
    grown = local_class(splitter="histogram").fit(X, y)
    composition, pruner = grown.composition_, CostComplexity(cv=5, rule="one_se")
    target, labeler = composition.target, composition.labeler
    levels, evaluate_at = pruner.level_alphas(grown.tree_, labeler, target)
    fold = folds_of(0, X.shape[0], 5)
    errors = np.zeros((levels.size, X.shape[0]))
    evidence = target.encode(y, y.shape[0]).rows
    for k in range(5):
        test = fold == k
        fold_tree = local_class(splitter="histogram").fit(X[~test], y[~test]).tree_
        sequence = pruner.pruning_sequence(fold_tree, labeler, target)
        for j, alpha in enumerate(evaluate_at):
            pruned = fold_tree.collapse(sequence.prune_mask(alpha, fold_tree.n_nodes))
            values = pruned.value[apply_tree(pruned, X[test])]
            decisions = target.decide(values, labeler)
            errors[j, test] = target.sample_loss(evidence[test], values, decisions, labeler)
    cv_error = errors.mean(axis=1)
    cv_se = np.sqrt(((errors - cv_error[:, None]) ** 2).mean(axis=1) / X.shape[0])
    path = model.to_local().pruning_path_
    np.testing.assert_allclose(path["alphas"], levels, rtol=1e-12)
    np.testing.assert_allclose(path["cv_error"], cv_error, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(path["cv_std_error"], cv_se, rtol=1e-6, atol=1e-12)
    best = int(np.flatnonzero(cv_error <= cv_error.min() + 1e-12)[-1])
    chosen = int(np.flatnonzero(cv_error <= cv_error.min() + cv_se[best] + 1e-12)[-1])
    assert np.flatnonzero(path["selected"])[0] == chosen
    assert model.to_local().tree_.n_nodes < grown.tree_.n_nodes  # it pruned


@pytest.mark.parametrize("class_weight", ["balanced", {"yes": 3.0}, {"no": 0.0, "yes": 1.0}])
def test_class_weight_as_in_memory(client, class_weight):
    X, signal = integer_data(seed=12)
    y = np.where(signal > 2, "yes", "no")  # imbalanced
    weights = np.random.default_rng(12).integers(0, 3, size=y.size).astype(float)
    params = {"class_weight": class_weight, "min_samples_leaf": 2}
    if class_weight == {"no": 0.0, "yes": 1.0}:
        y[:3] = ["no", "yes", "yes"]
    local = TreeClassifier(splitter="histogram", **params).fit(X, y, sample_weight=weights)
    model = DaskTreeClassifier(**params).fit(
        da.from_array(X, chunks=(CHUNKS, 5)),
        da.from_array(y, chunks=(CHUNKS,)),
        sample_weight=da.from_array(weights, chunks=(CHUNKS,)),
    )
    same_tree(model.to_local().tree_, local.tree_, 1e-13, 1e-12)
    np.testing.assert_allclose(model.predict_proba(X), local.predict_proba(X), rtol=0, atol=1e-12)


def test_categorical_features_of_a_dask_array(client):
    """Numeric codes declared nominal: the in-memory tree's subset questions."""
    X, signal = integer_data(seed=13, d=4)
    X[:, 3] = np.random.default_rng(13).integers(0, 6, size=X.shape[0])
    y = (signal + np.where(np.isin(X[:, 3], [1, 4]), 5, -2) > 0).astype(int)
    params = {"categorical_features": [3], "min_samples_leaf": 4}
    local = TreeClassifier(splitter="histogram", **params).fit(X, y)
    assert "subset" in [q.name for q in local.tree_.questions]
    model = DaskTreeClassifier(**params).fit(da.from_array(X, chunks=(CHUNKS, 4)), y)
    same_tree(model.to_local().tree_, local.tree_)
    np.testing.assert_array_equal(model.predict_proba(X), local.predict_proba(X))


@pytest.mark.parametrize("regression", [False, True])
@pytest.mark.parametrize(
    "constraints",
    [
        {"monotonic_cst": [1, -1, 0, 0, 0]},
        {"interaction_cst": [[0, 2], [1, 3, 4]]},
        {"monotonic_cst": [1, 0, 0, -1, 0], "interaction_cst": [[0, 1], [2, 3, 4]]},
    ],
)
def test_constraints_as_in_memory(client, constraints, regression):
    """Monotonic and interaction constraints: the in-memory histogram tree (which the
    node-by-node loop grows under them), intervals included."""
    X, signal = integer_data(seed=14, missing=True)
    y = signal * 2 if regression else (signal > 0).astype(int)
    local_class, estimator = (
        (TreeRegressor, DaskTreeRegressor) if regression else (TreeClassifier, DaskTreeClassifier)
    )
    params = {"min_samples_leaf": 3, **constraints}
    local = local_class(splitter="histogram", **params).fit(X, y)
    model = estimator(**params).fit(da.from_array(X, chunks=(CHUNKS, 5)), y)
    same_tree(model.to_local().tree_, local.tree_)
    for field in ("value_lower", "value_upper"):
        if "monotonic_cst" in constraints:
            np.testing.assert_array_equal(
                model.to_local().tree_.node_fields[field], local.tree_.node_fields[field]
            )
    predict = "predict" if regression else "predict_proba"
    np.testing.assert_array_equal(getattr(model, predict)(X), getattr(local, predict)(X))


def _frame_with_missing_categories(seed, n=300):
    """Three integer columns (one with missing values) and a category column of which about
    15% is missing."""
    X, signal = integer_data(seed=seed, n=n, d=3)
    X[np.random.default_rng(seed + 1).random(n) < 0.05, 2] = np.nan
    rng = np.random.default_rng(seed)
    site = rng.choice(["north", "south", "east", "west"], size=n).astype(object)
    effect = pd.Series(site).map({"north": 4, "south": -4, "east": 1, "west": 0}).to_numpy()
    site[rng.random(n) < 0.15] = np.nan
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(site=pd.Categorical(site))
    return frame, signal + effect


@pytest.mark.parametrize("regression", [False, True])
def test_rows_missing_a_category_go_down_both_branches_as_in_memory(client, regression):
    """A row missing the category a subset question asks goes to both children weighted by
    the known weight's shares (in memory: the hard propagator, C4.5's rule); the workers
    keep it as two entries, and the tree, its node sums and its predictions are the
    in-memory histogram tree's."""
    frame, signal = _frame_with_missing_categories(15)
    y = signal * 2 if regression else (signal > 0).astype(int)
    local_class, estimator = (
        (TreeRegressor, DaskTreeRegressor) if regression else (TreeClassifier, DaskTreeClassifier)
    )
    local = local_class(splitter="histogram", min_samples_leaf=3).fit(frame, y)
    tree = local.tree_
    subset = [q.name for q in tree.questions].index("subset")
    asks = np.flatnonzero(tree.question == subset)
    left_share = tree.child_shares[tree.child_start[asks]]
    assert ((left_share > 0) & (left_share < 1)).sum() >= 2  # rows divide at several nodes
    parts = dd.from_pandas(frame, npartitions=4)
    model = estimator(min_samples_leaf=3).fit(parts, dd.from_pandas(pd.Series(y), npartitions=4))
    # weights are shares of rows: sums of fractions agree to rounding, rows counted exactly
    same_tree(model.to_local().tree_, tree, 1e-13, 1e-12)
    np.testing.assert_allclose(model.to_local().tree_.child_shares, tree.child_shares, rtol=1e-13)
    predict = "predict" if regression else "predict_proba"
    np.testing.assert_allclose(
        getattr(model, predict)(frame), getattr(local, predict)(frame), rtol=0, atol=1e-12
    )


def test_cv_with_rows_missing_a_category_mixes_their_predictions(client):
    """Held-out rows missing a category are predicted by their fold tree's leaves mixed
    by the shares (the hard evaluator's rule), at every level of the pruning path: the CV
    errors equal fold trees grown and evaluated in memory on the same folds."""
    from treekit_dask.partitions import folds_of

    from treekit_core.builtins import CostComplexity

    frame, signal = _frame_with_missing_categories(16, n=400)
    y = (signal > 0).astype(int)
    # column a misses values in fold 0 only: the tree grown without fold 0 saw no missing a,
    # and its held-out rows are mixed by its children's weights wherever it asks a
    fold = folds_of(0, len(frame), 4)
    frame.loc[(fold == 0) & (np.random.default_rng(17).random(len(frame)) < 0.5), "a"] = np.nan
    # (leaves of 4 rows or more: in smaller nodes two features may cut off the same rows, a
    # tie in real numbers that sums of fractions added in another order may break the
    # other way)
    rules = {"min_samples_leaf": 4}
    params = {"pruner": "cost_complexity", "pruner_params": {"cv": 4}, **rules}
    model = DaskTreeClassifier(**params).fit(
        dd.from_pandas(frame, npartitions=3), dd.from_pandas(pd.Series(y), npartitions=3)
    )
    grown = TreeClassifier(splitter="histogram", **rules).fit(frame, y)
    composition, pruner = grown.composition_, CostComplexity(cv=4)
    target, labeler, evaluator = composition.target, composition.labeler, composition.evaluator
    levels, evaluate_at = pruner.level_alphas(grown.tree_, labeler, target)
    errors = np.zeros((levels.size, len(frame)))
    evidence = target.encode(y, y.shape[0]).rows
    mixed_somewhere = False
    for k in range(4):
        test = fold == k
        fold_model = TreeClassifier(splitter="histogram", **rules).fit(frame[~test], y[~test])
        fold_tree = fold_model.tree_
        sequence = pruner.pruning_sequence(fold_tree, labeler, target)
        held_out = fold_model._checked_for_predict(frame[test])
        with held_out as X_test:
            for j, alpha in enumerate(evaluate_at):
                pruned = fold_tree.collapse(sequence.prune_mask(alpha, fold_tree.n_nodes))
                values = evaluator.predict_distribution(pruned, X_test)
                mixed_somewhere |= bool(((values > 0) & (values < 1)).any())
                decisions = target.decide(values, labeler)
                errors[j, test] = target.sample_loss(evidence[test], values, decisions, labeler)
    assert mixed_somewhere
    path = model.to_local().pruning_path_
    np.testing.assert_allclose(path["alphas"], levels, rtol=1e-12)
    np.testing.assert_allclose(path["cv_error"], errors.mean(axis=1), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "reject", [{"coverage": 0.8}, {"keep_correct": 0.9}, {"max_error": 0.05}, 0.9]
)
def test_reject_rules_on_training_rows_as_in_memory(client, reject):
    """A reject rule chosen on the training rows: the workers sum each distinct (score,
    correct) pair's weight, which is all the rule reads; the threshold and the abstentions
    are the in-memory model's."""
    X, signal = integer_data(seed=18)
    y = np.where(signal > 0, "yes", "no")
    weights = np.random.default_rng(18).integers(1, 4, size=y.size).astype(float)
    params = {"reject": reject, "abstain_value": "?", "max_depth": 4}
    local = TreeClassifier(splitter="histogram", **params).fit(X, y, sample_weight=weights)
    model = DaskTreeClassifier(**params).fit(
        da.from_array(X, chunks=(CHUNKS, 5)),
        da.from_array(y, chunks=(CHUNKS,)),
        sample_weight=da.from_array(weights, chunks=(CHUNKS,)),
    )
    assert model.to_local().reject_threshold_ == local.reject_threshold_
    predicted = model.predict(X)
    np.testing.assert_array_equal(predicted, local.predict(X))
    if not isinstance(reject, float):
        assert "?" in set(predicted)  # it abstains somewhere
    lazy = model.predict(da.from_array(X, chunks=(CHUNKS, 5)))
    assert lazy.dtype == lazy.compute().dtype == predicted.dtype  # declared as computed
    assert model.get_params()["reject"] == reject


@pytest.mark.parametrize("method", ["isotonic", "platt"])
def test_cv_rejection_and_calibration_as_copies_fitted_in_memory(client, method):
    """With cv, the copies of the fit (one per outer fold, grown in the same passes) give
    the out-of-fold scores: the threshold and the calibration equal those an in-memory
    model reaches from copies fitted in memory on the same folds."""
    from treekit_dask.partitions import outer_folds_of

    from treekit_core import OutOfFold

    X, signal = integer_data(seed=19, n=400)
    y = (signal > 0).astype(int)
    reject = {"max_error": 0.1, "cv": 4, "seed": 3}
    calibration = {"method": method, "cv": 3}
    params = {"min_samples_leaf": 5}
    model = DaskTreeClassifier(reject=reject, calibration=calibration, **params).fit(
        da.from_array(X, chunks=((90, 110, 200), 5)), y
    )
    expected = TreeClassifier(splitter="histogram", **params).fit(X, y)
    weight = np.ones(y.size)

    def out_of_fold(n_folds, seed):
        fold = outer_folds_of(0, y.size, n_folds, seed)
        scores, correct, folds = np.zeros(y.size), np.zeros(y.size, bool), []
        for c in range(n_folds):
            test = np.flatnonzero(fold == c)
            train = np.flatnonzero(fold != c)
            copy = TreeClassifier(splitter="histogram", **params).fit(X[train], y[train])
            scores[test], correct[test], _ = copy.decision_scores(X[test], y[test])
            folds.append((copy.decision_scores(X[train], y[train])[0], weight[train], test))
        return OutOfFold(scores, correct, weight, tuple(folds))

    expected.set_params(reject=reject, calibration=calibration)
    expected.fit_decision_rules(
        lambda: expected.decision_scores(X, y), functools.cache(out_of_fold)
    )
    fitted = model.to_local()
    assert fitted.reject_threshold_ == expected.reject_threshold_
    assert fitted.calibration_.method == method
    if method == "isotonic":
        np.testing.assert_array_equal(fitted.calibration_.points_x, expected.calibration_.points_x)
        np.testing.assert_array_equal(fitted.calibration_.points_y, expected.calibration_.points_y)
    else:  # the same maximum-likelihood fit from masses: equal to the optimiser's tolerance
        np.testing.assert_allclose(
            [fitted.calibration_.a, fitted.calibration_.b],
            [expected.calibration_.a, expected.calibration_.b],
            rtol=1e-4,
        )
    np.testing.assert_allclose(
        fitted.decide(X).p_correct, expected.decide(X).p_correct, rtol=1e-4, atol=1e-6
    )


def test_cv_rejection_with_cv_pruned_copies(client):
    """Copies of a fit that prunes by cross-validation grow their own fold trees in the same
    passes (1 + 3 + 2 x (1 + 3) trees here); each copy is the tree cost-complexity pruning
    chooses from its own folds, and the rule's threshold is a step of the model's scores."""
    X, signal = integer_data(seed=20, n=400)
    y = (signal > 0).astype(int)
    params = {"pruner": "cost_complexity", "pruner_params": {"cv": 3}}
    model = DaskTreeClassifier(reject={"coverage": 0.7, "cv": 2}, **params).fit(
        da.from_array(X, chunks=((150, 250), 5)), y
    )
    fitted = model.to_local()
    scores = fitted.decision_scores(X, y)[0]
    assert fitted.reject_threshold_ in set(scores)
    coverage = (scores >= fitted.reject_threshold_).mean()
    assert 0.4 < coverage < 1.0
    assert fitted.tree_.n_nodes < TreeClassifier(splitter="histogram").fit(X, y).tree_.n_nodes


def test_components_that_learn_from_rows_are_refused_before_growth(client):
    """An evaluator or confidence whose fit reads the training rows cannot be finished from
    a tree grown over partitions: refused before any partition is read, naming it; a
    non-hard evaluator is refused with cross-validated pruning (the workers sum held-out
    losses where rows stop)."""
    import attrs

    from treekit_core import Confidence, Evaluator

    @attrs.define(slots=False)
    class MeanShift(Evaluator):
        name = "mean_shift"

        def fit(self, tree, data, labeler):
            return {"mean": data.X.mean(axis=0)}

        def predict_distribution(self, tree, X):  # pragma: no cover - refused before
            raise AssertionError("not reached")

    @attrs.define(slots=False)
    class Spread(Confidence):
        name = "spread"

        def fit(self, tree, data, labeler):
            return {"std": data.X.std(axis=0)}

    @attrs.define(slots=False)
    class Blend(Evaluator):
        name = "blend"
        provides = frozenset()  # mixes leaves: no hard routing
        reads_training_rows = False

    X, signal = integer_data(seed=21)
    dX = da.from_array(X, chunks=(CHUNKS, 5))
    y = (signal > 0).astype(int)
    with pytest.raises(CompositionError, match="evaluator 'mean_shift' learns its state from"):
        DaskTreeClassifier(evaluator=MeanShift()).fit(dX, y)
    with pytest.raises(CompositionError, match="confidence 'spread' learns its state from"):
        DaskTreeClassifier(confidence=Spread()).fit(dX, y)
    with pytest.raises(CompositionError, match="evaluator 'blend' mixes leaves"):
        DaskTreeClassifier(
            evaluator=Blend(), pruner="cost_complexity", pruner_params={"cv": 3}
        ).fit(dX, y)


def test_soft_evaluation_with_given_spreads(client):
    """An evaluator that needs no rows (soft evaluation with its spreads given) evaluates
    the Dask tree as it evaluates the in-memory one."""
    soft = pytest.importorskip("treekit_soft_search")
    from treekit_core import get_registry

    get_registry().register(soft, "treekit-soft-search")
    X, signal = integer_data(seed=22)
    y = (signal > 0).astype(int)
    params = {"evaluator": "soft", "evaluator_params": {"sigma": 0.7}, "max_depth": 5}
    local = TreeClassifier(splitter="histogram", **params).fit(X, y)
    model = DaskTreeClassifier(**params).fit(da.from_array(X, chunks=(CHUNKS, 5)), y)
    same_tree(model.to_local().tree_, local.tree_)
    proba = model.predict_proba(X)
    np.testing.assert_array_equal(proba, local.predict_proba(X))
    assert ((proba > 0.01) & (proba < 0.99)).mean() > 0.5  # soft: most rows mixed
    with pytest.raises(CompositionError, match="evaluator 'soft' learns its state"):
        DaskTreeClassifier(evaluator="soft").fit(da.from_array(X, chunks=(CHUNKS, 5)), y)


@pytest.mark.parametrize("with_missing", [False, True])
def test_quantiles_from_leaf_responses_gathered_at_fit(client, with_missing):
    """With keep_leaf_responses=True every leaf's distinct responses and their weights
    come to the client at fit: the quantiles are the in-memory tree's (integer responses:
    exactly), also where rows missing a tested value count in both leaves by their shares."""
    if with_missing:
        frame, signal = _frame_with_missing_categories(23)
        X, parts = frame, dd.from_pandas(frame, npartitions=4)
    else:
        X, signal = integer_data(seed=23)
        parts = da.from_array(X, chunks=(CHUNKS, 5))
    y = signal * 3
    labels = dd.from_pandas(pd.Series(y), npartitions=4) if with_missing else y
    weights = np.random.default_rng(23).integers(1, 3, size=y.size).astype(float)
    w = dd.from_pandas(pd.Series(weights), npartitions=4) if with_missing else weights
    params = {"min_samples_leaf": 8}
    local = TreeRegressor(splitter="histogram", **params).fit(X, y, sample_weight=weights)
    model = DaskTreeRegressor(keep_leaf_responses=True, **params).fit(
        parts, labels, sample_weight=w
    )
    q = [0.1, 0.5, 0.9]
    expected = local.predict(X, quantiles=q)
    np.testing.assert_array_equal(model.predict(X, quantiles=q), expected)
    assert (expected[:, 2] > expected[:, 0]).mean() > 0.5  # leaves hold spread responses
    lazy = model.predict(parts, quantiles=q)
    assert isinstance(lazy, da.Array)
    np.testing.assert_array_equal(lazy.compute(), expected)
    # quantile-forest's interpolations read a whole weight as repeated rows, so a leaf's
    # equal responses merged into one pair give the in-memory quantiles (not so for the
    # fractional shares of rows missing a tested value; "nearest" breaks its ties by the
    # parity of the cumulative weight, which merging shifts: neither compared)
    for interpolation in () if with_missing else ("linear", "lower", "higher", "midpoint"):
        np.testing.assert_allclose(
            model.predict(X, quantiles=q, interpolation=interpolation),
            local.predict(X, quantiles=q, interpolation=interpolation),
            rtol=1e-12,
            err_msg=interpolation,
        )
    with pytest.raises(ValueError, match="keep_leaf_responses=True"):
        DaskTreeRegressor(**params).fit(parts, labels).predict(X, quantiles=q)


def test_weights_the_in_memory_fit_refuses_are_refused(client):
    """Issue 66: a weight of 1e308 made the weight sum inf, every value NaN and every
    prediction NaN; the partitions check weights as the in-memory fit does, and the sum
    over the partitions is bounded as it is."""
    X, signal = integer_data(seed=5)
    y = signal.astype(float)
    for bad, message in ((1e308, "sample_weight sums to"), (5e-324, "subnormal")):
        weight = np.ones(y.size)
        weight[3] = bad
        with pytest.raises(ValueError, match=message):
            DaskTreeRegressor().fit(
                da.from_array(X, chunks=(CHUNKS, 5)),
                da.from_array(y, chunks=(CHUNKS,)),
                da.from_array(weight, chunks=(CHUNKS,)),
            )
    weight = np.full(y.size, 5e147)  # each partition within bounds, their sum not
    with pytest.raises(ValueError, match="sample_weight sums to .* over the partitions"):
        DaskTreeRegressor().fit(
            da.from_array(X, chunks=(CHUNKS, 5)),
            da.from_array(y, chunks=(CHUNKS,)),
            da.from_array(weight, chunks=(CHUNKS,)),
        )


def test_the_dask_estimators_parameters_are_documented():
    """Issue 58: the Dask estimators document their parameters as the core's do."""
    import inspect

    for estimator in (DaskTreeClassifier, DaskTreeRegressor):
        section = inspect.getdoc(estimator).split("Parameters\n----------", 1)[1]
        listed = {line.split(" ")[0] for line in section.splitlines() if line and line[0] != " "}
        assert set(inspect.signature(estimator.__init__).parameters) - {"self"} <= listed


def test_the_dask_estimators_are_their_local_family_to_scikit_learn():
    """Issue 58: the Dask estimators build on the core's parameter base (get_params,
    set_params, repr, clone) and carry their local estimator's family in their tags."""
    from sklearn.base import clone, is_classifier, is_regressor

    from treekit_core import ParamsMixin

    for dask_class, local_class in (
        (DaskTreeClassifier, TreeClassifier),
        (DaskTreeRegressor, TreeRegressor),
    ):
        model = dask_class(max_depth=3, max_bins=31)
        assert isinstance(model, ParamsMixin)
        assert is_classifier(model) == is_classifier(local_class())
        assert is_regressor(model) == is_regressor(local_class())
        copy = clone(model)
        assert type(copy) is dask_class and copy.get_params() == model.get_params()
        assert repr(model) == f"{dask_class.__name__}(max_depth=3, max_bins=31)"
        with pytest.raises(ValueError, match="invalid parameter 'max_deph'"):
            model.set_params(max_deph=2)

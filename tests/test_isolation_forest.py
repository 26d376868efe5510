"""IsolationForest (issue 64): scikit-learn's parameters and outputs on isolation trees
(treekit_core/estimators/isolation.py, builtins/isolation.py, the random splitter)."""

import json
import math
import pickle

import numpy as np
import pytest

from treekit_core import IsolationForest
from treekit_core.estimators.model_file import ModelFileError


def _planted(seed, n=1000, outliers=50, spread=2.5):
    """Inliers N(0, I) in 8 dimensions, outliers N(0, spread^2 I): label 1 = outlier."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(n, 8)), spread * rng.normal(size=(outliers, 8))])
    return X, np.r_[np.zeros(n), np.ones(outliers)]


def _c(m):
    """c(m) by the paper's formula, H(i) = ln(i) + Euler's constant."""
    if m <= 1:
        return 0.0
    if m == 2:
        return 1.0
    return 2.0 * (math.log(m - 1) + 0.5772156649015329) - 2.0 * (m - 1) / m


def test_score_samples_is_the_hand_computed_isolation_score():
    X, _ = _planted(0, n=300, outliers=10)
    model = IsolationForest(n_estimators=7, max_samples=64, random_state=1).fit(X)
    assert model.max_samples_ == 64
    expected = []
    for x in X[:40]:
        lengths = []
        for tree in model.estimators_:
            node = 0
            while not tree.is_leaf[node]:
                go_left = x[tree.feature[node]] <= tree.threshold[node]
                node = tree.children_left[node] if go_left else tree.children_right[node]
            lengths.append(tree.depth[node] + _c(int(tree.n_samples[node])))
        expected.append(-(2.0 ** (-np.mean(lengths) / _c(64))))
    np.testing.assert_allclose(model.score_samples(X[:40]), expected, rtol=1e-12)
    for tree in model.estimators_:  # a subsample of 64 rows, to depth ceil(log2 64) = 6
        assert tree.n_samples[0] == 64 and tree.max_depth <= 6


def test_predict_decision_function_and_the_auto_offset():
    X, _ = _planted(1)
    model = IsolationForest(random_state=0).fit(X)
    assert model.offset_ == -0.5
    decision = model.decision_function(X)
    np.testing.assert_allclose(decision, model.score_samples(X) + 0.5)
    np.testing.assert_array_equal(model.predict(X), np.where(decision < 0, -1, 1))
    np.testing.assert_array_equal(model.fit_predict(X), model.predict(X))


@pytest.mark.parametrize("contamination", [0.01, 0.05, 0.2])
def test_contamination_sets_the_share_of_training_rows_called_outliers(contamination):
    X, _ = _planted(2)
    model = IsolationForest(contamination=contamination, random_state=0).fit(X)
    flagged = np.mean(model.predict(X) == -1)
    assert abs(flagged - contamination) <= 1.0 / len(X)


def test_roc_auc_is_within_a_hundredth_of_scikit_learns():
    """Mean over 10 seeds of the ROC AUC of -score_samples for the planted outliers."""
    from sklearn.ensemble import IsolationForest as Theirs
    from sklearn.metrics import roc_auc_score

    ours, theirs = [], []
    for seed in range(10):
        X, label = _planted(100 + seed)
        ours.append(
            roc_auc_score(label, -IsolationForest(random_state=seed).fit(X).score_samples(X))
        )
        theirs.append(roc_auc_score(label, -Theirs(random_state=seed).fit(X).score_samples(X)))
    assert abs(np.mean(ours) - np.mean(theirs)) <= 0.01, (np.mean(ours), np.mean(theirs))
    assert np.mean(ours) > 0.8


def test_a_row_missing_a_value_gets_the_shares_average_path_length():
    X, _ = _planted(3, n=400, outliers=20)
    model = IsolationForest(n_estimators=20, random_state=0).fit(X)
    rows = X[:5].copy()
    rows[:, 0] = np.nan
    scores = model.score_samples(rows)
    assert np.isfinite(scores).all() and ((scores < 0) & (scores > -1)).all()


def test_model_files_and_pickles_keep_the_forest():
    X, _ = _planted(4, n=300, outliers=10)
    model = IsolationForest(n_estimators=10, contamination=0.05, random_state=0).fit(X)
    for copy in (IsolationForest.from_json(model.to_json()), pickle.loads(pickle.dumps(model))):
        np.testing.assert_array_equal(copy.score_samples(X), model.score_samples(X))
        np.testing.assert_array_equal(copy.predict(X), model.predict(X))
    payload = json.loads(model.to_json())
    payload["fitted"]["offset_"] = "nan"
    with pytest.raises(ModelFileError, match="'fitted'.offset_ must be a finite number"):
        IsolationForest.from_json(json.dumps(payload))
    payload["fitted"] = {"offset_": -0.5}
    with pytest.raises(ModelFileError, match="'fitted' must be an object with"):
        IsolationForest.from_json(json.dumps(payload))


def test_a_single_row_per_tree_is_refused():
    with pytest.raises(ValueError, match="at least 2 rows per tree, got n_samples=1 and"):
        IsolationForest().fit([[0.0, 1.0]])
    with pytest.raises(ValueError, match="got n_samples=10 and max_samples=1"):
        IsolationForest(max_samples=1).fit(np.zeros((10, 2)))


@pytest.mark.parametrize(
    "params, message",
    [
        ({"contamination": 0.7}, "contamination"),
        ({"max_features": 0.5}, "max_features=1.0"),
        ({"max_samples": 0}, "max_samples"),
        ({"max_samples": "all"}, "max_samples"),
    ],
)
def test_bad_parameters_are_refused_by_name(params, message):
    X, _ = _planted(5, n=100, outliers=5)
    with pytest.raises(ValueError, match=message):
        IsolationForest(**params).fit(X)


def test_small_trees_grow_on_one_thread_whatever_n_jobs_says():
    """Trees of fewer than THREADED_TREE_ROWS rows grow on one thread (their Python work
    outweighs their growth: threads only contend for it), larger ones on n_jobs threads;
    the forest is the same either way."""
    from treekit_core.estimators.isolation import THREADED_TREE_ROWS

    rng = np.random.default_rng(0)
    X = rng.normal(size=(THREADED_TREE_ROWS + 100, 3))
    small = IsolationForest(n_estimators=4, n_jobs=2, random_state=0).fit(X)
    assert small.composition_.parallel_kernels  # one job: kernels may take the threads
    large = IsolationForest(
        n_estimators=4, n_jobs=2, max_samples=THREADED_TREE_ROWS, random_state=0
    ).fit(X)
    assert not large.composition_.parallel_kernels
    alone = IsolationForest(n_estimators=4, n_jobs=1, random_state=0).fit(X)
    np.testing.assert_array_equal(small.score_samples(X), alone.score_samples(X))

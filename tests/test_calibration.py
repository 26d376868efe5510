"""Calibrated confidence: P(the decision is correct | score), isotonic or Platt, fitted on
out-of-fold scores and reported by decide() as p_correct."""

import json

import numpy as np
import pytest

from treekit_core import ForestClassifier, TreeClassifier
from treekit_core.datasets import load_dataset
from treekit_core.engine.calibration import Calibration, isotonic_points
from treekit_core.engine.folds import stratified_folds


def test_isotonic_pools_adjacent_violators_by_hand():
    scores = np.array([0.1, 0.2, 0.3, 0.4])
    correct = np.array([False, True, False, True])
    x, y = isotonic_points(scores, correct, np.ones(4))
    np.testing.assert_allclose(x, [0.1, 0.25, 0.4])  # 0.2 and 0.3 pooled: mean score 0.25
    np.testing.assert_allclose(y, [0.0, 0.5, 1.0])
    fitted = Calibration.fit("isotonic", scores, correct)
    np.testing.assert_allclose(
        fitted.p_correct([0.0, 0.1, 0.175, 0.25, 0.4, 9.0, np.inf]),
        [0.0, 0.0, 0.25, 0.5, 1.0, 1.0, 1.0],
    )


def test_platt_meets_its_first_order_conditions():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=300)
    correct = rng.random(300) < 1 / (1 + np.exp(-2 * scores))
    fitted = Calibration.fit("platt", scores, correct)
    p = fitted.p_correct(scores)
    positives, negatives = correct.sum(), (~correct).sum()
    target = np.where(correct, (positives + 1) / (positives + 2), 1 / (negatives + 2))
    assert abs((p - target).sum()) < 1e-4 and abs(((p - target) * scores).sum()) < 1e-4
    assert fitted.a == pytest.approx(2.0, rel=0.35)  # the curve that made the data
    assert np.all(np.diff(fitted.p_correct(np.sort(scores))) >= 0)


@pytest.mark.parametrize("name", ["wisconsin", "pima"])
@pytest.mark.parametrize("method", ["isotonic", "platt"])
def test_calibrated_p_correct_beats_the_raw_probability_on_held_out_data(name, method):
    data = load_dataset(name, dropna=True)
    _, labels = np.unique(data.y, return_inverse=True)
    fold = stratified_folds(labels, 5, np.random.default_rng(1))
    calibrated, raw = [], []
    for k in range(5):  # outer CV; the calibration runs its own inner CV on each train part
        train, test = fold != k, fold == k
        model = TreeClassifier(calibration=method, random_state=0).fit(data.X[train], data.y[train])
        decision = model.decide(data.X[test])
        correct = (decision.labels == data.y[test]).astype(float)
        calibrated.append(np.mean((decision.p_correct - correct) ** 2))
        raw.append(np.mean((decision.proba.max(axis=1) - correct) ** 2))
    assert np.mean(calibrated) < np.mean(raw)


def test_p_correct_is_none_without_calibration_and_survives_json():
    data = load_dataset("haberman")
    plain = TreeClassifier(max_depth=3).fit(data.X, data.y)
    assert plain.decide(data.X).p_correct is None
    model = TreeClassifier(max_depth=3, calibration={"method": "isotonic", "cv": 3}).fit(
        data.X, data.y
    )
    p = model.decide(data.X).p_correct
    assert p.shape == (len(data.y),) and ((p >= 0) & (p <= 1)).all()
    loaded = TreeClassifier.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.decide(data.X).p_correct, p)
    payload = json.loads(model.to_json())
    payload["calibration"]["points_y"][0] = 2.0
    with pytest.raises(ValueError, match="model file: calibration"):
        TreeClassifier.from_json(json.dumps(payload))
    forest = ForestClassifier(n_estimators=5, random_state=0, calibration="platt").fit(
        data.X, data.y
    )
    p = forest.decide(data.X).p_correct
    assert ((p > 0) & (p < 1)).all()


@pytest.mark.parametrize(
    "bad,message",
    [
        ("beta", "calibration must be one of"),
        ({"method": "isotonic", "cv": 1}, "calibration cv must be an int >= 2"),
        ({"cv": 3}, "calibration needs a method"),
        ({"method": "platt", "folds": 3}, "unknown keys"),
    ],
)
def test_bad_calibration_parameters(bad, message):
    data = load_dataset("haberman")
    with pytest.raises(ValueError, match=message):
        TreeClassifier(calibration=bad).fit(data.X, data.y)

"""The conformance check of a loss (issue 60): what gradient boosting relies on, probed on
small real data of the kind the loss reads."""

from __future__ import annotations

import numpy as np

from treekit_core import BoostingClassifier, BoostingRegressor, BoostingSurvival
from treekit_core.datasets import load_dataset
from treekit_core.testing.common import _fail, _instance, _registered


def loss_example(instance):
    """(X, y for the boosting estimator, the rows the loss reads, the number of classes)
    from a bundled data set of the kind :attr:`Loss.reads` names."""
    if instance.reads == "class labels":
        data = load_dataset("haberman")
        codes = np.unique(data.y, return_inverse=True)[1]
        return data.X, data.y, codes.astype(np.float64), int(codes.max()) + 1
    if instance.reads == "censored follow-up":
        data = load_dataset("veteran")  # y: scikit-survival's structured (event, time)
        y = data.y
        rows = np.column_stack([y["time"], y["event"].astype(np.float64)])
        return data.X, y, rows, 0
    data = load_dataset("quakes")  # magnitudes: > 0, every numeric loss's domain
    y = np.asarray(data.y, dtype=np.float64)
    return data.X, y, y, 0


def check_loss(loss, params=None):
    """A loss's contract, on rows of the kind it reads: ``initial_raw`` of
    :meth:`~treekit_core.Loss.n_raw` finite numbers at which the loss is no worse than a
    step either side; ``gradient_hessian`` n x n_raw, finite, the hessian >= 0, the
    gradient of every row proportional (one positive factor for all rows) to the
    derivative of ``loss`` by central differences; ``gradient_hessian_scored`` those and
    ``loss`` (to 1e-12), every state with :meth:`~treekit_core.Loss.fit_state`'s entries;
    ``leaf_values`` one finite number per node; ``link`` finite, probabilities rows
    summing to 1 for class labels; and a boosting estimator of the kind it reads fits 5
    rounds with finite training scores and predicts after a model-file round trip as
    before."""
    instance = _instance(loss, params)
    X, y_fit, rows, n_classes = loss_example(instance)
    n = rows.shape[0]
    k = instance.n_raw(n_classes)
    weight = np.ones(n)
    start = np.asarray(instance.initial_raw(rows, weight, n_classes), dtype=np.float64)
    if start.shape != (k,) or not np.isfinite(start).all():
        _fail(instance, f"initial_raw must be {k} finite number(s), got {start!r}")
    raw = np.tile(start, (n, 1))
    shared = instance.fit_state(rows, weight)  # once, as fit makes it
    state = {**shared, **instance.round_state(rows, raw, weight)}
    base = instance.loss(rows, raw, weight, state)
    for column in range(k):
        for step in (-0.05, 0.05):
            moved = raw.copy()
            moved[:, column] += step
            if instance.loss(rows, moved, weight, state) < base - 1e-9 * max(1.0, abs(base)):
                _fail(instance, f"initial_raw is not the best constant (column {column})")
    rng = np.random.default_rng(0)
    raw = raw + rng.normal(0, 0.3, raw.shape)
    state = {**shared, **instance.round_state(rows, raw, weight)}
    gradient, hessian = instance.gradient_hessian(rows, raw, state)
    for name, array in (("gradient", gradient), ("hessian", hessian)):
        array = np.asarray(array)
        if array.shape != (n, k) or not np.isfinite(array).all():
            _fail(instance, f"gradient_hessian's {name} must be {n} x {k} finite numbers")
    if (np.asarray(hessian) < 0).any():
        _fail(instance, "gradient_hessian's hessian must be >= 0")
    _check_gradient(instance, rows, raw, weight, state, np.asarray(gradient), rng)
    scored = instance.gradient_hessian_scored(rows, raw, state, weight, state)
    at_raw = instance.loss(rows, raw, weight, state)
    apart = (gradient, hessian, at_raw)
    if len(scored) != 3 or not all(
        np.allclose(found, expected, rtol=1e-12, atol=1e-12 * max(1.0, abs(at_raw)))
        for found, expected in zip(scored, apart, strict=True)
    ):
        _fail(instance, "gradient_hessian_scored is not gradient_hessian's pair and loss")
    leaf = rng.integers(0, 3, n)
    values = instance.leaf_values(rows, raw, gradient, hessian, weight, leaf, 3, 0, 0.0, state)
    if np.asarray(values).shape != (3,) or not np.isfinite(values).all():
        _fail(instance, "leaf_values must give one finite number per node")
    linked = np.asarray(instance.link(raw))
    if not np.isfinite(linked).all() or linked.shape[0] != n:
        _fail(instance, "link must give finite values, one row per raw row")
    if instance.reads == "class labels" and not np.allclose(linked.sum(axis=1), 1.0):
        _fail(instance, "link must give class probabilities summing to 1")
    estimator = {
        "class labels": BoostingClassifier,
        "censored follow-up": BoostingSurvival,
    }.get(instance.reads, BoostingRegressor)
    with _registered(instance):
        model = estimator(
            loss=instance.name,
            loss_params=instance.get_params() or None,
            splitter="exhaustive",
            n_estimators=5,
        ).fit(X, y_fit)
        if not np.isfinite(model.train_score_).all():
            _fail(instance, "the training scores of a 5-round fit are not finite")
        loaded = estimator.from_json(model.to_json())
        if not np.array_equal(loaded.predict(X), model.predict(X)):
            _fail(instance, "a model file does not predict what the model predicts")


def _check_gradient(instance, rows, raw, weight, state, gradient, rng) -> None:
    """Every probed row's gradient, times its weight, is one positive factor times the
    derivative of the loss by central differences (a loss may be a mean, a sum or twice a
    half loss: the factor is free, its sign and constancy are not)."""
    n = rows.shape[0]
    probes = rng.choice(n, size=min(12, n), replace=False)
    ratios = []
    for i in probes:
        for column in range(raw.shape[1]):
            step = 1e-5
            up, down = raw.copy(), raw.copy()
            up[i, column] += step
            down[i, column] -= step
            slope = (
                instance.loss(rows, up, weight, state) - instance.loss(rows, down, weight, state)
            ) / (2 * step)
            g = gradient[i, column] * weight[i]
            if abs(g) > 1e-6 and abs(slope) > 1e-12:
                ratios.append(slope / g)
            elif abs(g) > 1e-6 or abs(slope) * n > 1e-6:
                _fail(instance, f"row {i}: gradient {g:.3g}, the loss's slope {slope:.3g}")
    if not ratios:
        return
    ratios = np.asarray(ratios)
    if (ratios <= 0).any() or np.ptp(ratios) > 1e-3 * np.abs(ratios).max():
        _fail(instance, "the gradient is not the derivative of the loss (up to one factor)")

"""Prediction intervals and prediction sets that keep their promise (issue 63).

Split conformal prediction (Vovk et al. 2005; Lei et al. 2018): on n rows the model did not
train on (the conformal rows), each row's score s_i says how wrong the model was there;
the score of a new row is below the ceil((1 - alpha)(n + 1))-th smallest of them with
probability at least 1 - alpha whenever the rows are exchangeable, whatever the model
(and at most 1 - alpha + 1 / (n + 1) for continuous scores).

- ``"conformal"``: s = |y - prediction|; the interval is the prediction -+ that quantile.
- ``"cqr"``: conformalised quantile regression (Romano, Patterson & Candes 2019): with
  the model's quantiles q_lo = Q(alpha / 2) and q_hi = Q(1 - alpha / 2),
  s = max(q_lo - y, y - q_hi); the interval is [q_lo - quantile, q_hi + quantile].
- ``"quantile"``: the raw quantiles [Q(alpha / 2), Q(1 - alpha / 2)], no guarantee.
- A forest fitted with ``oob_score=True`` and no conformal rows uses its out-of-bag rows:
  the jackknife+-after-bootstrap (Kim, Xu & Barber 2020). Per training row i, mu_-i(x)
  is the mean of the trees that did not draw i and R_i = |y_i - mu_-i(x_i)|; the interval
  is [the floor(alpha (n + 1))-th smallest of mu_-i(x) - R_i, the
  ceil((1 - alpha)(n + 1))-th smallest of mu_-i(x) + R_i] (coverage at least 1 - 2 alpha
  guaranteed, about 1 - alpha in practice).

Classes (adaptive prediction sets, Romano, Sesia & Candes 2020, randomised): with the
classes ranked by predicted probability, a label's score is the probability of the
classes ranked above it plus U times its own (U uniform, drawn from ``random_state``);
the set holds every label whose score is at most the conformal quantile of the conformal
rows' true-label scores.
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from treekit_core.estimators.inputs import _rng, number_of_rows, open_unit_share

INTERVAL_METHODS = ("conformal", "cqr", "quantile")


def check_alpha(alpha) -> float:
    return open_unit_share(alpha, "alpha (the share of rows allowed outside) must be in (0, 1)")


def check_conformal_fraction(fraction) -> None:
    if fraction is not None:
        open_unit_share(
            fraction,
            "conformal_fraction (the share of the rows held out of training to calibrate "
            "intervals and prediction sets) must be None or in (0, 1)",
        )


def conformal_quantile(scores, alpha: float) -> float:
    """The ceil((1 - alpha)(n + 1))-th smallest of the n ``scores`` (inf where that is
    past n: too few rows for the promise)."""
    scores = np.sort(np.asarray(scores, dtype=np.float64))
    rank = math.ceil((1.0 - alpha) * (scores.size + 1))
    return float(scores[rank - 1]) if rank <= scores.size else math.inf


def lower_conformal_quantile(values, alpha: float) -> np.ndarray:
    """Per row of ``values`` (m x n), the floor(alpha (n + 1))-th smallest (-inf where
    that is 0)."""
    n = values.shape[1]
    rank = math.floor(alpha * (n + 1))
    if rank < 1:
        return np.full(values.shape[0], -math.inf)
    return np.partition(values, rank - 1, axis=1)[:, rank - 1]


def upper_conformal_quantile(values, alpha: float) -> np.ndarray:
    """Per row of ``values`` (m x n), the ceil((1 - alpha)(n + 1))-th smallest (inf where
    that is past n)."""
    n = values.shape[1]
    rank = math.ceil((1.0 - alpha) * (n + 1))
    if rank > n:
        return np.full(values.shape[0], math.inf)
    return np.partition(values, rank - 1, axis=1)[:, rank - 1]


def take_rows(values, rows):
    """Rows ``rows`` of an array, a sparse matrix, a pandas object or a list."""
    if hasattr(values, "iloc"):
        return values.iloc[rows]
    if hasattr(values, "tocsr"):
        return values.tocsr()[rows]
    return np.asarray(values)[rows]


def held_out_rows(n: int, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """A random ``fraction`` of range(n) (at least one row, and one left to train)."""
    size = min(max(int(round(fraction * n)), 1), n - 1)
    if n < 2:
        raise ValueError("conformal_fraction needs at least 2 rows: one to train, one to calibrate")
    return np.sort(rng.permutation(n)[:size])


def adaptive_set_scores(proba: np.ndarray, labels: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Each row's score of its label ``labels`` (column indices of ``proba``): the
    probability of the classes ranked above it (higher probability; ties by column) plus
    ``u`` times its own."""
    own = proba[np.arange(proba.shape[0]), labels]
    above = (proba > own[:, None]) | (
        (proba == own[:, None]) & (np.arange(proba.shape[1]) < labels[:, None])
    )
    return (proba * above).sum(axis=1) + u * own


def adaptive_sets(proba: np.ndarray, u: np.ndarray, threshold: float) -> np.ndarray:
    """(n, n_classes) booleans: the labels whose score (as :func:`adaptive_set_scores`,
    with each row's ``u``) is at most ``threshold``."""
    n, k = proba.shape
    order = np.lexsort((np.broadcast_to(np.arange(k), (n, k)), -proba), axis=1)
    ranked = np.take_along_axis(proba, order, axis=1)
    before = np.cumsum(ranked, axis=1) - ranked
    keep_ranked = before + u[:, None] * ranked <= threshold
    out = np.zeros((n, k), dtype=bool)
    np.put_along_axis(out, order, keep_ranked, axis=1)
    return out


class ConformalRows:
    """The conformal rows of a fit (the families' shared part): given to ``fit`` as
    ``conformal_rows=(X_c, y_c)`` or held out of the training rows by the constructor
    parameter ``conformal_fraction`` (drawn from ``random_state``). Kept as prediction
    reads them (X checked and encoded; y as the family encodes it), so pickles and model
    files keep them (``conformal_rows`` in the file)."""

    def _hold_out_conformal_rows(self, X, y, sample_weight, conformal_rows) -> tuple:
        """(X, y, sample_weight to train on, the conformal rows (X_c, y_c) or None).
        Called by the families' ``fit`` first; :meth:`_keep_conformal_rows` after."""
        fraction = getattr(self, "conformal_fraction", None)
        check_conformal_fraction(fraction)
        self._conformal_rows = None
        if conformal_rows is not None:
            if fraction is not None:
                raise ValueError(
                    "conformal_rows and conformal_fraction both name conformal rows; give one"
                )
            if not (isinstance(conformal_rows, tuple | list) and len(conformal_rows) == 2):
                raise ValueError("conformal_rows must be a pair (X_c, y_c)")
            X_c, y_c = conformal_rows
            if number_of_rows(X_c) != number_of_rows(y_c) or number_of_rows(y_c) < 1:
                raise ValueError(
                    f"conformal_rows: X_c has {number_of_rows(X_c)} rows and y_c "
                    f"{number_of_rows(y_c)}; one label per row, at least one row"
                )
            return X, y, sample_weight, (X_c, y_c)
        if fraction is None:
            return X, y, sample_weight, None
        if y is None:
            raise ValueError("conformal_fraction holds out labelled rows; fit was given no y")
        n = number_of_rows(y)
        rng = np.random.default_rng((int(_rng(self.random_state).integers(0, 2**63 - 1)), 63))
        held = held_out_rows(n, float(fraction), rng)
        kept = np.setdiff1d(np.arange(n), held)
        weight = None if sample_weight is None else take_rows(sample_weight, kept)
        return (
            take_rows(X, kept),
            take_rows(y, kept),
            weight,
            (take_rows(X, held), take_rows(y, held)),
        )

    def _keep_conformal_rows(self, rows) -> None:
        """Remember the conformal rows (None: none) as prediction reads them. Called by
        the families' ``fit`` once the model is fitted."""
        if rows is None:
            self._conformal_rows = None
            return
        X_c, y_c = rows
        with self._checked_for_predict(X_c) as checked:
            X_c = np.array(checked, dtype=np.float64)
        self._conformal_rows = (X_c, self._conformal_labels(y_c))

    def _conformal_labels(self, y_c) -> np.ndarray:  # pragma: no cover - the families'
        """The conformal rows' labels as the family reads them."""
        raise NotImplementedError

    def _conformal_rows_or_refuse(self, what: str):
        rows = getattr(self, "_conformal_rows", None)
        if rows is None:
            raise ValueError(
                f"{what} needs conformal rows the model did not train on: fit(X, y, "
                "conformal_rows=(X_c, y_c)) or the constructor's conformal_fraction "
                "(a forest fitted with oob_score=True may use its out-of-bag rows for "
                "method='conformal')"
            )
        return rows


class ConformalIntervals(ConformalRows):
    """``predict_interval`` of the regressor family (module docstring)."""

    def _conformal_labels(self, y_c) -> np.ndarray:
        y_c = np.asarray(y_c, dtype=np.float64).reshape(-1)
        if not np.isfinite(y_c).all():
            raise ValueError("conformal rows: y_c must hold finite numbers")
        return y_c

    def _predict_checked(self, checked) -> np.ndarray:  # pragma: no cover - the family's
        """``predict`` of checked X."""
        raise NotImplementedError

    def predict_interval(self, X, alpha=0.1, method="conformal") -> np.ndarray:
        """An (n, 2) array: per row of X, the lower and upper bound of an interval that
        holds the row's response with probability at least 1 - ``alpha``.
        ``method``: ``"conformal"`` (split conformal on absolute residuals; a forest
        fitted with ``oob_score=True`` and no conformal rows: the
        jackknife+-after-bootstrap), ``"cqr"`` (conformalised quantile regression from
        the model's quantiles, ``predict(X, quantiles=...)``) or ``"quantile"`` (those
        quantiles as they are: no guarantee). The conformal rows come from ``fit``
        (``conformal_rows``) or ``conformal_fraction``."""
        self._check_fitted()
        alpha = check_alpha(alpha)
        if method not in INTERVAL_METHODS:
            raise ValueError(
                f"method must be one of {', '.join(map(repr, INTERVAL_METHODS))}, got {method!r}"
            )
        if getattr(self, "n_outputs_", 1) > 1:
            raise ValueError(
                f"predict_interval gives intervals of one output; this model predicts "
                f"{self.n_outputs_} (fit one model per output to calibrate intervals)"
            )
        bounds = [alpha / 2, 1 - alpha / 2]
        if method != "conformal" and "quantiles" not in inspect.signature(self.predict).parameters:
            raise ValueError(
                f"predict_interval(method={method!r}) reads the model's quantiles, which a "
                f"{type(self).__name__} does not predict; use method='conformal'"
            )
        if method == "quantile":
            return self.predict(X, quantiles=bounds)
        if (
            method == "conformal"
            and getattr(self, "_conformal_rows", None) is None
            and getattr(self, "_oob_residuals", None) is not None
        ):
            return self._jackknife_plus_interval(X, alpha)
        X_c, y_c = self._conformal_rows_or_refuse(f"predict_interval(method={method!r})")
        if method == "conformal":
            with self._checked_for_predict(X_c) as checked:
                residuals = np.abs(y_c - self._predict_checked(checked))
            q = conformal_quantile(residuals, alpha)
            predicted = self.predict(X)
            return np.column_stack([predicted - q, predicted + q])
        members = getattr(self, "_leaf_responses", None)
        quantiles = self.predict(X, quantiles=bounds)  # refuses, saying why, without them
        with self._checked_for_predict(X_c) as checked:
            calibration = self._quantiles(checked, np.asarray(bounds), members)
        scores = np.maximum(calibration[:, 0] - y_c, y_c - calibration[:, 1])
        q = conformal_quantile(scores, alpha)
        return np.column_stack([quantiles[:, 0] - q, quantiles[:, 1] + q])


class ConformalSets(ConformalRows):
    """``predict_set`` of the classifier family (module docstring)."""

    def _conformal_labels(self, y_c) -> np.ndarray:
        """The conformal rows' labels as positions in ``classes_``."""
        classes = np.asarray(self.classes_)
        position = {label: k for k, label in enumerate(classes.tolist())}
        labels = np.asarray(y_c).reshape(-1).tolist()
        unknown = [label for label in labels if label not in position]
        if unknown:
            names = sorted(set(map(str, unknown)))[:5]
            raise ValueError(f"conformal rows hold labels the model does not know: {names}")
        return np.array([position[label] for label in labels], dtype=np.int64)

    def _proba_checked(self, checked) -> np.ndarray:
        """The class probabilities of checked X (a tree's or forest's distributions)."""
        return self._unrejected_decisions(checked, False)[0]

    def predict_set(self, X, alpha=0.1) -> np.ndarray:
        """An (n, n_classes) boolean array in ``classes_`` order: per row of X, a set of
        labels that holds the row's label with probability at least 1 - ``alpha``
        (randomised adaptive prediction sets, Romano et al. 2020, on the conformal rows;
        the uniform draws come from ``random_state``, so a fixed seed gives the same sets
        each call). A set may be empty where the model is very sure of a label the
        randomisation then drops: that is how the sets reach exactly 1 - alpha."""
        self._check_fitted()
        alpha = check_alpha(alpha)
        X_c, labels = self._conformal_rows_or_refuse("predict_set")
        rng = np.random.default_rng((int(_rng(self.random_state).integers(0, 2**63 - 1)), 64))
        with self._checked_for_predict(X_c) as checked:
            proba_c = np.asarray(self._proba_checked(checked), dtype=np.float64)
        threshold = conformal_quantile(
            adaptive_set_scores(proba_c, labels, rng.random(labels.size)), alpha
        )
        proba = np.asarray(self.predict_proba(X), dtype=np.float64)
        return adaptive_sets(proba, rng.random(proba.shape[0]), threshold)

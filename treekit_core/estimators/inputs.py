"""What fit and predict are given, checked: X (arrays, frames, sparse, nominal columns),
y or counterexamples, sample weights, the abstain value, feature names and column order."""

from __future__ import annotations

import contextlib
import numbers

import numpy as np

from treekit_core.components import TargetRows
from treekit_core.engine.categorical import (
    category_columns,
    encode,
    fit_categories,
    resolve_categorical,
)
from treekit_core.engine.composition import CompositionError
from treekit_core.engine.constraints import resolve_constraints
from treekit_core.engine.sklearn_compat import as_sklearn
from treekit_core.engine.training_data import TrainingData
from treekit_core.engine.validation import (
    MAX_TOTAL_WEIGHT,
    check_sample_weight,
    check_statistics_size,
    check_X,
    column_keys_of,
    densified,
    feature_label,
    feature_names_of,
    has_missing,
    kernel_layout,
    known_finite,
    refuse_duplicate_columns,
    warn_narrow_features,
)
from treekit_core.estimators.errors import NotFittedError


def _preview(values, limit=8) -> str:
    values = list(values)
    text = ", ".join(repr(v) for v in values[:limit])
    return f"[{text}{', ...' if len(values) > limit else ''}]"


def _without_zero_weight(X, evidence, weight):
    """The rows of positive weight. A zero-weight row is a removed row: it must not place
    a threshold, count towards ``min_samples_*`` or be drawn, so that weighting a row by 0
    and deleting it grow the same tree (as integer weights and repeated rows do)."""
    if (weight > 0).all():
        return X, evidence, weight
    kept = np.flatnonzero(weight > 0)
    return X[kept], np.ascontiguousarray(evidence[kept]), weight[kept]


def number_of_rows(values) -> int:
    """The rows of X or y as given, before they are checked (an array's or DataFrame's
    first dimension, a list's length, else the first dimension of what numpy makes of
    it): what y, the conformal rows or the nuisances are checked against first."""
    shape = getattr(values, "shape", None)
    if shape is not None:
        return int(shape[0])
    return len(values) if hasattr(values, "__len__") else int(np.asarray(values).shape[0])


def open_unit_share(value, message: str) -> float:
    """``value`` as a float when it is a number strictly between 0 and 1 (a share of rows,
    a miscoverage level), else ValueError(``message`` and the value given)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 < value < 1.0:
        raise ValueError(f"{message}, got {value!r}")
    return float(value)


def _rng(random_state) -> np.random.Generator:
    """The generator for ``random_state``: None (fresh entropy), a non-negative int, a
    numpy Generator or RandomState (as scikit-learn accepts)."""
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or (
        isinstance(random_state, numbers.Integral)
        and not isinstance(random_state, bool)
        and random_state >= 0
    ):
        return np.random.default_rng(None if random_state is None else int(random_state))
    raise ValueError(
        "random_state must be None, an int >= 0, or a numpy Generator or RandomState, got "
        f"{random_state!r}"
    )


def encode_target_rows(target, y, classes=None, classes_are="the classes"):
    """The target's rows of ``y`` (``target.encode``); with ``classes`` (the labels of a
    target that decides among them), columns in the order of those classes, whatever
    labels this y holds: they are encoded first and dropped. A label not among them is
    refused, naming the classes (``classes_are``). Called by ``decision_scores`` and by
    growers that encode y in parts (treekit-dask)."""
    y = np.asarray(y)
    n = y.shape[0]
    if classes is None:
        return np.asarray(target.encode(y, n).rows)
    classes = np.asarray(classes)
    encoded = target.encode(np.concatenate([classes, y]), n + classes.size)
    if encoded.labels is None or list(encoded.labels) != list(classes):
        raise ValueError(f"y holds a label that is not among {classes_are}")
    return np.asarray(encoded.rows)[classes.size :]


def composition_for_labels(composition, labels, rows=None):
    """``composition`` with the target for these ``labels`` (``Target.with_labels``) and,
    where they or the target's ``rows`` hold several outputs, the criterion's
    ``for_outputs`` (:func:`adopt_outputs`); changed in place and returned."""
    composition.target = composition.target.with_labels(labels)
    adopt_outputs(composition, labels, rows)
    return composition


def adopt_outputs(composition, labels, rows=None) -> None:
    """Where the target's rows (``rows``: some of them, or of the statistics they sum to)
    or ``labels`` hold several outputs, the composition's criterion becomes its
    ``for_outputs()``; a criterion without one is refused (CompositionError naming it and
    the target). Called by fit after encoding, by every refit and by the model-file reader
    with a tree's statistics."""
    rows = np.zeros((0, 1)) if rows is None else np.asarray(rows)[:1]  # one row tells
    n_outputs = outputs_of(composition.target, TargetRows(rows, labels))
    if n_outputs <= 1:
        return
    criterion = composition.criterion.for_outputs()
    if criterion is None:
        raise CompositionError(
            f"criterion {composition.criterion.name!r} scores one output, and target "
            f"{composition.target.name!r} holds {n_outputs} (y has {n_outputs} columns): use "
            "a criterion that averages over outputs (gini, entropy, squared_error, poisson) "
            "or fit one model per column"
        )
    composition.criterion = criterion


def outputs_of(target, encoded: TargetRows) -> int:
    """How many outputs the encoded target holds: one per class set when its labels are
    a list (one array per output), one per response column of a target of several
    outputs, else 1."""
    if isinstance(encoded.labels, list):
        return len(encoded.labels)
    rows = np.asarray(encoded.rows)
    if target.several_outputs and rows.shape[0]:
        responses = target.responses(rows)
        if responses is not None and np.ndim(responses) == 2:
            return int(np.shape(responses)[1])
    return 1


def class_weights(class_weight, labels, n_classes, classes) -> np.ndarray:
    """The weight of each class for ``class_weight`` (scikit-learn's values: None, a dict
    class -> weight, missing classes 1, or "balanced": n / (K * count of the class))."""
    if class_weight is None:
        return np.ones(n_classes)
    if class_weight == "balanced":
        counts = np.bincount(labels, minlength=n_classes).astype(float)
        return np.where(counts > 0, labels.shape[0] / (n_classes * np.maximum(counts, 1)), 0.0)
    if isinstance(class_weight, dict):
        unknown = [c for c in class_weight if c not in list(classes)]
        if unknown:
            raise ValueError(
                f"class_weight names classes {unknown} that are not in {list(classes)}"
            )
        weights = np.array([float(class_weight.get(c, 1.0)) for c in classes])
        bad = ~np.isfinite(weights) | (weights < 0)
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"class_weight for class {np.asarray(classes).tolist()[first]!r} is "
                f"{float(weights[bad][0])!r}; class weights must be finite numbers >= 0"
            )
        return weights
    raise ValueError(
        f"class_weight must be None, 'balanced' or a dict class -> weight, got {class_weight!r}"
    )


def refuse_heavy_rows(weight, n_draws: int, cause: str) -> None:
    """Refuse weights whose heaviest row, taken ``n_draws`` times (a tree's n rows weigh at
    most that much; a bootstrap draws n rows), could pass the bound past which the split
    arithmetic overflows (and a model file would be refused); ``cause`` names the parameter
    that made them (``"class_weight {...}"``)."""
    heaviest = float(weight.max())
    if not np.isfinite(heaviest) or heaviest * n_draws > MAX_TOTAL_WEIGHT:
        raise ValueError(
            f"{cause} makes a sample weigh {heaviest:g}; "
            f"{n_draws} rows (a tree's, or a bootstrap's draws) could then weigh more than "
            f"{MAX_TOTAL_WEIGHT:g}, past which the split arithmetic overflows: use smaller "
            "weights"
        )


class InputChecks:
    """Checking what fit and predict are given: X, y or counterexamples, weights, the
    abstain value, feature names and column order; turning them into training data."""

    def _validate_training(self, X, y, sample_weight, composition, **target_arguments):
        """(the checked training data, the labels the target found) of what ``fit`` was
        given: X, y, the weights and the target's other arguments (``target_arguments``:
        ``counterexamples``, ``classes``, ``entry``, ``treatment``, ...; None: not given)."""
        X = densified(X)
        refuse_duplicate_columns(X)
        names = feature_names_of(X)
        keys = column_keys_of(X)
        self._column_keys = (
            keys if keys is not None and all(isinstance(k, (int, str)) for k in keys) else None
        )
        nominal = resolve_categorical(getattr(self, "categorical_features", None), X, names)
        columns = category_columns(X)  # read once for both
        self.categories_ = fit_categories(X, nominal, names, columns)
        X_checked = check_X(
            encode(X, self.categories_, columns), allow_nan=True, feature_names=names
        )
        self._check_missing_supported(X_checked, composition, names)
        warn_narrow_features(X_checked, names, nominal=set(self.categories_))
        n = X_checked.shape[0]
        n_categories = np.zeros(X_checked.shape[1], dtype=np.int64)
        for j, levels in self.categories_.items():
            n_categories[j] = len(levels)
        weight = check_sample_weight(sample_weight, n)
        composition.check_evidence()
        encoded = self._encode_target(composition, y, n, **target_arguments)
        self._adopt_labels(composition, encoded)
        self._check_classes(encoded.labels)
        X_kept, evidence, weight = _without_zero_weight(X_checked, encoded.rows, weight)
        data = TrainingData(
            kernel_layout(X_kept),
            np.ascontiguousarray(evidence),
            weight,
            names,
            classes=encoded.labels,
            n_categories=n_categories,
            target=composition.target,
        )
        composition.constraints = resolve_constraints(
            getattr(self, "monotonic_cst", None),
            getattr(self, "interaction_cst", None),
            data.n_features,
            names,
        )
        return data, encoded.labels

    def _adopt_labels(self, composition, encoded) -> None:
        """The composition's target for the labels encode found (``Target.with_labels``:
        class labels of several outputs hand over to ``class_label_sets``), checked again
        when it changed; for several outputs the criterion's ``for_outputs``, refused
        where it has none."""
        target = composition.target.with_labels(encoded.labels)
        if target is not composition.target:
            composition.target = target
            composition.check_evidence()
            self._check_target(composition)
        adopt_outputs(composition, encoded.labels, encoded.rows)

    @staticmethod
    def _encode_target(composition, y, n: int, **target_arguments):
        """The target's rows for what fit was given; an argument the target does not read
        is refused naming the target, and rows that are not n finite rows of numbers are
        refused naming it too (a third-party target's mistake must not reach a kernel)."""
        target = composition.target
        given = {name: value for name, value in target_arguments.items() if value is not None}
        unread = sorted(set(given) - set(target.fit_arguments))
        if "counterexamples" in unread:
            raise CompositionError(
                "counterexamples need a criterion and labeler that read counterexample rows "
                "(e.g. criterion='counterexample_entropy', labeler='complementary', whose "
                f"target 'counterexamples' encodes them); target {target.name!r} reads "
                f"{', '.join(sorted(target.fit_arguments))}, criterion "
                f"{composition.criterion.name!r} and labeler {composition.labeler.name!r} read "
                f"{composition.criterion.evidence} rows"
            )
        if unread:
            raise ValueError(
                f"{unread[0]}= does not apply to target {target.name!r}, which reads "
                f"{', '.join(sorted(target.fit_arguments))}"
                + ("; with y the classes come from y" if unread[0] == "classes" else "")
            )
        encoded = target.encode(y, n, **given)
        rows = np.asarray(encoded.rows)
        if (
            rows.ndim != 2
            or rows.shape[0] != n
            or rows.shape[1] < 1
            or rows.dtype.kind not in "fiub"
            or not np.isfinite(rows).all()
        ):
            raise ValueError(
                f"target {target.name!r} encoded y as {rows.dtype} rows of shape {rows.shape}; "
                f"expected {n} rows of finite numbers (one per sample, at least one column)"
            )
        check_statistics_size(n, rows.shape[1], "y", "statistics per row")
        return TargetRows(np.ascontiguousarray(rows, dtype=np.float64), encoded.labels)

    @staticmethod
    def _check_missing_supported(X, composition, names) -> None:
        """NaN is accepted when every component that reads X handles missing values."""
        if not has_missing(X):
            return
        missing = np.isnan(X)
        refusing = [
            c for c in composition.components.values() if c.sees_features and not c.handles_missing
        ]
        if refusing:
            j = int(np.flatnonzero(missing.any(axis=0))[0])
            rows = np.flatnonzero(missing[:, j])
            who = ", ".join(f"{c.kind} {c.name!r}" for c in refusing)
            raise ValueError(
                f"X contains NaN in {feature_label(j, names)} ({rows.size} rows, first row "
                f"{int(rows[0])}); "
                f"{who} does not handle missing values: impute them, drop the rows, or use "
                "components "
                f"that handle them"
            )

    def _set_fitted(self, data, classes):
        """Fitted attributes; ``classes`` is None for a target that decides among no labels
        (the estimator then has no ``classes_``)."""
        for name in ("classes_", "n_classes_"):
            if hasattr(self, name):
                delattr(self, name)
        if isinstance(classes, list):  # several outputs: one entry per output
            self.classes_ = list(classes)
            self.n_classes_ = [int(len(c)) for c in classes]
        elif classes is not None:
            self.classes_ = classes
            self.n_classes_ = int(classes.shape[0])
        self.n_features_in_ = data.n_features
        # whether the training rows held a missing value (what exporters warn about)
        self.missing_at_fit_ = bool(data.has_missing)
        if data.feature_names is not None:
            self.feature_names_in_ = np.asarray(data.feature_names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_

    def _check_fitted(self):
        if not hasattr(self, "composition_"):
            raise as_sklearn(NotFittedError, "NotFittedError")(
                f"this {type(self).__name__} is not fitted yet; call fit(X, y) first"
            )

    @contextlib.contextmanager
    def _checked_for_predict(self, X):
        """X checked for prediction; while the block runs, X is known finite to every step
        (when it is), so no step passes over X again to find out."""
        from treekit_core.kernels.usable_cpus import fit_threads, numba_threads_capped

        report = {}
        X = self._check_predict_X(X, report)
        with (
            known_finite(X) if report["finite"] else contextlib.nullcontext(X) as checked,
            numba_threads_capped(fit_threads(self.composition_.n_threads)),
        ):
            yield checked

    def _check_predict_X(self, X, report=None) -> np.ndarray:
        self._check_fitted()
        report = {} if report is None else report
        X = densified(X)
        refuse_duplicate_columns(X)
        self._check_column_keys(X)
        names = feature_names_of(X)
        fitted_names = getattr(self, "feature_names_in_", None)
        if names is not None and fitted_names is not None and list(names) != list(fitted_names):
            raise ValueError(
                f"X has feature names {names}, but the model was fitted with {list(fitted_names)}"
            )
        X = check_X(
            encode(X, getattr(self, "categories_", {})),
            n_features=self.n_features_in_,
            estimator=type(self).__name__,
            allow_nan=True,
            feature_names=names,
            report=report,
        )
        if not report["finite"]:
            self._check_missing_supported(
                X, self.composition_, getattr(self, "feature_names_in_", None)
            )
        return X

    def _check_column_keys(self, X) -> None:
        """A DataFrame with integer (or mixed) column labels must come in the order the
        model was fitted with, as string names must: a reordered frame would otherwise be
        read column by column, silently wrong."""
        fitted = getattr(self, "_column_keys", None)
        if fitted is None or not hasattr(X, "columns"):
            return
        keys = column_keys_of(X)
        given = keys if keys is not None else [str(c) for c in X.columns]
        if list(given) != list(fitted):
            raise ValueError(
                f"X has the columns {_preview(given)}, but the model was fitted on a DataFrame "
                f"with the columns {_preview(fitted)} (in this order): select them in that order "
                "(X[model_columns]) or pass a plain array"
            )

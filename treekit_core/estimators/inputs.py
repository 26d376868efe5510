"""What fit and predict are given, checked: X (arrays, frames, sparse, nominal columns),
y or counterexamples, sample weights, the abstain value, feature names and column order."""

from __future__ import annotations

import contextlib
import numbers

import numpy as np

from treekit_core.engine.categorical import encode, fit_categories, resolve_categorical
from treekit_core.engine.composition import CompositionError
from treekit_core.engine.sklearn_compat import as_sklearn
from treekit_core.engine.training_data import TrainingData
from treekit_core.engine.validation import (
    check_class_statistics,
    check_counterexamples,
    check_sample_weight,
    check_X,
    check_y,
    column_keys_of,
    densified,
    feature_label,
    feature_names_of,
    has_missing,
    kernel_layout,
    known_finite,
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


class InputChecks:
    """Checking what fit and predict are given: X, y or counterexamples, weights, the
    abstain value, feature names and column order; turning them into training data."""

    @staticmethod
    def _evidence_reader(composition):
        """The criterion, once it is known to read the same evidence rows as the labeler:
        the components that read the rows encode labels into them."""
        criterion, labeler = composition.criterion, composition.labeler
        if criterion.evidence != labeler.evidence:
            raise CompositionError(
                f"criterion {criterion.name!r} cannot be combined with labeler {labeler.name!r}: "
                "the "
                f"criterion reads {criterion.evidence} evidence rows, the labeler "
                f"{labeler.evidence} rows"
            )
        return criterion

    def _validate_training(
        self, X, y, sample_weight, composition, counterexamples=None, classes=None
    ):
        X = densified(X)
        names = feature_names_of(X)
        keys = column_keys_of(X)
        self._column_keys = (
            keys if keys is not None and all(isinstance(k, (int, str)) for k in keys) else None
        )
        nominal = resolve_categorical(getattr(self, "categorical_features", None), X, names)
        self.categories_ = fit_categories(X, nominal, names)
        X_checked = check_X(encode(X, self.categories_), allow_nan=True, feature_names=names)
        self._check_missing_supported(X_checked, composition, names)
        warn_narrow_features(X_checked, names, nominal=set(self.categories_))
        n = X_checked.shape[0]
        n_categories = np.zeros(X_checked.shape[1], dtype=np.int64)
        for j, levels in self.categories_.items():
            n_categories[j] = len(levels)
        reader = self._evidence_reader(composition)
        weight = check_sample_weight(sample_weight, n)
        if counterexamples is not None:
            if y is not None:
                raise ValueError(
                    "give either y (class labels) or counterexamples, not both; encode labelled "
                    "rows as counterexample rows with K-1 ones"
                )
            classes, matrix = check_counterexamples(counterexamples, n, classes)
            check_class_statistics(n, classes.shape[0], "counterexamples")
            evidence = reader.encode_counterexamples(matrix)
            if evidence is None:
                raise CompositionError(
                    f"counterexamples need a criterion and labeler that read counterexample rows "
                    "(e.g. criterion='counterexample_entropy', labeler='complementary'); "
                    "criterion "
                    f"{composition.criterion.name!r} and labeler {composition.labeler.name!r} read "
                    f"{reader.evidence} rows"
                )
            self._check_abstain_value(classes)
            X_kept, evidence, weight = _without_zero_weight(X_checked, evidence, weight)
            data = TrainingData(
                kernel_layout(X_kept),
                np.ascontiguousarray(evidence),
                weight,
                names,
                classes=classes,
                n_categories=n_categories,
            )
            return data, classes
        if classes is not None:
            raise ValueError(
                "classes= only applies with counterexamples=; with y the classes come from y"
            )
        classes, encoded = check_y(y, n)
        check_class_statistics(n, classes.shape[0])
        self._check_abstain_value(classes)
        evidence = reader.encode_labels(encoded, classes.shape[0])
        X_kept, evidence, weight = _without_zero_weight(X_checked, evidence, weight)
        data = TrainingData(
            kernel_layout(X_kept),
            evidence,
            weight,
            names,
            classes=classes,
            n_categories=n_categories,
        )
        return data, classes

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

    def _check_abstain_value(self, classes) -> None:
        value = self.abstain_value
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, (str, numbers.Number, np.generic))
        ):
            raise ValueError(
                f"abstain_value must be None or one label (a string or a number), got {value!r}"
            )
        if (
            self.abstain_value is not None
            and np.isin(
                np.asarray([self.abstain_value], dtype=object), classes.astype(object)
            ).any()
        ):
            raise ValueError(
                f"abstain_value={self.abstain_value!r} is one of the classes {list(classes)}; "
                f"choose a value that is not a class so an abstention cannot be mistaken for one"
            )

    def _set_fitted(self, data, classes):
        self.classes_ = classes
        self.n_classes_ = int(classes.shape[0])
        self.n_features_in_ = data.n_features
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

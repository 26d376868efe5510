"""Input validation and the training-data container (weights kept apart from evidence).

Every error names the parameter (and, for X, the column) and says what was expected.
"""
from __future__ import annotations

import numbers

import attrs
import numpy as np


@attrs.define(eq=False)
class TrainingData:
    """What the grow loop sees: features, per-sample weights and class evidence.

    ``evidence`` is n x K: a one-hot row for an ordinary label, a probability row for a soft
    label, or a row marking excluded classes for a counterexample (DESIGN.md). The weight is
    kept separate from the rows because a row's sum is not a weight.
    """

    X: np.ndarray  #: float64, n x d, Fortran order (kernels read one feature at a time)
    evidence: np.ndarray  #: float64, n x K, C order
    weight: np.ndarray  #: float64, n
    feature_names: list | None = None
    label_kind: str = "labels"  #: "labels" (one-hot) or e.g. "counterexamples"
    classes: np.ndarray | None = None  #: class labels in evidence-column order
    #: Number of categories of every nominal feature (0 for a numeric feature); None: all numeric.
    n_categories: np.ndarray | None = None
    #: Values derived from X alone (e.g. presorted orders), shared by data sets with the same X.
    cache: dict = attrs.field(factory=dict)

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def nominal_features(self) -> np.ndarray:
        if self.n_categories is None:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(self.n_categories > 0)

    def refuse_nominal(self, component) -> None:
        """For components that only understand numeric features."""
        if self.nominal_features.size:
            j = int(self.nominal_features[0])
            name = f" ({self.feature_names[j]!r})" if self.feature_names is not None else ""
            raise ValueError(f"{component.kind} {component.name!r} handles numeric features only, but feature "
                             f"{j}{name} is nominal; use the 'exhaustive' splitter (subset questions) or encode it")

    @property
    def has_missing(self) -> bool:
        if "has_missing" not in self.cache:
            self.cache["has_missing"] = bool(np.isnan(self.X).any())
        return self.cache["has_missing"]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def n_classes(self) -> int:
        return self.evidence.shape[1]

    def subset(self, rows: np.ndarray) -> "TrainingData":
        return TrainingData(
            np.asfortranarray(self.X[rows]),
            np.ascontiguousarray(self.evidence[rows]),
            np.ascontiguousarray(self.weight[rows]),
            self.feature_names,
            self.label_kind,
            self.classes,
            self.n_categories,
        )

    def with_weight(self, weight: np.ndarray) -> "TrainingData":
        """The same rows with other weights (shares X and its cache)."""
        return attrs.evolve(self, weight=np.ascontiguousarray(weight, dtype=np.float64))


def feature_label(j: int, feature_names) -> str:
    if feature_names is not None:
        return f"column {j} ({feature_names[j]!r})"
    return f"column {j}"


def _is_dataframe(obj) -> bool:
    return hasattr(obj, "columns") and hasattr(obj, "dtypes") and hasattr(obj, "iloc")


def feature_names_of(X):
    """Column names of a DataFrame (as str), or None for arrays."""
    if _is_dataframe(X):
        names = [str(c) for c in X.columns]
        if not all(isinstance(c, str) for c in X.columns):
            return None
        return names
    return None


def check_X(X, *, name: str = "X", allow_nan: bool = False, n_features: int | None = None,
            feature_names=None) -> np.ndarray:
    """Validate a feature matrix and return it as a 2-D float64 array."""
    if X is None:
        raise ValueError(f"{name} is None; expected a 2-D array of shape (n_samples, n_features)")
    names = feature_names_of(X) if feature_names is None else feature_names
    if _is_dataframe(X):
        columns = []
        for j, col in enumerate(X.columns):
            series = X[col]
            try:
                columns.append(np.asarray(series, dtype=np.float64))
            except (TypeError, ValueError) as exc:
                raise ValueError(
                    f"{name} {feature_label(j, names)} has dtype {series.dtype} with values "
                    f"that are not numbers ({exc}); numeric features are expected (declare a nominal "
                    f"column in categorical_features)"
                ) from None
        array = np.column_stack(columns) if columns else np.empty((len(X), 0))
    else:
        try:
            array = np.asarray(X)
        except ValueError as exc:
            raise ValueError(f"{name} is ragged: its rows have different lengths ({exc})") from None
        if array.dtype == object:
            lengths = {len(r) if hasattr(r, "__len__") else -1 for r in array} if array.ndim == 1 else set()
            if len(lengths) > 1:
                raise ValueError(f"{name} is ragged: its rows have different lengths {sorted(lengths)}")
        try:
            array = np.asarray(array, dtype=np.float64)  # no copy when already float64
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} has values that are not numbers ({exc}); numeric features are expected") from None
    if array.ndim != 2:
        hint = " Use X.reshape(-1, 1) for a single feature." if array.ndim == 1 else ""
        raise ValueError(
            f"{name} must be 2-D (n_samples, n_features); got an array with shape {array.shape}.{hint}"
        )
    if array.shape[0] == 0:
        raise ValueError(f"{name} is empty (0 samples); at least one sample is required")
    if array.shape[1] == 0:
        raise ValueError(f"{name} has 0 features; at least one feature is required")
    if n_features is not None and array.shape[1] != n_features:
        raise ValueError(
            f"{name} has {array.shape[1]} features, but the model was fitted with {n_features}"
        )
    # A finite sum proves every value finite without a mask the size of X; only when the
    # sum is not finite (a NaN/inf, or an overflow of huge values) do we look closer.
    if not np.isfinite(np.sum(array)) and not np.isfinite(array).all():
        bad = ~np.isfinite(array)
        nan_mask = np.isnan(array)
        inf_cols = np.flatnonzero((bad & ~nan_mask).any(axis=0))
        if inf_cols.size:
            j = int(inf_cols[0])
            row = int(np.flatnonzero(np.isinf(array[:, j]))[0])
            raise ValueError(f"{name} contains infinity in {feature_label(j, names)} (row {row}); finite values are expected")
        if not allow_nan:
            j = int(np.flatnonzero(nan_mask.any(axis=0))[0])
            rows = np.flatnonzero(nan_mask[:, j])
            raise ValueError(
                f"{name} contains NaN in {feature_label(j, names)} ({rows.size} rows, first row {int(rows[0])}); "
                f"no component of this composition handles missing values: impute them or drop the rows"
            )
    return array


def check_y(y, n_samples: int, *, name: str = "y"):
    """Validate class labels; return (classes, encoded int64 indices)."""
    if y is None:
        raise ValueError(f"{name} is None; class labels are required")
    array = np.asarray(y)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array.ravel()
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D (n_samples,); got shape {array.shape}")
    if array.shape[0] != n_samples:
        raise ValueError(f"{name} has {array.shape[0]} labels but X has {n_samples} samples")
    if array.shape[0] == 0:
        raise ValueError(f"{name} is empty; at least one labelled sample is required")
    if array.dtype.kind == "f" and np.isnan(array).any():
        raise ValueError(f"{name} contains NaN at row {int(np.flatnonzero(np.isnan(array))[0])}; every sample needs a class")
    if array.dtype == object and any(v is None for v in array):
        raise ValueError(f"{name} contains None at row {[v is None for v in array].index(True)}; every sample needs a class")
    try:
        classes, encoded = np.unique(array, return_inverse=True)
    except TypeError as exc:
        raise ValueError(f"{name} mixes label types that cannot be ordered ({exc}); use one type") from None
    if classes.shape[0] < 2:
        raise ValueError(
            f"{name} has a single class ({classes.tolist()[0]!r}); a classifier needs at least two classes"
        )
    return classes, encoded.astype(np.int64).ravel()


def check_sample_weight(sample_weight, n_samples: int) -> np.ndarray:
    if sample_weight is None:
        return np.ones(n_samples)
    if isinstance(sample_weight, numbers.Number):
        sample_weight = np.full(n_samples, float(sample_weight))
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim != 1 or w.shape[0] != n_samples:
        raise ValueError(f"sample_weight must have shape ({n_samples},), got {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError(f"sample_weight contains NaN or infinity at row {int(np.flatnonzero(~np.isfinite(w))[0])}")
    if (w < 0).any():
        raise ValueError(f"sample_weight must be non-negative; row {int(np.flatnonzero(w < 0)[0])} is {w[w < 0][0]}")
    if w.sum() <= 0:
        raise ValueError("sample_weight sums to zero; at least one sample needs a positive weight")
    return w


def check_counterexamples(counterexamples, n_samples: int, classes=None):
    """Validate an n x K 0/1 counterexample matrix (1: known not this class); return
    (classes, evidence). A row of zeros (no information) is accepted; a row of ones
    (excludes every class) is an error naming the row."""
    Y = np.asarray(counterexamples)
    if Y.ndim != 2:
        raise ValueError(f"counterexamples must be a 2-D (n_samples, n_classes) 0/1 matrix, got shape {Y.shape}")
    if Y.shape[0] != n_samples:
        raise ValueError(f"counterexamples has {Y.shape[0]} rows but X has {n_samples} samples")
    if Y.shape[1] < 2:
        raise ValueError(f"counterexamples needs at least two classes (columns), got {Y.shape[1]}")
    try:
        values = Y.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError("counterexamples must hold only 0 and 1") from None
    bad = ~np.isin(values, (0.0, 1.0))
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(f"counterexamples must hold only 0 and 1; row {row}, column {col} is {Y[row, col]!r}")
    full = np.flatnonzero(values.sum(axis=1) == values.shape[1])
    if full.size:
        raise ValueError(
            f"counterexamples row {int(full[0])} excludes every class ({full.size} such rows); "
            f"a sample must belong to some class"
        )
    if classes is None:
        classes = np.arange(values.shape[1])
    classes = np.asarray(classes)
    if classes.shape != (values.shape[1],):
        raise ValueError(f"classes must name the {values.shape[1]} columns of counterexamples, got {classes.shape[0] if classes.ndim else classes}")
    if np.unique(classes).size != classes.size:
        raise ValueError("classes must be distinct")
    return classes, values


def encode_labels(encoded: np.ndarray, n_classes: int, kind: str) -> np.ndarray:
    """Evidence rows for ordinary labels in the kind a composition reads."""
    rows = one_hot(encoded, n_classes)
    if kind == "one_hot":
        return rows
    if kind == "counterexamples":
        return 1.0 - rows  # known not to be any of the other K - 1 classes
    raise ValueError(f"unknown evidence kind {kind!r}")


def one_hot(encoded: np.ndarray, n_classes: int) -> np.ndarray:
    evidence = np.zeros((encoded.shape[0], n_classes))
    evidence[np.arange(encoded.shape[0]), encoded] = 1.0
    return evidence

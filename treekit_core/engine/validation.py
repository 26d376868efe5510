"""Input validation: every error names the parameter (and, for X, the column) and says
what was expected."""

from __future__ import annotations

import contextlib
import contextvars
import numbers
import warnings

import numpy as np

from treekit_core.components.splitter import FEATURE_THRESHOLD
from treekit_core.engine.sklearn_compat import as_sklearn


class DataConversionWarning(UserWarning):
    """Input was converted to the shape treekit expects (a column-vector y raveled)."""


class NotNumericError(ValueError, TypeError):
    """A numeric feature holds a value that is not a number (a TypeError too, as numpy's
    own conversion error is)."""


#: Arrays the running call has just found finite (see :func:`known_finite`).
_KNOWN_FINITE: contextvars.ContextVar = contextvars.ContextVar("treekit_known_finite", default=())


@contextlib.contextmanager
def known_finite(X):
    """Within the block, :func:`all_finite` answers True for this very array without
    another pass over it: a predict checks X once instead of once per step (validation,
    the missing-value check, the evaluator). Scoped to the calling thread and call."""
    token = _KNOWN_FINITE.set((*_KNOWN_FINITE.get(), X))
    try:
        yield X
    finally:
        _KNOWN_FINITE.reset(token)


def all_finite(X) -> bool:
    """A finite sum proves every value finite without a mask the size of X (a sum that
    overflows only sends the check to the slow path)."""
    if any(X is known for known in _KNOWN_FINITE.get()):
        return True
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.sum(X)
    return bool(np.isfinite(total)) or bool(np.isfinite(X).all())


def has_missing(X) -> bool:
    return not all_finite(X) and bool(np.isnan(X).any())


def feature_label(j: int, feature_names) -> str:
    if feature_names is not None:
        return f"column {j} ({feature_names[j]!r})"
    return f"column {j}"


def _is_dataframe(obj) -> bool:
    # asked of the class: on a DataFrame, hasattr(obj, "dtypes") builds a Series of them
    kind = type(obj)
    return hasattr(kind, "columns") and hasattr(kind, "dtypes") and hasattr(kind, "iloc")


def _is_sparse(obj) -> bool:
    return type(obj).__module__.startswith("scipy.sparse") and hasattr(obj, "toarray")


#: Sparse input is densified; beyond this many bytes that is refused instead.
MAX_DENSIFIED_BYTES = 8 * 2**30


def memory_limit(cap: int) -> int:
    """Bytes one allocation may take: ``cap``, and at most half of the memory this machine
    has available now (where the OS says). What both the densified-X and the
    class-statistics refusals measure against."""
    import os

    try:
        available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return cap
    return min(cap, available // 2) if available > 0 else cap


def densify_limit() -> int:
    """Bytes a dense copy of sparse X may take (:func:`memory_limit` of
    MAX_DENSIFIED_BYTES)."""
    return memory_limit(MAX_DENSIFIED_BYTES)


#: At most this many bytes of statistics per fit (see :func:`check_statistics_size`).
MAX_STATISTICS_BYTES = 2 * 2**30


def check_statistics_size(
    n_samples: int, n_columns: int, name: str = "y", unit: str = "columns", hint: str = ""
) -> None:
    """Refuse, before anything is allocated, a target whose statistics would not fit.

    A fit holds a row of ``n_columns`` statistics per sample and a sum per node and column
    (up to 2n - 1 nodes): about 3 n S float64 numbers. With a column per row (an ID column
    given as class labels by mistake) that grows as n squared: 10 000 rows would take
    2.4 GB. The limit is :data:`MAX_STATISTICS_BYTES`, and at most half the memory this
    machine has available now (where the OS says). ``unit`` names the columns in the
    message ("classes"), ``hint`` ends it."""
    needed = 3 * n_samples * n_columns * 8
    limit = memory_limit(MAX_STATISTICS_BYTES)
    if needed <= limit:
        return
    raise ValueError(
        f"{name} has {n_columns} {unit} among {n_samples} rows: a tree's statistics "
        f"would take about {needed / 2**30:.1f} GiB (3 x rows x {unit} x 8 bytes; at most "
        f"{limit / 2**30:.1f} GiB allowed: half the free memory, capped at "
        f"{MAX_STATISTICS_BYTES / 2**30:.0f} GiB){hint}"
    )


def densified(X, name: str = "X"):
    """A scipy.sparse matrix as a dense array (the splitters scan dense columns; a stored
    NaN stays missing, an implicit entry is 0), refused when the dense copy would not fit
    (:func:`densify_limit`)."""
    if not _is_sparse(X):
        return X
    shape = getattr(X, "shape", ())
    if len(shape) != 2:
        raise ValueError(f"{name} is a sparse {type(X).__name__} of shape {shape}; 2-D expected")
    needed = shape[0] * shape[1] * 8
    limit = densify_limit()
    if needed > limit:
        raise ValueError(
            f"{name} is a sparse {type(X).__name__} of shape {shape}; treekit works on dense "
            f"columns and its dense copy would take {needed / 2**30:.1f} GiB (at most "
            f"{limit / 2**30:.1f} GiB: half the free memory, capped at "
            f"{MAX_DENSIFIED_BYTES / 2**30:.0f} GiB): select features first"
        )
    return X.toarray()


def _refuse_complex(array, name, where=""):
    dtype = np.asarray(array).dtype
    if dtype.kind == "c":
        raise ValueError(
            f"{name}{where} holds complex numbers (dtype {dtype}). Complex data not supported: "
            "real numbers are expected (take .real or abs() first if that is what you mean)"
        )


def column_keys_of(X):
    """Column labels of a DataFrame whose labels are not all strings (integers, mixed), so
    their order can be checked at predict time as feature names are; None otherwise."""
    if _is_dataframe(X) and not all(isinstance(c, str) for c in X.columns):
        return [c.item() if hasattr(c, "item") else c for c in X.columns]
    return None


def refuse_duplicate_columns(X, name: str = "X") -> None:
    """A DataFrame's column labels must be unique (as scikit-learn requires): ``X[label]``
    of a repeated label is several columns, and the model would count more features than
    X has. Arrays pass."""
    if not _is_dataframe(X):
        return
    seen, repeated = set(), []
    for label in X.columns:
        if label in seen and label not in repeated:
            repeated.append(label)
        seen.add(label)
    if repeated:
        raise ValueError(
            f"{name} has the column {repeated[0]!r} more than once"
            + (f" (and {[str(r) for r in repeated[1:]]})" if len(repeated) > 1 else "")
            + "; column names must be unique: rename or drop the repeats"
        )


def feature_names_of(X):
    """Column names of a DataFrame (as str), or None for arrays."""
    if _is_dataframe(X):
        names = [str(c) for c in X.columns]
        if not all(isinstance(c, str) for c in X.columns):
            return None
        return names
    return None


def check_X(
    X,
    *,
    name: str = "X",
    allow_nan: bool = False,
    n_features: int | None = None,
    feature_names=None,
    report: dict | None = None,
    estimator: str = "the model",
) -> np.ndarray:
    """Validate a feature matrix and return it as a 2-D float64 array; ``report["finite"]``
    says whether every value is finite (when a dict is given)."""
    if X is None:
        raise ValueError(f"{name} is None; expected a 2-D array of shape (n_samples, n_features)")
    X = densified(X, name)
    names = feature_names_of(X) if feature_names is None else feature_names
    if _is_dataframe(X):
        refuse_duplicate_columns(X, name)
        columns = []
        for j, col in enumerate(X.columns):
            series = X[col]
            _refuse_complex(series, name, f" {feature_label(j, names)}")
            try:
                columns.append(np.asarray(series, dtype=np.float64))
            except (TypeError, ValueError) as exc:
                raise ValueError(
                    f"{name} {feature_label(j, names)} has dtype {series.dtype} with values "
                    f"that are not numbers ({exc}); numeric features are expected (declare a "
                    "nominal "
                    f"column in categorical_features)"
                ) from None
        array = np.column_stack(columns) if columns else np.empty((len(X), 0))
    else:
        try:
            array = np.asarray(X)
        except ValueError as exc:
            raise ValueError(f"{name} is ragged: its rows have different lengths ({exc})") from None
        if array.dtype == object:
            lengths = (
                {len(r) if hasattr(r, "__len__") else -1 for r in array}
                if array.ndim == 1
                else set()
            )
            if len(lengths) > 1:
                raise ValueError(
                    f"{name} is ragged: its rows have different lengths {sorted(lengths)}"
                )
        _refuse_complex(array, name)
        if array.ndim == 0:
            raise ValueError(
                f"{name} is a single {type(X).__name__} ({_short(X)}); expected a 2-D array of "
                "shape (n_samples, n_features)"
            )
        try:
            array = np.asarray(array, dtype=np.float64)  # no copy when already float64
        except (TypeError, ValueError):
            raise NotNumericError(_not_numbers(array, name, names)) from None
    if array.ndim != 2:
        hint = " Use X.reshape(-1, 1) for a single feature." if array.ndim == 1 else ""
        raise ValueError(
            f"{name} must be 2-D (n_samples, n_features); got an array with shape "
            f"{array.shape}. Reshape your data.{hint}"
        )
    if array.shape[0] == 0:
        raise ValueError(f"{name} is empty (0 samples); at least one sample is required")
    if array.shape[1] == 0:
        raise ValueError(
            f"{name} has 0 feature(s) (shape={array.shape}) while a minimum of 1 is required."
        )
    if n_features is not None and array.shape[1] != n_features:
        raise ValueError(
            f"{name} has {array.shape[1]} features, but {estimator} is expecting {n_features} "
            "features as input (the number it was fitted with)"
        )
    finite = all_finite(array)
    if report is not None:
        report["finite"] = finite
    if not finite:
        bad = ~np.isfinite(array)
        nan_mask = np.isnan(array)
        inf_cols = np.flatnonzero((bad & ~nan_mask).any(axis=0))
        if inf_cols.size:
            j = int(inf_cols[0])
            row = int(np.flatnonzero(np.isinf(array[:, j]))[0])
            raise ValueError(
                f"{name} contains infinity in {feature_label(j, names)} (row {row}); finite "
                "values are expected"
            )
        if not allow_nan:
            j = int(np.flatnonzero(nan_mask.any(axis=0))[0])
            rows = np.flatnonzero(nan_mask[:, j])
            raise ValueError(
                f"{name} contains NaN in {feature_label(j, names)} ({rows.size} rows, first row "
                f"{int(rows[0])}); "
                "no component of this composition handles missing values: impute them or drop "
                "the rows"
            )
    return array


def check_weight_sums(sums) -> None:
    """A model file's class counts (a tree's statistics of class labels): finite, >= 0 and
    within the bound fit puts on the total weight (pruning adds and multiplies these sums,
    and a file with 1e308 gave rows that were no distribution); else ValueError naming
    the field."""
    if (sums < 0).any():
        raise ValueError("tree field 'statistics' must hold finite numbers >= 0")
    if sums.size and sums.max() > MAX_TOTAL_WEIGHT:
        raise ValueError(
            f"tree field 'statistics' holds {sums.max():.3g}; at most "
            f"{MAX_TOTAL_WEIGHT:g} (sums of sample weights, as fit bounds them)"
        )


def y_columns(y) -> int:
    """How many columns ``y`` has: k for a 2-D y (n x k, several outputs), 1 for anything
    else (1-D, None). Read through ``np.asarray`` where y has no shape (scikit-learn's
    not-an-array wrapper refuses numpy's functions)."""
    if y is None:
        return 1
    shape = getattr(y, "shape", None)
    shape = np.asarray(y).shape if shape is None else shape
    return int(shape[1]) if len(shape) == 2 else 1


def check_y(y, n_samples: int, *, name: str = "y"):
    """Validate class labels; return (classes, encoded int64 indices)."""
    if y is None:
        raise ValueError(
            f"this classifier requires y to be passed, but the target {name} is None; class "
            "labels are required"
        )
    if y_columns(y) > 1:
        raise ValueError(
            f"{name} has {y_columns(y)} columns of class labels, and this estimator takes one: "
            "TreeClassifier, ForestClassifier and ExtraTreesClassifier take several (one "
            "class set per output), or fit one model per column"
        )
    _refuse_mixed_label_types(y, name)
    array = _one_per_sample(y, n_samples, name, "labels", "labelled sample")
    if array.dtype.kind == "f" and np.isnan(array).any():
        raise ValueError(
            f"{name} contains NaN at row {int(np.flatnonzero(np.isnan(array))[0])}; every sample "
            "needs a class"
        )
    if array.dtype.kind == "f" and np.isinf(array).any():
        raise ValueError(
            f"{name} contains infinity at row {int(np.flatnonzero(np.isinf(array))[0])}; class "
            "labels must be finite"
        )
    if array.dtype.kind in "fc" and (array != np.round(array)).any():
        raise ValueError(
            f"Unknown label type: continuous. {name} holds non-integer numbers (for example "
            f"{array[array != np.round(array)][0].item()!r}); a classifier needs class labels, not "
            "measurements"
        )
    if array.dtype == object and any(v is None for v in array):
        raise ValueError(
            f"{name} contains None at row {[v is None for v in array].index(True)}; every sample "
            "needs a class"
        )
    try:
        classes, encoded = np.unique(array, return_inverse=True)
    except TypeError as exc:
        raise ValueError(
            f"{name} mixes label types that cannot be ordered ({exc}); use one type"
        ) from None
    if classes.shape[0] < 2:
        raise ValueError(
            f"{name} has one class ({classes.tolist()[0]!r}); a classifier needs at least "
            "two classes"
        )
    return classes, encoded.astype(np.int64).ravel()


def _one_per_sample(y, n_samples: int, name: str, what: str, one: str) -> np.ndarray:
    """``y`` as a 1-D array of ``n_samples`` entries (a column vector is read as its
    ravel, with scikit-learn's DataConversionWarning), or ValueError naming ``name``."""
    array = np.asarray(y)
    if array.ndim == 2 and array.shape[1] == 1:
        warnings.warn(
            f"A column-vector {name} was passed when a 1d array was expected; it is read as "
            f"{name}.ravel()",
            as_sklearn(DataConversionWarning, "DataConversionWarning"),
            stacklevel=4,
        )
        array = array.ravel()
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D (n_samples,); got shape {array.shape}")
    if array.shape[0] != n_samples:
        raise ValueError(f"{name} has {array.shape[0]} {what} but X has {n_samples} samples")
    if array.shape[0] == 0:
        raise ValueError(f"{name} is empty; at least one {one} is required")
    return array


#: The largest |y| a regression target accepts: its square (a row statistic) and weighted
#: sums of squares stay finite in float64.
MAX_ABS_RESPONSE = 1e100


def check_y_numeric(y, n_samples: int, *, name: str = "y") -> np.ndarray:
    """Validate a numeric response (regression); return it as float64, 1-D."""
    if y is None:
        raise ValueError(f"this regressor requires y to be passed, but the target {name} is None")
    return finite_numbers(_one_per_sample(y, n_samples, name, "values", "sample"), name)


def check_y_outputs(y, n_samples: int, *, name: str = "y") -> np.ndarray:
    """Validate a numeric response of one or several outputs (scikit-learn's 2-D ``y`` of
    a multi-output regressor); return it as float64, n x k (k = 1 for a 1-D ``y`` or a
    column vector, read as :func:`check_y_numeric` reads it)."""
    array = None if y is None else np.asarray(y)
    if array is None or array.ndim != 2 or array.shape[1] == 1:
        return check_y_numeric(y, n_samples, name=name)[:, None]
    if array.shape[0] != n_samples:
        raise ValueError(f"{name} has {array.shape[0]} rows but X has {n_samples} samples")
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {array.shape}); at least one sample and output")
    return finite_numbers(array, name)


def finite_numbers(array: np.ndarray, name: str) -> np.ndarray:
    """``array`` (one response per sample, or per sample and output) as float64, every
    value finite and at most :data:`MAX_ABS_RESPONSE` in size, or ValueError naming
    ``name``, the row (and the output) at fault."""
    if array.dtype.kind == "c":
        raise ValueError(f"Complex data not supported: {name} holds complex numbers")
    if array.dtype.kind not in "biuf":
        try:
            array = array.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"{name} must hold numbers for a regressor (a measurement per sample); got "
                f"dtype {array.dtype} (for example {_short(array.ravel()[0])})"
            ) from None
    array = np.ascontiguousarray(array, dtype=np.float64)
    bad = ~np.isfinite(array)
    if bad.any():
        row, *output = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), array.shape)
        where = f"row {row}" + (f", output {output[0]}" if output else "")
        raise ValueError(
            f"Input {name} contains {'NaN' if np.isnan(array[(row, *output)]) else 'infinity'} "
            f"at {where}; every sample needs a finite response"
        )
    if array.size and np.abs(array).max() > MAX_ABS_RESPONSE:
        raise ValueError(
            f"{name} holds {array.ravel()[np.argmax(np.abs(array))]:.3g}; a regressor accepts "
            f"|{name}| <= {MAX_ABS_RESPONSE:g} (its squares are summed); rescale it"
        )
    return array


def _refuse_mixed_label_types(y, name: str) -> None:
    """Labels mixing strings and numbers ("1" and 1) would be merged by numpy's conversion
    to strings; refuse them, naming both."""
    if isinstance(y, np.ndarray) and y.dtype != object:
        return
    values = list(np.asarray(y, dtype=object).ravel())
    kinds = {"text" if isinstance(v, (str, np.str_)) else "number" for v in values}
    if kinds == {"text", "number"}:
        text = next(v for v in values if isinstance(v, (str, np.str_)))
        number = next(v for v in values if not isinstance(v, (str, np.str_)))
        raise ValueError(
            f"{name} mixes text and number labels (for example {text!r} and {number!r}); "
            "use one type"
        )


def check_sample_weight(sample_weight, n_samples: int) -> np.ndarray:
    if sample_weight is None:
        return np.ones(n_samples)
    sample_weight = densified(sample_weight, "sample_weight")
    _refuse_complex(sample_weight, "sample_weight")
    if isinstance(sample_weight, numbers.Real) and not isinstance(sample_weight, bool):
        sample_weight = np.full(n_samples, float(sample_weight))
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"sample_weight must be None, a number or {n_samples} numbers (one per sample), got "
            f"{_short(sample_weight)}"
        ) from None
    if w.ndim != 1 or w.shape[0] != n_samples:
        raise ValueError(f"sample_weight must have shape ({n_samples},), got {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError(
            "sample_weight contains NaN or infinity at row "
            f"{int(np.flatnonzero(~np.isfinite(w))[0])}"
        )
    if (w < 0).any():
        raise ValueError(
            f"sample_weight must be non-negative; row {int(np.flatnonzero(w < 0)[0])} is "
            f"{w[w < 0][0]}"
        )
    tiny = (w > 0) & (w < MIN_POSITIVE_WEIGHT)
    if tiny.any():
        row = int(np.flatnonzero(tiny)[0])
        raise ValueError(
            f"sample_weight is {w[row]:g} at row {row}; a positive weight below "
            f"{MIN_POSITIVE_WEIGHT:g} makes weighted responses subnormal (rounded to a "
            "coarse grid, so leaf values leave the range of y): rescale the weights (a "
            "common factor changes no tree), or give 0 to drop a row"
        )
    with np.errstate(over="ignore"):
        total = w.sum()
    if total <= 0:
        raise ValueError("sample_weight sums to zero; at least one sample needs a positive weight")
    if not np.isfinite(total) or total > MAX_TOTAL_WEIGHT:
        raise ValueError(
            f"sample_weight sums to {total:g}; the sums of weights (and of weighted statistics "
            f"and their squares) must stay finite: rescale the weights so they sum to at most "
            f"{MAX_TOTAL_WEIGHT:g}"
        )
    return w


def _not_numbers(array, name, names) -> str:
    """Which cell is not a number, for the error."""
    cells = array.reshape(array.shape[0], -1) if array.ndim >= 1 else array.reshape(1, 1)
    for i, row in enumerate(cells):
        for j, value in enumerate(row):
            try:
                float(value)
            except (TypeError, ValueError):
                value = value.item() if isinstance(value, np.generic) else value
                column = feature_label(j, names) if array.ndim == 2 else f"entry {j}"
                return (
                    f"{name} {column} holds {_short(value)} (row {i}), which is not a number: "
                    "the argument must be a string (in a nominal column) or a number (declare "
                    "nominal columns in categorical_features)"
                )
    return f"{name} has values that are not numbers; numeric features are expected"


def check_event_codes(y, n_samples: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(time: float64, event code: int64) from follow-up that may end in one of several
    kinds of event: a structured array or a frame with fields ``time`` and ``event`` (or
    ``status``), or two columns (time, event); the code 0 censored, 1..K the cause
    (booleans read as 0/1, so plain censored follow-up is one cause). Times finite and
    >= 0, codes integers >= 0: ValueError naming ``y`` and the field otherwise."""
    if y is None:
        raise ValueError("y (time, event) is required, got None")
    if hasattr(y, "columns"):
        names = [str(c) for c in y.columns]
        y = {name: np.asarray(y[column]) for name, column in zip(names, y.columns, strict=True)}
    elif getattr(np.asarray(y).dtype, "names", None):
        array = np.asarray(y)
        y = {name: array[name] for name in array.dtype.names}
    if isinstance(y, dict):
        event_name = next((n for n in ("event", "status") if n in y), None)
        if "time" not in y or event_name is None:
            raise ValueError(
                f"y has the fields {sorted(y)}; expected 'time' and 'event' (or 'status')"
            )
        time, event = np.asarray(y["time"]), np.asarray(y[event_name])
        time_name, event_label = "y['time']", f"y[{event_name!r}]"
    else:
        array = np.asarray(y)
        if array.ndim != 2 or array.shape[1] != 2:
            raise ValueError(
                f"y must be two columns (time, event), or fields time and event; got shape "
                f"{array.shape}"
            )
        time, event = array[:, 0], array[:, 1]
        time_name, event_label = "y[:, 0] (time)", "y[:, 1] (event)"
    n = time.shape[0] if n_samples is None else n_samples
    if time.shape != (n,) or event.shape != (n,):
        raise ValueError(f"y has {time.shape[0]} rows; expected {n}, one per sample")
    try:
        time = np.asarray(time, dtype=np.float64)
        codes = np.asarray(event, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{time_name} and {event_label} must be numbers") from None
    if not np.isfinite(time).all() or (time < 0).any():
        row = int(np.flatnonzero(~np.isfinite(time) | (time < 0))[0])
        raise ValueError(
            f"{time_name} is {float(time[row])!r} at row {row}; times are finite and >= 0"
        )
    bad = ~np.isfinite(codes) | (codes < 0) | (codes != np.round(codes))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{event_label} is {float(codes[row])!r} at row {row}; event codes are integers: 0 "
            "censored, 1..K the cause"
        )
    return time, codes.astype(np.int64)


#: The name of delayed entry in a structured ``y`` or a frame (and fit's argument).
ENTRY_FIELD = "entry"


def split_entry(y):
    """(``y`` without its ``entry`` field or column, that field or None): a structured
    array or a frame may carry each row's delayed entry beside (event, time)."""
    if hasattr(y, "columns") and ENTRY_FIELD in [str(c) for c in y.columns]:
        column = next(c for c in y.columns if str(c) == ENTRY_FIELD)
        return y.drop(columns=[column]), np.asarray(y[column])
    names = getattr(np.asarray(y).dtype, "names", None) if not hasattr(y, "columns") else None
    if names and ENTRY_FIELD in names:
        array = np.asarray(y)
        rest = [name for name in names if name != ENTRY_FIELD]
        return array[rest], array[ENTRY_FIELD]
    return y, None


def check_entry(entry, time, given=None) -> np.ndarray:
    """Each row's delayed entry (left truncation) as float64, zeros when there is none:
    ``entry`` from fit's argument or ``given`` (``y``'s field), not both. Finite, >= 0, one
    per row; a row that enters after 0 must enter before its time (it is at risk at the
    times in (entry, time]). ValueError naming the row otherwise."""
    if entry is not None and given is not None:
        raise ValueError("entry is given twice: as fit's entry= and as y's 'entry' field")
    entry = given if entry is None else entry
    if entry is None:
        return np.zeros(time.shape[0])
    try:
        entry = np.asarray(entry, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("entry must hold numbers (each row's entry time)") from None
    if entry.shape != time.shape:
        raise ValueError(f"entry has shape {entry.shape}; expected {time.shape}, one per row")
    bad = ~np.isfinite(entry) | (entry < 0) | ((entry > 0) & (entry >= time))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"entry[{row}] is {float(entry[row])!r} and the row's time {float(time[row])!r}: a "
            "row enters at a finite time >= 0 before its follow-up ends"
        )
    return entry


def check_survival_y(y, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
    """(event: bool, time: float64) from censored follow-up ``y``: a structured array of
    (event, time) as scikit-survival's ``Surv`` makes it (the boolean field is the event,
    the other the time; any field names), a two-column frame named as
    :func:`_survival_frame_in_order` reads it, or a two-column array of (time, event),
    rpart's ``Surv(time, status)`` order, the event 0/1 or boolean. Times must be finite
    and >= 0. ValueError naming ``y`` (and the field or column) otherwise. A field or
    column ``entry`` (delayed entry, which the trees read) is set aside here."""
    if y is None:
        raise ValueError("a survival tree requires y (event, time) to be passed, got None")
    y, _ = split_entry(y)
    if hasattr(y, "columns"):
        y = _survival_frame_in_order(y)
    array = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y)
    if array.dtype.names is not None:
        names = array.dtype.names
        if len(names) != 2:
            raise ValueError(
                f"y has the fields {list(names)}; expected two: the event (boolean) and the "
                "time, as scikit-survival's Surv makes them"
            )
        booleans = [name for name in names if array.dtype[name].kind == "b"]
        if len(booleans) != 1:
            raise ValueError(
                f"y has the fields {list(names)}; exactly one must be boolean (the event "
                "indicator), as scikit-survival's Surv makes it"
            )
        event_field = booleans[0]
        time_field = names[1] if names[0] == event_field else names[0]
        event = _one_per_sample(
            array[event_field], n_samples, f"y[{event_field!r}]", "values", "sample"
        )
        time = array[time_field]
        time_name = f"y[{time_field!r}] (time)"
    else:
        if array.ndim != 2 or array.shape[1] != 2:
            raise ValueError(
                f"y must be a structured array of (event, time), as scikit-survival's Surv "
                f"makes it, or two columns (time, event); got shape {array.shape}"
            )
        raw_event = array[:, 1]
        try:
            numeric_event = np.asarray(raw_event, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("y[:, 1] (event) must hold 0/1 or booleans") from None
        if not np.isin(numeric_event, (0.0, 1.0)).all():
            bad = numeric_event[~np.isin(numeric_event, (0.0, 1.0))][0]
            raise ValueError(f"y[:, 1] (event) holds {bad:g}; expected 0/1 or booleans")
        event = _one_per_sample(
            numeric_event == 1.0, n_samples, "y[:, 1] (event)", "values", "sample"
        )
        time = array[:, 0]
        time_name = "y[:, 0] (time)"
    time = check_y_numeric(time, n_samples, name=time_name)
    if (time < 0).any():
        row = int(np.flatnonzero(time < 0)[0])
        raise ValueError(f"{time_name} is {time[row]:g} at row {row}; times must be >= 0")
    return np.asarray(event, dtype=bool), time


#: Column names that say which column of a survival frame is which (compared in lower
#: case): the names of R's survival data sets, lifelines' and scikit-survival's.
SURVIVAL_EVENT_NAMES = frozenset({"event", "events", "status", "delta", "dead", "death", "fustat"})
SURVIVAL_TIME_NAMES = frozenset(
    {"time", "times", "futime", "duration", "durations", "stop", "survival_time", "follow_up"}
)


def _survival_frame_in_order(frame):
    """A two-column frame of follow-up as (time, event), by its column names: a name in
    :data:`SURVIVAL_EVENT_NAMES` or a boolean column is the event, a name in
    :data:`SURVIVAL_TIME_NAMES` the time, in either order. Columns named otherwise are read
    as (time, event), unless the first holds only 0 and 1 too: then which is the time is
    anyone's guess, and the frame is refused naming its columns."""
    columns = list(frame.columns)
    if len(columns) != 2:
        raise ValueError(
            f"y has the columns {[str(c) for c in columns]}; expected two: the time and the "
            "event (name them 'time' and 'event')"
        )
    lower = [str(c).strip().lower() for c in columns]
    kinds = [getattr(frame[c], "dtype", None) for c in columns]
    is_event = [
        name in SURVIVAL_EVENT_NAMES or getattr(kind, "kind", "") == "b"
        for name, kind in zip(lower, kinds, strict=True)
    ]
    is_time = [name in SURVIVAL_TIME_NAMES for name in lower]
    for event_at in (0, 1):
        time_at = 1 - event_at
        if (is_event[event_at] and not is_event[time_at]) or (
            is_time[time_at] and not is_time[event_at]
        ):
            return frame[[columns[time_at], columns[event_at]]]
    first = np.asarray(frame[columns[0]].to_numpy(), dtype=object)
    if all(value in (0, 1) for value in first):
        raise ValueError(
            f"y has the columns {[str(c) for c in columns]}, both of them 0/1, and neither "
            "name says which is the time: name them 'time' and 'event' (or pass a "
            "structured array as scikit-survival's Surv makes it)"
        )
    return frame


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


#: Columns' spans take the compiled pass over blocks of rows on threads from this many values
#: of X (fewer: numpy's two reductions, no kernel loaded).
PARALLEL_SPAN_VALUES = 4_000_000


def column_spans(X) -> np.ndarray:
    """max - min of each column of X, NaN skipped (NaN for an all-missing column): for a
    large X one compiled pass over the rows (:mod:`~treekit_core.kernels.column_ranges`),
    blocks of rows on the fit's threads (max and min are exact in any order); numpy's
    ``fmax`` and ``fmin`` for a small one (no kernel to load in a process that fits small
    data: its first fit would pay the load for a millisecond's work)."""
    X = np.asarray(X, dtype=np.float64)
    if X.size < PARALLEL_SPAN_VALUES:
        with np.errstate(invalid="ignore"):
            return np.fmax.reduce(X, axis=0) - np.fmin.reduce(X, axis=0)
    import threading

    from treekit_core.kernels.column_ranges import widen_ranges
    from treekit_core.kernels.row_chunks import for_row_chunks
    from treekit_core.kernels.usable_cpus import fit_threads

    threads = fit_threads()
    blocks, lock = [], threading.Lock()

    def widen(start, stop):  # each block its own ranges, merged below
        high, low = np.full(X.shape[1], -np.inf), np.full(X.shape[1], np.inf)
        widen_ranges(X, high, low, start, stop)
        with lock:
            blocks.append((high, low))

    for_row_chunks(widen, X.shape[0], threads=threads, cost=X.shape[1])
    high = np.max([b[0] for b in blocks], axis=0)
    low = np.min([b[1] for b in blocks], axis=0)
    with np.errstate(invalid="ignore"):
        return np.where(high >= low, high - low, np.nan)


def warn_narrow_features(X, feature_names, nominal=()) -> None:
    """Warn about numeric columns whose whole range is below FEATURE_THRESHOLD: their
    values count as one value to every threshold search (as in scikit-learn), so no split
    can use them, which would otherwise pass silently."""

    if X.shape[0] == 0:
        return
    span = column_spans(X)
    narrow = [
        j for j in np.flatnonzero((span > 0) & (span <= FEATURE_THRESHOLD)) if j not in nominal
    ]
    if narrow:
        j = int(narrow[0])
        more = f" (and {len(narrow) - 1} more)" if len(narrow) > 1 else ""
        warnings.warn(
            f"X {feature_label(j, feature_names)}{more} spans only {span[j]:.3g}, within "
            f"{FEATURE_THRESHOLD:g}: values that close count as equal (as in scikit-learn), so "
            "no split can separate them; rescale the feature",
            UserWarning,
            stacklevel=4,
        )


#: Weight sums beyond this overflow the impurity arithmetic (squares of sums of statistics).
MAX_TOTAL_WEIGHT = 1e150

#: Positive weights below this make weighted statistics (w y, w y^2) subnormal, rounded to
#: multiples of 5e-324: the mirror of MAX_TOTAL_WEIGHT.
MIN_POSITIVE_WEIGHT = 1e-150


def check_n_threads(n_threads):
    """``n_threads``: None or -1 (every usable CPU) or an int >= 1."""
    if n_threads is None or (
        isinstance(n_threads, numbers.Integral)
        and not isinstance(n_threads, bool)
        and (n_threads >= 1 or n_threads == -1)
    ):
        return None if n_threads is None else int(n_threads)
    raise ValueError(
        f"n_threads must be None, -1 (every usable CPU) or an int >= 1, got {n_threads!r}"
    )


def kernel_layout(X: np.ndarray) -> np.ndarray:
    """X as the kernels read it: contiguous in either order and writeable (numba types
    read-only arrays apart). A C- or Fortran-ordered float64 array is used as it is, not
    copied: the kernels read single values of random rows, for which either order serves,
    and a copy of a large X is the largest allocation of a fit. Nothing writes into it."""
    if (X.flags.c_contiguous or X.flags.f_contiguous) and X.flags.writeable:
        return X
    return np.array(X, order="F" if X.flags.f_contiguous else "C")  # a writeable copy

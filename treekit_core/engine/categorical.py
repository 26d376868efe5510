"""Nominal features: which columns are nominal, their categories, and their codes.

A nominal column is declared with ``categorical_features=`` (indices, names or a boolean
mask, as scikit-learn's HistGradientBoosting), is a pandas ``category`` column, or holds
text: a pandas ``str`` / ``string`` / ``object`` column, or a column of a numpy object
array, holding a string that is not a number is nominal without being declared, as the CLI
reads a CSV. ``categorical_features`` adds columns (numeric codes, say) to those. Its
categories are the sorted distinct training values (strings accepted) and it is coded
0..m-1 (m <= 53, so a node's category set fits a bit mask). Missing values stay NaN; a
category never seen in training is treated as missing at prediction (C4.5's shares).
"""

from __future__ import annotations

import numpy as np

from treekit_core.engine.questions import MAX_CATEGORIES


def _is_missing(value) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, pd.NA-like
    except (TypeError, ValueError):
        return False


def _column(X, j):
    if hasattr(X, "iloc"):
        return list(X.iloc[:, j])
    return list(np.asarray(X, dtype=object)[:, j])


def n_columns(X) -> int:
    shape = np.shape(X)
    if len(shape) != 2:
        hint = " Use X.reshape(-1, 1) for a single feature." if len(shape) == 1 else ""
        raise ValueError(
            f"X must be 2-D (n_samples, n_features); got an array with shape {shape}.{hint}"
        )
    return shape[1]


def _is_object_array(X) -> bool:
    return isinstance(X, np.ndarray) and X.dtype.kind == "O"


def _is_word(value) -> bool:
    """A string that does not read as a number (as the CLI reads a CSV cell)."""
    if not isinstance(value, (str, np.str_)):
        return False
    try:
        float(value)
    except ValueError:
        return True
    return False


def _holds_text(values) -> bool:
    return any(_is_word(v) for v in values)


def implicit_nominal(X) -> set[int]:
    """Columns nominal without a declaration: pandas ``category`` columns, and columns of
    text (pandas string dtypes, or object columns holding a string)."""
    if hasattr(type(X), "dtypes"):  # the class's: a DataFrame's would build a Series
        found = set()
        for j, dtype in enumerate(X.dtypes):
            kind = getattr(dtype, "kind", "O")
            numeric = kind in "biufcmM"
            if str(dtype) == "category" or (not numeric and _holds_text(X.iloc[:, j])):
                found.add(j)
        return found
    if _is_object_array(X) and np.ndim(X) == 2:
        return {j for j in range(np.shape(X)[1]) if _holds_text(X[:, j])}
    return set()


def resolve_categorical(spec, X, names) -> list[int]:
    """Indices of the nominal columns of X: the declared ones (``categorical_features``:
    indices, names or a boolean mask) and the implicit ones (pandas ``category`` and object
    columns). Called by ``fit``, and by growers that see X in parts (with an empty X of the
    parts' columns and dtypes)."""
    if spec is None and not hasattr(type(X), "dtypes") and not _is_object_array(X):
        return []
    d = n_columns(X)
    indices = implicit_nominal(X)
    if spec is None:
        return sorted(indices)
    values = list(np.atleast_1d(np.asarray(spec, dtype=object)))
    if values and all(isinstance(v, (bool, np.bool_)) for v in values):
        if len(values) != d:
            raise ValueError(
                f"categorical_features as a mask needs {d} booleans, got {len(values)}"
            )
        return sorted(indices | {j for j, v in enumerate(values) if v})
    for v in values:
        if isinstance(v, str):
            if names is None or v not in names:
                raise ValueError(
                    f"categorical_features names {v!r}, which is not a column of X"
                    + (
                        f" (columns: {list(names)})"
                        if names is not None
                        else " (X has no column names)"
                    )
                )
            indices.add(list(names).index(v))
        elif isinstance(v, (int, np.integer)) and 0 <= int(v) < d:
            indices.add(int(v))
        else:
            raise ValueError(
                f"categorical_features holds {v!r}; expected column indices in [0, {d}), names or "
                "a mask"
            )
    return sorted(indices)


def category_levels(values):
    """Categories in the order nominal codes number them: sorted, or by their text where
    they do not compare (mixed types)."""
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=str)


def category_columns(X) -> dict:
    """Column index -> (codes, categories as Python values) of every pandas ``category``
    column of X (empty for anything else): what a pass over a column's values would give,
    in numpy time. Read once per fit or predict and handed to :func:`fit_categories` and
    :func:`encode` (a pandas column access costs tens of microseconds, more than a whole
    tree of a few dozen rows)."""
    if not hasattr(type(X), "iloc") or not hasattr(type(X), "dtypes"):  # not built here
        return {}
    columns = {}
    for j, dtype in enumerate(X.dtypes):
        if str(dtype) == "category":
            values = X.iloc[:, j].array  # the Categorical: codes without a Series
            columns[j] = (np.asarray(values.codes), values.categories.tolist())
    return columns


def fit_categories(X, indices, names, columns=None) -> dict:
    """Feature index -> the categories present in nominal column j of X (for each j in
    ``indices``), in the order codes number them (:func:`category_levels`); ``names``
    (or None) name the columns in errors; ``columns``: :func:`category_columns` of X when
    the caller has it. Called by ``fit``, and by growers that see the data in parts (the
    union of the parts' categories, ordered again)."""
    columns = category_columns(X) if columns is None else columns
    categories = {}
    for j in indices:
        if j in columns:
            codes, levels = columns[j]
            present = {levels[c] for c in np.unique(codes[codes >= 0]).tolist()}
            present = {v for v in present if not _is_missing(v)}
        else:
            present = {v for v in _column(X, j) if not _is_missing(v)}
        levels = category_levels(present)
        if len(levels) > MAX_CATEGORIES:
            label = f"column {j}" + (f" ({names[j]!r})" if names is not None else "")
            raise ValueError(
                f"nominal {label} has {len(levels)} categories; at most {MAX_CATEGORIES} are "
                "supported"
            )
        categories[j] = [v.item() if isinstance(v, np.generic) else v for v in levels]
    return categories


def encode(X, categories: dict, columns=None) -> np.ndarray | object:
    """X with nominal columns replaced by float codes (NaN: missing or unseen). Returns X
    unchanged when there are no nominal columns. ``columns``: :func:`category_columns` of
    X when the caller has it."""
    if not categories:
        return X
    columns = category_columns(X) if columns is None else columns
    d = n_columns(X)
    coded = np.empty((np.shape(X)[0], d), order="F")  # column by column, as kernels read it
    numeric = [j for j in range(d) if j not in categories]
    if hasattr(type(X), "iloc") and numeric:
        try:  # the numeric columns in one pandas call (one per column costs more than a fit)
            coded[:, numeric] = X.iloc[:, numeric].to_numpy(dtype=np.float64)
            numeric = []
        except (TypeError, ValueError):
            pass  # column by column below, to name the column that is not numbers
    as_objects = None if hasattr(X, "iloc") else np.asarray(X, dtype=object)
    for j in categories:
        coded[:, j] = _codes(X, j, categories[j], columns.get(j))
    for j in numeric:
        values = X.iloc[:, j].to_numpy() if as_objects is None else as_objects[:, j]
        try:
            coded[:, j] = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"X column {j} has values that are not numbers; declare it in "
                f"categorical_features if it is nominal"
            ) from None
    return coded


def _codes(X, j, levels, category_column=None) -> np.ndarray:
    """Column j's codes: the position of each value among ``levels``, NaN for a missing or
    unseen value; ``category_column``: (codes, categories) of a pandas category column."""
    code = {v: float(i) for i, v in enumerate(levels)}
    if category_column is not None:
        codes, categories = category_column
        per_category = np.array([code.get(v, np.nan) for v in categories] + [np.nan])
        return per_category[np.where(codes >= 0, codes, len(per_category) - 1)]
    return np.array([np.nan if _is_missing(v) else code.get(v, np.nan) for v in _column(X, j)])

"""Reading a CSV for the command line without pandas: numeric columns become floats (empty,
``?`` and ``NA`` are missing), the others stay strings and are treated as nominal. A column
a model knows as nominal is read as text whatever it looks like ("1" is the category
"1", not the number 1)."""

from __future__ import annotations

import csv
import io

import numpy as np

MISSING = {"", "?", "NA", "NaN", "nan"}
#: What is trimmed around a field ("a, b" reads as "a" and "b"): spaces and tabs only, so
#: a value's own control characters (a form feed, U+2028) stay in it.
FIELD_PADDING = " \t\r\n"


def _number(text):
    try:
        return float(text)
    except ValueError:
        return None


def read_text_table(path):
    """(header, {column name: list of its stripped text fields}); refuses what would be
    read wrong: a NUL byte, a repeated column name, rows of the wrong width."""
    with open(path, newline="", encoding="utf-8-sig") as handle:  # -sig: a BOM is not text
        text = handle.read()
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise ValueError(f"{path}: line {line} holds a NUL byte; a CSV of text is expected")
    # rows end where the csv module says (newline="" keeps line ends for it), never at
    # str.splitlines' other breaks (U+2028, \x85, \x0b, \x0c, \x1c-\x1e), which may stand
    # inside a value
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        rows = [row for row in reader if row]
    except csv.Error as exc:  # a field over csv's limit (131 072 characters), a stray quote
        raise ValueError(f"{path}: line {reader.line_num}: {exc}") from None
    if not rows:
        raise ValueError(f"{path} is empty")
    header, body = [h.strip(FIELD_PADDING) for h in rows[0]], rows[1:]
    repeated = sorted({h for h in header if header.count(h) > 1})
    if repeated:
        raise ValueError(
            f"{path}: the header names {', '.join(repr(h) for h in repeated)} more than once; "
            "column names must be distinct"
        )
    if not body:
        raise ValueError(f"{path} has a header but no rows")
    widths = {len(row) for row in body}
    if widths != {len(header)}:
        bad = next(i for i, row in enumerate(body) if len(row) != len(header))
        raise ValueError(
            f"{path}: row {bad + 2} has {len(body[bad])} fields, the header has {len(header)}"
        )
    return header, {
        name: [row[j].strip(FIELD_PADDING) for row in body] for j, name in enumerate(header)
    }


def typed_column(values, as_text: bool = False) -> np.ndarray:
    """float64 when every present value is a number (and ``as_text`` is false), else an
    object array of strings; missing markers become NaN / None."""
    if not as_text:
        numbers = [None if v in MISSING else _number(v) for v in values]
        if all(n is not None or v in MISSING for n, v in zip(numbers, values, strict=True)):
            return np.array([np.nan if n is None else n for n in numbers], dtype=np.float64)
    return np.array([None if v in MISSING else v for v in values], dtype=object)


def typed_columns(raw, text_columns=()) -> dict:
    """Every column of a text table typed (:func:`typed_column`); the columns named in
    ``text_columns`` stay text."""
    return {name: typed_column(values, name in text_columns) for name, values in raw.items()}


def read_table(path):
    """(header, columns as numpy arrays: float64 for numeric columns, object otherwise)."""
    header, raw = read_text_table(path)
    return header, typed_columns(raw)


def feature_matrix(columns, names):
    """X as an object array (floats and strings) and the indices of nominal columns."""
    missing = [name for name in names if name not in columns]
    if missing:
        raise ValueError(f"the data lacks the columns {missing}")
    if not names:
        raise ValueError("the data has no feature columns")
    X = np.empty((len(columns[names[0]]), len(names)), dtype=object)
    nominal = []
    for j, name in enumerate(names):
        X[:, j] = columns[name]
        if columns[name].dtype == object:
            nominal.append(j)
    if not nominal:
        X = X.astype(np.float64)
    return X, nominal


def label_column(values: np.ndarray) -> np.ndarray:
    """Class labels as the file means them: numbers that are all whole stay integers
    (``1``, not ``1.0``); other numbers stay floats; text stays text."""
    if (
        values.dtype.kind == "f"
        and np.isfinite(values).all()
        and (values == np.round(values)).all()
    ):
        return values.astype(np.int64)
    return values


def rows_digest(raw: dict, names) -> str:
    """SHA-256 of the text of the columns ``names`` row by row: the same rows give the same
    digest whatever other columns (the target, extra ones) a file holds."""
    import hashlib

    digest = hashlib.sha256()
    for row in zip(*(raw[name] for name in names), strict=True):
        digest.update(("\x1f".join(row) + "\n").encode())
    return digest.hexdigest()

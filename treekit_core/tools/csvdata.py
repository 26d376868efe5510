"""Reading a CSV for the command line without pandas: numeric columns become floats (empty,
``?`` and ``NA`` are missing), the others stay strings and are treated as nominal."""

from __future__ import annotations

import csv

import numpy as np

MISSING = {"", "?", "NA", "NaN", "nan"}


def _number(text):
    try:
        return float(text)
    except ValueError:
        return None


def read_table(path):
    """(header, columns as numpy arrays: float64 for numeric columns, object otherwise)."""
    with open(path, newline="", encoding="utf-8-sig") as handle:  # -sig: a BOM is not text
        rows = [row for row in csv.reader(handle) if row]
    if not rows:
        raise ValueError(f"{path} is empty")
    header, body = [h.strip() for h in rows[0]], rows[1:]
    if not body:
        raise ValueError(f"{path} has a header but no rows")
    widths = {len(row) for row in body}
    if widths != {len(header)}:
        bad = next(i for i, row in enumerate(body) if len(row) != len(header))
        raise ValueError(
            f"{path}: row {bad + 2} has {len(body[bad])} fields, the header has {len(header)}"
        )
    columns = {}
    for j, name in enumerate(header):
        values = [row[j].strip() for row in body]
        numbers = [None if v in MISSING else _number(v) for v in values]
        if all(n is not None or v in MISSING for n, v in zip(numbers, values, strict=True)):
            columns[name] = np.array([np.nan if n is None else n for n in numbers])
        else:
            columns[name] = np.array([None if v in MISSING else v for v in values], dtype=object)
    return header, columns


def feature_matrix(columns, names):
    """X as an object array (floats and strings) and the indices of nominal columns."""
    missing = [name for name in names if name not in columns]
    if missing:
        raise ValueError(f"the data lacks the columns {missing}")
    X = np.empty((len(columns[names[0]]), len(names)), dtype=object)
    nominal = []
    for j, name in enumerate(names):
        X[:, j] = columns[name]
        if columns[name].dtype == object:
            nominal.append(j)
    if not nominal:
        X = X.astype(np.float64)
    return X, nominal

"""Helpers shared by the paper-reproduction benchmarks (not part of the package)."""

from __future__ import annotations

import time

import numpy as np


def stratified_folds(y, k, seed):
    from treekit_core.builtins.pruners.cost_complexity import stratified_folds as folds

    _, codes = np.unique(y, return_inverse=True)
    return folds(codes, k, np.random.default_rng(seed))


def stratified_split(y, test_fraction, seed):
    from treekit_core.tools.cli import stratified_split as split

    return split(np.asarray(y), test_fraction, seed)


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def markdown_table(header, rows) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        lines.append(
            "| " + " | ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row) + " |"
        )
    return "\n".join(lines)


def wilcoxon_p(a, b) -> float:
    from scipy.stats import wilcoxon

    a, b = np.asarray(a, float), np.asarray(b, float)
    if np.allclose(a, b):
        return 1.0
    return float(wilcoxon(a, b).pvalue)

"""Features binned once per fit: at most ``max_bins`` bins of values per feature, and a bin
of its own for missing values.

A feature with at most ``max_bins`` distinct values (values closer than
``FEATURE_THRESHOLD`` count as one, as in the exhaustive search) gets a bin per value and
the exhaustive search's thresholds (midpoints of consecutive values), so the histogram
search finds the same cuts. A feature with more gets quantile bins: cuts between distinct
values placed nearest to the ``i / max_bins`` quantiles of the training rows, found on a
sample of ``BINNING_SAMPLE`` rows (LightGBM's and scikit-learn's choice: quantiles of a
large sample are as good as the full data's, and sorting every row of a large data set
would cost more than growing the tree).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import attrs
import numpy as np

from treekit_core import FEATURE_THRESHOLD
from treekit_core.kernels import jit

#: The largest ``max_bins``: value bins take codes 0..254, and missing values code
#: ``max_bins`` (bin codes are bytes).
MAX_BINS = 255
#: Rows whose values place the quantile cuts of a feature with more than max_bins values.
BINNING_SAMPLE = 200_000


@attrs.frozen(eq=False)
class BinnedData:
    """X as bin codes (features x rows, uint8, C order: a feature's codes lie together,
    which the histograms and partitions read one feature at a time), with each feature's
    thresholds:
    ``edges[f, a]`` is the threshold of a cut after bin a (x <= edges[f, a] goes left),
    ``n_value_bins[f]`` the number of bins holding values; a missing value has the code
    ``missing_code`` (``max_bins``: the histograms have max_bins + 1 bins)."""

    codes: np.ndarray
    edges: np.ndarray
    n_value_bins: np.ndarray
    missing_code: int


def feature_edges(sample: np.ndarray, max_bins: int) -> np.ndarray:
    """The thresholds between one feature's bins (at most ``max_bins - 1``, increasing),
    from its values on the sampled rows (NaN allowed, ignored)."""
    known = sample[~np.isnan(sample)]
    return edges_from_counts(*np.unique(known, return_counts=True), max_bins)


def edges_from_counts(values: np.ndarray, counts: np.ndarray, max_bins: int) -> np.ndarray:
    """:func:`feature_edges` from a feature's distinct known values (increasing) and how
    many rows hold each (float counts allowed: a weighted summary of rows), so data seen
    in parts (a cluster's partitions) bins as the whole would."""
    known_rows = float(np.sum(counts))
    if values.size < 2:
        return np.zeros(0)
    # Cut candidates: between consecutive distinct values more than FEATURE_THRESHOLD apart.
    gap = np.flatnonzero(values[1:] > values[:-1] + FEATURE_THRESHOLD)
    lower, upper = values[gap], values[gap + 1]
    cuts = lower / 2.0 + upper / 2.0
    cuts = np.where((cuts == upper) | ~np.isfinite(cuts), lower, cuts)
    if cuts.size >= max_bins:
        # The candidate nearest to each quantile of the rows (by the rows below it).
        rows_below = np.cumsum(counts)[gap]
        targets = np.arange(1, max_bins) * (known_rows / max_bins)
        nearest = np.clip(np.searchsorted(rows_below, targets), 0, cuts.size - 1)
        before = np.clip(nearest - 1, 0, cuts.size - 1)
        closer = np.abs(rows_below[before] - targets) <= np.abs(rows_below[nearest] - targets)
        cuts = cuts[np.unique(np.where(closer, before, nearest))]
    return cuts


@jit()
def _code_rows(X, padded_edges, start, end, codes, missing_code):
    """codes[f, i] for rows start..end-1: the bin of X[i, f], the number of its feature's
    edges below it (``padded_edges``: 255 per feature, padded with +inf), by a binary
    search of fixed length without branches; ``missing_code`` for NaN. Threads take blocks of
    rows (they share at most a block's first and last cache line of a feature)."""
    for i in range(start, end):
        for f in range(X.shape[1]):
            value = X[i, f]
            if np.isnan(value):
                codes[f, i] = missing_code
                continue
            position = 0
            step = 128
            while step > 0:
                position += step * (padded_edges[f, position + step - 1] < value)
                step >>= 1
            codes[f, i] = position


def bin_features(X: np.ndarray, max_bins: int, n_threads: int = 1) -> BinnedData:
    """Bin every column of X (blocks of rows in parallel threads when there are many: the
    binary searches run without the GIL). Deterministic: the rows that place the quantile
    cuts of a large data set are drawn with a fixed seed."""
    n, d = X.shape
    sample = X
    if n > BINNING_SAMPLE:
        rows = np.random.default_rng(0).choice(n, BINNING_SAMPLE, replace=False)
        sample = X[np.sort(rows)]
    columns = [np.ascontiguousarray(sample[:, f]) for f in range(d)]
    if n_threads > 1 and sample.shape[0] * d >= 100_000:  # numpy's sorts release the GIL
        with ThreadPoolExecutor(n_threads) as pool:
            per_feature = list(pool.map(lambda column: feature_edges(column, max_bins), columns))
    else:
        per_feature = [feature_edges(column, max_bins) for column in columns]
    edges, n_value_bins = edge_table(per_feature)
    return BinnedData(code_features(X, edges, max_bins, n_threads), edges, n_value_bins, max_bins)


def edge_table(edges_per_feature) -> tuple:
    """(edges: features x most edges, NaN-padded; bins holding values per feature)."""
    n_value_bins = np.array([e.size + 1 for e in edges_per_feature], dtype=np.int64)
    edges = np.full((len(edges_per_feature), max(1, int(n_value_bins.max(initial=1)) - 1)), np.nan)
    for f, e in enumerate(edges_per_feature):
        edges[f, : e.size] = e
    return edges, n_value_bins


def code_features(X: np.ndarray, edges: np.ndarray, max_bins: int, n_threads: int = 1):
    """The bin codes (features x rows, uint8) of X under ``edges`` (:func:`edge_table`'s);
    a missing value codes ``max_bins``."""
    n, d = X.shape
    codes = np.empty((d, n), dtype=np.uint8)
    padded = np.full((d, MAX_BINS), np.inf)
    padded[:, : edges.shape[1]] = np.where(np.isnan(edges), np.inf, edges)
    blocks = np.linspace(0, n, 1 + (4 * n_threads if n_threads > 1 and n >= 100_000 else 1))
    blocks = blocks.astype(np.int64)

    def code(block):
        _code_rows(X, padded, blocks[block], blocks[block + 1], codes, max_bins)

    if blocks.size > 2:
        with ThreadPoolExecutor(n_threads) as pool:
            list(pool.map(code, range(blocks.size - 1)))
    else:
        code(0)
    return codes

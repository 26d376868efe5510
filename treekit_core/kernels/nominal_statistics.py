"""A node's statistics per category of its nominal features (what the nominal searches of
:mod:`.nominal_search` score, and what a target orders categories by)."""

import numpy as np
from numba import types

from treekit_core.kernels.compiling import F1, F2A, F2C, I1, jit

F3C = types.float64[:, :, ::1]
I2C = types.int64[:, ::1]
F2 = types.float64[:, ::1]

STATISTICS_SIGNATURE = types.void(F2A, F2C, I1, F1, I1, F3C, F2, I2C)


@jit(STATISTICS_SIGNATURE)
def nominal_category_statistics(X, evidence, rows, row_weights, features, sums, weights, counts):
    """For each of ``features`` (nominal, codes 0..m-1, NaN missing), the node's rows with
    a known value summed per category: ``sums[f, c]`` the weighted evidence, ``weights[f,
    c]`` the weight, ``counts[f, c]`` the rows (outputs, zeroed here), in row order."""
    n_stats = evidence.shape[1]
    for a in range(features.shape[0]):
        for c in range(sums.shape[1]):
            weights[a, c] = 0.0
            counts[a, c] = 0
            for k in range(n_stats):
                sums[a, c, k] = 0.0
    for a in range(features.shape[0]):  # one feature at a time: X is column-major
        feature = features[a]
        for j in range(rows.shape[0]):
            x = X[rows[j], feature]
            if np.isnan(x):
                continue
            r = rows[j]
            w = row_weights[j]
            c = np.int64(x)
            weights[a, c] += w
            counts[a, c] += 1
            for k in range(n_stats):
                sums[a, c, k] += w * evidence[r, k]

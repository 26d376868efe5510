"""Exact distance from samples to the nearest leaf box with another decision."""

import numpy as np

from treekit_core.kernels import jit

EUCLIDEAN, CHEBYSHEV, MANHATTAN = 0, 1, 2


@jit()
def nearest_other_box(
    X, own, lower, upper, box_decision, scale, metric, abstain_is_different, out, start, stop
):
    """Into ``out``, for samples i in start..stop-1: the distance to the nearest box whose
    decision differs from own[i]. The nearest point of a box is the sample clipped into it,
    so the distance is exact. A box is abandoned as soon as its partial distance exceeds
    the best so far. Missing coordinates (NaN) add nothing: the sample may lie anywhere
    along them. +inf when no box has another decision."""
    d = X.shape[1]
    m = lower.shape[0]
    for i in range(start, stop):
        best = np.inf
        for b in range(m):
            decided = box_decision[b]
            if decided == own[i] or (decided < 0 and not abstain_is_different):
                continue
            total = 0.0
            for f in range(d):
                x = X[i, f]
                if np.isnan(x):
                    continue
                gap = 0.0
                if x < lower[b, f]:
                    gap = (lower[b, f] - x) / scale[f]
                elif x > upper[b, f]:
                    gap = (x - upper[b, f]) / scale[f]
                if metric == 0:
                    total += gap * gap
                    if total >= best * best:
                        break
                elif metric == 1:
                    if gap > total:
                        total = gap
                    if total >= best:
                        break
                else:
                    total += gap
                    if total >= best:
                        break
            distance = np.sqrt(total) if metric == 0 else total
            if distance < best:
                best = distance
        out[i] = best

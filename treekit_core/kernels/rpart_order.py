"""rpart's order of a node's rows, compiled: the quicksort rpart 4.1.19 sorts each numeric
column with once (mysort.c), ported step for step so that rows of equal value come out in
rpart's order too.

rpart sums a node's responses over its rows in the order of its first column's sort (its
``sorts[0]``, partitioned stably at every split), so a node's risk, and so the complexity
parameters of its cp table, depend on that order in their last bits. The sort is not stable
(median-of-three quicksort, insertion sort below 11 elements); a missing value sorts as 0.
The recursion is a stack here: the parts are disjoint, so the order in which they are
sorted does not change the result.
"""

from __future__ import annotations

import numpy as np
from numba import types

from treekit_core.kernels.compiling import F1, I1, jit

SIGNATURE = types.void(F1, I1)


@jit(SIGNATURE)
def rpart_sort(x, carried):
    """Sort ``x`` in place as rpart's ``mysort(0, n - 1, x, carried)`` does, carrying
    ``carried`` along."""
    n = x.shape[0]
    stack = np.empty(2 * 64 + 2, dtype=np.int64)  # parts of at most half: depth < 64
    top = 0
    if n > 1:
        stack[0], stack[1] = 0, n - 1
        top = 2
    while top > 0:
        top -= 2
        start, stop = stack[top], stack[top + 1]
        while start < stop:
            if stop - start < 11:  # insertion sort
                for i in range(start + 1, stop + 1):
                    temp, tempd = x[i], carried[i]
                    j = i - 1
                    while j >= start and x[j] > temp:
                        x[j + 1], carried[j + 1] = x[j], carried[j]
                        j -= 1
                    x[j + 1], carried[j + 1] = temp, tempd
                break
            i, j, k = start, stop, (start + stop) // 2
            median = x[k]
            if x[i] >= x[k]:
                if x[j] > x[k]:
                    median = x[j] if x[i] > x[j] else x[i]
            elif x[j] < x[k]:
                median = x[i] if x[i] > x[j] else x[j]
            while i < j:
                while x[i] < median:
                    i += 1
                while x[j] > median:
                    j -= 1
                if i < j:
                    if x[i] > x[j]:
                        x[i], x[j] = x[j], x[i]
                        carried[i], carried[j] = carried[j], carried[i]
                    i += 1
                    j -= 1
            while x[i] >= median and i > start:
                i -= 1
            while x[j] <= median and j < stop:
                j += 1
            # rpart recurses on the shorter part and loops on the longer; here the longer
            # waits on the stack and the loop goes on with the shorter (at most half), so
            # the stack holds fewer parts than log2(n) + 1
            if i - start < stop - j:
                stack[top], stack[top + 1] = j, stop
                top += 2
                stop = i
            else:
                stack[top], stack[top + 1] = start, i
                top += 2
                start = j

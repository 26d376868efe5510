"""Exhaustive threshold search on one feature's sorted values, the criterion as a function
value: the public building block for plugin kernels.

The code is :func:`.growth.scan_sorted_feature` (one body for every caller); this entry
point compiles it once, with an explicit signature, for every criterion. Kernels live in
separate modules so a fit loads from numba's cache only the ones it uses.
"""

from numba import types

from treekit_core.kernels import growth
from treekit_core.kernels.compiling import F1, F2C, IMPURITY_TYPE, f8, i8, jit, python_function

SCAN_SIGNATURE = types.Tuple((f8, f8, i8))(
    IMPURITY_TYPE, F1, F1, F2C, F1, F1, f8, f8, i8, f8, F1, F1
)

scan_sorted_feature = jit(SCAN_SIGNATURE)(python_function(growth.scan_sorted_feature))

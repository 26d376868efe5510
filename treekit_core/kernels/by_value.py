"""The presorted grower's entry points with the criterion as a first-class function value:
one machine-code copy for every criterion, an indirect call per impurity evaluation. Used
for criteria that cannot be specialised (:mod:`.specialised`); imported only then, so a
fit that does not need them does not load or compile them."""

from numba import types

from treekit_core.kernels import growth
from treekit_core.kernels.compiling import (
    F1,
    F2A,
    F2C,
    I1,
    IMPURITY_TYPE,
    f8,
    i8,
    jit,
    python_function,
)

I32_2 = types.int32[:, ::1]
U8 = types.uint8[::1]

GROW_ARGUMENTS = (F1, F2A, F2C, I32_2, i8, i8, i8, F1, i8, i8, U8)
SCAN_ARGUMENTS = (F1, F2A, F2C, I32_2, I1, i8, i8, F1, f8, f8, F1, F1, F1, I1)


grow_subtree_by_value = jit(F2C(IMPURITY_TYPE, *GROW_ARGUMENTS))(
    python_function(growth.grow_subtree)
)
scan_features_by_value = jit(types.void(IMPURITY_TYPE, *SCAN_ARGUMENTS))(
    python_function(growth.scan_features)
)

"""Split search one node at a time, the criterion as a function value (used when a
composition cannot use the presorted grower: missing values, nominal features, soft
propagation, feature subsets drawn in Python; and by plugin kernels).

The code is :mod:`.growth`'s (one body for every caller); these entry points compile it
once, with explicit signatures, for every criterion. The exhaustive splitter itself uses
the kernels specialised to its criterion (:mod:`.specialised`) where it can.
"""

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

GATHER_SIGNATURE = types.int64(F2A, F2C, I1, F1, i8, F1, F1, F2C, F1)
NODE_SIGNATURE = growth.NODE_RESULT(IMPURITY_TYPE, *growth.NODE_ARGUMENTS)

gather_sorted_feature = jit(GATHER_SIGNATURE)(python_function(growth.gather_sorted_feature))
sum_known = jit(f8(F2C, F1, i8, F1))(python_function(growth.sum_known))
best_split_of_node = jit(NODE_SIGNATURE)(python_function(growth.best_split_of_node))

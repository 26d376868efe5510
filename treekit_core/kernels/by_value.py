"""The presorted grower's entry points with the criterion as a first-class function value:
one machine-code copy for every criterion, an indirect call per impurity evaluation. Used
for criteria that cannot be specialised (:mod:`.specialised`); imported only then, so a
fit that does not need them does not load or compile them."""

from numba import types

from treekit_core.kernels import growth
from treekit_core.kernels.compiling import F2C, IMPURITY_TYPE, jit, python_function

grow_subtree_by_value = jit(F2C(IMPURITY_TYPE, *growth.GROW_ARGUMENTS))(
    python_function(growth.grow_subtree)
)
scan_features_by_value = jit(types.void(IMPURITY_TYPE, *growth.SCAN_ARGUMENTS))(
    python_function(growth.scan_features)
)

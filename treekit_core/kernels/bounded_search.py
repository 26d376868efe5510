"""The node search under monotonic constraints, the criterion as a function value (for
criteria that are not specialised, :mod:`.specialised`).

The code is :func:`.growth.best_split_within_bounds` (one body for every caller); it lives
in a module of its own so a fit without constraints never loads it.
"""

from treekit_core.kernels import growth
from treekit_core.kernels.compiling import IMPURITY_TYPE, jit, python_function

BOUNDED_SIGNATURE = growth.NODE_RESULT(IMPURITY_TYPE, *growth.BOUNDED_NODE_ARGUMENTS)

best_split_within_bounds = jit(BOUNDED_SIGNATURE)(python_function(growth.best_split_within_bounds))

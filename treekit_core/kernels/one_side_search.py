"""The node search with scikit-learn's missing values (every missing row to one side,
chosen with the cut), the criterion as a function value: one compiled copy for every
criterion, loaded only by a splitter asked for it (``missing="one_side"``).

The code is :func:`.threshold_search.best_split_missing_on_one_side`."""

from treekit_core.kernels import growth, threshold_search
from treekit_core.kernels.compiling import IMPURITY_TYPE, jit, python_function

ONE_SIDE_SIGNATURE = growth.NODE_RESULT(IMPURITY_TYPE, *growth.BOUNDED_NODE_ARGUMENTS)

best_split_missing_on_one_side = jit(ONE_SIDE_SIGNATURE)(
    python_function(threshold_search.best_split_missing_on_one_side)
)

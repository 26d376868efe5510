"""The subset and multi-way searches of nominal features at one node, compiled.

The same searches as :mod:`treekit_core.builtins.nominal_subsets` (which stays as their
readable definition and the reference the tests compare with), with the same candidates,
order of evaluation and arithmetic, so they choose the same questions: per feature, the
known rows' weighted statistics per category; for a subset question every prefix of the
categories in the target's order (exact where that order is: Breiman et al., theorem 4.5),
or else every subset keeping the first category left up to ``exact_limit`` categories, or
beyond it the prefixes by the share of the majority statistic; for a multi-way question
the partition into all categories. Sums are taken in numpy's order (a category's rows in
row order; a list of weights by numpy's pairwise summation), so drops agree to the last
bit with the Python search's.

The entry point takes the impurity as its first parameter; the nominal searches compile
it specialised to each criterion and cached per machine, as the threshold search is
(:func:`treekit_core.kernels.specialised.function_kernels`). The categories' statistics
come from :mod:`.nominal_statistics` (no impurity in them).
"""

# np and generic_jit: the kernels copied into the specialised modules use them
import numpy as np  # noqa: F401
from numba import types

from treekit_core.kernels.compiling import F1, I1, f8, generic_jit, i8  # noqa: F401

# The search is written in :mod:`.growth` (the presorted grower's subset search runs it
# too): the kernels taking the impurity are copied into this module's specialised
# versions, the others are imported by them.
from treekit_core.kernels.nominal_questions import (  # noqa: F401
    NO_SCORES,
    NOMINAL_SEARCH_SIGNATURE,
    best_nominal_question,
    best_nominal_questions,
    nominal_questions_of_node,
    numpy_sum,
    subset_drop,
)

F3C = types.float64[:, :, ::1]
I2C = types.int64[:, ::1]
F2 = types.float64[:, ::1]


#: The entry points' signatures after the impurity (the kernels are specialised to each
#: criterion: :func:`treekit_core.kernels.specialised.function_kernels`): the node-by-node
#: loop's search, and the presorted grower's (passed to it as a function value).
ENTRY_SIGNATURES = {
    "best_nominal_questions": types.void(
        F1, F3C, F2, I2C, I1, F2, types.boolean, i8, f8, F1, i8, i8, f8, types.boolean, i8, F2
    ),
    "best_nominal_question": NOMINAL_SEARCH_SIGNATURE,
}

"""Numbers every layer agrees on. At the bottom with :mod:`treekit_core.version`: the
kernels compare with them, the contract and the engine document and re-export them, and
none of them may differ between the compiled and the Python grower."""

import numpy as np

#: Feature values closer than this are the same value to a threshold search (scikit-learn's
#: FEATURE_THRESHOLD, so the candidate thresholds are exactly scikit-learn's): no split
#: separates them.
FEATURE_THRESHOLD = 1e-7
#: A node whose impurity is at most this is pure. Larger than machine epsilon because with
#: fractional weights a pure node's impurity is rounding noise of a few 1e-16 (its class sums
#: and its weight are summed in different orders); any real impurity is far larger.
PURE_TOLERANCE = 1e-12
#: scikit-learn's slack in the min_impurity_decrease test (a constant: np.finfo in a kernel
#: costs a compile of its own).
EPSILON = float(np.finfo(np.float64).eps)


def in_order_sum(values) -> float:
    """The sum of ``values`` added one after another, first to last, as a C loop adds them
    (numpy's ``sum`` adds in pairs: other last bits). For arithmetic that must equal a
    peer's to the bit."""
    values = np.asarray(values, dtype=np.float64)
    return float(np.cumsum(values)[-1]) if values.size else 0.0

"""Every numba setting of treekit lives here, and only kernel modules import this module.

Importing ``treekit_core`` does not import numba (numba alone costs about half a second):
kernel modules are imported the first time a tree is fitted or evaluated.

The criterion ABI
-----------------
A criterion's impurity is a plain Python function with the signature::

    impurity(class_sums: float64[::1], total_weight: float64, params: float64[::1]) -> float64

``class_sums`` are the weighted sums of the evidence rows of a node (length K),
``total_weight`` is the node's weight and ``params`` the criterion's parameters as a
runtime array (so changing a parameter never recompiles anything).

Kernels receive the compiled impurity as a first-class function value of type
``IMPURITY_TYPE``. We chose this over passing the dispatcher as a plain argument: a
dispatcher argument specialises the kernel per criterion and its on-disk cache never
hits across processes (numba issues #2956, #6264), whereas a kernel with an explicit
``FunctionType`` signature compiles once for every criterion and is loaded from the cache
by every later process. The price is an indirect call (no inlining); benchmarks/README.md
has the figures.
"""

from __future__ import annotations

import functools
import os

import numba
from numba import types

#: Options every treekit kernel is compiled with. cache=True writes machine code next to
#: the source (or to NUMBA_CACHE_DIR) so a new process does not compile again.
JIT_OPTIONS = {"cache": True, "nogil": True}

IMPURITY_SIGNATURE = types.float64(types.float64[::1], types.float64, types.float64[::1])
IMPURITY_TYPE = types.FunctionType(IMPURITY_SIGNATURE)

JIT_DISABLED = os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")


def jit(signature=None, **options):
    """Decorator compiling a kernel with treekit's options (and an optional signature)."""
    merged = {**JIT_OPTIONS, **options}
    if signature is None:
        return numba.njit(**merged)
    return numba.njit(signature, **merged)


@functools.lru_cache(maxsize=None)
def compile_impurity(function):
    """Compile a plain Python impurity function against the criterion ABI.

    The result is memoised per function object, and ``cache=True`` stores it on disk keyed
    by the function's source file, so a third-party criterion compiles once per machine.
    """
    if JIT_DISABLED:
        return function
    return numba.njit(IMPURITY_SIGNATURE, **JIT_OPTIONS)(function)

"""numba kernels. Importing any module here imports numba.

Public building blocks for plugin kernels (importing one loads only its own module, so a fit
loads from numba's cache only the kernels it uses):

``jit``                  the decorator every treekit kernel is compiled with (cached on disk)
``IMPURITY_TYPE``        the numba type of a compiled criterion (the criterion ABI)
``compile_impurity``     compiles a plain Python impurity against that ABI
``scan_sorted_feature``  best threshold of one feature's sorted values (running class sums)
``gather_sorted_feature``  one feature's known values at a node, sorted, with weighted evidence
``best_split_of_node``   the exhaustive search over a node's features

The other modules (``builder``, ``c45``, ``routing``, ``question_routing``, ``generated``) are
private.

Before any kernel module imports numba, numba's default thread count is capped to the CPUs
this process may use (affinity mask, cgroup quota: :mod:`.usable_cpus`); an explicit
``NUMBA_NUM_THREADS`` is the user's cap and wins.
"""

from treekit_core.kernels.usable_cpus import cap_numba_threads

cap_numba_threads()

_PUBLIC = {
    "jit": "compiling",
    "IMPURITY_TYPE": "compiling",
    "IMPURITY_SIGNATURE": "compiling",
    "compile_impurity": "compiling",
    "scan_sorted_feature": "split_search",
    "gather_sorted_feature": "node_search",
    "best_split_of_node": "node_search",
}


def __getattr__(name):
    if name in _PUBLIC:
        import importlib

        return getattr(importlib.import_module(f"treekit_core.kernels.{_PUBLIC[name]}"), name)
    raise AttributeError(f"module 'treekit_core.kernels' has no attribute {name!r}")


__all__ = sorted(_PUBLIC)

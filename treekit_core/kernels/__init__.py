"""numba kernels. Importing any module here imports numba.

Public building blocks for plugin kernels (importing one loads only its own module, so a fit
loads from numba's cache only the kernels it uses):

``jit``                  the decorator every treekit kernel is compiled with (cached on disk)
``IMPURITY_TYPE``        the numba type of a compiled criterion (the criterion ABI)
``compile_impurity``     compiles a plain Python impurity against that ABI
``scan_sorted_feature``  best threshold of one feature's sorted values (running sums of statistics)
``gather_sorted_feature``  one feature's known values at a node, sorted, with weighted evidence
``best_split_of_node``   the exhaustive search over a node's features

For a plugin that grows whole trees in its own kernels (see plugins/splitters/histogram):

``generic_jit``          compiles a kernel body that takes the impurity as first parameter
``python_function``      the plain function behind a kernel (to compile it with ``jit``)
``impurity_kernels``     a plugin's kernel module specialised to a criterion, cached per machine
``row_table``            the per-sample table growers read (weight, weight x evidence)
``rule_vector``          the stopping rules as the float64 array growers read
``split_drop``           the impurity drop of a binary split (kernel)
``within_bounds``        whether a cut keeps a monotonic constraint at a node (kernel)
``bounded_value``        the value a monotonic constraint orders, of a side's sums (kernel)
``may_split``            the stopping rules of a node before any search (kernel)
``choose_split``         the best candidate by drop, with min_impurity_decrease (kernel)
``accepts_split``        the stopping rules of the best split found (kernel)
``fill_node``            a new leaf's row of a node table (kernel)
``grow_array``           a copy of a 2-D array with more rows (kernel)
``prefetch``             asks the processor for ``array[index]`` ahead of its read (kernel)
``add_lanes``            adds 2 or 4 floats to consecutive entries as one vector add (kernel)
``NODE_COLUMNS``         the columns of a grower's node table (``treekit_core.tree_from_table``
                         makes an unlabelled Tree of one: kernels return arrays, never trees)
``NOMINAL_SEARCH_TYPE``  the type of the nominal search a grower takes as a function value
                         (``treekit_core.builtins.nominal_search_kernel`` compiles it for a
                         criterion: the node-by-node loop's subset or multi-way search, from
                         categories' sums; a multi-way result has no category mask: NaN)
``no_nominal_search``    that type's stand-in for a fit without nominal features (compiled
                         on first use; never called)
``nominal_buffers``      a grower's scratch for nominal questions (kernel)
``split_candidates``     a node's candidates split into numeric and nominal ones (kernel)
``ask_nominal_question`` calls the nominal search on a node's nominal candidates (kernel)
``choose_question``      a node's question: the strictly best of the best cut and the nominal
                         question, the earlier feature on a tie, with the stopping rules
                         (kernel)
``number_depth_first``   one node table from pieces grown apart (nodes split by the caller,
                         subtrees grown on threads), numbered as one thread numbers them

``stable_order``         numpy's stable argsort of one column (NaN last, ties in row order),
                         by a radix sort: about 4x numpy's on 100 000 rows (kernel caller)

For a plugin's pass over rows (prediction, a confidence score):

``for_row_chunks``       run a row-range kernel in dynamic chunks on the threads allowed

The other modules (``builder``, apart from ``number_depth_first`` and ``stable_order``,
``c45``, ``routing``, ``question_routing``, ``generated``) are private.

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
    "generic_jit": "compiling",
    "python_function": "compiling",
    "prefetch": "compiling",
    "add_lanes": "compiling",
    "impurity_kernels": "specialised",
    "row_table": "growth",
    "rule_vector": "growth",
    "split_drop": "threshold_search",
    "may_split": "growth",
    "within_bounds": "threshold_search",
    "bounded_value": "threshold_search",
    "choose_split": "growth",
    "accepts_split": "growth",
    "fill_node": "growth",
    "grow_array": "growth",
    "NODE_COLUMNS": "growth",
    "NOMINAL_SEARCH_TYPE": "nominal_questions",
    "no_nominal_search": "builder",
    "nominal_buffers": "nominal_questions",
    "split_candidates": "nominal_questions",
    "ask_nominal_question": "nominal_questions",
    "choose_question": "growth",
    "number_depth_first": "builder",
    "stable_order": "builder",
    "for_row_chunks": "row_chunks",
}


def __getattr__(name):
    if name in _PUBLIC:
        import importlib

        return getattr(importlib.import_module(f"treekit_core.kernels.{_PUBLIC[name]}"), name)
    raise AttributeError(f"module 'treekit_core.kernels' has no attribute {name!r}")


__all__ = sorted(_PUBLIC)

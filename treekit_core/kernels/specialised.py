"""Split-search kernels specialised to one criterion, compiled once per machine.

A criterion's impurity reaches the kernels either as a first-class function value (one
machine-code copy for every criterion, an indirect call per impurity evaluation) or
inlined into kernels compiled for that criterion alone. numba would compile the second
kind in every new process (a kernel that takes a dispatcher as an argument is never loaded
from its on-disk cache: numba issues #2956, #6264), so treekit writes, once per machine, a
module per criterion holding the kernels of :mod:`.growth` with the impurity as a global
instead of a parameter (:mod:`.generated`): numba caches them like any other kernel, and
every later process loads them from disk. (Passing the impurity on as an argument from a
cached entry point is not enough: numba then embeds the dispatcher's address, and refuses
to cache the entry point.)

The module's file name is a hash of what its text is made from (:func:`_identity`: this
module's rewriting rules, the kernel module and the modules it copies kernels from), of the
source file defining the impurity, of the kernels it calls (:mod:`.growth`,
:mod:`.split_search`, :mod:`.node_search`) and of treekit's and numba's versions, so a
change to any of them makes a new file and an unchanged one is never rewritten; a process
that finds the file does not make the text again (the rewrite takes tens of milliseconds,
which every first fit paid). A criterion whose impurity has no source file (typed at
an interactive prompt, or made with ``exec``) cannot be identified that way and keeps the
function-value kernels; so do all criteria with ``TREEKIT_SPECIALISE=0``.

A criterion with a split score (``Criterion.split_score``) is always specialised: in its
module ``split_drop``, the one expression every threshold search scores a cut with, becomes
:data:`SCORED_SPLIT_DROP`, which calls the criterion's score (a global, like the impurity).
Every kernel module that scores cuts through ``split_drop`` (the core's, and plugin kernels
that import it) then scores them the criterion's way.

A criterion whose impurity reads a fixed number of statistics (``Criterion.fixed_statistics``)
gets, for a fit whose target writes that many, a module in which the number is a constant
(:data:`FIXED_STATISTICS`), so LLVM unrolls the loops over a node's statistics.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import inspect
import os
import sys
import threading
import types

import attrs

from treekit_core.compile_errors import compile_failure, is_compile_failure
from treekit_core.kernels import growth
from treekit_core.kernels.compiling import (
    JIT_DISABLED,
    KERNEL_LOCK,
    once_per_process,
    python_function,
    source_file,
)
from treekit_core.kernels.generated import generated_module
from treekit_core.version import __version__

#: The kernels of :mod:`.growth` that the generated module compiles as cached entry points
#: (the others are compiled into them).
ENTRY_POINTS = (
    "grow_subtree",
    "scan_features",
    "best_split_of_node",
    "best_split_within_bounds",
)

#: ``split_drop`` (:func:`.growth.split_drop`, impurity parameter removed) in a module
#: specialised to a criterion with a split score: the same arguments and the same right
#: side, scored by the criterion's ``split_score`` (a global of the module).
SCORED_SPLIT_DROP = """
@generic_jit
def split_drop(params, parent_sums, parent_weight, parent_impurity, left_sums, left_weight,
               right_sums):
    for k in range(n_statistics(parent_sums)):
        right_sums[k] = parent_sums[k] - left_sums[k]
    return split_score(left_sums, left_weight, right_sums, parent_weight - left_weight,
                       parent_sums, parent_weight, parent_impurity, params)
"""

#: ``drop_bound`` (:func:`.threshold_search.drop_bound`, impurity parameter removed) in a
#: module specialised to a criterion with a ``drop_bound``: the criterion's bound (a global
#: of the module), with the arguments in the criterion contract's order.
BOUNDED_DROP = """
@generic_jit
def drop_bound(params, parent_sums, parent_weight, parent_impurity, left_sums, left_weight):
    return criterion_drop_bound(left_sums, left_weight, parent_sums, parent_weight,
                                parent_impurity, params)
"""


#: ``n_statistics`` (:func:`.threshold_search.n_statistics`) in a module specialised to a
#: criterion that reads a fixed number of statistics: that number (``{count}``), a constant
#: LLVM unrolls the loops over a node's statistics with. Sums of another length are refused
#: (the loops would read or leave unwritten what the arrays do not hold: numba checks no
#: bounds); :func:`criterion_kernels` never passes them.
FIXED_STATISTICS = """
@generic_jit
def n_statistics(sums):
    if sums.shape[0] != {count}:
        raise ValueError('kernels compiled for {count} statistics were given another number')
    return {count}
"""


def specialised_source(
    name: str,
    stamp: str,
    kernel_module=growth,
    entry_points=ENTRY_POINTS,
    scored=False,
    bounded=False,
    statistics=None,
) -> str:
    """The text of a module specialised to one impurity: ``kernel_module``'s source
    (default :mod:`.growth`) with the ``impurity`` parameter taken out of every kernel and
    of every call passing it on, so that ``impurity`` names the module's global (injected
    before the module runs), and ``entry_points`` compiled with treekit's cached ``jit``.
    With ``scored``, ``split_drop`` is :data:`SCORED_SPLIT_DROP` (a global ``split_score``
    is injected too); with ``bounded``, ``drop_bound`` is :data:`BOUNDED_DROP` (a global
    ``criterion_drop_bound``); with ``statistics`` (a number), ``n_statistics`` is
    :data:`FIXED_STATISTICS` for it."""
    tree = ast.parse(inspect.getsource(kernel_module))
    _copy_imported_impurity_kernels(tree)
    tree = _GlobalImpurity(entry_points).visit(tree)
    replaced = {"split_drop": scored and SCORED_SPLIT_DROP, "drop_bound": bounded and BOUNDED_DROP}
    for kernel_name, text in replaced.items():
        if text:
            kernel = ast.parse(text).body[0]
            tree.body = [
                kernel if getattr(s, "name", None) == kernel_name else s for s in tree.body
            ]
    if statistics is not None:
        _define_after_imports(tree, FIXED_STATISTICS.format(count=int(statistics)))
    tree = ast.fix_missing_locations(tree)
    return (
        f"# Kernels specialised to the impurity {name}: {kernel_module.__name__}\n"
        f"# with `impurity` a global. Generated by treekit_core.kernels.specialised; {stamp}.\n"
        "from treekit_core.kernels.compiling import jit\n\n"
        f"{ast.unparse(tree)}\n"
    )


def _define_after_imports(tree, text) -> None:
    """Put the function ``text`` defines in ``tree`` after its imports, in place of any
    definition or import of that name (so every kernel of the module calls it)."""
    kernel = ast.parse(text).body[0]
    for statement in list(tree.body):
        if isinstance(statement, ast.ImportFrom):
            statement.names = [alias for alias in statement.names if alias.name != kernel.name]
            if not statement.names:
                tree.body.remove(statement)
        elif getattr(statement, "name", None) == kernel.name:
            tree.body.remove(statement)
    tree.body.insert(_after_imports(tree), kernel)


def _after_imports(tree) -> int:
    """The position in a module's statements right after its last import."""
    return 1 + max(
        (i for i, s in enumerate(tree.body) if isinstance(s, (ast.Import, ast.ImportFrom))),
        default=-1,
    )


def _identity(
    name, stamp, kernel_module, entry_points, scored, bounded=False, statistics=None
) -> str:
    """What determines :func:`specialised_source`'s text for these arguments, without
    generating it (tens of milliseconds a process): the arguments, the source of this
    module (the rewriting rules), of ``kernel_module`` and of every module it imports
    kernels taking the impurity from (which the text copies)."""
    copied_from = {
        inspect.getmodule(kernel)
        for kernel in map(python_function, vars(kernel_module).values())
        if inspect.isfunction(kernel)
        and kernel.__module__ != kernel_module.__name__
        and _takes_impurity(kernel)
    }
    modules = [sys.modules[__name__], kernel_module, *sorted(copied_from, key=lambda m: m.__name__)]
    return "\n".join(
        [
            name,
            stamp,
            repr(entry_points),
            repr(scored),
            *(["bounded"] if bounded else []),
            *([f"statistics {statistics}"] if statistics is not None else []),
            *map(inspect.getsource, modules),
        ]
    )


def _copy_imported_impurity_kernels(tree) -> None:
    """Kernels that ``tree`` imports and that take the impurity (``split_drop`` from
    :mod:`treekit_core.kernels`, say) are copied into it instead of imported, so that they
    too use the global impurity (passing the impurity to them as an argument would keep
    numba from caching the entry points). What a copy calls from its own module comes
    with it: copied too when it takes the impurity, imported from there when the module
    has no such name of its own (so a module importing ``scan_sorted_feature`` alone gets
    the sweep it calls, and ``split_drop`` the helpers it loops with)."""
    import importlib

    copied = []
    for statement in list(tree.body):
        if not isinstance(statement, ast.ImportFrom) or not statement.module:
            continue
        module = importlib.import_module(statement.module)
        kept = []
        for alias in statement.names:
            kernel = python_function(getattr(module, alias.name, None))
            if inspect.isfunction(kernel) and alias.asname is None and _takes_impurity(kernel):
                copied.append(kernel)
            else:
                kept.append(alias)
        if not kept:
            tree.body.remove(statement)
        statement.names = kept
    defined = _top_level_names(tree) | {kernel.__name__ for kernel in copied}
    definitions, imports, pending = [], [], list(copied)
    while pending:
        kernel = pending.pop(0)
        definition = ast.parse(inspect.getsource(kernel)).body[0]
        definitions.append(definition)
        module = sys.modules[kernel.__module__]
        for name in sorted(_names_read(definition) - defined):
            if not hasattr(module, name):
                continue  # a builtin (range, min) or a name the function binds itself
            defined.add(name)
            helper = python_function(getattr(module, name))
            if inspect.isfunction(helper) and _takes_impurity(helper):
                pending.append(helper)
            else:
                imports.append(
                    ast.ImportFrom(module=module.__name__, names=[ast.alias(name)], level=0)
                )
    position = _after_imports(tree)
    tree.body[position:position] = imports + definitions


def _top_level_names(tree) -> set:
    """The names a module's own statements bind: its functions, classes, imports and
    assigned globals."""
    names = set()
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
            names.add(statement.name)
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in statement.names)
        else:
            for node in ast.walk(statement):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    names.add(node.id)
    return names


def _names_read(definition) -> set:
    """The names a function definition reads and does not bind (its globals, and
    builtins)."""
    read, bound = set(), {a.arg for a in ast.walk(definition.args) if isinstance(a, ast.arg)}
    for node in ast.walk(definition):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
    return read - bound


def _takes_impurity(function) -> bool:
    parameters = list(inspect.signature(function).parameters)
    return bool(parameters) and parameters[0] == "impurity"


class _GlobalImpurity(ast.NodeTransformer):
    """Drops the parameter ``impurity`` from function definitions and the argument
    ``impurity`` from calls (but not the calls of ``impurity`` itself); the entry points'
    decorator becomes ``jit()`` (cached)."""

    def __init__(self, entry_points):
        self.entry_points = frozenset(entry_points)

    def visit_FunctionDef(self, node):
        if node.args.args and node.args.args[0].arg == "impurity":
            node.args.args.pop(0)
        if node.name in self.entry_points:
            node.decorator_list = [ast.parse("jit()", mode="eval").body]
        self.generic_visit(node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        first = node.args[0] if node.args else None
        calls_impurity = getattr(node.func, "id", None) == "impurity"
        if getattr(first, "id", None) == "impurity" and not calls_impurity:
            node.args.pop(0)
        return node


def impurity_kernels(
    kernel_module, entry_signatures: dict, criterion, depends_on=(), purpose="kernels"
):
    """Entry points of ``kernel_module`` (a module of :func:`~.compiling.generic_jit`
    kernels whose first parameter is ``impurity``) for one criterion, as a namespace with
    one callable per name in ``entry_signatures`` (name -> numba signature of the entry
    point without the impurity), plus ``impurity`` (the compiled impurity) and
    ``specialised``.

    This is how a plugin's kernels get the criterion inlined and cached once per machine,
    as the core's split search does: the module's source is rewritten with the impurity a
    global into treekit's kernel directory. ``depends_on`` lists the modules whose kernels
    ``kernel_module`` calls besides the core's public ones (their source is part of the
    generated file's identity, as numba does not track callees in other files);
    ``purpose`` names the kernels in the first-compile notice ("histogram kernels").
    A criterion without a source file (and every criterion with ``TREEKIT_SPECIALISE=0``)
    gets the generic kernels with the impurity bound as an argument, compiled in each
    process."""
    function, score = type(criterion).impurity, split_score_of(criterion)
    if score is not None:
        return _specialised_module(
            function,
            kernel_module,
            tuple(entry_signatures.items()),
            tuple(depends_on),
            purpose,
            score,
        )
    return function_kernels(function, kernel_module, entry_signatures, depends_on, purpose)


def function_kernels(
    function, kernel_module, entry_signatures: dict, depends_on=(), purpose="kernels"
):
    """:func:`impurity_kernels` for an impurity function (plain Python, or a compiled
    impurity: its Python function is used) instead of a criterion; for kernels that need
    no split score (the nominal searches, which score impurity drops)."""
    function = python_function(function)
    if _specialising() and source_file(function) is not None:
        return _specialised_module(
            function, kernel_module, tuple(entry_signatures.items()), tuple(depends_on), purpose
        )
    return _bound_module(function, kernel_module, tuple(entry_signatures))


def split_score_of(criterion):
    """The criterion's split score (plain Python), or None; refused when it has no source
    file, since a split score reaches the kernels only by specialising them."""
    score = type(criterion).split_score
    if score is None:
        return None
    for function in (type(criterion).impurity, score):
        if source_file(function) is None:
            raise ValueError(
                f"criterion {criterion.name!r} scores splits with {score.__qualname__}, which "
                f"is compiled into kernels specialised to it, so {function.__qualname__} must "
                "be defined in a source file (a module), not at an interactive prompt"
            )
    return score


class _ImpurityOnUse:
    """``impurity``: the compiled ``impurity_function``, compiled (or loaded from the cache)
    when first asked for, to evaluate a node from Python. A fit by one specialised call
    never asks, and a cold first fit then skips its compile."""

    @property
    def impurity(self):
        from treekit_core.kernels.compiling import compile_impurity

        return compile_impurity(self.impurity_function)


class _Entries(_ImpurityOnUse, types.SimpleNamespace):
    """Entry points, ``specialised`` and the compiled ``impurity``."""

    def __init__(self, function, **entries):
        super().__init__(**entries)
        self.impurity_function = function


@once_per_process
def _specialised_module(
    function,
    kernel_module,
    entry_signatures,
    depends_on,
    purpose,
    score=None,
    bound=None,
    statistics=None,
):
    name = f"{function.__module__}.{function.__qualname__}"
    if score is not None:
        name += f" scored by {score.__module__}.{score.__qualname__}"
    if bound is not None:
        name += f" bounded by {bound.__module__}.{bound.__qualname__}"
    if statistics is not None:
        name += f" for {statistics} statistics"
    signatures = dict(entry_signatures)
    recipe = (
        name,
        _stamp(depends_on),
        kernel_module,
        tuple(signatures),
        score is not None,
        bound is not None,
        statistics,
    )
    injected = {"impurity": function, "split_score": score, "criterion_drop_bound": bound}
    module = generated_module(
        kernel_module.__name__.rsplit(".", 1)[-1],
        functools.partial(specialised_source, *recipe),
        {key: value for key, value in injected.items() if value is not None},
        f"the {purpose} for {name}",
        identity=_identity(*recipe),
    )
    entries = {
        entry: _OneSignature(getattr(module, entry), signature, function)
        for entry, signature in signatures.items()
    }
    return _Entries(function, specialised=True, **entries)


@once_per_process
def _bound_module(function, kernel_module, entry_names):
    from treekit_core.kernels.compiling import compile_impurity

    impurity = compile_impurity(function)
    entries = {
        entry: functools.partial(getattr(kernel_module, entry), impurity) for entry in entry_names
    }
    return types.SimpleNamespace(impurity=impurity, specialised=False, **entries)


_by_value_only = threading.local()


def _specialising() -> bool:
    return os.environ.get("TREEKIT_SPECIALISE", "1") not in ("0", "")


@contextlib.contextmanager
def function_value_kernels():
    """While the block runs (in this thread), criteria reach the core's split search as
    function values (kernels shared by every criterion, compiled once per machine) instead
    of kernels specialised to each: the same trees, without the core grower's compile for
    a new criterion. The conformance kit checks criteria so (a criterion a plugin author
    edits is a new criterion each time); fits elsewhere specialise as before. Plugins'
    kernels (:func:`impurity_kernels`) still specialise, since their function-value form
    compiles in every process; so do criteria with a split score, which reaches the
    kernels no other way."""
    _by_value_only.depth = getattr(_by_value_only, "depth", 0) + 1
    try:
        yield
    finally:
        _by_value_only.depth -= 1


@attrs.frozen
class CriterionKernels(_ImpurityOnUse):
    """The split-search entry points for one criterion; none takes the impurity, which
    is built in (specialised) or bound (function value)."""

    #: The criterion's impurity function (plain Python; :attr:`impurity` compiles it).
    impurity_function: object
    #: ``grow_subtree(params, values, rows, order, start, end, depth, rules,
    #: max_features, seed, goes_left, signs, limits, question_search, n_categories,
    #: order_column, exact_limit, multiway, out)``: :func:`.growth.grow_subtree`.
    grow_subtree: object
    #: ``scan_features(params, values, rows, order, ..., drops, thresholds, positions)``:
    #: :func:`.growth.scan_features`.
    scan_features: object
    #: ``best_split_of_node(params, X, evidence, rows, ...)``:
    #: :func:`.node_search.best_split_of_node`.
    best_split_of_node: object
    #: ``best_split_within_bounds(params, X, ..., signs, limits)``: the same search under
    #: monotonic constraints (:func:`.growth.best_split_within_bounds`).
    best_split_within_bounds: object
    #: True when the kernels are compiled for this criterion alone.
    specialised: bool


def criterion_kernels(
    criterion, specialised: bool | None = None, n_statistics: int | None = None
) -> CriterionKernels:
    """The kernels for ``criterion``: specialised to it when it can be (and ``specialised``
    is not False), else taking its impurity as a function value. ``n_statistics``: how
    many statistics the target's rows hold; when it is the number the criterion's impurity
    is written for (:meth:`Criterion.fixed_statistics_count`), the specialised kernels hold
    it as a constant (:data:`FIXED_STATISTICS`), and are then for rows of that width only."""
    function, score = type(criterion).impurity, split_score_of(criterion)
    bound = criterion.drop_bound_function()
    if bound is not None and source_file(bound) is None:
        bound = None  # a bound typed at a prompt cannot be cached with the kernels: unused
    statistics = criterion.fixed_statistics_count()
    if statistics is None or n_statistics != statistics:
        statistics = None
    if score is not None:  # a split score reaches the kernels only by specialising them
        return _specialised(function, score, bound, statistics)
    if specialised is None:
        specialised = _specialising() and not getattr(_by_value_only, "depth", 0)
    if specialised and source_file(function) is not None:
        return _specialised(function, None, bound, statistics)
    return _by_value(function)


@once_per_process
def _by_value(function) -> CriterionKernels:
    from treekit_core.kernels.by_value import grow_subtree_by_value, scan_features_by_value
    from treekit_core.kernels.compiling import compile_impurity
    from treekit_core.kernels.node_search import best_split_of_node

    impurity = compile_impurity(function)
    return CriterionKernels(
        function,
        functools.partial(grow_subtree_by_value, impurity),
        functools.partial(scan_features_by_value, impurity),
        functools.partial(best_split_of_node, impurity),
        functools.partial(_bounded_by_value, impurity),
        False,
    )


def _bounded_by_value(impurity, *args):
    """The bounded node search by function value, loaded on its first call (its own
    module: a fit without constraints loads nothing of it)."""
    from treekit_core.kernels.bounded_search import best_split_within_bounds

    return best_split_within_bounds(impurity, *args)


@once_per_process
def _specialised(function, score=None, bound=None, statistics=None) -> CriterionKernels:
    from treekit_core.kernels.growth import ENTRY_SIGNATURES

    module = _specialised_module(
        function,
        growth,
        tuple((entry, ENTRY_SIGNATURES[entry]) for entry in ENTRY_POINTS),
        (),
        "split-search kernels",
        score,
        bound,
        statistics,
    )
    return CriterionKernels(function, *(getattr(module, entry) for entry in ENTRY_POINTS), True)


class _OneSignature:
    """An entry point compiled (or loaded from the cache) for its one signature on the
    first call, after which numba converts every call to it instead of compiling another
    specialisation (for a Fortran-ordered X, say)."""

    def __init__(self, dispatcher, signature, function=None):
        self.dispatcher, self.signature, self.ready = dispatcher, signature, JIT_DISABLED
        self.function = function  # the component's function inlined: named if it fails

    def __call__(self, *args):
        return self.function_value()(*args)

    def function_value(self):
        """The dispatcher, compiled (or loaded) for its signature: what a kernel taking
        this entry point as a function value is given."""
        if not self.ready:
            with KERNEL_LOCK:
                # A dispatcher whose compilation is already disabled was compiled for its
                # signature by whoever disabled it (another wrapper of the same generated
                # module, with a differently named purpose): use it, do not compile again.
                if not self.ready and self.dispatcher._can_compile:
                    try:
                        self.dispatcher.compile(self.signature)
                    except Exception as exc:
                        if is_compile_failure(exc) and self.function is not None:
                            raise compile_failure(self.function, exc) from None
                        raise
                    self.dispatcher.disable_compile()
                self.ready = True
        return self.dispatcher

    def __getattr__(self, name):  # stats, signatures, ...: the dispatcher's
        return getattr(self.dispatcher, name)


@functools.lru_cache(maxsize=None)
def _stamp(depends_on=()) -> str:
    """What the generated kernels depend on besides their own text and the impurity's
    source: treekit's compile options, the core's kernels (:mod:`.growth`, which plugin
    kernels call), the modules ``depends_on`` and the versions of treekit and numba."""
    import numba

    from treekit_core.kernels import compiling

    digest = hashlib.sha256()
    for module in (compiling, growth, *depends_on):
        digest.update(inspect.getsource(module).encode())
    return f"sources {digest.hexdigest()[:16]}, treekit {__version__}, numba {numba.__version__}"

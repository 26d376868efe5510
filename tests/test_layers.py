"""The core's layers, enforced. Each layer imports only from the layers below it:

    top        treekit_core.__main__, .testing, .tools, .export, .datasets
                    (above the public API: they may import ``treekit_core`` itself)
    api        treekit_core                (the public names; ``__init__`` only)
    estimators treekit_core.estimators     (composed estimators, inputs, decisions,
                                            the model file, pruning paths)
    builtins   treekit_core.builtins       (the core's own plugin, written like any other)
    engine     treekit_core.engine         (grows and uses trees; given the registry)
    registry   treekit_core.registry       (finds components by entry point or module name)
    contract   treekit_core.components, treekit_core.hookspecs
                                           (base classes, hook specs, constants, errors)
    kernels    treekit_core.kernels        (numba only: arrays in, arrays out)
    foundation treekit_core.version, .numerics  (imports nothing: the version, and the
                                           numbers every layer agrees on)

The kernels sit below the contract: the criterion contract compiles its impurity with the
kernels' compiler (imported inside ``compiled_impurity``, to delay numba), and the kernels
read no component, tree or registry: they take arrays and return arrays.

The rules this test checks on the source (imports inside functions included, those under
``if TYPE_CHECKING:`` aside):

* a module imports only from its own layer or the layers below;
* no import cycle, within a layer or across, imports inside functions counted, and a
  name asked of a package's ``__init__`` (``from treekit_core.kernels import growth``, a
  submodule included) counting as importing that ``__init__`` (issue 58);
* a module that ``treekit_core/__init__.py`` reaches never imports ``treekit_core`` itself
  (``from treekit_core import x`` runs that ``__init__``);
* an import inside a function is there only to delay a heavy library (numba, scipy,
  matplotlib, scikit-learn, ...: :data:`HEAVY`; every kernel module loads numba) and
  points downward, like every other.

To see it fail, add to the end of ``treekit_core/engine/tree.py``::

    def _upward():
        from treekit_core.estimators import forest

``test_no_module_imports_from_a_layer_above_it_or_in_a_cycle`` then names the line twice
(an upward import, and one inside a function that loads no heavy library). The same
import at the top of the module makes a real cycle, which Python itself refuses when
``treekit_core`` is imported. ``test_the_checker_catches_an_upward_import_and_a_cycle``
shows each rule failing on made-up sources.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1] / "treekit_core"

#: Bottom to top: (layer, module prefixes).
LAYERS = (
    (
        "foundation",
        ("treekit_core.version", "treekit_core.numerics", "treekit_core.compile_errors"),
    ),
    ("kernels", ("treekit_core.kernels",)),
    ("contract", ("treekit_core.components", "treekit_core.hookspecs")),
    ("registry", ("treekit_core.registry",)),
    ("engine", ("treekit_core.engine",)),
    ("builtins", ("treekit_core.builtins",)),
    ("estimators", ("treekit_core.estimators",)),
    ("api", ("treekit_core",)),
    (
        "top",
        (
            "treekit_core.__main__",
            "treekit_core.datasets",
            "treekit_core.export",
            "treekit_core.tools",
            "treekit_core.testing",
        ),
    ),
)


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of the longest prefix naming ``module``."""
    best, length = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = index, len(prefix)
    if best is None:
        raise AssertionError(f"{module} is in no layer; add it to LAYERS")
    return best


def core_sources(root: pathlib.Path = ROOT) -> dict[str, str]:
    """Module name -> source of every module of the core."""
    sources = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        sources[name] = path.read_text(encoding="utf-8")
    return sources


def imports_of(module: str, source: str, modules) -> list[tuple[str, int, bool]]:
    """(imported core module, line, inside a function) for every import in ``source``.

    Importing ``a.b.c`` runs the ``__init__`` of ``a`` and ``a.b`` first, so those count too,
    except the packages ``module`` itself lies in (already running when it is imported) and
    the root package (it runs first whatever is imported). A name taken from a package's
    ``__init__`` (``from treekit_core import Tree``, ``from treekit_core.kernels import jit``)
    counts as importing that ``__init__``, the module's own packages included: that is what
    makes a cycle through ``__init__``."""
    tree = ast.parse(source)
    package = module if _is_package(module, modules) else None
    skipped, in_function = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(child) for child in ast.walk(node)}
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_function |= {id(child) for child in ast.walk(node) if child is not node}
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped or not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        named = []  # (target, whether the target's own __init__ is asked for a name)
        if isinstance(node, ast.Import):
            named = [(alias.name, alias.name == "treekit_core") for alias in node.names]
        else:
            base = _absolute(module, package, node)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                named.append((submodule, False) if submodule in modules else (base, True))
                if submodule in modules and _is_package(base, modules):
                    # ``from package import submodule`` asks the package's __init__ for the
                    # name first: it counts as importing that __init__ too, the module's own
                    # package included (import the submodule by its full path instead)
                    named.append((base, True))
        for target, from_init in named:
            if not target or not target.startswith("treekit_core"):
                continue
            parts = target.split(".")
            for end in range(2, len(parts) + 1):
                name = ".".join(parts[:end])
                ancestor = module.startswith(name + ".")
                if name in modules and name != module and (not ancestor or name == target):
                    if name == target and ancestor and not from_init:
                        continue
                    found.append((name, node.lineno, id(node) in in_function))
            if target == "treekit_core" and from_init:
                found.append((target, node.lineno, id(node) in in_function))
    return sorted(set(found), key=lambda item: (item[1], item[0]))


def _is_package(module, modules) -> bool:
    return any(other.startswith(module + ".") for other in modules)


def _absolute(module, package, node) -> str:
    if not node.level:
        return node.module
    base = (package or module.rsplit(".", 1)[0]).split(".")
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


#: Libraries worth delaying: an import inside a function is there only to put off one of
#: these (importing ``treekit_core`` imports numpy, pluggy and attrs only).
HEAVY = frozenset(
    {"numba", "scipy", "matplotlib", "sklearn", "pandas", "onnx", "onnxruntime", "shap"}
    | {"dtreeviz", "joblib", "dask", "distributed", "graphviz", "ray"}
)


def heavy_modules(sources: dict[str, str]) -> set[str]:
    """Core modules whose import loads a :data:`HEAVY` library: every kernel module (the
    kernels package starts numba), and every module that imports a heavy library, or such a
    core module, at its top level."""
    modules = set(sources)
    direct, edges = set(), {}
    for module, source in sources.items():
        tree = ast.parse(source)
        top = set()
        for node in tree.body:
            if isinstance(node, ast.Import):
                top |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                top.add(node.module.split(".")[0])
        if (
            top & HEAVY
            or module == "treekit_core.kernels"
            or module.startswith("treekit_core.kernels.")
        ):
            direct.add(module)
        edges[module] = {t for t, _, inside in imports_of(module, source, modules) if not inside}
    heavy, changed = set(direct), True
    while changed:
        changed = False
        for module, targets in edges.items():
            if module not in heavy and targets & heavy:
                heavy.add(module)
                changed = True
    return heavy


def violations(sources: dict[str, str]) -> list[str]:
    """Every upward import, import of the root package from below the API, and cycle."""
    modules = set(sources)
    heavy = heavy_modules(sources)
    graph, problems = {}, []
    for module, source in sources.items():
        edges = imports_of(module, source, modules)
        graph[module] = {target for target, _, _ in edges}
        delayed = {}  # line -> the core modules an import inside a function names
        for target, line, inside in edges:
            if inside:
                delayed.setdefault(line, set()).add(target)
        for line, targets in sorted(delayed.items()):
            if not targets & heavy:
                named = sorted(
                    t for t in targets if not any(o.startswith(t + ".") for o in targets)
                )
                problems.append(
                    f"{module}:{line} imports {', '.join(named)} inside a function, "
                    "which loads no heavy library (numba, scipy, matplotlib, ...): import it "
                    "at the top"
                )
        for target, line, inside in edges:
            if layer_of(target) > layer_of(module):
                where = "inside a function " if inside else ""
                above, own = LAYERS[layer_of(target)][0], LAYERS[layer_of(module)][0]
                problems.append(
                    f"{module}:{line} imports {target} {where}from the layer {above!r}, "
                    f"above its own {own!r}"
                )
    for cycle in _cycles(graph):
        problems.append("import cycle among " + ", ".join(cycle))
    return problems


def _cycles(graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_imports_from_a_layer_above_it_or_in_a_cycle():
    problems = violations(core_sources())
    assert not problems, "the core's layers are broken:\n" + "\n".join(problems)


def test_every_module_of_the_core_is_in_a_layer():
    for module in core_sources():
        layer_of(module)


def test_the_checker_catches_an_upward_import_and_a_cycle():
    sources = {
        "treekit_core": "",
        "treekit_core.engine": "",
        "treekit_core.engine.tree": "import numpy\n",
        "treekit_core.engine.grow": "from treekit_core.engine import tree\n",
        "treekit_core.estimators": "",
        "treekit_core.estimators.forest": "from treekit_core.engine.grow import x\n",
    }
    assert violations(sources) == []
    upward = {
        **sources,
        "treekit_core.engine.tree": "def f():\n    import treekit_core.estimators.forest\n",
    }
    found = violations(upward)
    assert (
        "treekit_core.engine.tree:2 imports treekit_core.estimators inside a function from the "
        "layer 'estimators', above its own 'engine'"
    ) in found
    assert any(p.startswith("import cycle among ") for p in found)
    light = {
        **sources,
        "treekit_core.estimators.forest": "def f():\n    import treekit_core.engine.grow\n",
    }
    assert violations(light) == [
        "treekit_core.estimators.forest:2 imports treekit_core.engine.grow inside a function, "
        "which loads no heavy library (numba, scipy, matplotlib, ...): import it at the top"
    ]
    heavy = {**light, "treekit_core.engine.grow": "import numba\n"}
    assert violations(heavy) == []
    cycle = {**sources, "treekit_core.engine.tree": "from treekit_core.engine import grow\n"}
    assert violations(cycle) == [
        "import cycle among treekit_core.engine.grow, treekit_core.engine.tree"
    ]
    # issue 58: asking a package's __init__ for a submodule imports that __init__ too, so
    # a module that its own package's __init__ imports (here through a delayed import)
    # closes a cycle when it takes a sibling from the package, not by its full path
    delayed = "def f():\n    from treekit_core.engine import grow\n"
    package = {
        **sources,
        "treekit_core.engine": "from treekit_core.engine.tree import x\n",
        "treekit_core.engine.tree": delayed,
        "treekit_core.engine.grow": "import numba\nfrom treekit_core.engine import util\n",
        "treekit_core.engine.util": "",
    }
    assert violations(package) == [
        "import cycle among treekit_core.engine, treekit_core.engine.grow, treekit_core.engine.tree"
    ]
    full_path = {
        **package,
        "treekit_core.engine.tree": "def f():\n    import treekit_core.engine.grow\n",
        "treekit_core.engine.grow": "import numba\nimport treekit_core.engine.util\n",
    }
    assert violations(full_path) == []
    root = {**sources, "treekit_core.engine.tree": "from treekit_core import Tree\n"}
    assert (
        "treekit_core.engine.tree:1 imports treekit_core from the layer 'api'"
        in violations(root)[0]
    )


def test_the_engine_is_given_the_registry_and_never_fetches_one():
    """The engine works with the registry its composition holds: no engine module imports
    the registry module (whose ``get_registry`` is the process-wide one)."""
    sources = core_sources()
    fetching = [
        f"{module}:{line}"
        for module, source in sources.items()
        if module.startswith("treekit_core.engine")
        for target, line, _ in imports_of(module, source, set(sources))
        if target == "treekit_core.registry"
    ]
    assert not fetching, "engine modules import the registry: " + ", ".join(fetching)


def test_no_kernel_module_is_longer_than_a_reader_can_hold():
    """Issue 58: the kernels are split by concept (the grower, the threshold search, the
    nominal questions, ...), none over 900 lines."""
    long = {
        path.name: len(path.read_text(encoding="utf-8").splitlines())
        for path in (ROOT / "kernels").glob("*.py")
    }
    assert all(n <= 900 for n in long.values()), {k: n for k, n in long.items() if n > 900}

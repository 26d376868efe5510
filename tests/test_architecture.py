"""Guards on the architecture: the core reads components only through their declared
contracts, every declared member says when the core uses it, plugins use the public API,
and a plugin written for another plugin API version is refused by name."""

import ast
import importlib.metadata
import inspect
import pathlib
import textwrap
import types
import warnings

import pytest

import treekit_core
from treekit_core import PLUGIN_API_VERSION, Criterion, PluginError, TreeClassifier, hookimpl
from treekit_core.components import KINDS, REGISTERED_KINDS, Component
from treekit_core.registry import Registry, get_registry, registered

ROOT = pathlib.Path(__file__).resolve().parents[1]
CORE = ROOT / "treekit_core"
#: The parts of the core that grow and use trees; they must treat every component alike.
ENGINE_PARTS = ["engine", "estimators", "kernels"]
KIND_WORDS = set(KINDS) | {"component"}


def _sources(folder: pathlib.Path):
    for path in sorted(folder.rglob("*.py")):
        if "build" in path.parts or any(p.endswith(".egg-info") for p in path.parts):
            continue
        yield path, ast.parse(path.read_text(), filename=str(path))


def _component_class_names() -> set[str]:
    """Every class the core declares as a component (base classes and built-ins)."""
    names = set()
    for folder in ("components", "builtins"):
        for _, tree in _sources(CORE / folder):
            names |= {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    return names


def _engine_violations(tree: ast.AST, component_classes: set[str]) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                if (
                    isinstance(side, ast.Attribute)
                    and side.attr in ("name", "kind")
                    and any(word in ast.unparse(side.value).lower() for word in KIND_WORDS)
                ):
                    found.append(f"line {node.lineno}: compares .{side.attr}")
            if any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops) and any(
                isinstance(s, ast.Call) and getattr(s.func, "id", "") == "type"
                for s in [node.left, *node.comparators]
            ):
                found.append(f"line {node.lineno}: compares type(...)")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            fn = node.func.id
            if fn in ("isinstance", "issubclass") and len(node.args) == 2:
                named = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                named |= {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}
                if named & component_classes:
                    found.append(
                        f"line {node.lineno}: {fn}(..., {sorted(named & component_classes)})"
                    )
            if fn in ("getattr", "hasattr") and node.args:
                target = ast.unparse(node.args[0]).lower()
                if any(word in target for word in KIND_WORDS) and (
                    fn == "hasattr" or len(node.args) == 3
                ):
                    found.append(
                        f"line {node.lineno}: {fn}({ast.unparse(node.args[0])}, ...) probes "
                        "an undeclared member"
                    )
    return found


def test_engine_never_tests_a_component_type_or_name():
    component_classes = _component_class_names()
    problems = []
    for part in ENGINE_PARTS:
        for path, tree in _sources(CORE / part):
            problems += [
                f"{path.relative_to(ROOT)} {v}" for v in _engine_violations(tree, component_classes)
            ]
    assert not problems, "the engine special-cases components:\n" + "\n".join(problems)


def test_the_guard_catches_special_cases():
    """The guard itself: each pattern it exists for is found."""
    code = textwrap.dedent(
        """
        if composition.splitter.name == "exhaustive": pass
        if isinstance(composition.propagator, HardPropagator): pass
        build = getattr(splitter, "build_tree", None)
        if hasattr(confidence, "needs_single_tree"): pass
        if type(labeler) is Majority: pass
        """
    )
    found = _engine_violations(ast.parse(code), {"HardPropagator", "Majority"})
    assert len(found) == 5, found


def _documented_class_attributes(cls) -> dict[str, str]:
    """Class attributes of ``cls`` with the docstring that follows them in the source."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body
    docs = {}
    for statement, following in zip(body, body[1:] + [None], strict=True):
        target = None
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            target = statement.target.id
        elif isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
            target = statement.targets[0].id
        if target is None:
            continue
        doc = ""
        if isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant):
            doc = str(following.value.value)
        docs[target] = doc
    return docs


SAYS_WHEN = ("Called", "Read", "called", "read")


@pytest.mark.parametrize("base", [Component, *REGISTERED_KINDS.values()], ids=lambda c: c.__name__)
def test_every_declared_member_says_what_it_is_and_when_the_core_uses_it(base):
    """The contract is readable from components/: every member a component may define is
    declared on its base class with a default and a docstring saying when the core uses it."""
    inherited = {name for parent in base.__mro__[1:] for name in vars(parent)}
    attribute_docs = _documented_class_attributes(base)
    for name, value in vars(base).items():
        if name.startswith("_") or name in ("__attrs_attrs__",):
            continue
        if name in attribute_docs:
            doc = attribute_docs[name]
            if name in inherited and not doc:
                continue  # a new default for a member an ancestor documents
        else:
            function = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
            function = function.fget if isinstance(function, property) else function
            if not callable(function):
                continue
            doc = inspect.getdoc(function) or ""
            if name in inherited and not doc:
                continue
        assert doc, f"{base.__name__}.{name} has no docstring"
        if name not in ("parameter_names", "node_impurity", "get_params") or base is Component:
            assert any(word in doc for word in SAYS_WHEN) or name in (
                "parameter_names",
                "node_impurity",
            ), f"{base.__name__}.{name} does not say when the core calls or reads it"


@pytest.mark.parametrize("folder", ["plugins", "examples"])
def test_plugins_import_only_the_public_api(folder):
    exported = set(treekit_core.__all__)
    problems = []
    for path, tree in _sources(ROOT / folder):
        for node in ast.walk(tree):
            modules = []
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("treekit_core")
            ):
                modules = [node.module]
                if node.module == "treekit_core":
                    private = [a.name for a in node.names if a.name not in exported]
                    if private:
                        problems.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {private}")
            elif isinstance(node, ast.Import):
                modules = [a.name for a in node.names if a.name.startswith("treekit_core")]
            for module in modules:
                if module not in treekit_core.PUBLIC_MODULES:
                    problems.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {module}")
    assert not problems, "plugins reach into private modules:\n" + "\n".join(problems)


def test_public_api_is_importable_without_numba():
    for name in treekit_core.__all__:
        assert getattr(treekit_core, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'private_thing'"):
        _ = treekit_core.private_thing


def _plugin(api_version):
    module = types.ModuleType("stale_plugin")
    module.TREEKIT_PLUGIN_API = api_version

    class Stale(Criterion):
        name = "stale_gini"
        impurity = staticmethod(lambda sums, w, p: 0.0)

    module.treekit_criteria = hookimpl(lambda: [Stale])
    return module


def test_a_plugin_for_another_api_version_is_refused_by_name():
    with pytest.raises(
        PluginError,
        match=r"plugin 'treekit-stale' was written for treekit plugin "
        rf"API 1, but this treekit_core provides plugin API {PLUGIN_API_VERSION}",
    ):
        with registered(_plugin(1), name="treekit-stale"):
            pass
    with registered(_plugin(PLUGIN_API_VERSION), name="treekit-current"):
        assert "stale_gini" in get_registry().components("criterion")


def test_an_installed_stale_plugin_is_left_out_and_named_when_asked_for(monkeypatch):
    class EntryPoint:
        def __init__(self, name, module):
            self.name, self.module = name, module
            self.dist = types.SimpleNamespace(name=name)

        def load(self):
            return self.module

    from treekit_core import builtins

    points = [EntryPoint("treekit-core", builtins), EntryPoint("treekit-stale", _plugin(1))]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: points)
    monkeypatch.delenv("TREEKIT_LOAD_PLUGINS", raising=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry = Registry()
    assert any("treekit-stale" in str(w.message) for w in caught)
    assert "gini" in registry.components("criterion")  # the rest still loads
    with pytest.raises(PluginError, match="Not loaded: plugin 'treekit-stale' was written for"):
        registry.get_class("criterion", "stale_gini")


def test_every_shipped_plugin_declares_the_current_api():
    for path, tree in [*_sources(ROOT / "plugins"), *_sources(ROOT / "examples")]:
        if path.name != "__init__.py" or path.parent.name.startswith("tests"):
            continue
        if not path.parent.name.startswith("treekit_"):
            continue
        declared = [
            n
            for n in tree.body
            if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "TREEKIT_PLUGIN_API"
        ]
        assert declared, f"{path.relative_to(ROOT)} does not declare TREEKIT_PLUGIN_API"
        assert ast.literal_eval(declared[0].value) == PLUGIN_API_VERSION, path


def test_the_code_cites_only_files_in_the_repository():
    """DESIGN.md and PAPERS.md lived outside the repository; the code cites docs/ instead."""
    cited = []
    for path in ROOT.rglob("*"):
        parts = path.relative_to(ROOT).parts
        if path.suffix not in (".py", ".md", ".toml") or any(
            p.startswith(".") or p in ("build", "site-packages") for p in parts
        ):
            continue  # hidden folders (.git, .tox, .venv), builds and installed packages
        if path == pathlib.Path(__file__).resolve():
            continue
        if any(p.endswith(".egg-info") for p in path.parts) or path.name == "CHANGELOG.md":
            continue
        text = path.read_text(errors="ignore")
        if "PAPERS.md" in text or "DESIGN.md" in text or "../shared" in text:
            cited.append(str(path.relative_to(ROOT)))
    assert not cited, cited
    assert (ROOT / "docs" / "architecture.md").exists() and (
        ROOT / "docs" / "algorithms.md"
    ).exists()


def test_fit_still_works_through_the_public_api():
    import numpy as np

    X = np.arange(40.0).reshape(-1, 1)
    assert TreeClassifier(max_depth=1).fit(X, X[:, 0] > 19).get_n_leaves() == 2

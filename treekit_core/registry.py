"""Plugin manager and component registry.

The registry is assembled once per process from

* the entry points of group ``treekit`` (the core itself registers its built-ins this
  way, as the distribution ``treekit-core``), filtered by ``TREEKIT_LOAD_PLUGINS``, and
* plugin objects registered explicitly with :func:`register_plugin` (tests do this).

``TREEKIT_LOAD_PLUGINS`` is a comma-separated list of distribution names to load besides
the core; unset means "all installed", empty means "none but the core".
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import importlib.metadata
import os
import threading
import warnings

import attrs
import pluggy

import treekit_core.hookspecs as hookspecs
from treekit_core.components import REGISTERED_KINDS, Component
from treekit_core.components.base import link_registry
from treekit_core.components.errors import PluginError

#: The version of the component contract (hooks, base classes, capabilities, tree format)
#: that this treekit_core implements. A plugin declares the version it was written for as
#: a module attribute ``TREEKIT_PLUGIN_API``; CHANGELOG.md says what changed between versions.
PLUGIN_API_VERSION = 4
#: Plugin API versions this treekit_core can load.
SUPPORTED_PLUGIN_APIS = frozenset({4})
PLUGIN_API_ATTRIBUTE = "TREEKIT_PLUGIN_API"

ENTRY_POINT_GROUP = "treekit"
CORE_DISTRIBUTION = "treekit-core"
LOAD_ENV = "TREEKIT_LOAD_PLUGINS"


def api_mismatch(plugin, name: str) -> str | None:
    """Why ``plugin`` cannot be loaded by this treekit_core, or None when it can (or does not
    declare the plugin API version it was written for)."""
    declared = getattr(plugin, PLUGIN_API_ATTRIBUTE, None)
    if declared is None or declared in SUPPORTED_PLUGIN_APIS:
        return None
    return (
        f"plugin {name!r} was written for treekit plugin API {declared!r}, but this "
        f"treekit_core provides plugin API {PLUGIN_API_VERSION} (loads "
        f"{', '.join(map(str, sorted(SUPPORTED_PLUGIN_APIS)))}); install a release of "
        f"{name!r} written for API {PLUGIN_API_VERSION} (CHANGELOG.md lists what changed)"
    )


@attrs.frozen
class ComponentInfo:
    cls: type
    distribution: str  #: the distribution (or explicit plugin name) that registered it

    @property
    def name(self) -> str:
        return self.cls.name


def _normalise(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def allowed_distributions() -> set[str] | None:
    """Distribution names allowed by ``TREEKIT_LOAD_PLUGINS`` (None: all)."""
    raw = os.environ.get(LOAD_ENV)
    if raw is None:
        return None
    return {_normalise(part) for part in raw.split(",") if part.strip()}


class Registry:
    """Components by kind and name, assembled from a pluggy plugin manager."""

    def __init__(self, load_entry_points: bool = True):
        self.plugin_manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self.plugin_manager.add_hookspecs(hookspecs)
        self._plugin_names: dict[int, str] = {}
        self._components: dict[str, dict[str, ComponentInfo]] | None = None
        self._questions: dict = {}
        self._lock = threading.Lock()
        self.skipped_distributions: list[str] = []
        #: Distribution -> why it was not loaded (a plugin API version mismatch).
        self.incompatible: dict[str, str] = {}
        if load_entry_points:
            self._load_entry_points()
        else:
            self.register(_core_plugin(), CORE_DISTRIBUTION)

    def _load_entry_points(self) -> None:
        allowed = allowed_distributions()
        seen_core = False
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            dist = ep.dist.name if ep.dist is not None else ep.name
            if _normalise(dist) == CORE_DISTRIBUTION:
                if seen_core:
                    continue
                seen_core = True
            elif allowed is not None and _normalise(dist) not in allowed:
                self.skipped_distributions.append(dist)
                continue
            plugin = ep.load()
            problem = api_mismatch(plugin, dist)
            if problem is not None:
                # One stale plugin must not stop every other composition: it is left out,
                # and asking for one of its components names it (see get_class).
                warnings.warn(problem, RuntimeWarning, stacklevel=2)
                self.incompatible[dist] = problem
                continue
            self.register(plugin, dist)
        if not seen_core:  # running from a source tree that was never installed
            self.register(_core_plugin(), CORE_DISTRIBUTION)

    # -- registration ---------------------------------------------------------------
    def register(self, plugin, name: str | None = None) -> None:
        """Register a plugin object (module or instance with ``@hookimpl`` functions)."""
        name = name or getattr(plugin, "__name__", repr(plugin))
        if self.plugin_manager.is_registered(plugin):
            return
        problem = api_mismatch(plugin, name)
        if problem is not None:
            raise PluginError(problem)
        self.plugin_manager.register(plugin, name=name)
        self._plugin_names[id(plugin)] = name
        self._components, self._questions = None, {}

    def unregister(self, plugin) -> None:
        self.plugin_manager.unregister(plugin)
        self._plugin_names.pop(id(plugin), None)
        self._components, self._questions = None, {}

    @property
    def distributions(self) -> list[str]:
        return sorted(self._plugin_names.values())

    # -- lookup ---------------------------------------------------------------------
    def components(self, kind: str) -> dict[str, ComponentInfo]:
        """All registered components of ``kind``, by name."""
        if kind not in REGISTERED_KINDS:
            raise PluginError(
                f"unknown component kind {kind!r}; kinds are {sorted(REGISTERED_KINDS)}"
            )
        return self._assemble()[kind]

    def _assemble(self) -> dict[str, dict[str, ComponentInfo]]:
        with self._lock:
            if self._components is None:
                self._components = {kind: self._collect(kind) for kind in REGISTERED_KINDS}
            return self._components

    def _collect(self, kind: str) -> dict[str, ComponentInfo]:
        hook_name = hookspecs.REGISTRATION_HOOKS[kind]
        caller = getattr(self.plugin_manager.hook, hook_name)
        found: dict[str, ComponentInfo] = {}
        # Call each implementation on its own so every class is attributed to its plugin.
        for impl in reversed(caller.get_hookimpls()):
            distribution = self._plugin_names.get(id(impl.plugin), impl.plugin_name)
            for cls in impl.function() or []:
                base = REGISTERED_KINDS[kind]
                if not (isinstance(cls, type) and issubclass(cls, base)):
                    raise PluginError(
                        f"plugin {distribution!r} returned {cls!r} from {hook_name}; "
                        f"expected a subclass of treekit_core.components.{base.__name__}"
                    )
                if not cls.name:
                    raise PluginError(
                        f"{cls.__qualname__} from plugin {distribution!r} has no `name`"
                    )
                if cls.name in found and found[cls.name].cls is not cls:
                    first, second = sorted([found[cls.name].distribution, distribution])
                    raise PluginError(
                        f"two plugins register the {kind} {cls.name!r}: {first!r} and {second!r}; "
                        f"uninstall one or restrict loading with {LOAD_ENV}"
                    )
                found[cls.name] = ComponentInfo(cls, distribution)
        return found

    def get_class(self, kind: str, name: str) -> type:
        available = self.components(kind)
        if name in available:
            return available[name].cls
        names = sorted(available)
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        left_out = "".join(f" Not loaded: {problem}." for problem in self.incompatible.values())
        raise PluginError(
            f"unknown {kind} {name!r}{hint}. Installed {kind}s: "
            f"{', '.join(names) or 'none'}.{left_out}"
        )

    def create(self, kind: str, spec, params: dict | None = None) -> Component:
        """A component instance from a name (with params) or a ready instance."""
        base = REGISTERED_KINDS[kind]
        if isinstance(spec, base):
            if params:
                raise PluginError(
                    f"{kind}_params were given together with a ready {kind} instance; "
                    f"set the parameters on the instance instead"
                )
            return spec
        if isinstance(spec, Component):
            raise PluginError(
                f"{kind}: expected a {kind} name or {base.__name__} instance, "
                f"got a {spec.kind} component {spec.name!r}"
            )
        if not isinstance(spec, str):
            raise PluginError(f"{kind}: expected a component name (str) or instance, got {spec!r}")
        cls = self.get_class(kind, spec)
        return instantiate(cls, params or {}, f"{kind}_params")

    def question(self, name: str):
        """The question kind ``name``, one shared instance per registry (questions have no
        parameters)."""
        cached = self._questions.get(name)
        if cached is None:
            cached = self.create("question", name)
            self._questions[name] = cached
        return cached

    def hook_has_listeners(self, hook_name: str) -> bool:
        return bool(getattr(self.plugin_manager.hook, hook_name).get_hookimpls())


def instantiate(cls: type, params: dict, where: str) -> Component:
    """Construct ``cls(**params)`` with errors that name the parameter."""
    if not isinstance(params, dict):
        raise PluginError(f"{where} must be a dict of parameters, got {type(params).__name__}")
    known = cls.parameter_names()
    for key in params:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise PluginError(
                f"{where}: {cls.kind} {cls.name!r} has no parameter {key!r}{hint}; "
                f"its parameters are: {', '.join(known) or 'none'}"
            )
    try:
        return cls(**params)
    except (TypeError, ValueError) as exc:
        # attrs' validators raise with (message, attribute, ...) as args: say the message
        message = exc.args[0] if len(exc.args) > 1 and isinstance(exc.args[0], str) else exc
        raise PluginError(
            f"{where}: invalid parameter for {cls.kind} {cls.name!r}: {message}"
        ) from exc


_registry: Registry | None = None
_registry_lock = threading.Lock()


def is_registered(component) -> bool:
    """Whether ``component``'s class is what the registry gives for its kind and name (so
    the component can travel as its name and parameters)."""
    try:
        return get_registry().get_class(component.kind, component.name) is type(component)
    except PluginError:
        return False


def recreate_component(kind: str, name: str, params: dict) -> Component:
    """A component from its kind, name and parameters (how components are unpickled)."""
    return get_registry().create(kind, name, params)


# Components pickle by kind, name and parameters and unpickle through the registry; the
# contract layer below declares that link and the registry fills it in.
link_registry(is_registered, recreate_component)


#: The module of the core's own components, found by name as an entry point names a
#: plugin's: the registry sits below the built-ins and never imports them.
CORE_PLUGIN_MODULE = "treekit_core.builtins"


def _core_plugin():
    return importlib.import_module(CORE_PLUGIN_MODULE)


def get_registry() -> Registry:
    """The process-wide registry (assembled on first use)."""
    global _registry
    with _registry_lock:
        if _registry is None:
            _registry = Registry()
        return _registry


def reset_registry(load_entry_points: bool = True) -> Registry:
    """Rebuild the process-wide registry (e.g. after changing ``TREEKIT_LOAD_PLUGINS``)."""
    global _registry
    with _registry_lock:
        _registry = Registry(load_entry_points=load_entry_points)
        return _registry


@contextlib.contextmanager
def registered(*plugins, name: str | None = None):
    """Temporarily register plugin objects in the process-wide registry (for tests)."""
    registry = get_registry()
    for i, plugin in enumerate(plugins):
        registry.register(plugin, name if name and len(plugins) == 1 else name and f"{name}-{i}")
    try:
        yield registry
    finally:
        for plugin in plugins:
            registry.unregister(plugin)

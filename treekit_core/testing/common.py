"""What every conformance check shares: the error, the component made from a class or an
instance, its registration for the duration of a check."""

from __future__ import annotations

import contextlib

from treekit_core import hookimpl
from treekit_core.components import Component
from treekit_core.hookspecs import REGISTRATION_HOOKS
from treekit_core.registry import get_registry


class ConformanceError(AssertionError):
    """A component breaks the treekit contract; the message says how."""


def _instance(component, params=None):
    if isinstance(component, Component):
        return component
    return component(**(params or {}))


@contextlib.contextmanager
def _registered(instance, *more):
    """Register ``instance``'s class (and each of ``more``: components or component
    classes of any kind, such as the question kinds a splitter asks) for the block, where
    the registry does not hold that very class under its name already."""
    plugins = []
    registry = get_registry()
    for component in (instance, *more):
        cls = component if isinstance(component, type) else type(component)
        known = registry.components(cls.kind)
        if cls.name in known and known[cls.name].cls is cls:
            continue

        class Plugin:
            pass

        setattr(Plugin, REGISTRATION_HOOKS[cls.kind], hookimpl(lambda self, cls=cls: [cls]))
        plugin = Plugin()
        registry.register(plugin, f"conformance-{cls.kind}-{cls.name}")
        plugins.append(plugin)
    try:
        yield
    finally:
        for plugin in plugins:
            registry.unregister(plugin)


def _fail(instance, message):
    raise ConformanceError(f"{instance.kind} {instance.name!r}: {message}")

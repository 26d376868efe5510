"""Telling the user, once, that kernels are being compiled for this machine.

numba compiles a kernel the first time a process needs it and stores the machine code on
disk; later processes load it. Only a real compile (numba's ``numba:compile`` event, which
a cache load does not raise) of a treekit kernel, or the first writing of a generated
kernel module, announces itself: one :class:`CompilationNotice` per kernel family (the
module the kernels live in: the growers specialised to a criterion, the routing kernels
of some question kinds, a plugin's kernels) and process, naming the family, so a first
run says once what it compiles and a warm run says nothing.
"""

from __future__ import annotations

import sys
import threading
import warnings

#: What a first run on a machine typically costs (the cold ``treekit demo``: 6 s on the
#: 2-CPU benchmark machine, benchmarks/README.md).
EXPECTED = "about 6 s"


class CompilationNotice(UserWarning):
    """Tells the user that kernels are being compiled for the first time on this machine."""


_lock = threading.Lock()
_announced: set = set()  # the kernel families announced in this process
_described: dict = {}  # family -> what its notice says (generated modules name theirs)


def describe_family(family: str, what: str) -> None:
    """Say what the kernels of ``family`` are for, should their compile be announced by
    the listener (a generated module whose source was already written, compiled again
    because numba's cache was emptied). Called by :mod:`.generated` per module loaded."""
    _described[family] = what


def _caller_level() -> int:
    """The stack level of the first caller outside treekit, numba and the standard library's
    plumbing (the notice names the user's line, e.g. the fit call)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
        ("treekit_core", "treekit_", "numba", "importlib", "<frozen", "contextlib", "functools")
    ):
        frame, level = frame.f_back, level + 1
    return level


def announce_compiling(what: str, family: str) -> None:
    """Warn, once per ``family`` and process, that treekit is compiling ``what`` for this
    machine; the first notice of the process says what a first run costs."""
    with _lock:
        if family in _announced:
            return
        first = not _announced
        _announced.add(family)
    cost = f"once; a first run takes {EXPECTED} in all" if first else "once"
    warnings.warn(
        f"treekit: compiling {what} for this machine ({cost}); later runs load them from the cache",
        CompilationNotice,
        stacklevel=_caller_level(),
    )


def _treekit_module(dispatcher) -> str:
    """The module of a treekit kernel ("" for someone else's)."""
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    return module if module.startswith("treekit") or "treekit" in module else ""


def install_listener() -> None:
    """Announce the first real compile of each family of treekit kernels (called once, by
    compiling.py, when kernels are first needed); the kernels a kernel's compile compiles
    (its callees, a criterion's impurity) belong to its family. A generated module announces itself
    when it writes its source (:mod:`.generated`, naming what it is for), under the same
    family, so its compile is not announced twice."""
    from numba.core import event

    nesting = threading.local()  # the callees a kernel compiles belong to its family

    class _FirstCompile(event.Listener):
        def on_start(self, ev):
            depth = getattr(nesting, "depth", 0)
            nesting.depth = depth + 1
            data = ev.data if isinstance(ev.data, dict) else {}
            module = _treekit_module(data.get("dispatcher"))
            if depth == 0 and module and module not in _announced:
                announce_compiling(_described.get(module, f"the kernels of {module}"), module)

        def on_end(self, ev):
            nesting.depth = max(getattr(nesting, "depth", 1) - 1, 0)

    event.register("numba:compile", _FirstCompile())

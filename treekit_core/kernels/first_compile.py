"""Telling the user, once, that kernels are being compiled for this machine.

numba compiles a kernel the first time a process needs it and stores the machine code on
disk; later processes load it. Only a real compile (numba's ``numba:compile`` event, which
a cache load does not raise) of a treekit kernel, or the first writing of a generated
kernel module, announces itself: one :class:`CompilationNotice` per process, so a first
run says it once and a warm run says nothing.
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


_announced = threading.Event()


def _caller_level() -> int:
    """The stack level of the first caller outside treekit, numba and the standard library's
    plumbing (the notice names the user's line, e.g. the fit call)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
        ("treekit_core", "treekit_", "numba", "importlib", "<frozen", "contextlib", "functools")
    ):
        frame, level = frame.f_back, level + 1
    return level


def announce_compiling(what: str = "its kernels") -> None:
    """Warn, once per process, that treekit is compiling ``what`` for this machine."""
    if _announced.is_set():
        return
    _announced.set()
    warnings.warn(
        f"treekit: compiling {what} for this machine, once ({EXPECTED}); later runs load "
        "them from the cache",
        CompilationNotice,
        stacklevel=_caller_level(),
    )


def _is_treekit_kernel(dispatcher) -> bool:
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    return module.startswith(("treekit_core", "treekit_")) or "treekit" in module


def install_listener() -> None:
    """Announce the first real compile of a treekit kernel (called once, by compiling.py,
    when kernels are first needed)."""
    from numba.core import event

    class _FirstCompile(event.Listener):
        def on_start(self, ev):
            data = ev.data if isinstance(ev.data, dict) else {}
            if not _announced.is_set() and _is_treekit_kernel(data.get("dispatcher")):
                announce_compiling()

        def on_end(self, ev):
            pass

    event.register("numba:compile", _FirstCompile())

"""The error a component's plain-Python function raises when numba cannot compile it. At
the bottom with :mod:`treekit_core.numerics`: the kernels raise it, the engine adds the
component's name, and neither needs the other (nor numba) to know it."""

from __future__ import annotations

import inspect
import re

#: What a plain-Python function of a component may use: what numba's nopython mode
#: compiles.
ADVICE = (
    "a component's function must be numeric Python that numba compiles: import modules at "
    "the top of its file (math and numpy functions work), use numbers and numpy arrays only "
    "(no lists, dicts, strings or objects); run with NUMBA_DISABLE_JIT=1 to debug it as "
    "plain Python"
)


class KernelCompileError(ValueError):
    """numba could not compile ``function``, a component's plain-Python function (an
    impurity, a split score, a question's answer). The message names the function, its
    file and line, numba's reason and what to do; the traceback stops here."""

    def __init__(self, function, reason: str, owner: str | None = None):
        self.function, self.reason, self.owner = function, reason, owner
        super().__init__(self._message())

    def _message(self) -> str:
        where = _location(self.function)
        owner = f"{self.owner}: " if self.owner else ""
        return (
            f"{owner}{getattr(self.function, '__qualname__', self.function)!s}{where} does not "
            f"compile in numba's nopython mode: {self.reason}. {ADVICE[0].upper()}{ADVICE[1:]}"
        )

    def naming(self, owner: str) -> "KernelCompileError":
        """The same error, its message starting with ``owner`` (``criterion 'gini'``)."""
        return KernelCompileError(self.function, self.reason, owner)


def _location(function) -> str:
    try:
        path = inspect.getsourcefile(function)
        line = inspect.getsourcelines(function)[1]
    except (OSError, TypeError):
        return ""
    return f" ({path}, line {line})"


def is_compile_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is numba's: its typing, lowering and bytecode errors are classes of
    their own (not all below one base), all defined in numba's modules."""
    return type(exc).__module__.split(".", 1)[0] == "numba"


def compile_failure(function, exc: BaseException) -> KernelCompileError:
    """numba's error ``exc`` for ``function``, as one readable line: its first line, free
    of terminal colours and of numba's own advice."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # numba's first line may only name its pipeline stage; the reason is the next one
    said = [line for line in lines if not line.startswith("Failed in ")]
    reason = said[0] if said else (lines[0] if lines else type(exc).__name__)
    for line in said[1:]:  # numba names the offending line of the user's file
        if line.startswith("File ") and "line" in line:
            reason += f" ({line.rstrip(':')})"
            break
    return KernelCompileError(function, reason)

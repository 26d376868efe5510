"""Kernels specialised to user code, compiled once per machine.

Passing a user function (a question's answer, a criterion's impurity) to a kernel as a
function value costs an indirect call per use; passing it as a dispatcher argument makes
numba specialise the kernel but never reuse the specialisation in a new process (numba
issues #2956, #6264). The way out taken here: write the specialised kernel as a real Python
module whose source names the user functions as globals, once per machine, into treekit's
kernel directory; numba's ``cache=True`` then keys the machine code on that file, so every
later process loads it. The file's name is a hash of its source (or of what determines the
source, for a module whose text is costly to generate) and of the user functions' source,
so changing either makes a new file; an unchanged file is never rewritten (a new timestamp
would invalidate numba's cache). Its first line is the hash of the rest: a file that is not
whole (cut short, edited by hand) is written again.

The user functions are injected as globals before the module runs (nothing is imported by
name), so a function defined in a test file works like a built-in one.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import stat
import sys
import tempfile
import threading
import warnings

from treekit_core.kernels.compiling import JIT_DISABLED, jit, source_file
from treekit_core.kernels.first_compile import (
    CompilationNotice,
    announce_compiling,
    describe_family,
)

__all__ = [
    "CompilationNotice",
    "UnsafeKernelFolderWarning",
    "function_source",
    "generated_module",
    "kernel_directory",
    "unsafe_folder",
]


def kernel_directory() -> str:
    """Where generated kernel modules live: ``TREEKIT_KERNEL_DIR``, else a per-user folder
    in the user's cache directory, else one in the temporary directory.

    treekit executes the modules in this folder and numba loads the pickled cache index in
    its ``__pycache__``, so a file planted there runs code in the user's process. A folder
    is used only when it is private: created with mode 0700, owned by the user and not
    writable by group or others (:func:`unsafe_folder`). An unsafe candidate is passed over
    with a :class:`UnsafeKernelFolderWarning` naming it and why; with none left, OSError."""
    configured = os.environ.get("TREEKIT_KERNEL_DIR")
    candidates = [configured] if configured else []
    home_cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    candidates.append(os.path.join(home_cache, "treekit", "kernels"))
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    candidates.append(os.path.join(tempfile.gettempdir(), f"treekit-kernels-{uid}"))
    passed_over = []
    for folder in candidates:
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError as error:
            passed_over.append(f"{folder}: {error.strerror or error}")
            continue
        problem = unsafe_folder(folder) or unsafe_folder(os.path.join(folder, "__pycache__"))
        if problem is not None:
            warnings.warn(
                f"treekit: not using the kernel folder {problem}; another user could make "
                "treekit run their code. Remove it, or set TREEKIT_KERNEL_DIR to a private "
                "folder",
                UnsafeKernelFolderWarning,
                stacklevel=2,
            )
            passed_over.append(problem)
        elif os.access(folder, os.W_OK):
            return folder
        else:
            passed_over.append(f"{folder}: not writable")
    raise OSError(
        "no private, writable folder for treekit's generated kernels; set TREEKIT_KERNEL_DIR "
        "to one. Passed over: " + "; ".join(passed_over)
    )


class UnsafeKernelFolderWarning(UserWarning):
    """A kernel folder that another user could write to was passed over."""


def unsafe_folder(folder: str) -> str | None:
    """Why ``folder`` may not hold code treekit runs (a symbolic link, not a folder, owned
    by another user, writable by group or others), or None when it is private or absent."""
    try:
        status = os.lstat(folder)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(status.st_mode):
        return f"{folder}: a symbolic link"
    if not stat.S_ISDIR(status.st_mode):
        return f"{folder}: not a folder"
    if hasattr(os, "getuid") and status.st_uid != os.getuid():
        return f"{folder}: owned by user id {status.st_uid}, not by you ({os.getuid()})"
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{folder}: writable by group or others (mode {stat.S_IMODE(status.st_mode):o})"
    return None


def function_source(function) -> str:
    """What identifies a user function's code: its qualified name and the whole source
    file defining it (so a change to a helper it calls in that file counts too); without
    a source file, its bytecode with its constants and the names it uses."""
    try:
        path = inspect.getsourcefile(function)
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
    except (OSError, TypeError, UnicodeDecodeError):
        code = function.__code__
        source = repr((code.co_code, code.co_consts, code.co_names))
    return f"{function.__module__}.{function.__qualname__}\n{source}"


_modules: dict = {}
_lock = threading.Lock()


def generated_module(prefix: str, source, functions: dict, what: str, identity: str | None = None):
    """The module with ``source``, whose globals ``functions`` (name -> plain Python
    function) are compiled with treekit's jit and injected before it runs. Loaded once per
    process, written once per machine; ``what`` names the kernels in the first-compile
    notice.

    With ``identity`` (a text that determines the source: what it is generated from),
    ``source`` may be a function of no arguments returning the text, called only when the
    file is not there yet: the module is named by the identity instead of the text, so a
    process that finds the file does not generate the text again (a criterion's
    specialised kernels take tens of milliseconds to generate, paid by every first fit)."""
    digest = hashlib.sha256((source if identity is None else identity).encode())
    for name in sorted(functions):
        digest.update(f"{name}\n{function_source(functions[name])}".encode())
    name = f"treekit_{prefix}_{digest.hexdigest()[:20]}"
    module = _modules.get(name)
    if module is not None:
        return module
    with _lock:
        module = _modules.get(name)
        if module is None:
            module = _load(name, source, functions, what)
            _modules[name] = module
    return module


def _whole_header(body: str) -> str:
    """A generated file's first line: the hash of the rest, so that a file cut short or
    edited is recognised and written again."""
    digest = hashlib.sha256(body.encode()).hexdigest()
    return f"# treekit kernel module, sha256 of what follows: {digest}\n"


def _load(name, source, functions, what):
    describe_family(name, what)
    path = os.path.join(kernel_directory(), name + ".py")
    try:
        with open(path, encoding="utf-8") as handle:
            current = handle.read()
    except OSError:
        current = None
    header, _, body = (current or "").partition("\n")
    whole = current is not None and header + "\n" == _whole_header(body)
    if not whole or (not callable(source) and body != source):
        announce_compiling(what, name)
        body = source() if callable(source) else source
        temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(_whole_header(body) + body)
        os.replace(temporary, path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    for global_name, function in functions.items():
        # numba caches only functions defined in a file (one typed at a prompt or made by
        # exec compiles once per process): the generated module's kernels still cache
        options = {} if source_file(function) else {"cache": False}
        setattr(module, global_name, function if JIT_DISABLED else jit(**options)(function))
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

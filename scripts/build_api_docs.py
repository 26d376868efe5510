"""Build the API reference from the docstrings (pdoc), failing on any warning.

    python scripts/build_api_docs.py [OUTPUT_DIR]     # default: build/api

The reference covers the core's public modules (the package, its components, hook
specifications, built-ins, kernels' public names, datasets, exports, tools and testing
kit) and every installed plugin's module. CI runs this; a docstring pdoc cannot render, or a
module that fails to import, fails the build.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path


def modules() -> list[str]:
    """The core's public modules (a package's submodules come with it) and every installed
    plugin's module."""
    import treekit_core
    from treekit_core.registry import get_registry

    public = [*treekit_core.PUBLIC_MODULES, "treekit_core.components", "treekit_core.hookspecs"]
    # a package brings its submodules, except treekit_core (its __all__ lists no modules)
    packages = [name for name in public if name != "treekit_core"]
    names = [name for name in public if not any(name.startswith(f"{p}.") for p in packages)]
    for plugin in get_registry().plugin_manager.get_plugins():
        name = getattr(plugin, "__name__", "")
        if name.startswith("treekit_") and "." not in name and name not in names:
            names.append(name)
    return names


def resolve_lazy_names(names) -> None:
    """Names a module loads on first access (they import numba) are set on the module, so
    pdoc, which reads a module's namespace, documents them."""
    import importlib

    for name in names:
        module = importlib.import_module(name)
        for public in getattr(module, "__all__", ()):
            if public not in vars(module):
                setattr(module, public, getattr(module, public))
    for name in ("treekit_core.kernels",):
        module = importlib.import_module(name)
        for public in getattr(module, "__all__", ()):
            if public not in vars(module):
                setattr(module, public, getattr(module, public))


def main(argv=None) -> int:
    import pdoc
    import pdoc.render

    argv = sys.argv[1:] if argv is None else argv
    output = Path(argv[0] if argv else "build/api")
    names = modules()
    resolve_lazy_names(names)
    pdoc.render.configure(docformat="restructuredtext", footer_text="treekit API reference")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdoc.pdoc(*names, output_directory=output)
    problems = [w for w in caught if "pdoc" in w.filename]
    for w in problems:
        print(f"{w.filename}:{w.lineno}: {w.category.__name__}: {w.message}", file=sys.stderr)
    pages = sorted(p.relative_to(output) for p in output.rglob("*.html"))
    print(f"wrote {len(pages)} pages to {output}/ (open {output}/index.html)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

"""A progress observer: counts grown trees on stderr, only when stderr is a terminal.

It is an ordinary lifecycle-hook plugin; the CLI registers it. Long work (cross-validated
pruning, forests, reject thresholds by CV) grows many trees, each announced by
``treekit_fit_started``.
"""

from __future__ import annotations

import sys

from treekit_core.hookspecs import hookimpl


class Progress:
    def __init__(self, stream=None, label: str = "trees grown"):
        self.stream = stream if stream is not None else sys.stderr
        self.label = label
        self.count = 0
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())

    @hookimpl
    def treekit_fit_finished(self, composition, tree):
        self.count += 1
        if self.enabled:
            self.stream.write(f"\r{self.label}: {self.count}")
            self.stream.flush()

    def close(self):
        if self.enabled and self.count:
            self.stream.write("\n")
            self.stream.flush()

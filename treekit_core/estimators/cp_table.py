"""rpart's ``printcp`` table for a fitted tree's pruning path."""

from __future__ import annotations

import numpy as np


def cp_table_text(table: dict, root_error: float, root_weight: float, n_samples: int) -> str:
    """The cp table as rpart prints it: root first (largest cp), one row per nested
    subtree, with ``xerror``/``xstd`` when the subtree was chosen by cross-validation; the
    subtree in use is marked with ``*``."""
    order = np.arange(len(table["cp"]))[::-1]
    header = ["CP", "nsplit", "rel error"]
    columns = [table["cp"], table.get("n_splits", table["n_leaves"] - 1), table["rel_error"]]
    formats = ["{:.6f}", "{:d}", "{:.5f}"]
    if "xerror" in table:
        header += ["xerror", "xstd"]
        columns += [table["xerror"], table["xstd"]]
        formats += ["{:.5f}", "{:.5f}"]
    rows = [
        [
            f.format(int(c[k]) if f == "{:d}" else float(c[k]))
            for f, c in zip(formats, columns, strict=True)
        ]
        for k in order
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    label = len(str(len(rows)))
    lines = [
        f"Root node error: {root_error:g}/{root_weight:g} = "
        f"{root_error / root_weight if root_weight else 0.0:.5f}",
        "",
        f"n= {n_samples}",
        "",
        " " * (label + 1) + " ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)),
    ]
    for number, (k, row) in enumerate(zip(order, rows, strict=True), start=1):
        mark = " *" if table["selected"][k] else ""
        cells = " ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True))
        lines.append(f"{str(number).ljust(label)} {cells}{mark}")
    return "\n".join(lines) + "\n"

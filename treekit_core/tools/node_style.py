"""How a node looks, the same in the pictures and the HTML report: its class colour and the
labels of its edges. No matplotlib needed."""

from __future__ import annotations

import numpy as np

from treekit_core.engine.tree_text import branch_texts

#: matplotlib's tab10, one colour per class index.
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip
ABSTAIN_GREY = (0.85, 0.85, 0.85)


def class_rgb(index: int) -> tuple:
    """The palette colour of class ``index`` as three floats in [0, 1]."""
    code = PALETTE[index % len(PALETTE)]
    return tuple(int(code[i : i + 2], 16) / 255 for i in (1, 3, 5))


def node_rgb(tree, node) -> tuple:
    """The decided class's colour blended with white by purity (deeper = purer; grey for
    an abstaining node), as three floats in [0, 1]."""
    k = tree.n_statistics
    decided = int(tree.decision[node])
    if decided < 0:
        return ABSTAIN_GREY
    purity = (tree.value[node].max() - 1.0 / k) / (1.0 - 1.0 / k) if k > 1 else 1.0
    strength = 0.15 + 0.7 * float(np.clip(purity, 0.0, 1.0))
    return tuple(1.0 - strength * (1.0 - c) for c in class_rgb(decided))


def rgb_hex(rgb) -> str:
    """Three floats in [0, 1] (a fourth, alpha, is ignored) as ``#rrggbb``."""
    return "#" + "".join(f"{round(255 * c):02x}" for c in tuple(rgb)[:3])


def node_hex(tree, node) -> str:
    """:func:`node_rgb` as ``#rrggbb``."""
    return rgb_hex(node_rgb(tree, node))


def edge_labels(tree, node, context) -> list[str]:
    """yes / no for a two-branch question, else each branch's category."""

    texts = branch_texts(tree, node, context)
    if len(texts) == 2:
        return ["yes", "no"]
    return [text.split(" = ", 1)[-1] for text in texts]

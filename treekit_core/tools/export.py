"""A fitted tree as text (like scikit-learn's export_text) and as graphviz dot."""

from __future__ import annotations

import numpy as np

from treekit_core.engine.questions import MAX_CATEGORIES, OBLIQUE, SUBSET, question_fields
from treekit_core.engine.tree import LEAF, Tree


def export_text(
    tree: Tree,
    feature_names=None,
    class_names=None,
    decimals: int = 4,
    show_distribution: bool = True,
    categories: dict | None = None,
) -> str:
    """Readable rules, one line per node, indented by depth (like sklearn's export_text).
    ``categories`` maps a nominal feature's index to its category names."""
    names = (
        list(feature_names)
        if feature_names is not None
        else [f"x[{j}]" for j in range(tree.n_features)]
    )
    classes = (
        [str(c) for c in class_names]
        if class_names is not None
        else [str(k) for k in range(tree.n_classes)]
    )
    lines = []

    def leaf_text(node):
        decided = tree.decision[node]
        label = "abstain" if decided < 0 else classes[decided]
        text = f"class: {label}"
        if show_distribution:
            dist = ", ".join(
                f"{classes[k]}={tree.value[node, k]:.{decimals}g}" for k in range(tree.n_classes)
            )
            text += f"  [{dist}; weight {tree.weight[node]:.{decimals}g}]"
        return text

    question, mask, coef, _ = question_fields(tree)
    categories = categories or {}

    def subset_text(node):
        f = tree.feature[node]
        levels = categories.get(f)
        codes = [c for c in range(MAX_CATEGORIES) if (mask[node] >> c) & 1]
        if levels is not None:
            codes = [c for c in codes if c < len(levels)]
            return "{" + ", ".join(str(levels[c]) for c in codes) + "}"
        return "{" + ", ".join(str(c) for c in codes) + "}"

    def questions(node):
        f = tree.feature[node]
        if question[node] == SUBSET:
            inside = subset_text(node)
            return f"{names[f]} in {inside}", f"{names[f]} not in {inside}"
        if question[node] == OBLIQUE:
            terms = " + ".join(
                f"{coef[node, j]:.{decimals}g}*{names[j]}" for j in np.flatnonzero(coef[node])
            )
            thr = f"{tree.threshold[node]:.{decimals}f}"
            return f"{terms} <= {thr}", f"{terms} >  {thr}"
        thr = f"{tree.threshold[node]:.{decimals}f}"
        return f"{names[f]} <= {thr}", f"{names[f]} >  {thr}"

    def walk(node, depth):
        indent = "|   " * depth
        if tree.children_left[node] == LEAF:
            lines.append(f"{indent}|--- {leaf_text(node)}")
            return
        yes, no = questions(node)
        lines.append(f"{indent}|--- {yes}")
        walk(int(tree.children_left[node]), depth + 1)
        lines.append(f"{indent}|--- {no}")
        walk(int(tree.children_right[node]), depth + 1)

    walk(0, 0)
    return "\n".join(lines) + "\n"


def node_labels(
    tree: Tree,
    feature_names=None,
    class_names=None,
    categories: dict | None = None,
    decimals: int = 4,
) -> dict:
    """One label per node: its question (internal nodes) or its decision and distribution
    (leaves), worded as in :func:`export_text`."""
    text = export_text(tree, feature_names, class_names, decimals, True, categories).splitlines()
    labels, i, stack = {}, 0, [0]
    while (
        stack
    ):  # export_text writes a node's "yes" line, its left subtree, its "no" line, its right subtree
        node = stack.pop()
        if isinstance(node, tuple):
            i += 1  # the "no" line
            stack.append(node[1])
            continue
        labels[node] = text[i].split("|--- ", 1)[1]
        i += 1
        if tree.children_left[node] != LEAF:
            stack.append(("no", int(tree.children_right[node])))
            stack.append(int(tree.children_left[node]))
    return labels


def export_dot(
    tree: Tree,
    feature_names=None,
    class_names=None,
    categories: dict | None = None,
    decimals: int = 4,
) -> str:
    """The tree in graphviz dot: one box per node (question, or decision and distribution)."""
    labels = node_labels(tree, feature_names, class_names, categories, decimals)
    lines = ["digraph tree {", '  node [shape=box, style="rounded,filled", fontname="Helvetica"];']
    for node in range(tree.n_nodes):
        label = labels[node].replace('"', "'")
        colour = "#e8f4e8" if tree.children_left[node] == LEAF else "#e8eef8"
        lines.append(f'  n{node} [label="{label}", fillcolor="{colour}"];')
    for node in range(tree.n_nodes):
        if tree.children_left[node] != LEAF:
            lines.append(f'  n{node} -> n{int(tree.children_left[node])} [label="yes"];')
            lines.append(f'  n{node} -> n{int(tree.children_right[node])} [label="no"];')
    lines.append("}")
    return "\n".join(lines) + "\n"

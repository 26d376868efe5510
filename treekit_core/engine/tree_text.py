"""A fitted tree as text (like scikit-learn's export_text) and as graphviz dot."""

from __future__ import annotations

import math

import numpy as np

from treekit_core.components.question import QuestionTextContext
from treekit_core.components.splitter import NODE_TEST_FIELDS
from treekit_core.engine.tree import Tree


def export_text(
    tree: Tree,
    feature_names=None,
    class_names=None,
    decimals: int = 4,
    show_distribution: bool = True,
    categories: dict | None = None,
    style: str = "sklearn",
    notes=None,
    leaf_text=None,
) -> str:
    """Readable rules, one line per node, indented by depth. ``categories`` maps a nominal
    feature's index to its category names. ``notes(node, context)`` may give extra lines
    printed above an internal node's branches (surrogate splits; sklearn style only).
    ``style="sklearn"`` words them like scikit-learn's export_text; ``style="j48"`` like
    Weka's J48 (``attr = value: class (weight/errors)``), line for line, so the two can be
    diffed. ``leaf_text(node)`` words a leaf instead of its class and distribution (a
    regression tree's ``value: [mean]``, as scikit-learn prints a regressor's)."""
    if style not in ("sklearn", "j48"):
        raise ValueError(f"style must be 'sklearn' or 'j48', got {style!r}")
    lines = []
    context = QuestionTextContext(_names(tree, feature_names), categories or {}, decimals, style)
    if leaf_text is None:
        classes = _classes(tree, class_names)
        if style == "j48":
            return j48_text(tree, classes, context)

        def leaf_text(node):
            return leaf_label(tree, node, classes, decimals, show_distribution)
    elif style == "j48":
        raise ValueError("style 'j48' prints J48's classes; this tree predicts values")

    for node, depth, branch in depth_first(tree, context):
        if branch is not None:
            lines.append(f"{'|   ' * (depth - 1)}|--- {branch}")
        if tree.is_leaf[node]:
            lines.append(f"{'|   ' * depth}|--- {leaf_text(node)}")
            continue
        tested = test_note(tree, node)
        for note in ([tested] if tested else []) + list(notes(node, context) if notes else ()):
            lines.append(f"{'|   ' * depth}|    ({note})")
    return "\n".join(lines) + "\n"


def test_note(tree: Tree, node: int) -> str | None:
    """The p-value of the feature a node that ran tests splits on, as partykit's tree plot
    labels it (``p < 0.001``, else ``p = `` rounded to 3 decimals); None where the node ran
    none (:data:`~treekit_core.components.NODE_TEST_FIELDS`)."""
    field = tree.node_fields.get(NODE_TEST_FIELDS[1])
    if field is None or np.ndim(field) != 2 or tree.is_leaf[node]:
        return None
    p_value = float(np.asarray(field)[node, tree.feature[node]])
    if p_value != p_value:
        return None
    return "p < 0.001" if p_value < 0.001 else f"p = {round(p_value, 3):g}"


def j48_leaf_label(tree: Tree, node: int, classes) -> str:
    """``class (weight/errors)`` as J48 prints a leaf: numbers rounded to 2 decimals as
    Weka's Utils.roundDouble, the errors only when there are some."""
    decided = tree.decision[node]
    weight = tree.weight[node]
    errors = weight - (tree.statistics[node, decided] if decided >= 0 else 0.0)
    text = f"{'abstain' if decided < 0 else classes[decided]} ({_java_round(weight)}"
    return text + (f"/{_java_round(errors)})" if errors > 1e-6 else ")")


def _java_round(value: float) -> str:
    return repr(math.floor(value * 100 + 0.5) / 100)


def j48_text(tree: Tree, classes, context: QuestionTextContext) -> str:
    if tree.is_leaf[0]:
        return f": {j48_leaf_label(tree, 0, classes)}\n"
    lines = []
    for node, depth, branch in depth_first(tree, context):
        if branch is None:
            continue  # the root: J48 prints its branches only
        line = "|   " * (depth - 1) + branch
        if tree.is_leaf[node]:
            line = f"{line}: {j48_leaf_label(tree, node, classes)}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def depth_first(tree: Tree, context: QuestionTextContext):
    """(node, depth, the text of the branch leading to it; None at the root) for every
    node, depth first, first branch first: the order both text styles print in. A loop,
    not a recursion, since a tree may be thousands of levels deep."""
    depths, leading = tree.node_depths(), {}
    for node in tree.preorder()[0].tolist():
        yield node, int(depths[node]), leading.pop(node, None)
        kids = tree.children(node)
        if kids.size:
            leading.update(zip(kids.tolist(), branch_texts(tree, node, context), strict=True))


def branch_texts(tree: Tree, node: int, context: QuestionTextContext) -> list[str]:
    """The condition of every branch of an internal node, worded by its question kind."""
    return tree.question_of(node).branch_texts(
        int(tree.feature[node]),
        float(tree.threshold[node]),
        tree.question_params(node),
        int(tree.n_children[node]),
        context,
    )


def _names(tree, feature_names):
    if feature_names is not None:
        return list(feature_names)
    return [f"x[{j}]" for j in range(tree.n_features)]


def _classes(tree, class_names):
    if class_names is not None:
        return [str(c) for c in class_names]
    return [str(k) for k in range(tree.value.shape[1])]


def leaf_label(tree: Tree, node: int, classes, decimals: int, show_distribution: bool) -> str:
    decided = tree.decision[node]
    text = f"class: {'abstain' if decided < 0 else classes[decided]}"
    if show_distribution:
        dist = ", ".join(
            f"{classes[k]}={tree.value[node, k]:.{decimals}g}" for k in range(tree.value.shape[1])
        )
        text += f"  [{dist}; weight {tree.weight[node]:.{decimals}g}]"
    return text


def node_labels(
    tree: Tree,
    feature_names=None,
    class_names=None,
    categories: dict | None = None,
    decimals: int = 4,
    leaf_text=None,
) -> dict:
    """One label per node: the question (internal nodes: its branches' conditions joined
    by " | ") or the decision and distribution (leaves), worded as in :func:`export_text`
    (``leaf_text(node)`` words a leaf instead, as there)."""
    classes = _classes(tree, class_names)
    context = QuestionTextContext(_names(tree, feature_names), categories or {}, decimals)
    labels = {}
    for node in range(tree.n_nodes):
        if tree.is_leaf[node]:
            labels[node] = (
                leaf_label(tree, node, classes, decimals, True)
                if leaf_text is None
                else leaf_text(node)
            )
        else:
            texts = branch_texts(tree, node, context)
            labels[node] = texts[0] if len(texts) == 2 else " | ".join(texts)
            tested = test_note(tree, node)
            if tested:  # the split's p-value on a line of its own, as partykit's plot
                labels[node] += "\n" + tested
    return labels


def export_dot(
    tree: Tree,
    feature_names=None,
    class_names=None,
    categories: dict | None = None,
    decimals: int = 4,
    leaf_text=None,
) -> str:
    """The tree in graphviz dot: one box per node (question, or decision and distribution,
    or ``leaf_text(node)``); each edge is labelled with its branch ("yes" / "no" for
    two-branch questions)."""
    labels = node_labels(tree, feature_names, class_names, categories, decimals, leaf_text)
    context = QuestionTextContext(_names(tree, feature_names), categories or {}, decimals)
    lines = ["digraph tree {", '  node [shape=box, style="rounded,filled", fontname="Helvetica"];']
    for node in range(tree.n_nodes):
        label = labels[node].replace('"', "'").replace("\n", "\\n")
        colour = "#e8f4e8" if tree.is_leaf[node] else "#e8eef8"
        lines.append(f'  n{node} [label="{label}", fillcolor="{colour}"];')
    for node in range(tree.n_nodes):
        kids = tree.children(node)
        if kids.size == 0:
            continue
        texts = branch_texts(tree, node, context)
        edge = ["yes", "no"] if kids.size == 2 else [t.replace('"', "'") for t in texts]
        for child, label in zip(kids, edge, strict=True):
            lines.append(f'  n{node} -> n{int(child)} [label="{label}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"

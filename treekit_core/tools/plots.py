"""Pictures (matplotlib is an optional extra: ``pip install treekit-core[plots]``).

* :func:`plot_tree`: the tree with its questions and leaf distributions (a regression
  tree: its values on a colour scale);
* :func:`plot_residuals`: a regressor's residuals against its predictions;
* :func:`plot_pruning_path`: rpart-style cross-validated error against cp, with 1-SE bars;
* :func:`plot_risk_coverage`: risk-coverage curves comparing confidences;
* :func:`plot_boundary_distance_map`: for 2-D data, decision regions shaded by the
  confidence, with the "safety lane" of rejected points (Tóth & Pataki, figs. 9 and 11);
* :func:`plot_soft_gain`: the soft-search gain curve against the exhaustive one along one
  feature (Nunes et al., fig. 4).

:func:`treekit_core.export_dot` writes graphviz dot without matplotlib.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from pathlib import Path

import numpy as np

from treekit_core.builtins.survival_curves import curves_on_grid, leaf_jumps, unique_times
from treekit_core.components.question import QuestionTextContext
from treekit_core.engine.tree_text import _names, node_labels
from treekit_core.engine.validation import check_survival_y
from treekit_core.registry import get_registry
from treekit_core.tools.node_style import class_rgb, edge_labels, node_rgb
from treekit_core.tools.picture_layout import shrink_until_apart


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("pictures need matplotlib: pip install 'treekit-core[plots]'") from exc
    return plt


#: Most leaves a tree picture shows; deeper parts are summarised (as rpart.plot and
#: dtreeviz do), so a picture stays readable at any tree size.
MAX_SHOWN_LEAVES = 16


def bottom_boxes(tree, depth: int) -> int:
    """Boxes at the bottom of a picture drawn down to ``depth``: the nodes at that depth
    and the leaves above it."""
    return int(((tree.depth == depth) | (tree.is_leaf & (tree.depth < depth))).sum())


def shown_depth(tree, max_leaves: int = MAX_SHOWN_LEAVES) -> int:
    """The deepest level d such that drawing the tree down to d (internal nodes at d drawn
    as summaries) shows at most ``max_leaves`` boxes at the bottom (at least the root)."""
    for d in range(tree.max_depth, -1, -1):
        if bottom_boxes(tree, d) <= max_leaves:
            return d
    return 0


def tree_figure_size(tree, max_leaves: int = MAX_SHOWN_LEAVES) -> tuple[float, float]:
    """(width, height) in inches of a tree picture: 1.9 per bottom box, 1.7 per level
    shown, within 40 x 30."""
    depth = shown_depth(tree, max_leaves)
    return min(40, max(6, 1.9 * bottom_boxes(tree, depth))), min(30, max(3, 1.7 * (depth + 1)))


def _class_text(model, decided: int) -> str:
    return "ABSTAIN" if decided < 0 else str(model.classes_[decided])


def plot_tree(model, ax=None, max_leaves: int = MAX_SHOWN_LEAVES):
    """The tree: internal nodes ask their question, leaves show the decision and the
    class distribution; boxes are coloured by the decided class (deeper colour = purer
    node), abstaining leaves are grey and say so, edges carry yes/no (or the category).
    Trees with more than ``max_leaves`` leaves are drawn down to the depth that fits and
    the subtrees below are summarised (their leaves and weight)."""
    plt = _pyplot()

    tree = model.tree_
    names = list(getattr(model, "feature_names_in_", [])) or None
    categories = getattr(model, "categories_", {})
    # a regression tree: its values on a colour scale instead of classes; a survival tree:
    # its nodes' risk scores, and its leaves worded as its text words them
    values, value_name, leaf_words = None, "node value", None
    if hasattr(model, "node_risk_values"):
        values, value_name = model.node_risk_values(tree), "risk score"
        if values.ndim == 2:  # a column per cause: coloured by the time lost to any
            values, value_name = values.sum(axis=1), "time lost (all causes)"
        words = model._leaf_text(4)

        def leaf_words(node):  # "n=.., events=.." on the first line, the rest one a line
            parts = words(node).split(", ")
            return "\n".join([", ".join(parts[:2]), *parts[2:]])

    elif hasattr(model, "node_effects"):  # a causal tree: its nodes' treatment effects
        values, value_name = model.node_effects(tree), "treatment effect"
        if values.ndim == 2:  # several arms: coloured by the first arm's
            values, value_name = values[:, 0], "treatment effect (arm 1)"
        words = model._leaf_text(4)

        def leaf_words(node):  # "effect: .. (se ..;" then "n=..: .. treated, .. control)"
            head, _, rest = words(node).partition("; ")
            return f"{head}\n{rest.rstrip(')')}"

    elif isinstance(getattr(model, "classes_", None), list):  # several outputs' labels
        words = model._leaf_text(4)

        def leaf_words(node):  # "classes: [..]" (each output's), then the weight
            return f"{words(node)}\nweight {tree.weight[node]:.4g}"

    elif not hasattr(model, "classes_"):
        values = tree.value[:, 0]
    classes = getattr(model, "classes_", None)
    texts = node_labels(
        tree, names, None if isinstance(classes, list) else classes, categories, decimals=4
    )
    context = QuestionTextContext(_names(tree, names), categories or {}, 3)
    limit = shown_depth(tree, max_leaves)
    leaves_under = tree.leaves_under()
    positions, counter = {}, [0]

    # leaves left to right in depth-first order, a parent centred over its first and last
    # child; without recursion (a tree may be thousands of levels deep)
    drawn, stack = [], [(0, 0)]
    while stack:
        node, level = stack.pop()
        drawn.append((node, level))
        kids = [int(c) for c in tree.children(node)] if level < limit else []
        if not kids:
            positions[node] = (counter[0], -level)
            counter[0] += 1
        stack.extend((child, level + 1) for child in reversed(kids))
    for node, level in reversed(drawn):  # children before parents
        kids = [int(c) for c in tree.children(node)] if level < limit else []
        if kids:
            positions[node] = ((positions[kids[0]][0] + positions[kids[-1]][0]) / 2, -level)
    depth = limit
    if ax is None:
        _, ax = plt.subplots(figsize=tree_figure_size(tree, max_leaves))
    drawn_texts = []
    for node, (x, y) in positions.items():
        truncated = not tree.is_leaf[node] and -y >= limit
        if not tree.is_leaf[node] and not truncated:
            for child, label in zip(
                tree.children(node), edge_labels(tree, node, context), strict=True
            ):
                cx, cy = positions[int(child)]
                ax.plot([x, cx], [y, cy], color="0.45", lw=1, zorder=1)
                edge_text = ax.text(
                    (x + cx) / 2,
                    (y + cy) / 2,
                    label,
                    fontsize=6.5,
                    color="0.25",
                    ha="center",
                    va="center",
                    zorder=3,
                    bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"},
                )
                drawn_texts.append(edge_text)
        decided = int(tree.decision[node])
        share = f"{tree.value[node].max():.0%} of weight {tree.weight[node]:.4g}"
        if values is not None:
            share = f"value {values[node]:.4g}, weight {tree.weight[node]:.4g}"
        if leaf_words is not None and tree.is_leaf[node]:
            text = leaf_words(node)
        elif values is not None and (truncated or tree.is_leaf[node]):
            text = (f"{int(leaves_under[node])} leaves below\n" if truncated else "") + share
        elif truncated and leaf_words is not None:  # several outputs: the node's classes
            text = f"{int(leaves_under[node])} leaves below\n{leaf_words(node)}"
        elif truncated:
            below = int(leaves_under[node])
            text = f"{below} leaves below\nmostly {_class_text(model, decided)}\n{share}"
        elif tree.is_leaf[node]:
            text = f"{_class_text(model, decided)}\n{share}"
        else:
            text = "\n".join(textwrap.wrap(texts[node], 28))
        if tree.is_leaf[node]:
            text += f"\nleaf {node}"  # the id the survival curves' legend and apply() use
        box = ax.text(
            x,
            y,
            text,
            ha="center",
            va="center",
            fontsize=7,
            zorder=2,
            bbox={
                "boxstyle": "round",
                "fc": node_rgb(tree, node) if values is None else value_rgb(values, node),
                "ec": "0.3",
                "ls": "--" if truncated or tree.decision[node] < 0 else "-",
            },
        )
        drawn_texts.append(box)
    if values is not None:
        # the bar shows the part of the colour map the boxes use (value_rgb's)
        scale = plt.cm.ScalarMappable(
            cmap=box_value_colours(), norm=plt.Normalize(values.min(), values.max())
        )
        ax.figure.colorbar(scale, ax=ax, fraction=0.03, pad=0.01, label=value_name)
        handles = None
    else:
        handles = [
            plt.Rectangle((0, 0), 1, 1, fc=class_rgb(k), ec="0.3")
            for k in range(len(model.classes_))
        ]
    if handles is not None:
        ax.legend(
            handles,
            [str(c) for c in model.classes_],
            title="decided class",
            fontsize=7,
            title_fontsize=7,
            loc="upper right",
            frameon=False,
        )
    if limit < tree.max_depth:
        ax.set_title(
            f"depth {limit} of {tree.max_depth} shown ({tree.n_leaves} leaves in all)", fontsize=8
        )
    ax.set_xlim(-0.8, max(counter[0] - 0.2, 0.8))
    ax.set_ylim(-depth - 0.6, 0.6)
    ax.axis("off")
    shrink_until_apart(ax.figure, drawn_texts)
    return ax


#: The colour scale of a regression tree's node values (light for small values).
VALUE_COLOURS = "YlGnBu"


#: The part of :data:`VALUE_COLOURS` boxes use: light enough to read text on.
VALUE_COLOUR_SPAN = (0.1, 0.7)


def box_value_colours():
    """:data:`VALUE_COLOURS` cut to :data:`VALUE_COLOUR_SPAN`: the colours of the boxes,
    which the colour bar shows."""
    plt = _pyplot()
    from matplotlib.colors import ListedColormap

    low, high = VALUE_COLOUR_SPAN
    return ListedColormap(plt.get_cmap(VALUE_COLOURS)(np.linspace(low, high, 256)))


def value_colours(values) -> np.ndarray:
    """Every node's value on :func:`box_value_colours` (the lowest value its first
    colour), n x 4 RGBA, in one call of the colour map."""
    values = np.asarray(values, dtype=np.float64)
    span = values.max() - values.min()
    share = (values - values.min()) / span if span > 0 else np.full(values.shape, 0.5)
    low, high = VALUE_COLOUR_SPAN
    return np.asarray(_pyplot().get_cmap(VALUE_COLOURS)(low + (high - low) * share))


def value_rgb(values, node):
    """A node's value on :func:`box_value_colours` (:func:`value_colours` of one node)."""
    return tuple(value_colours(values)[node])


def plot_residuals(model, X, y, ax=None):
    """A regressor's residuals y - predict(X) against its predictions, with the zero line
    and the RMSE in the title."""
    predicted = model.predict(X)
    return draw_residuals(predicted, np.asarray(y, dtype=np.float64) - predicted, ax)


def draw_residuals(predicted, residual, ax=None, title: bool = True):
    """Residuals against predictions (:func:`plot_residuals`, and the HTML report's
    pooled out-of-sample ones), with the zero line; ``title``: the RMSE above."""
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    ax.scatter(predicted, residual, s=10, alpha=0.6, color="C0", edgecolor="none")
    ax.axhline(0.0, color="0.4", lw=1)
    ax.set_xlabel("prediction")
    ax.set_ylabel("residual (y - prediction)")
    if title:
        ax.set_title(f"residuals: RMSE {np.sqrt(np.mean(residual**2)):.4g}", fontsize=9)
    return ax


def plot_survival_curves(
    model, X, y, ax=None, times=None, max_leaves: int = 8, groups: int = 3, leaves=None
):
    """Survival curves with the numbers at risk below them, as clinical papers print them.

    A survival tree: every leaf's Kaplan-Meier curve with its 95% band shaded (survfit's
    default, Greenwood; at most ``max_leaves`` of the largest leaves; the legend names each
    leaf by its id, as :func:`plot_tree` labels it); the
    rows of X count in the leaves they reach (a row missing a tested value by its training
    shares); ``leaves``: the leaves that may be shown (default every leaf; a tree picture
    beside the curves passes those it draws).

    A forest has no leaves to show: its rows are cut into ``groups`` groups by their
    predicted risk (equal shares, highest risk last), each drawn as its rows' mean
    predicted survival (solid) and their Kaplan-Meier curve (dashed): how well the forest
    separates and calibrates.

    ``y``: the rows' follow-up ((event, time)); ``times``: where the numbers at risk are
    counted (default five times across the follow-up). The numbers sit in an axis of their
    own below the curves, and the legend beside them, so neither covers a curve."""
    from mpl_toolkits.axes_grid1 import make_axes_locatable

    plt = _pyplot()
    event, time = check_survival_y(y, np.shape(X)[0])
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 5.5))
    with model._checked_for_predict(X) as checked:  # nominal columns encoded as at fit
        X = checked
    grid = model.unique_times_
    bands = None
    if hasattr(model, "tree_"):
        shown, curves, members, bands = _leaf_curves(model, X, grid, max_leaves, leaves)
        title = "survival by leaf (Kaplan-Meier, 95% bands)"
    else:
        shown, curves, members = _risk_group_curves(model, X, event, time, grid, groups)
        title = f"survival by predicted-risk group ({len(shown)} groups)"
    times = np.linspace(0.0, time.max(), 5) if times is None else np.asarray(times, float)
    table = []
    for k, (label, curve, (rows, share)) in enumerate(zip(shown, curves, members, strict=True)):
        ax.step(np.r_[0.0, grid], np.r_[1.0, curve], where="post", color=f"C{k}", label=label)
        if bands is not None:  # the leaf's 95% band (survfit's NA where S is 0: not drawn)
            lower, upper = (np.r_[1.0, band[k]] for band in bands)
            ax.fill_between(
                np.r_[0.0, grid], lower, upper, step="post", color=f"C{k}", alpha=0.15, lw=0
            )
        if not hasattr(model, "tree_"):
            observed = _kaplan_meier(event[rows], time[rows], grid)
            ax.step(np.r_[0.0, grid], np.r_[1.0, observed], where="post", color=f"C{k}", ls="--")
        table.append([f"{share[time[rows] >= t].sum():.4g}" for t in times])
    ax.set_ylabel("survival")
    ax.set_ylim(0.0, 1.02)
    end = max(float(time.max()), float(times.max())) or 1.0
    ax.set_xlim(-0.06 * end, 1.04 * end)  # room for the numbers at time 0
    ax.set_title(title, fontsize=9)
    legend = ax.legend(
        fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, borderaxespad=0
    )
    if not hasattr(model, "tree_"):
        legend.set_title("solid: predicted\ndashed: Kaplan-Meier", prop={"size": 7})
    # the numbers at risk: an axis of their own below the curves, sharing their time axis
    below = make_axes_locatable(ax).append_axes(
        "bottom", size=0.22 * (len(shown) + 1), pad=0.45, sharex=ax
    )
    ax.tick_params(labelbottom=True)
    ax.set_xlabel("time", fontsize=8)
    below.set_ylim(len(shown) - 0.5, -0.5)
    below.set_yticks(range(len(shown)))
    below.set_yticklabels([label.split(" (")[0] for label in shown], fontsize=7)
    for k, tick in enumerate(below.get_yticklabels()):
        tick.set_color(f"C{k}")
    for k, row in enumerate(table):
        for t, value in zip(times, row, strict=True):
            below.text(t, k, value, ha="center", va="center", fontsize=7)
    below.set_title("numbers at risk", fontsize=7, loc="left")
    below.tick_params(axis="x", labelbottom=False, length=0)
    below.tick_params(axis="y", length=0)
    for spine in below.spines.values():
        spine.set_visible(False)
    return ax


def _leaf_curves(model, X, grid, max_leaves, allowed=None):
    """(labels, curves, (rows, shares) per curve, (lower, upper) bands or None for a model
    whose curves were kept without Greenwood's variances) of a tree's largest leaves on X
    (of the ``allowed`` ones, where given)."""
    rows, nodes, shares = model._mixtures(model.tree_, X)
    allowed = None if allowed is None else set(np.asarray(allowed).tolist())
    weight = Counter()
    for node, share in zip(nodes.tolist(), shares.tolist(), strict=True):
        if allowed is None or node in allowed:
            weight[node] += share
    leaves = [leaf for leaf, _ in weight.most_common(max_leaves)]
    target, state = model.composition_.target, model.tree_.component_state["target"]
    curves = target.survival_curves(state, model.tree_, np.array(leaves), grid)
    bands = None
    if "greenwood" in state and hasattr(target, "survival_bands"):
        bands = target.survival_bands(state, model.tree_, np.array(leaves), grid)
    members = [(rows[nodes == leaf], shares[nodes == leaf]) for leaf in leaves]
    labels = [
        f"leaf {leaf} (n={share.sum():.4g})"
        for leaf, (_, share) in zip(leaves, members, strict=True)
    ]
    return labels, curves, members, bands


def _risk_group_curves(model, X, event, time, grid, groups):
    """(labels, mean predicted survival, (rows, unit shares)) of X's rows cut into
    ``groups`` equal groups by predicted risk, lowest risk first."""
    if not (isinstance(groups, int) and groups >= 1):
        raise ValueError(f"groups must be an int >= 1, got {groups!r}")
    risk = model.predict(X)
    order = np.argsort(risk, kind="stable")
    parts = [part for part in np.array_split(order, min(groups, len(order))) if part.size]
    survival = model.predict_survival_function(X, return_array=True)
    labels, curves, members = [], [], []
    for k, rows in enumerate(parts):
        low, high = risk[rows].min(), risk[rows].max()
        labels.append(f"group {k + 1} (n={rows.size}, risk {low:.3g}-{high:.3g})")
        curves.append(survival[rows].mean(axis=0))
        members.append((rows, np.ones(rows.size)))
    return labels, np.asarray(curves), members


def _kaplan_meier(event, time, grid) -> np.ndarray:
    """The Kaplan-Meier survival of (event, time) rows at the ``grid`` times: the rows as
    one leaf of their own times (the survival target's :func:`leaf_jumps`), read at the
    last of those times <= each grid time."""
    own, _ = unique_times(event, time)
    rows = np.arange(time.size)
    state = leaf_jumps(event, time, own, rows, np.zeros(time.size, np.int64), np.ones(time.size), 1)
    curve = curves_on_grid(state, np.zeros(1, np.int64), own.size, "survival")[0]
    position = np.searchsorted(own, grid, side="right") - 1
    return np.where(position >= 0, curve[np.maximum(position, 0)], 1.0)


def plot_survival_tree(model, X, y, figsize=None, max_leaves: int = 8):
    """A survival tree's picture (:func:`plot_tree`: boxes coloured by the nodes' risk
    scores, leaves with their rows, events, median survival and id) beside its leaves'
    Kaplan-Meier curves and numbers at risk (:func:`plot_survival_curves` on ``X``,
    ``y``), both showing at most ``max_leaves`` leaves, their legend naming the leaf ids
    the boxes carry. The figure is as wide as the tree needs. Returns the figure."""
    plt = _pyplot()
    if figsize is None:
        tree_width, tree_height = tree_figure_size(model.tree_, max_leaves)
        figsize = (tree_width + 7.5, max(tree_height, 5.5))
    fig, (tree_ax, curve_ax) = plt.subplots(
        1, 2, figsize=figsize, gridspec_kw={"width_ratios": [figsize[0] - 7.5, 7.5]}
    )
    plot_tree(model, tree_ax, max_leaves=max_leaves)
    tree = model.tree_
    drawn = np.flatnonzero(tree.is_leaf & (tree.depth <= shown_depth(tree, max_leaves)))
    plot_survival_curves(model, X, y, curve_ax, max_leaves=max_leaves, leaves=drawn)
    fig.tight_layout()
    return fig


#: Most subtrees a pruning path draws with an error bar each (rpart's plotcp); a longer
#: path is a line in a band of one standard error.
MAX_ERROR_BARS = 40


def plot_pruning_path(model, ax=None):
    """Cross-validated error (relative to the root, as rpart's plotcp) against cp."""
    plt = _pyplot()
    path = model.pruning_path_
    if "cv_error" not in path:
        raise ValueError(
            "the pruning path has no cross-validated error (fit with pruner='cost_complexity' and "
            "no alpha)"
        )
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    root = path["risk"][-1] if path["risk"][-1] > 0 else 1.0  # the root as a leaf, as rpart
    x = np.arange(len(path["alphas"]))
    error, spread = path["cv_error"] / root, path["cv_std_error"] / root
    if x.size <= MAX_ERROR_BARS:
        ax.errorbar(x, error, yerr=spread, marker="o", capsize=3)
    else:  # hundreds of bars would merge into a solid band: a line in a shaded band
        ax.fill_between(x, error - spread, error + spread, color="C0", alpha=0.25, lw=0)
        ax.plot(x, error, color="C0", lw=1.2, label="X-val error (band: 1 SE)")
    ax.axhline(
        (path["cv_error"].min() + path["cv_std_error"][int(np.argmin(path["cv_error"]))]) / root,
        ls="--",
        color="0.5",
        label="min + 1 SE",
    )
    ax.set_xticks(x)
    labels = [f"{cp:.3g}\n{int(n)}" for cp, n in zip(path["cp"], path["n_leaves"], strict=True)]
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_xlabel("cp (top) and leaves (bottom)")
    ax.set_ylabel("X-val relative error")
    selected = int(np.flatnonzero(path["selected"])[0]) if "selected" in path else 0
    if "selected" in path:
        ax.axvline(selected, color="C3", lw=1, label="selected")
    ax.legend()
    _thin_tick_labels(ax, labels, keep=selected)
    if x.size > MAX_ERROR_BARS:  # a tick mark per subtree would be one more solid band
        kept = [i for i, label in enumerate(ax.get_xticklabels()) if label.get_text()]
        ax.set_xticks(kept, [labels[i] for i in kept], fontsize=7)
    return ax


def _thin_tick_labels(ax, labels, keep: int, gap: float = 1.15) -> None:
    """Blank all but every k-th x tick label, k the smallest step at which the widest label
    (measured by the figure's renderer) fits between its shown neighbours with ``gap``
    room; the labels shown are the ones in step with ``keep`` (the subtree in use)."""
    if len(labels) < 2:
        return
    figure = ax.figure
    renderer = figure.canvas.get_renderer()
    widest = max(label.get_window_extent(renderer).width for label in ax.get_xticklabels())
    left, right = ax.transData.transform([(0, 0), (len(labels) - 1, 0)])[:, 0]
    spacing = (right - left) / (len(labels) - 1)
    step = max(1, int(np.ceil(widest * gap / spacing))) if spacing > 0 else len(labels)
    if step > 1:
        ax.set_xticklabels(
            [label if (i - keep) % step == 0 else "" for i, label in enumerate(labels)], fontsize=7
        )


def plot_risk_coverage(curves: dict, ax=None):
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    notes = []
    for name, curve in curves.items():
        ax.step(
            curve.coverage,
            curve.risk,
            where="post",
            marker="o",
            markersize=3,
            label=f"{name} (area {curve.area:.4f})",
        )
        points = len(curve.coverage)
        if points < 3:
            notes.append(
                f"{name}: {points} distinct confidence value{'s' if points > 1 else ''} "
                "(one per distinct leaf score), so the curve has that many points"
            )
    if notes:
        ax.text(
            0.02, 0.98, "\n".join(notes), transform=ax.transAxes, fontsize=7, va="top", wrap=True
        )
    ax.set_xlim(0, 1.02)
    ax.set_xlabel("coverage (share of samples accepted)")
    ax.set_ylabel("error on accepted samples")
    ax.legend(loc="lower right")
    return ax


def plot_boundary_distance_map(model, X, y=None, threshold=None, resolution=200, ax=None):
    """Decision regions of a 2-D tree, shaded by confidence; the samples below ``threshold``
    (default: the model's reject threshold) form the safety lane, drawn hatched. ``X`` may
    be an array or a DataFrame (its column names label the axes)."""
    plt = _pyplot()
    names = [str(c) for c in X.columns] if hasattr(X, "columns") else None
    names = names or [str(n) for n in getattr(model, "feature_names_in_", [])] or ["x[0]", "x[1]"]
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"the boundary-distance map is for 2-D data; X has shape {X.shape}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 5))
    lo, hi = np.nanmin(X, axis=0), np.nanmax(X, axis=0)
    pad = 0.05 * np.where(hi > lo, hi - lo, 1.0)
    g0, g1 = np.meshgrid(
        np.linspace(lo[0] - pad[0], hi[0] + pad[0], resolution),
        np.linspace(lo[1] - pad[1], hi[1] + pad[1], resolution),
    )
    grid = np.column_stack([g0.ravel(), g1.ravel()])
    decision = model.decide(grid)
    finite = decision.confidence[np.isfinite(decision.confidence)]
    confidence = np.minimum(decision.confidence, finite.max() if finite.size else 0.0)
    ax.contourf(g0, g1, decision.class_index.reshape(g0.shape), alpha=0.25, cmap="coolwarm")
    shading = ax.contourf(
        g0, g1, confidence.reshape(g0.shape), levels=12, alpha=0.35, cmap="Greys_r"
    )
    plt.colorbar(shading, ax=ax, label="confidence")
    threshold = threshold if threshold is not None else getattr(model, "reject_threshold_", None)
    if threshold is not None:
        lane = confidence.reshape(g0.shape) < threshold
        if lane.any():
            region = lane.astype(float)
            ax.contourf(g0, g1, region, levels=[0.5, 1.5], colors=["gold"], alpha=0.5, zorder=3)
            ax.contourf(g0, g1, region, levels=[0.5, 1.5], colors="none", hatches=["///"], zorder=4)
            ax.contour(g0, g1, region, levels=[0.5], colors="darkorange", linewidths=1.5, zorder=4)
        empty = "" if lane.any() else ": empty here"
        label = f"safety lane (confidence < {threshold:.3g}{empty})"
        ax.plot([], [], color="gold", lw=8, alpha=0.7, label=label)
    if y is not None:
        y = np.asarray(y)
        for label in np.unique(y):
            pts = X[y == label]
            ax.scatter(pts[:, 0], pts[:, 1], s=6, label=str(label), zorder=5)
    if y is not None or threshold is not None:
        ax.legend(fontsize=7, loc="upper right")
    ax.set_xlabel(names[0])
    ax.set_ylabel(names[1])
    ax.set_title("decision regions shaded by confidence", fontsize=9)
    return ax


def plot_soft_gain(x, y, sigma, criterion="entropy", ax=None, window=3.0, resolution=4.0):
    """Impurity drop along one feature: exhaustive (at midpoints) and soft search (grid)."""
    plt = _pyplot()

    crit = get_registry().create("criterion", criterion, {})
    impurity, params = crit.compiled_impurity(), crit.impurity_params(len(np.unique(y)))
    classes, codes = np.unique(y, return_inverse=True)
    order = np.argsort(x, kind="mergesort")
    xs, ev = np.asarray(x, float)[order], np.eye(classes.size)[codes[order]]
    total = ev.sum(axis=0)
    parent = impurity(np.ascontiguousarray(total), float(len(xs)), params)
    mids, drops = [], []
    for j in range(len(xs) - 1):
        if xs[j + 1] > xs[j]:
            left = ev[: j + 1].sum(axis=0)
            right = total - left
            nl, nr = j + 1, len(xs) - j - 1
            mids.append((xs[j] + xs[j + 1]) / 2)
            drops.append(
                parent
                - (
                    nl * impurity(np.ascontiguousarray(left), nl, params)
                    + nr * impurity(np.ascontiguousarray(right), nr, params)
                )
                / len(xs)
            )
    from scipy.special import ndtr

    grid = np.linspace(
        xs[0] - window * sigma,
        xs[-1] + window * sigma,
        int((xs[-1] - xs[0]) / sigma * resolution) + 50,
    )
    soft = []
    for theta in grid:
        share = ndtr((theta - xs) / sigma)
        left = share @ ev
        right = total - left
        wl, wr = share.sum(), len(xs) - share.sum()
        soft.append(
            parent
            - (
                wl * impurity(np.ascontiguousarray(left), wl, params)
                + wr * impurity(np.ascontiguousarray(right), wr, params)
            )
            / len(xs)
        )
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    ax.step(mids, drops, where="mid", label="exhaustive (midpoints)")
    ax.plot(grid, soft, label=f"soft search (sigma {sigma:g})")
    ax.set_xlabel("threshold")
    ax.set_ylabel("impurity drop")
    ax.legend()
    return ax


def _saver(directory, written):
    """``save(name, draw, figsize)``: a figure drawn by ``draw(ax)``, laid out, written to
    ``directory/name`` and listed in ``written``."""
    plt = _pyplot()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)

    def save(name, draw, figsize=(8, 5)):
        fig = plt.figure(figsize=figsize)
        draw(fig.add_subplot(111))
        fig.tight_layout()
        fig.savefig(out / name, dpi=90, bbox_inches="tight")
        plt.close(fig)
        written.append(out / name)

    return save


def write_evaluation_plots(model, X, y, directory, curves=None) -> list:
    """What ``treekit evaluate --plots DIR`` writes. ``curves``: the risk-coverage curves
    to draw, by label (the CLI's out-of-sample one); default the model's on X, labelled
    resubstitution."""
    written = []
    save = _saver(directory, written)
    if hasattr(model, "tree_"):
        save("tree.png", lambda ax: plot_tree(model, ax), figsize=tree_figure_size(model.tree_))
    if curves is None:
        curves = {
            f"{model.composition_.confidence.name} (resubstitution)": model.risk_coverage(X, y)
        }
    save("risk_coverage.png", lambda ax: plot_risk_coverage(curves, ax))
    if hasattr(model, "tree_") and "cv_error" in model.tree_.component_state.get("pruner", {}):
        save("pruning_path.png", lambda ax: plot_pruning_path(model, ax))
    if X.shape[1] == 2:
        save(
            "boundary_map.png",
            lambda ax: plot_boundary_distance_map(model, np.asarray(X, float), y, ax=ax),
        )
    return written


def write_survival_plots(model, X, y, directory, what: str = "") -> list:
    """What ``treekit evaluate --plots DIR`` writes for a survival model: the survival
    curves (a tree's leaves, a forest's risk groups) with the numbers at risk, on the
    rows evaluated (``what`` says which; the title carries it), and a tree's picture."""
    written = []
    save = _saver(directory, written)

    def curves(ax):
        plot_survival_curves(model, X, y, ax)
        if what:
            ax.set_title(f"{ax.get_title()}\n{what}", fontsize=8)

    save("survival_curves.png", curves, figsize=(8, 5.5))
    if hasattr(model, "tree_"):
        save("tree.png", lambda ax: plot_tree(model, ax), figsize=tree_figure_size(model.tree_))
        if "cv_error" in model.tree_.component_state.get("pruner", {}):
            save("pruning_path.png", lambda ax: plot_pruning_path(model, ax))
    return written

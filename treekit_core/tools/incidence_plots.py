"""Pictures of competing risks (issue 62): the cumulative incidence of every cause,
stacked, with the numbers at risk below, as clinical papers draw them: one panel per leaf
of a tree, or per predicted-risk group of a forest."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from treekit_core.engine.validation import check_event_codes, split_entry
from treekit_core.tools.plots import _pyplot, plot_tree, tree_figure_size


def plot_cumulative_incidence(model, X, y, times=None, max_leaves: int = 4, groups: int = 3):
    """Each cause's cumulative incidence stacked (cause 1 at the bottom; the white space
    above the last band is the all-cause survival), one panel per leaf of a competing-risk
    tree (at most ``max_leaves`` of those the rows of X reach most, each its leaf's
    Aalen-Johansen curves) or per predicted-risk group of a forest (``groups`` equal groups
    of the rows by their summed :meth:`predict`, each the rows' mean predicted
    incidences). Below each panel, the numbers at risk among the rows of X (``y``: their
    time and event code) at ``times`` (default five across the follow-up). Returns the
    figure; ``figure.panels`` lists (label, rows, shares, incidences) per panel."""
    from mpl_toolkits.axes_grid1 import make_axes_locatable

    plt = _pyplot()
    model._cause_target(1)  # refuses a model whose target keeps one kind of event
    target = model.composition_.target
    y, _ = split_entry(y)
    time, _ = check_event_codes(y, np.shape(X)[0])
    with model._checked_for_predict(X) as checked:
        X = checked
    grid = model.unique_times_
    state = model._trees()[0].component_state["target"]
    n_causes = target.n_causes(state)
    if hasattr(model, "tree_"):
        panels = _leaf_panels(model, target, state, X, grid, n_causes, max_leaves)
    else:
        panels = _risk_group_panels(model, X, n_causes, groups)
    times = np.linspace(0.0, time.max(), 5) if times is None else np.asarray(times, float)
    figure, axes = plt.subplots(
        1, len(panels), figsize=(3.6 * len(panels) + 1.4, 4.6), sharey=True, squeeze=False
    )
    x = np.r_[0.0, grid]
    for ax, (label, rows, shares, incidences) in zip(axes[0], panels, strict=True):
        lower = np.zeros(x.size)
        for k, curve in enumerate(incidences):
            upper = lower + np.r_[0.0, curve]
            ax.fill_between(
                x, lower, upper, step="post", color=f"C{k}", alpha=0.75, label=f"cause {k + 1}"
            )
            lower = upper
        ax.set_ylim(0.0, 1.0)
        ax.set_title(label, fontsize=8)
        ax.set_xlabel("time", fontsize=8)
        below = make_axes_locatable(ax).append_axes("bottom", size=0.3, pad=0.45, sharex=ax)
        below.set_ylim(-0.5, 0.5)
        below.set_yticks([])
        for t in times:
            count = shares[time[rows] >= t].sum()
            below.text(t, 0, f"{count:.4g}", ha="center", va="center", fontsize=7)
        below.set_title("numbers at risk", fontsize=7, loc="left")
        below.tick_params(axis="x", labelbottom=False, length=0)
        for spine in below.spines.values():
            spine.set_visible(False)
    axes[0][0].set_ylabel("cumulative incidence (stacked)")
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    figure.panels = panels
    figure.tight_layout()
    return figure


def _leaf_panels(model, target, state, X, grid, n_causes, max_leaves):
    """(label, rows, shares, incidences) of the tree's leaves the rows of X reach most."""
    tree = model.tree_
    rows, nodes, shares = model._mixtures(tree, X)
    weight = Counter()
    for node, share in zip(nodes.tolist(), shares.tolist(), strict=True):
        weight[node] += share
    panels = []
    for leaf, total in weight.most_common(max_leaves):
        incidences = [
            target.cause_curves(state, tree, np.array([leaf]), grid, k, "incidence")[0]
            for k in range(1, n_causes + 1)
        ]
        mine = nodes == leaf
        panels.append((f"leaf {leaf} (n={total:.4g})", rows[mine], shares[mine], incidences))
    return panels


def _risk_group_panels(model, X, n_causes, groups):
    """(label, rows, unit shares, mean incidences) of X's rows cut into ``groups`` equal
    groups by their summed predicted risk, lowest first."""
    if not (isinstance(groups, int) and groups >= 1):
        raise ValueError(f"groups must be an int >= 1, got {groups!r}")
    risk = model.predict(X).sum(axis=1)
    order = np.argsort(risk, kind="stable")
    curves = [
        model.predict_cumulative_incidence(X, cause=k, return_array=True)
        for k in range(1, n_causes + 1)
    ]
    panels = []
    for k, rows in enumerate(np.array_split(order, min(groups, len(order)))):
        if rows.size:
            label = f"risk group {k + 1} (n={rows.size})"
            means = [curve[rows].mean(axis=0) for curve in curves]
            panels.append((label, rows, np.ones(rows.size), means))
    return panels


def write_incidence_plots(model, X, y, directory, what: str = "") -> list:
    """What ``treekit evaluate --plots DIR`` writes for a competing-risk model: the
    stacked incidences (:func:`plot_cumulative_incidence`) of the rows evaluated (``what``
    says which) as ``cumulative_incidence.png``, and a tree's picture as ``tree.png``."""
    plt = _pyplot()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    figure = plot_cumulative_incidence(model, X, y)
    if what:
        figure.suptitle(what, fontsize=8)
        figure.tight_layout()
    figure.savefig(out / "cumulative_incidence.png", dpi=90, bbox_inches="tight")
    plt.close(figure)
    written = [out / "cumulative_incidence.png"]
    if hasattr(model, "tree_"):
        tree_figure = plt.figure(figsize=tree_figure_size(model.tree_))
        plot_tree(model, tree_figure.add_subplot(111))
        tree_figure.savefig(out / "tree.png", dpi=90, bbox_inches="tight")
        plt.close(tree_figure)
        written.append(out / "tree.png")
    return written

"""Pictures (matplotlib is an optional extra: ``pip install treekit-core[plots]``).

* :func:`plot_tree`: the tree with its questions and leaf distributions;
* :func:`plot_pruning_path`: rpart-style cross-validated error against cp, with 1-SE bars;
* :func:`plot_risk_coverage`: risk-coverage curves comparing confidences;
* :func:`plot_boundary_distance_map`: for 2-D data, decision regions shaded by the
  confidence, with the "safety lane" of rejected points (Tóth & Pataki, figs. 9 and 11);
* :func:`plot_soft_gain`: the soft-search gain curve against the exhaustive one along one
  feature (Nunes et al., fig. 4).

:func:`treekit_core.export_dot` writes graphviz dot without matplotlib.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("pictures need matplotlib: pip install 'treekit-core[plots]'") from exc
    return plt


def plot_tree(model, ax=None):
    """Boxes for nodes (question or leaf decision and distribution), lines for branches."""
    plt = _pyplot()
    from treekit_core.tools.export import node_labels

    tree = model.tree_
    texts = node_labels(
        tree,
        list(getattr(model, "feature_names_in_", [])) or None,
        model.classes_,
        getattr(model, "categories_", {}),
        decimals=3,
    )
    depth = tree.max_depth
    leaves = tree.n_leaves
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6, 2.2 * leaves), max(3, 1.6 * (depth + 1))))
    positions = {}
    counter = [0]

    def place(node, level):
        kids = [int(c) for c in tree.children(node)]
        if not kids:
            positions[node] = (counter[0], -level)
            counter[0] += 1
            return
        for child in kids:
            place(child, level + 1)
        positions[node] = ((positions[kids[0]][0] + positions[kids[-1]][0]) / 2, -level)

    place(0, 0)
    for node, (x, y) in positions.items():
        for child in tree.children(node):
            cx, cy = positions[int(child)]
            ax.plot([x, cx], [y, cy], color="0.5", lw=1, zorder=1)
        leaf = bool(tree.is_leaf[node])
        ax.text(
            x,
            y,
            texts[node].replace("  [", "\n[").replace("; weight", "\nweight"),
            ha="center",
            va="center",
            fontsize=7,
            zorder=2,
            bbox={"boxstyle": "round", "fc": "#e8f4e8" if leaf else "#e8eef8", "ec": "0.4"},
        )
    ax.set_xlim(-0.8, max(counter[0] - 0.2, 0.8))
    ax.set_ylim(-depth - 0.6, 0.6)
    ax.axis("off")
    return ax


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
    ax.errorbar(x, path["cv_error"] / root, yerr=path["cv_std_error"] / root, marker="o", capsize=3)
    ax.axhline(
        (path["cv_error"].min() + path["cv_std_error"][int(np.argmin(path["cv_error"]))]) / root,
        ls="--",
        color="0.5",
        label="min + 1 SE",
    )
    ax.set_xticks(x)
    ax.set_xticklabels(
        [f"{cp:.3g}\n{int(n)}" for cp, n in zip(path["cp"], path["n_leaves"], strict=True)],
        fontsize=7,
    )
    ax.set_xlabel("cp (top) and leaves (bottom)")
    ax.set_ylabel("X-val relative error")
    if "selected" in path:
        ax.axvline(int(np.flatnonzero(path["selected"])[0]), color="C3", lw=1, label="selected")
    ax.legend()
    return ax


def plot_risk_coverage(curves: dict, ax=None):
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    for name, curve in curves.items():
        ax.plot(curve.coverage, curve.risk, label=f"{name} (area {curve.area:.4f})")
    ax.set_xlabel("coverage")
    ax.set_ylabel("error on accepted samples")
    ax.legend()
    return ax


def plot_boundary_distance_map(model, X, y=None, threshold=None, resolution=200, ax=None):
    """Decision regions of a 2-D tree, shaded by confidence; points below ``threshold``
    (default: the model's reject threshold) form the safety lane."""
    plt = _pyplot()
    if X.shape[1] != 2:
        raise ValueError(f"the boundary-distance map is for 2-D data; X has {X.shape[1]} features")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 5))
    lo, hi = X.min(axis=0), X.max(axis=0)
    pad = 0.05 * (hi - lo)
    g0, g1 = np.meshgrid(
        np.linspace(lo[0] - pad[0], hi[0] + pad[0], resolution),
        np.linspace(lo[1] - pad[1], hi[1] + pad[1], resolution),
    )
    grid = np.column_stack([g0.ravel(), g1.ravel()])
    decision = model.decide(grid)
    confidence = np.minimum(
        decision.confidence, np.nanmax(decision.confidence[np.isfinite(decision.confidence)])
    )
    ax.contourf(g0, g1, decision.class_index.reshape(g0.shape), alpha=0.25, cmap="coolwarm")
    shading = ax.contourf(
        g0, g1, confidence.reshape(g0.shape), levels=12, alpha=0.35, cmap="Greys_r"
    )
    plt.colorbar(shading, ax=ax, label="confidence")
    threshold = threshold if threshold is not None else getattr(model, "reject_threshold_", None)
    if threshold is not None:
        ax.contour(
            g0, g1, confidence.reshape(g0.shape), levels=[threshold], colors="k", linewidths=1
        )
    if y is not None:
        for label in np.unique(y):
            pts = X[np.asarray(y) == label]
            ax.scatter(pts[:, 0], pts[:, 1], s=6, label=str(label))
        ax.legend(fontsize=7)
    ax.set_title("boundary distance (safety lane: below the threshold)")
    return ax


def plot_soft_gain(x, y, sigma, criterion="entropy", ax=None, window=3.0, resolution=4.0):
    """Impurity drop along one feature: exhaustive (at midpoints) and soft search (grid)."""
    plt = _pyplot()
    from treekit_core.registry import get_registry

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


def write_evaluation_plots(model, X, y, directory) -> list:
    """What ``treekit evaluate --plots DIR`` writes."""
    plt = _pyplot()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []

    def save(name, draw, figsize=(8, 5)):
        fig = plt.figure(figsize=figsize)
        draw(fig.add_subplot(111))
        fig.tight_layout()
        fig.savefig(out / name, dpi=90)
        plt.close(fig)
        written.append(out / name)

    leaves, depth = model.tree_.n_leaves, model.tree_.max_depth
    save(
        "tree.png",
        lambda ax: plot_tree(model, ax),
        figsize=(max(8, 3.2 * leaves), max(4, 1.5 * (depth + 1))),
    )
    save(
        "risk_coverage.png",
        lambda ax: plot_risk_coverage(
            {model.composition_.confidence.name: model.risk_coverage(X, y)}, ax
        ),
    )
    if "cv_error" in model.tree_.component_state.get("pruner", {}):
        save("pruning_path.png", lambda ax: plot_pruning_path(model, ax))
    if X.shape[1] == 2:
        save(
            "boundary_map.png",
            lambda ax: plot_boundary_distance_map(model, np.asarray(X, float), y, ax=ax),
        )
    return written

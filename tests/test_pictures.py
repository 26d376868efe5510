"""The pictures say what they should: class colours by purity, abstentions marked, edge
labels, large trees drawn to a readable size, a risk-coverage curve that explains itself,
the boundary map with axis labels, a visible safety lane and DataFrame input. Every picture
is rendered to PNG here (``scripts/make_pictures.py`` keeps one of each in docs/pictures)."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from treekit_core import TreeClassifier  # noqa: E402
from treekit_core.builtins.labelers import Majority  # noqa: E402
from treekit_core.datasets import load_dataset  # noqa: E402
from treekit_core.tools import plots  # noqa: E402


def render(draw, path, figsize=(8, 5)):
    fig, ax = plt.subplots(figsize=figsize)
    draw(ax)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    assert path.stat().st_size > 5000
    return ax


def boxes(ax):
    return [t for t in ax.texts if t.get_bbox_patch() is not None and "\n" in t.get_text()]


class Unsure(Majority):
    """Abstains where the majority holds less than 90% of a node."""

    can_abstain = True

    def decide(self, distribution):
        distribution = np.asarray(distribution)
        return np.where(distribution.max(axis=1) >= 0.9, distribution.argmax(axis=1), -1)


def test_boxes_are_coloured_by_class_and_purity_and_abstentions_are_marked(tmp_path):
    data = load_dataset("haberman")
    model = TreeClassifier(max_depth=3, labeler=Unsure()).fit(data.X, data.y)
    ax = render(lambda ax: plots.plot_tree(model, ax), tmp_path / "tree.png")
    tree = model.tree_
    leaves = [int(n) for n in np.flatnonzero(tree.is_leaf)]
    by_text = {t.get_text(): t.get_bbox_patch() for t in ax.texts if t.get_bbox_patch()}
    abstaining = [n for n in leaves if tree.decision[n] < 0]
    decided = [n for n in leaves if tree.decision[n] >= 0]
    assert abstaining and decided
    for node in abstaining:
        patch = next(
            p
            for text, p in by_text.items()
            if text.startswith("ABSTAIN\n") and f"of weight {tree.weight[node]:.4g}" in text
        )
        assert patch.get_linestyle() == "--"
        assert np.allclose(patch.get_facecolor()[:3], 0.85)  # grey
    # a purer leaf of a class is drawn in a deeper colour of that class's hue
    shades = {}
    for node in decided:
        label = str(model.classes_[tree.decision[node]])
        patch = next(
            p
            for text, p in by_text.items()
            if text.startswith(label + "\n") and f"of weight {tree.weight[node]:.4g}" in text
        )
        shades.setdefault(label, []).append(
            (tree.value[node].max(), sum(patch.get_facecolor()[:3]))
        )
    for pairs in shades.values():
        pairs.sort()
        lightness = [light for _, light in pairs]
        assert lightness == sorted(lightness, reverse=True)  # purer = darker
    labels = [t.get_text() for t in ax.texts]
    n_internal = int((~tree.is_leaf).sum())
    assert labels.count("yes") == labels.count("no") == n_internal


def test_multiway_edges_carry_the_category():
    lenses = load_dataset("lenses")
    model = TreeClassifier(splitter="c45", categorical_features=lenses.categorical).fit(
        lenses.X, lenses.y
    )
    fig, ax = plt.subplots()
    plots.plot_tree(model, ax)
    plt.close(fig)
    labels = [t.get_text() for t in ax.texts]
    node = int(np.flatnonzero(model.tree_.n_children == 3)[0])
    for code in model.categories_[int(model.tree_.feature[node])]:
        assert str(code) in labels


def test_a_large_tree_is_drawn_to_a_readable_size(tmp_path):
    data = load_dataset("pima")
    model = TreeClassifier().fit(data.X, data.y)  # unpruned: over a hundred leaves
    assert model.get_n_leaves() > 100
    written = plots.write_evaluation_plots(model, data.X, data.y, tmp_path)
    tree_png = next(p for p in written if p.name == "tree.png")
    width, height = plt.imread(tree_png).shape[1::-1]
    assert width <= 40 * 90 and height <= 30 * 90
    depth = plots.shown_depth(model.tree_)
    fig, ax = plt.subplots()
    plots.plot_tree(model, ax)
    plt.close(fig)
    assert (
        ax.get_title()
        == f"depth {depth} of {model.get_depth()} shown ({model.get_n_leaves()} leaves in all)"
    )
    summaries = [t.get_text() for t in ax.texts if "leaves below" in t.get_text()]
    bottom = [t for t in boxes(ax) if "of weight" in t.get_text()]
    assert summaries and len(bottom) <= plots.MAX_SHOWN_LEAVES + depth
    total = sum(int(s.split()[0]) for s in summaries)
    shown_leaves = sum(1 for t in bottom if "leaves below" not in t.get_text())
    assert total + shown_leaves == model.get_n_leaves()


def test_risk_coverage_says_why_it_has_few_points(tmp_path):
    data = load_dataset("haberman")
    stump = TreeClassifier(max_depth=1).fit(data.X, data.y)
    curve = stump.risk_coverage(data.X, data.y)
    ax = render(
        lambda ax: plots.plot_risk_coverage({"probability": curve}, ax), tmp_path / "risk.png"
    )
    assert len(curve.coverage) == 2
    assert any("2 distinct confidence values" in t.get_text() for t in ax.texts)
    deeper = TreeClassifier(max_depth=6).fit(data.X, data.y)
    ax = render(
        lambda ax: plots.plot_risk_coverage(
            {"probability": deeper.risk_coverage(data.X, data.y)}, ax
        ),
        tmp_path / "risk2.png",
    )
    assert not any("distinct" in t.get_text() for t in ax.texts)
    assert len(ax.lines[0].get_xdata()) > 5


def test_boundary_map_takes_a_dataframe_labels_its_axes_and_shows_the_lane(tmp_path):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(0, 10, size=(300, 2)), columns=["width", "height"])
    y = pd.Series((X["height"] > 5 + 2 * np.sin(X["width"] / 1.5)).astype(int))
    model = TreeClassifier(max_depth=4).fit(X, y)
    ax = render(
        lambda ax: plots.plot_boundary_distance_map(model, X, y, threshold=0.99, ax=ax),
        tmp_path / "map.png",
    )
    assert ax.get_xlabel() == "width" and ax.get_ylabel() == "height"
    hatched = [c for c in ax.collections if any(getattr(c, "hatches", None) or [])]
    assert hatched  # the lane is drawn, hatched over a gold fill
    assert any("safety lane (confidence < 0.99)" in t.get_text() for t in ax.get_legend().texts)

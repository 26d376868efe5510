"""Issue 55: no two words of a bundled picture overlap, and none leaves the figure
(matplotlib's renderer extents, :func:`treekit_core.tools.picture_layout.overlapping_texts`):
the survival curves with their numbers at risk and legend, a survival tree beside them, a
forest's risk groups, classification and regression trees, a pruning path of hundreds of
subtrees, the risk-coverage curve."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from treekit_core import (  # noqa: E402
    ForestSurvival,
    SurvivalTree,
    TreeClassifier,
    TreeRegressor,
)
from treekit_core.datasets import load_dataset  # noqa: E402
from treekit_core.tools import plots  # noqa: E402
from treekit_core.tools.picture_layout import overlapping_texts, shown_texts  # noqa: E402


def assert_readable(fig):
    problems = overlapping_texts(fig)
    described = [
        (a.get_text()[:40], "outside the figure" if b is None else b.get_text()[:40])
        for a, b in problems
    ]
    plt.close(fig)
    assert not described, described


def drawn(draw, figsize=(8, 5.5)):
    fig, ax = plt.subplots(figsize=figsize)
    draw(ax)
    fig.tight_layout()
    return fig


def test_the_checker_finds_overlapping_and_clipped_texts():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.text(0.5, 0.5, "one text", transform=ax.transAxes)
    ax.text(0.52, 0.5, "another text", transform=ax.transAxes)
    ax.text(1.4, 0.5, "far right", transform=ax.transAxes)
    found = {(a.get_text(), None if b is None else b.get_text()) for a, b in overlapping_texts(fig)}
    plt.close(fig)
    assert ("one text", "another text") in found
    assert ("far right", None) in found


@pytest.fixture(scope="module")
def lung():
    return load_dataset("lung")


def test_a_survival_tree_beside_its_curves(lung):
    model = SurvivalTree(min_samples_leaf=10).fit(lung.X, lung.y)
    fig = plots.plot_survival_tree(model, lung.X, lung.y)
    texts = [t.get_text() for t in shown_texts(fig)]
    legend = [t for t in texts if t.startswith("leaf ") and "(n=" in t]
    assert legend, texts
    for entry in legend:  # each curve's leaf id is written in a box of the tree
        leaf = entry.split(" (")[0]
        assert any(t.endswith("\n" + leaf) for t in texts), leaf
    assert_readable(fig)


def test_survival_curves_keep_the_numbers_at_risk_below_the_time_axis(lung):
    model = SurvivalTree(min_samples_leaf=10).fit(lung.X, lung.y)
    fig = drawn(lambda ax: plots.plot_survival_curves(model, lung.X, lung.y, ax))
    curves, numbers = fig.axes[0], fig.axes[1]
    renderer = fig.canvas.get_renderer()
    # the curves take most of the height; the numbers sit wholly below the time axis label
    assert curves.get_position().height > 0.5
    assert (
        numbers.get_window_extent(renderer).y1 < curves.xaxis.label.get_window_extent(renderer).y0
    )
    assert_readable(fig)


def test_a_forests_risk_groups(lung):
    forest = ForestSurvival(n_estimators=10, min_samples_leaf=10, random_state=0)
    forest.fit(lung.X, lung.y)
    fig = drawn(lambda ax: plots.plot_survival_curves(forest, lung.X, lung.y, ax))
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert [label.split(" (")[0] for label in labels] == ["group 1", "group 2", "group 3"]
    assert_readable(fig)


@pytest.mark.parametrize("name", ["haberman", "vote", "car_test_frame"])
def test_classification_trees(name):
    data = load_dataset(name)
    model = TreeClassifier(max_depth=4, categorical_features=data.categorical).fit(data.X, data.y)
    assert_readable(
        drawn(lambda ax: plots.plot_tree(model, ax), plots.tree_figure_size(model.tree_))
    )


def test_a_regression_tree_and_its_colour_bar():
    data = load_dataset("quakes")
    model = TreeRegressor(max_depth=4).fit(data.X, data.y)
    fig = drawn(lambda ax: plots.plot_tree(model, ax), plots.tree_figure_size(model.tree_))
    bar = fig.axes[1]
    # the bar's colours are the boxes' (the lightest box is the bar's lowest colour)
    lowest = bar._colorbar.cmap(0.0)
    values = model.tree_.value[:, 0]
    np.testing.assert_allclose(plots.value_rgb(values, int(np.argmin(values))), lowest, atol=1e-2)
    assert_readable(fig)


def test_a_pruning_path_of_hundreds_of_subtrees_is_a_line_with_a_band():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4))
    y = X[:, 0] + rng.normal(size=3000)
    model = TreeRegressor(pruner="cost_complexity", min_samples_leaf=2).fit(X, y)
    path = model.pruning_path_
    assert len(path["alphas"]) > 100
    fig = drawn(lambda ax: plots.plot_pruning_path(model, ax))
    ax = fig.axes[0]
    assert not ax.containers  # no error bar per subtree: a band instead
    assert ax.collections  # the band (fill_between)
    assert len(ax.get_xticks()) < 40  # ticks where there are labels, not one per subtree
    assert_readable(fig)


def test_the_risk_coverage_curve():
    data = load_dataset("pima")
    model = TreeClassifier(max_depth=4).fit(data.X, data.y)
    curve = model.risk_coverage(data.X, data.y)
    assert_readable(drawn(lambda ax: plots.plot_risk_coverage({"probability": curve}, ax)))

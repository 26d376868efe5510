"""Command line round trip, one-line errors, pictures and the dot export."""

import csv

import numpy as np
import pytest

from treekit_core import TreeClassifier
from treekit_core.datasets import dataset_path, load_dataset
from treekit_core.tools.cli import main
from treekit_core.tools.progress import Progress


def test_fit_predict_evaluate_round_trip_reproduces_the_python_api(tmp_path, capsys):
    data_file = str(dataset_path("pima"))
    model_file = str(tmp_path / "model.json")
    assert (
        main(
            [
                "fit",
                data_file,
                "--target",
                "class",
                "--criterion",
                "entropy",
                "--pruner",
                "cost_complexity",
                "--set",
                "pruner.seed=3",
                "--set",
                "min_samples_leaf=5",
                "--out",
                model_file,
            ]
        )
        == 0
    )
    out_file = str(tmp_path / "predictions.csv")
    assert main(["predict", model_file, data_file, "--out", out_file]) == 0
    with open(out_file) as handle:
        rows = list(csv.DictReader(handle))
    data = load_dataset("pima")
    python = TreeClassifier(
        criterion="entropy", pruner="cost_complexity", pruner_params={"seed": 3}, min_samples_leaf=5
    ).fit(data.X, data.y)
    assert [r["prediction"] for r in rows] == list(python.predict(data.X))
    np.testing.assert_allclose(
        [float(r["p_tested_positive"]) for r in rows], python.predict_proba(data.X)[:, 1], rtol=1e-5
    )
    capsys.readouterr()
    assert (
        main(
            [
                "evaluate",
                model_file,
                data_file,
                "--target",
                "class",
                "--plots",
                str(tmp_path / "plots"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "sensitivity" in out and "risk-coverage" in out and "area under" in out
    for name in ("tree.png", "risk_coverage.png", "pruning_path.png"):
        assert (tmp_path / "plots" / name).stat().st_size > 5000


def test_nominal_columns_are_detected(tmp_path, capsys):
    model_file = str(tmp_path / "lenses.json")
    assert main(["fit", str(dataset_path("lenses")), "--target", "class", "--out", model_file]) == 0
    model = TreeClassifier.from_json(model_file)
    assert len(model.categories_) == 4


@pytest.mark.parametrize(
    "argv,message",
    [
        (["fit", "nope.csv", "--target", "class", "--out", "m.json"], "No such file"),
        (
            ["fit", "DATA", "--target", "klass", "--out", "m.json"],
            "--target 'klass' is not a column",
        ),
        (
            ["fit", "DATA", "--target", "class", "--criterion", "ginni", "--out", "m.json"],
            "did you mean 'gini'",
        ),
        (
            ["fit", "DATA", "--target", "class", "--set", "bogus.x=1", "--out", "m.json"],
            "unknown component kind 'bogus'",
        ),
        (
            ["fit", "DATA", "--target", "class", "--set", "criterion.w=0.2", "--out", "m.json"],
            "has no parameter 'w'",
        ),
    ],
)
def test_bad_arguments_exit_non_zero_with_one_line(argv, message, capsys, tmp_path):
    argv = [str(dataset_path("haberman")) if a == "DATA" else a for a in argv]
    argv = [str(tmp_path / a) if a == "m.json" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_progress_is_quiet_when_not_a_terminal():
    import io

    stream = io.StringIO()
    progress = Progress(stream)
    progress.treekit_fit_finished(composition=None, tree=None)
    progress.close()
    assert stream.getvalue() == "" and progress.count == 1


def test_every_picture_renders(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from treekit_core.tools import plots

    data = load_dataset("wisconsin", dropna=True)
    model = TreeClassifier(pruner="cost_complexity", pruner_params={"cv": 3}).fit(data.X, data.y)
    rng = np.random.default_rng(0)
    X2 = rng.uniform(0, 10, size=(300, 2))
    y2 = (X2[:, 1] > 5 + 2 * np.sin(X2[:, 0] / 1.5)).astype(int)
    model2 = TreeClassifier(max_depth=4, reject={"coverage": 0.8}, abstain_value=-1).fit(X2, y2)
    drawings = {
        "tree": lambda ax: plots.plot_tree(model, ax),
        "path": lambda ax: plots.plot_pruning_path(model, ax),
        "risk": lambda ax: plots.plot_risk_coverage(
            {"probability": model.risk_coverage(data.X, data.y)}, ax
        ),
        "map": lambda ax: plots.plot_boundary_distance_map(model2, X2, y2, ax=ax),
        "gain": lambda ax: plots.plot_soft_gain(X2[:, 1], y2, sigma=0.5, ax=ax),
    }
    for name, draw in drawings.items():
        fig, ax = plt.subplots()
        draw(ax)
        path = tmp_path / f"{name}.png"
        fig.savefig(path)
        plt.close(fig)
        assert path.stat().st_size > 5000, name


def test_dot_export_parses():
    import pydot

    from treekit_core import export_dot

    data = load_dataset("haberman")
    model = TreeClassifier(max_depth=3).fit(data.X, data.y)
    graphs = pydot.graph_from_dot_data(export_dot(model.tree_, data.feature_names, model.classes_))
    graph = graphs[0]
    assert len(graph.get_nodes()) - 1 >= model.tree_.n_nodes  # pydot also lists the "node" defaults
    assert len(graph.get_edges()) == model.tree_.n_nodes - 1


def test_the_pruning_path_labels_do_not_overlap():
    """Issue 37: a long pruning path (pima's, 18 subtrees, in a small figure) shows every
    k-th cp / leaves label, k chosen so that the labels shown do not overlap, and the
    subtree in use is labelled."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from treekit_core.tools import plots

    data = load_dataset("pima")
    model = TreeClassifier(pruner="cost_complexity", pruner_params={"cv": 3}).fit(data.X, data.y)
    n_levels = len(model.pruning_path_["alphas"])
    assert n_levels > 12
    fig, ax = plt.subplots(figsize=(4, 3))
    plots.plot_pruning_path(model, ax)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    shown = [t for t in ax.get_xticklabels() if t.get_text()]
    assert 2 <= len(shown) < n_levels
    boxes = sorted((t.get_window_extent(renderer) for t in shown), key=lambda b: b.x0)
    assert all(a.x1 < b.x0 for a, b in zip(boxes, boxes[1:], strict=False))
    selected = int(np.flatnonzero(model.pruning_path_["selected"])[0])
    assert ax.get_xticklabels()[selected].get_text() != ""
    plt.close(fig)


def test_a_regression_tree_and_its_residuals_are_drawn(tmp_path):
    """Issue 39: a regressor's tree shows node values on a colour scale (a colour bar, no
    class legend), its leaves their value and weight; the residual plot draws every row."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from treekit_core import TreeRegressor
    from treekit_core.tools import plots

    data = load_dataset("airquality")
    model = TreeRegressor(min_samples_leaf=10, max_depth=3).fit(data.X, data.y)
    fig, ax = plt.subplots(figsize=(9, 5))
    plots.plot_tree(model, ax)
    texts = [t.get_text() for t in ax.texts]
    leaf = int(np.flatnonzero(model.tree_.is_leaf)[0])
    shown = f"value {model.tree_.value[leaf, 0]:.4g}, weight {model.tree_.weight[leaf]:.4g}"
    assert f"{shown}\nleaf {leaf}" in texts  # the leaf's id, as apply() gives it
    assert ax.get_legend() is None and len(fig.axes) == 2  # the tree and its colour bar
    fig.savefig(tmp_path / "tree.png")
    plt.close(fig)
    assert (tmp_path / "tree.png").stat().st_size > 5000
    fig, ax = plt.subplots()
    plots.plot_residuals(model, data.X, data.y, ax)
    offsets = ax.collections[0].get_offsets()
    assert offsets.shape == (data.y.size, 2)
    np.testing.assert_allclose(offsets[:, 1], data.y - model.predict(data.X))
    plt.close(fig)

"""Issue 42: the command line on censored follow-up, end to end."""

import csv
import shutil

import numpy as np
import pytest

from treekit_core import SurvivalTree, concordance_index
from treekit_core.datasets import dataset_path, load_dataset
from treekit_core.tools.cli import main


@pytest.fixture()
def lung_csv(tmp_path):
    path = tmp_path / "lung.csv"
    with dataset_path("lung").open("rb") as source, open(path, "wb") as copy:
        shutil.copyfileobj(source, copy)
    return path


def read_rows(path):
    with open(path, newline="") as handle:
        return list(csv.reader(handle))


def test_fit_predict_evaluate_a_survival_tree(lung_csv, tmp_path, capsys):
    model_path, predictions = tmp_path / "model.json", tmp_path / "predictions.csv"
    survival = ["--time", "time", "--event", "status"]
    assert (
        main(
            [
                "fit",
                str(lung_csv),
                *survival,
                "--set",
                "min_samples_leaf=10",
                "--out",
                str(model_path),
            ]
        )
        == 0
    )
    assert "task: survival" in capsys.readouterr().out
    assert (
        main(
            [
                "predict",
                str(model_path),
                str(lung_csv),
                "--times",
                "100,365",
                "--out",
                str(predictions),
            ]
        )
        == 0
    )
    rows = read_rows(predictions)
    assert rows[0] == ["risk", "survival_at_100", "survival_at_365"]
    values = np.array(rows[1:], dtype=float)
    assert ((values[:, 1:] >= 0) & (values[:, 1:] <= 1)).all()
    assert (values[:, 2] <= values[:, 1]).all()  # survival does not rise
    # the same model in Python
    data = load_dataset("lung")
    # (pruned by default: LeBlanc & Crowley's split complexity, issue 62)
    model = SurvivalTree(
        min_samples_leaf=10, pruner="split_complexity", pruner_params={"n_bootstrap": 25}
    ).fit(data.X, data.y)
    np.testing.assert_allclose(values[:, 0], model.predict(data.X), rtol=1e-9)
    capsys.readouterr()
    assert main(["evaluate", str(model_path), str(lung_csv), *survival]) == 0
    out = capsys.readouterr().out
    assert "resubstitution" in out
    expected = concordance_index(data.y["event"], data.y["time"], model.predict(data.X))
    assert f"Harrell's concordance: {expected:.4f}" in out
    assert "integrated Brier score" in out and "time-dependent AUC" in out
    assert "Uno's concordance" in out
    assert main(["evaluate", str(model_path), str(lung_csv), *survival, "--cv", "3"]) == 0
    assert "3-fold cross-validation" in capsys.readouterr().out


def test_a_survival_forest_and_the_exponential_method(lung_csv, tmp_path, capsys):
    survival = ["--time", "time", "--event", "status"]
    forest = tmp_path / "forest.json"
    assert main(["fit", str(lung_csv), *survival, "--forest", "5", "--out", str(forest)]) == 0
    assert "fitted 5 trees" in capsys.readouterr().out
    assert main(["evaluate", str(forest), str(lung_csv), *survival]) == 0
    exponential = tmp_path / "exp.json"
    assert (
        main(
            [
                "fit",
                str(lung_csv),
                *survival,
                "--criterion",
                "exponential",
                "--out",
                str(exponential),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["predict", str(exponential), str(lung_csv)]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert header.startswith("risk,survival_at_")


def test_bad_follow_up_options_are_refused(lung_csv, tmp_path, capsys):
    out = str(tmp_path / "m.json")
    assert main(["fit", str(lung_csv), "--time", "time", "--out", out]) != 0
    assert "both --time and --event" in capsys.readouterr().err
    assert main(["fit", str(lung_csv), "--time", "time", "--event", "sex", "--out", out]) != 0
    assert "--event 'sex' holds 2" in capsys.readouterr().err
    assert (
        main(
            [
                "fit",
                str(lung_csv),
                "--target",
                "status",
                "--time",
                "time",
                "--event",
                "status",
                "--out",
                out,
            ]
        )
        != 0
    )
    assert "not both" in capsys.readouterr().err


def numbers_at_risk(axis) -> dict:
    """(row, time) -> number, from the numbers-at-risk axis below the curves."""
    return {
        (int(round(text.get_position()[1])), float(text.get_position()[0])): float(text.get_text())
        for text in axis.texts
    }


def test_the_kaplan_meier_picture_draws_every_leafs_curve_and_numbers_at_risk(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from treekit_core.tools import plots

    data = load_dataset("veteran")
    model = SurvivalTree(min_samples_leaf=20, max_depth=2).fit(data.X, data.y)
    fig, ax = plt.subplots(figsize=(7, 5))
    plots.plot_survival_curves(model, data.X, data.y, ax, times=[0, 100, 200])
    leaves = model.apply(data.X)
    assert len(ax.lines) == model.get_n_leaves()
    # each line is its leaf's Kaplan-Meier curve on the training grid; the numbers at risk
    # are in an axis of their own below, row k for curve k, at the times given
    numbers = numbers_at_risk(fig.axes[1])
    for k, line in enumerate(ax.lines):
        leaf = int(ax.get_legend().get_texts()[k].get_text().split()[1])
        rows = leaves == leaf
        expected = model.predict_survival_function(data.X[rows][:1], return_array=True)[0]
        np.testing.assert_allclose(line.get_ydata()[1:], expected)
        at_risk = [int(numbers[k, t]) for t in (0, 100, 200)]
        assert at_risk == [int((data.y["time"][rows] >= t).sum()) for t in (0, 100, 200)]
    fig.savefig(tmp_path / "km.png", bbox_inches="tight")
    plt.close(fig)
    assert (tmp_path / "km.png").stat().st_size > 5000


def test_the_html_report_of_a_survival_model(lung_csv, tmp_path, capsys):
    from treekit_core.tools.metrics import concordance_index_ipcw
    from treekit_core.tools.report import model_report

    data = load_dataset("lung")
    model = SurvivalTree(min_samples_leaf=20).fit(data.X, data.y)
    page = model_report(model, data.X, data.y, path=tmp_path / "report.html")
    uno = concordance_index_ipcw(data.y, data.y, model.predict(data.X))
    assert f"<td>Uno&#x27;s concordance</td><td>{uno:.6g}</td>" in page
    assert "integrated Brier score" in page and page.count("data:image/png;base64") == 1
    assert (tmp_path / "report.html").read_text() == page
    model_path = tmp_path / "m.json"
    survival = ["--time", "time", "--event", "status"]
    assert main(["fit", str(lung_csv), *survival, "--out", str(model_path)]) == 0
    report = tmp_path / "cli.html"
    assert (
        main(["evaluate", str(model_path), str(lung_csv), *survival, "--report", str(report)]) == 0
    )
    assert "Harrell&#x27;s concordance" in report.read_text()


def test_the_tree_picture_with_its_leaves_curves_beside_it(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from treekit_core.tools import plots

    data = load_dataset("lung")  # missing values: rows counted by their shares
    model = SurvivalTree(min_samples_leaf=25, max_depth=2).fit(data.X, data.y)
    figure = plots.plot_survival_tree(model, data.X, data.y)
    tree_ax, curve_ax = figure.axes[:2]
    # every leaf box says its rows, events, median survival, risk and id
    leaf_boxes = [t.get_text() for t in tree_ax.texts if "median survival=" in t.get_text()]
    assert len(leaf_boxes) == model.get_n_leaves()
    assert all(box.splitlines()[-1].startswith("leaf ") for box in leaf_boxes)
    assert len(curve_ax.lines) == model.get_n_leaves()
    numbers = numbers_at_risk(figure.axes[-1])
    first = sum(numbers[k, 0.0] for k in range(len(curve_ax.lines)))
    # every row is at risk at time 0 (cells show 4 significant digits)
    assert first == pytest.approx(len(data.y), abs=0.05 * len(curve_ax.lines))
    figure.savefig(tmp_path / "tree_and_curves.png", bbox_inches="tight")
    plt.close(figure)
    assert (tmp_path / "tree_and_curves.png").stat().st_size > 10000


def test_evaluate_honours_test_size_plots_and_the_default_times(lung_csv, tmp_path, capsys):
    """Issue 55: --test-size was ignored for a survival model (resubstitution figures),
    --plots wrote nothing, and predict and evaluate read the survival at different default
    times on the training file."""
    from treekit_core.tools.metrics import event_quartiles

    model_path = tmp_path / "model.json"
    survival = ["--time", "time", "--event", "status"]
    assert main(["fit", str(lung_csv), *survival, "--out", str(model_path)]) == 0
    capsys.readouterr()
    argv = ["evaluate", str(model_path), str(lung_csv), *survival]
    assert main([*argv, "--test-size", "0.3", "--plots", str(tmp_path / "pictures")]) == 0
    out = capsys.readouterr().out
    assert "resubstitution" not in out
    assert "a 70%/30% split stratified by event (seed 0)" in out
    rows = int(out.split("rows: ")[1].split()[0])
    assert 0.25 * 227 < rows < 0.35 * 227  # the held-out rows only
    written = sorted(p.name for p in (tmp_path / "pictures").iterdir())
    assert "survival_curves.png" in written and "tree.png" in written
    assert all((tmp_path / "pictures" / name).stat().st_size > 5000 for name in written)
    # the default times: predict's header and evaluate's quartiles are the same numbers
    predictions = tmp_path / "predictions.csv"
    assert main(["predict", str(model_path), str(lung_csv), "--out", str(predictions)]) == 0
    header = read_rows(predictions)[0][1:]
    data = load_dataset("lung")
    assert header == [f"survival_at_{t:g}" for t in event_quartiles(data.y)]


def test_the_command_line_prunes_exponential_trees_and_prints_their_path(
    lung_csv, tmp_path, capsys
):
    """Issue 55: every other tree the command line grows is pruned by default
    (cost-complexity, 10-fold CV, 1-SE, as rpart); rpart's exponential trees now too, and
    `treekit path` prints their cp table. Log-rank trees have no node risk: pruned by
    LeBlanc & Crowley's split complexity (issue 62), their path printed likewise."""
    model_path = tmp_path / "exp.json"
    survival = ["--time", "time", "--event", "status"]
    argv = ["fit", str(lung_csv), *survival, "--criterion", "exponential", "--out", str(model_path)]
    assert main(argv) == 0
    assert (
        "pruner cost_complexity(risk='prediction', cv=10, rule='one_se'" in capsys.readouterr().out
    )
    assert main(["path", str(model_path)]) == 0
    table = capsys.readouterr().out
    assert "CP nsplit rel error  xerror    xstd" in table
    python = SurvivalTree(
        criterion="exponential",
        pruner="cost_complexity",
        pruner_params={"cv": 10, "rule": "one_se"},
        random_state=0,
    ).fit(load_dataset("lung").X, load_dataset("lung").y)
    assert python.cp_table() == table
    assert main(["fit", str(lung_csv), *survival, "--out", str(tmp_path / "lr.json")]) == 0
    assert "pruner split_complexity(" in capsys.readouterr().out
    assert main(["path", str(tmp_path / "lr.json")]) == 0
    table = capsys.readouterr().out
    python = SurvivalTree(
        pruner="split_complexity", pruner_params={"n_bootstrap": 25}, random_state=0
    ).fit(load_dataset("lung").X, load_dataset("lung").y)
    assert "alpha nsplit" in table and python.cp_table() == table


def test_the_command_line_on_several_kinds_of_event(tmp_path, capsys):
    """Issue 62: --event with codes 0, 1, 2 fits a competing-risk tree (pruned by split
    complexity), predict writes each cause's risk and incidence, evaluate each cause's
    concordance and Brier score, --plots the stacked incidences, --report the page with
    them and the pruning path."""
    pytest.importorskip("matplotlib")
    from treekit_core.tools.metrics import concordance_index_cause

    path = tmp_path / "mgus2.csv"
    with dataset_path("mgus2").open("rb") as source, open(path, "wb") as copy:
        shutil.copyfileobj(source, copy)
    model_path, predictions = tmp_path / "cr.json", tmp_path / "cr.csv"
    follow = ["--time", "time", "--event", "event"]
    assert main(["fit", str(path), *follow, "--out", str(model_path)]) == 0
    out = capsys.readouterr().out
    assert "task: competing risks, causes 1..2" in out and "split_complexity(" in out
    argv = ["predict", str(model_path), str(path), "--times", "100,200", "--out", str(predictions)]
    assert main(argv) == 0
    rows = read_rows(predictions)
    assert rows[0] == [
        "risk_cause_1",
        "risk_cause_2",
        "incidence_1_at_100",
        "incidence_1_at_200",
        "incidence_2_at_100",
        "incidence_2_at_200",
    ]
    data = load_dataset("mgus2")
    python = SurvivalTree.from_json(model_path.read_text())
    values = np.array(rows[1:], dtype=float)
    np.testing.assert_allclose(values[:, :2], python.predict(data.X), rtol=1e-9)
    np.testing.assert_allclose(
        values[:, 4:6],
        python.predict_cumulative_incidence(data.X, cause=2, times=[100, 200]),
        rtol=1e-5,
    )
    capsys.readouterr()
    plots = tmp_path / "plots"
    assert main(["evaluate", str(model_path), str(path), *follow, "--plots", str(plots)]) == 0
    out = capsys.readouterr().out
    y = np.column_stack([data.y["time"], data.y["event"]])
    expected = concordance_index_cause(y, python.predict(data.X)[:, 1], 2)
    assert f"cause 2 events: {int((data.y['event'] == 2).sum())}" in out
    assert f"cause 2 concordance (Wolbers): {expected:.4f}" in out
    assert "cause 1 Brier score at " in out
    assert (plots / "cumulative_incidence.png").exists()
    page = tmp_path / "r.html"
    assert main(["evaluate", str(model_path), str(path), *follow, "--report", str(page)]) == 0
    text = page.read_text()
    assert f"<td>cause 2 concordance (Wolbers)</td><td>{expected:.6g}</td>" in text
    assert "data:image/png;base64," in text and "Split complexity (LeBlanc" in text
    bad = tmp_path / "bad.csv"
    text = path.read_text().splitlines()
    text[1] = text[1].rsplit(",", 1)[0] + ",1.5"
    bad.write_text("\n".join(text) + "\n")
    assert main(["fit", str(bad), *follow, "--out", str(tmp_path / "x.json")]) != 0
    assert "holds 1.5 on row 2" in capsys.readouterr().err

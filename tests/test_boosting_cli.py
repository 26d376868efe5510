"""``treekit fit --model boosting`` (issue 60): each task's boosted model from the command
line, predicted and evaluated as the other models are, and the options a boosted model
does not take refused on one line."""

import numpy as np
import pytest

from treekit_core import BoostingClassifier, BoostingRegressor, BoostingSurvival
from treekit_core.datasets import dataset_path
from treekit_core.tools.cli import main


def _fit(tmp_path, *arguments):
    out = tmp_path / "model.json"
    assert main(["fit", *arguments, "--out", str(out)]) == 0
    return out


def test_a_boosted_classifier_fits_predicts_and_evaluates(tmp_path, capsys):
    data = str(dataset_path("pima"))
    out = _fit(
        tmp_path,
        data,
        "--target",
        "class",
        "--model",
        "boosting",
        "--set",
        "n_estimators=15",
        "--set",
        "max_depth=2",
        "--splitter",
        "exhaustive",
    )
    assert "fitted 15 rounds of 1 tree(s) on 768 rows" in capsys.readouterr().out
    model = BoostingClassifier.from_json(out)
    assert (model.n_iter_, model.max_depth) == (15, 2)
    assert main(["predict", str(out), data]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "prediction,abstained,confidence,p_tested_negative,p_tested_positive"
    assert len(lines) == 769
    first = lines[1].split(",")
    assert first[0] in ("tested_negative", "tested_positive") and first[1] == "0"
    assert float(first[3]) + float(first[4]) == pytest.approx(1.0, abs=1e-5)
    assert main(["evaluate", str(out), data, "--target", "class", "--cv", "3"]) == 0
    assert "out-of-sample" in capsys.readouterr().out


def test_a_boosted_regressor_and_survival_model_from_the_command_line(tmp_path, capsys):
    quakes = str(dataset_path("quakes"))
    out = _fit(
        tmp_path,
        quakes,
        "--target",
        "mag",
        "--model",
        "boosting",
        "--set",
        "loss=huber",
        "--set",
        "n_estimators=10",
    )
    model = BoostingRegressor.from_json(out)
    assert model.loss_.name == "huber" and model.n_iter_ == 10
    capsys.readouterr()
    assert main(["evaluate", str(out), quakes, "--target", "mag"]) == 0
    assert "R^2" in capsys.readouterr().out
    veteran = str(dataset_path("veteran"))
    out = _fit(
        tmp_path,
        veteran,
        "--time",
        "time",
        "--event",
        "status",
        "--model",
        "boosting",
        "--set",
        "n_estimators=10",
    )
    assert BoostingSurvival.from_json(out).n_iter_ == 10
    capsys.readouterr()
    assert main(["predict", str(out), veteran, "--times", "30,90"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0] == "risk,survival_at_30,survival_at_90"
    survival = np.array([[float(v) for v in row.split(",")[1:]] for row in rows[1:]])
    assert ((survival > 0) & (survival <= 1)).all() and (survival[:, 1] <= survival[:, 0]).all()
    assert main(["evaluate", str(out), veteran, "--time", "time", "--event", "status"]) == 0
    assert "Harrell's concordance" in capsys.readouterr().out


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--criterion", "gini"], "--criterion: a boosted model's trees are squared-error"),
        (["--set", "loss=log_loss"], "loss 'log_loss' reads class labels"),
        (["--set", "learning_rat=0.1"], "did you mean 'learning_rate'"),
        (["--forest", "5"], "give one of them"),
    ],
)
def test_what_a_boosted_model_does_not_take_is_one_line(tmp_path, capsys, arguments, message):
    quakes = str(dataset_path("quakes"))
    code = main(
        [
            "fit",
            quakes,
            "--target",
            "mag",
            "--model",
            "boosting",
            *arguments,
            "--out",
            str(tmp_path / "m.json"),
        ]
    )
    assert code != 0
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and message in error[0]
    assert not (tmp_path / "m.json").exists()


def test_the_report_shows_the_loss_by_round(tmp_path, capsys):
    """The HTML report of a boosted model has its section and the curves of the training
    and held-out loss by round (the plotted points are the model's scores)."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from treekit_core.tools.report import loss_by_round

    data = str(dataset_path("pima"))
    out = _fit(
        tmp_path,
        data,
        "--target",
        "class",
        "--model",
        "boosting",
        "--set",
        "n_estimators=40",
        "--set",
        "early_stopping=true",
        "--set",
        "n_iter_no_change=3",
    )
    page = tmp_path / "report.html"
    assert main(["evaluate", str(out), data, "--target", "class", "--report", str(page)]) == 0
    text = page.read_text()
    assert "<h2>Boosting</h2>" in text and "loss log_loss" in text
    model = BoostingClassifier.from_json(out)
    assert model.validation_score_.size == model.n_iter_ < 400
    fig, ax = plt.subplots()
    loss_by_round(model, ax)
    training, held_out = ax.get_lines()
    np.testing.assert_array_equal(training.get_ydata(), model.train_score_)
    np.testing.assert_array_equal(held_out.get_ydata(), model.validation_score_)
    plt.close(fig)

"""What a user gives the command line ends in a one-line error naming it, or is read as the
file means it (issue 33: unexpected errors, split values, silently wrong figures)."""

import csv

import numpy as np
import pytest

from treekit_core.tools.cli import main
from treekit_core.tools.csvdata import read_text_table


def _one_line_error(capsys):
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "unexpected error" not in err, err
    return err


@pytest.fixture
def integer_classes(tmp_path):
    """A CSV with integer classes 0/1 and a model fitted on it."""
    rng = np.random.default_rng(0)
    rows = [["a", "b", "y"]] + [
        [f"{rng.normal():.3f}", f"{rng.normal():.3f}", str(i % 2)] for i in range(60)
    ]
    data = tmp_path / "data.csv"
    with open(data, "w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    model = tmp_path / "model.json"
    assert main(["fit", str(data), "--target", "y", "--out", str(model)]) == 0
    return rows, model


def _write(path, rows):
    with open(path, "w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return str(path)


def test_values_with_unicode_line_breaks_stay_whole(tmp_path):
    path = tmp_path / "breaks.csv"
    text = 'a,b\r\n1,"re\fd"\r\n2,x\u2028y\n3,"q\x85"\n4,\x0bz\x1c\n5,"two\nlines"\n'
    path.write_text(text, encoding="utf-8", newline="")
    header, columns = read_text_table(path)
    assert header == ["a", "b"]
    assert columns["a"] == ["1", "2", "3", "4", "5"]
    assert columns["b"] == ["re\fd", "x\u2028y", "q\x85", "\x0bz\x1c", "two\nlines"]


def test_an_empty_or_fractional_true_class_is_refused_by_evaluate(
    integer_classes, tmp_path, capsys
):
    rows, model = integer_classes
    empty = [row[:] for row in rows]
    empty[3][2] = ""
    data = _write(tmp_path / "empty.csv", empty)
    assert main(["evaluate", str(model), data, "--target", "y"]) == 2
    assert "the target column 'y' is empty on row 4" in _one_line_error(capsys)
    fractional = [row[:] for row in rows]
    fractional[5][2] = "1.5"
    data = _write(tmp_path / "fractional.csv", fractional)
    assert main(["evaluate", str(model), data, "--target", "y"]) == 2
    assert "holds 1.5 on row 6; the model's classes are whole numbers" in _one_line_error(capsys)


@pytest.mark.parametrize(
    "settings,expected",
    [
        (["--set", "n_estimators=5"], "give the number of trees with --forest N"),
        (["--set", "max_features=2"], "'max_features' is a parameter of forests"),
        (["--set", "balanced_bootstrap=true"], "'balanced_bootstrap' is a parameter of forests"),
        (["--set", "categorical_features=[0]"], "reads a column of text as nominal"),
        (["--forest", "3", "--set", "n_estimators=5"], "with --forest N"),
    ],
)
def test_settings_the_estimator_cannot_take_are_named(
    integer_classes, tmp_path, capsys, settings, expected
):
    rows, _ = integer_classes
    data = _write(tmp_path / "d.csv", rows)
    out = str(tmp_path / "m.json")
    assert main(["fit", data, "--target", "y", "--out", out, *settings]) == 2
    assert expected in _one_line_error(capsys)


def test_a_test_size_that_leaves_no_training_rows_is_refused(integer_classes, tmp_path, capsys):
    rows, model = integer_classes
    data = _write(tmp_path / "d.csv", rows)
    assert main(["evaluate", str(model), data, "--target", "y", "--test-size", "0.99"]) == 2
    assert "--test-size 0.99 leaves no training rows among 60" in _one_line_error(capsys)


def test_path_of_a_tree_without_a_cp_table_is_a_one_line_error(integer_classes, tmp_path, capsys):
    rows, _ = integer_classes
    data = _write(tmp_path / "d.csv", rows)
    model = str(tmp_path / "unpruned.json")
    assert main(["fit", data, "--target", "y", "--out", model, "--pruner", "none"]) == 0
    capsys.readouterr()
    assert main(["path", model]) == 2
    assert "pruner 'none' records no" in _one_line_error(capsys)


@pytest.mark.parametrize("value", ["N/A", "1,234"])
def test_a_numeric_column_with_a_stray_value_names_the_column_and_value(
    integer_classes, tmp_path, capsys, value
):
    rows, _ = integer_classes
    rows = [row[:] for row in rows]
    rows[4][1] = value
    data = _write(tmp_path / "d.csv", rows)
    assert main(["fit", data, "--target", "y", "--out", str(tmp_path / "m.json")]) == 2
    assert f"column 'b' holds numbers, but {value!r} (row 5) is not a number" in (
        _one_line_error(capsys)
    )


def test_a_field_over_the_csv_limit_is_a_one_line_error(tmp_path, capsys):
    data = tmp_path / "big.csv"
    data.write_text("a,y\n" + "x" * 200_000 + ",1\n1,0\n")
    assert main(["fit", str(data), "--target", "y", "--out", str(tmp_path / "m.json")]) == 2
    assert "line 2: field larger than field limit" in _one_line_error(capsys)

"""The command line: the README's main job and the plugin listing."""

import numpy as np

from treekit_core.tools.cli import main, stratified_split


def test_demo_prints_tree_and_test_metrics(capsys):
    assert main(["demo", "--data", "haberman"]) == 0
    out = capsys.readouterr().out
    assert "|--- " in out and "test metrics:" in out and "sensitivity" in out and "coverage" in out


def test_stratified_split_keeps_class_shares():
    y = np.array([0] * 70 + [1] * 30)
    train, test = stratified_split(y, 0.3, seed=1)
    assert np.intersect1d(train, test).size == 0 and train.size + test.size == 100
    assert (y[test] == 1).sum() == 9 and (y[test] == 0).sum() == 21


def test_plugins_lists_builtins(capsys):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    for name in ("gini", "exhaustive", "hard", "none", "majority", "probability"):
        assert name in out


def test_bad_data_set_is_a_one_line_error(capsys):
    assert main(["demo", "--data", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown data set 'nope'" in err


def test_cli_names_the_nearest_parameter_reads_a_bom_and_stops_quietly_at_a_closed_pipe(
    tmp_path, capsys
):
    import subprocess
    import sys

    from treekit_core.datasets import dataset_path
    from treekit_core.tools.cli import main

    vote = dataset_path("vote").read_bytes()
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + vote)  # as spreadsheet programs save UTF-8
    model = str(tmp_path / "model.json")
    assert main(["fit", str(bom), "--target", "class", "--set", "max_dept=3", "--out", model]) == 2
    assert "unknown parameter 'max_dept' (did you mean 'max_depth'?)" in capsys.readouterr().err
    assert main(["fit", str(bom), "--target", "class", "--out", model]) == 0
    satimage = str(dataset_path("satimage"))
    assert main(["fit", satimage, "--target", "class", "--set", "max_depth=3", "--out", model]) == 0
    reader = subprocess.Popen(
        [sys.executable, "-m", "treekit_core.tools.cli", "predict", model, satimage],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    reader.stdout.readline()
    reader.stdout.close()  # like `| head -1`
    assert reader.wait(timeout=300) == 0
    assert b"Broken pipe" not in reader.stderr.read()


def _accuracy(report: str) -> float:
    line = next(li for li in report.splitlines() if li.startswith("accuracy on decided"))
    return float(line.split(":")[1].split()[0])


def _one_line_error(capsys, code=2):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("treekit "), err
    return err


def test_a_column_nominal_at_fit_is_read_as_nominal_at_predict(tmp_path, capsys):
    import json

    rng = np.random.default_rng(0)
    n = 120
    code = rng.choice(["1", "2", "3", "x"], n)  # text at fit: "x" makes it nominal
    size = rng.normal(size=n)
    y = np.where(np.isin(code, ["1", "3"]), "yes", "no")
    train = tmp_path / "train.csv"
    train.write_text(
        "code,size,class\n"
        + "".join(f"{c},{s:.4f},{t}\n" for c, s, t in zip(code, size, y, strict=True))
    )
    numeric_rows = code != "x"  # at predict, the column holds only digits
    test = tmp_path / "test.csv"
    test.write_text(
        "code,size,class\n"
        + "".join(
            f"{c},{s:.4f},{t}\n"
            for c, s, t in zip(code[numeric_rows], size[numeric_rows], y[numeric_rows], strict=True)
        )
    )
    model = str(tmp_path / "model.json")
    assert main(["fit", str(train), "--target", "class", "--out", model]) == 0
    assert json.loads(open(model).read())["categories"][0][1] == ["1", "2", "3", "x"]
    capsys.readouterr()
    assert main(["evaluate", model, str(test), "--target", "class"]) == 0
    out = capsys.readouterr().out
    assert _accuracy(out) == 1.0
    # numbers in a column the model knows as numeric but text at predict: refused
    swapped = tmp_path / "swapped.csv"
    swapped.write_text("code,size,class\n1,abc,yes\n2,0.5,no\n")
    assert main(["predict", model, str(swapped)]) == 2
    assert "column 'size' holds text ('abc' on row 2) but the model was fitted with numbers" in (
        _one_line_error(capsys)
    )


def test_csv_files_that_would_be_read_wrong_are_refused(tmp_path, capsys):
    duplicate = tmp_path / "duplicate.csv"
    duplicate.write_text("a,a,class\n1,2,x\n3,4,y\n")
    assert main(["fit", str(duplicate), "--target", "class", "--out", str(tmp_path / "m")]) == 2
    assert "the header names 'a' more than once" in _one_line_error(capsys)
    nul = tmp_path / "nul.csv"
    nul.write_bytes(b"a,class\n1,x\n2\x00,y\n")
    assert main(["fit", str(nul), "--target", "class", "--out", str(tmp_path / "m")]) == 2
    assert "line 3 holds a NUL byte" in _one_line_error(capsys)
    only_target = tmp_path / "only_target.csv"
    only_target.write_text("class\nx\ny\n")
    assert main(["fit", str(only_target), "--target", "class", "--out", str(tmp_path / "m")]) == 2
    assert "holds only the target column 'class'" in _one_line_error(capsys)


def test_a_model_without_feature_names_never_reads_the_target_as_a_feature(tmp_path, capsys):
    from treekit_core import TreeClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    model = str(tmp_path / "array_model.json")
    TreeClassifier().fit(X, y).to_json(model)  # fitted on an array: no names
    data = tmp_path / "data.csv"
    data.write_text(
        "class,a,b\n" + "".join(f"{t},{a},{b}\n" for t, (a, b) in zip(y, X, strict=True))
    )
    assert main(["predict", model, str(data)]) == 2
    assert "records no feature names" in _one_line_error(capsys)
    assert main(["evaluate", model, str(data), "--target", "class"]) == 0
    out = capsys.readouterr().out
    assert _accuracy(out) == 1.0


def test_crafted_and_broken_model_files_are_one_line_errors(tmp_path, capsys):
    import json

    from treekit_core import TreeClassifier
    from treekit_core.datasets import dataset_path

    data = str(dataset_path("haberman"))
    good = json.loads(
        TreeClassifier(max_depth=2).fit(np.arange(20.0).reshape(10, 2), [0, 1] * 5).to_json()
    )
    crafted = {
        "not_json.json": "this is not json",
        "no_tree.json": json.dumps({k: v for k, v in good.items() if k != "tree"}),
        "classes_number.json": json.dumps({**good, "classes": 5}),
        "one_class.json": json.dumps({**good, "classes": good["classes"][:1]}),
        "tree_list.json": json.dumps({**good, "tree": []}),
        "params_text.json": json.dumps({**good, "params": "x"}),
        "deep.json": "[" * 100000 + "]" * 100000,
    }
    for name, text in crafted.items():
        path = tmp_path / name
        path.write_text(text)
        assert main(["predict", str(path), data]) in (1, 2)
        err = _one_line_error(capsys)
        assert "model file" in err and "unexpected" not in err, (name, err)


def test_plots_without_matplotlib_is_a_one_line_error(tmp_path, capsys, monkeypatch):
    import importlib.util

    from treekit_core.datasets import dataset_path

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "matplotlib" else real(name, *a),
    )
    data = str(dataset_path("haberman"))
    model = str(tmp_path / "model.json")
    assert main(["fit", data, "--target", "class", "--out", model]) == 0
    capsys.readouterr()
    code = main(["evaluate", model, data, "--target", "class", "--plots", str(tmp_path)])
    assert code == 2
    assert "--plots needs matplotlib" in _one_line_error(capsys)


def _fit(data_file, model_file, *extra):
    return main(["fit", str(data_file), "--target", "class", "--out", str(model_file), *extra])


def test_fit_prunes_by_default_as_rpart_and_says_so(tmp_path, capsys):
    from treekit_core import TreeClassifier
    from treekit_core.datasets import dataset_path, load_dataset

    data = load_dataset("bupa")
    model_file = tmp_path / "model.json"
    assert _fit(dataset_path("bupa"), model_file) == 0
    out = capsys.readouterr().out
    assert "pruner cost_complexity(risk='prediction', cv=10, rule='one_se'" in out
    expected = TreeClassifier(
        pruner="cost_complexity", pruner_params={"cv": 10, "rule": "one_se"}, random_state=0
    ).fit(data.X, data.y)
    assert f"fitted {expected.get_n_leaves()} leaves" in out
    assert _fit(dataset_path("bupa"), model_file, "--pruner", "none") == 0
    full = TreeClassifier().fit(data.X, data.y)
    assert f"fitted {full.get_n_leaves()} leaves" in capsys.readouterr().out
    assert full.get_n_leaves() > 3 * expected.get_n_leaves()


def test_integer_labels_stay_integers(tmp_path, capsys):
    from treekit_core.datasets import dataset_path

    model_file, out_file = tmp_path / "model.json", tmp_path / "p.csv"
    assert _fit(dataset_path("bupa"), model_file) == 0  # classes 1 / 2
    assert (
        main(["predict", str(model_file), str(dataset_path("bupa")), "--out", str(out_file)]) == 0
    )
    header, first = out_file.read_text().splitlines()[:2]
    assert header.split(",")[3:] == ["p_1", "p_2"] and first.split(",")[0] in ("1", "2")
    assert main(["path", str(model_file)]) == 0  # the cp table of the default pruner
    assert "Root node error" in capsys.readouterr().out


def test_version(capsys):
    import pytest

    from treekit_core.tools.cli import _version

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"treekit {_version()}"
    assert _version()[0].isdigit()


def test_evaluate_on_the_training_file_warns_of_resubstitution(tmp_path, capsys):
    from treekit_core.datasets import dataset_path

    data_file = dataset_path("haberman")
    model_file = tmp_path / "model.json"
    assert _fit(data_file, model_file) == 0
    capsys.readouterr()
    assert main(["evaluate", str(model_file), str(data_file), "--target", "class"]) == 0
    captured = capsys.readouterr()
    assert "resubstitution figures" in captured.err and "resubstitution" in captured.out
    other = tmp_path / "other.csv"
    lines = data_file.read_text().splitlines()
    other.write_text("\n".join(lines[:-5]) + "\n")  # not the training rows
    assert main(["evaluate", str(model_file), str(other), "--target", "class"]) == 0
    assert "resubstitution" not in capsys.readouterr().err


def test_evaluate_cross_validates_the_stored_composition(tmp_path, capsys):
    from treekit_core import TreeClassifier
    from treekit_core.datasets import dataset_path, load_dataset
    from treekit_core.engine.folds import stratified_folds
    from treekit_core.tools.metrics import diagnostic_report

    data_file = dataset_path("haberman")
    model_file = tmp_path / "model.json"
    assert _fit(data_file, model_file, "--set", "max_depth=3", "--pruner", "none") == 0
    capsys.readouterr()
    argv = ["evaluate", str(model_file), str(data_file), "--target", "class", "--cv", "5"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("out-of-sample figures: 5-fold stratified cross-validation (seed 0)")
    data = load_dataset("haberman")
    _, encoded = np.unique(data.y, return_inverse=True)
    fold = stratified_folds(encoded, 5, np.random.default_rng(0))
    predicted, truth = [], []
    for k in range(5):
        train, test = fold != k, fold == k
        model = TreeClassifier(max_depth=3, random_state=0).fit(data.X[train], data.y[train])
        predicted.append(model.predict(data.X[test]))
        truth.append(data.y[test])
    expected = diagnostic_report(np.concatenate(truth), np.concatenate(predicted))
    assert expected.to_text() in out
    # another composition, given on the command line, and a held-out split
    argv = ["evaluate", str(model_file), str(data_file), "--target", "class", "--test-size", "0.3"]
    assert main([*argv, "--criterion", "entropy"]) == 0
    out = capsys.readouterr().out
    assert "stratified 70%/30% split" in out and "criterion entropy" in out
    assert main([*argv, "--cv", "3"]) == 2
    assert "not both" in capsys.readouterr().err


def test_demo_prints_real_feature_names_and_a_readable_composition(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "composition: criterion gini; splitter exhaustive" in out and "{" not in out
    assert "_worst <=" in out or "_mean <=" in out  # wdbc's own names, not f22


def test_first_compile_says_so_on_one_line_and_later_runs_say_nothing(tmp_path):
    import os
    import subprocess
    import sys

    from treekit_core.datasets import dataset_path

    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
        "TREEKIT_KERNEL_DIR": str(tmp_path / "kernels"),
    }
    env.pop("NUMBA_DISABLE_JIT", None)
    argv = [sys.executable, "-m", "treekit_core.tools.cli", "fit", str(dataset_path("haberman"))]
    argv += ["--target", "class", "--pruner", "none", "--out", str(tmp_path / "m.json")]
    first = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    second = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    assert first.returncode == second.returncode == 0, first.stderr
    lines = first.stderr.splitlines()
    # one line per kernel family compiled, each naming it: the grower specialised to the
    # criterion (the first notice says what a first run costs), then the presort's
    assert len(lines) == 2 and all(line.startswith("treekit: compiling") for line in lines)
    assert "kernels for treekit_core.builtins.criteria.gini_impurity" in lines[0]
    assert "a first run takes about" in lines[0]
    assert "kernels of treekit_core.kernels.builder" in lines[1], first.stderr
    assert second.stderr == ""
    # issue 37: a later run that compiles other families (the plain impurity the model
    # file's check recomputes each node's impurity with, issue 55; prediction's routing
    # kernels) says so once for each, naming it; the run after says nothing
    predict = [sys.executable, "-m", "treekit_core.tools.cli", "predict", str(tmp_path / "m.json")]
    predict += [str(dataset_path("haberman"))]
    third = subprocess.run(predict, capture_output=True, text=True, env=env, timeout=600)
    fourth = subprocess.run(predict, capture_output=True, text=True, env=env, timeout=600)
    assert third.returncode == fourth.returncode == 0, third.stderr
    lines = third.stderr.splitlines()
    assert len(lines) == 2, lines
    assert "compiling the kernels of treekit_core.builtins.criteria" in lines[0]
    assert "compiling the kernels of treekit_core.kernels.routing" in lines[1]
    assert fourth.stderr == ""


def test_a_bad_component_parameter_is_one_readable_line(tmp_path, capsys):
    from treekit_core.datasets import dataset_path

    model_file = tmp_path / "model.json"
    assert _fit(dataset_path("haberman"), model_file, "--set", "pruner.rule=two_se") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Attribute(" not in err
    assert "'rule' must be in ('min_error', 'one_se') (got 'two_se')" in err
    # a pruner parameter without --pruner goes to the default pruner
    assert _fit(dataset_path("haberman"), model_file, "--set", "pruner.rule=min_error") == 0
    assert "rule='min_error'" in capsys.readouterr().out


def test_a_numeric_target_fits_a_regression_tree_end_to_end(tmp_path, capsys):
    """Issue 38: a target column of measurements fits a regression tree (the CLI says why),
    rows without the response are dropped as rpart drops them; predict writes numbers;
    evaluate prints RMSE, MAE and R^2, on the file and cross-validated."""
    from sklearn.metrics import mean_absolute_error, r2_score

    from treekit_core import TreeRegressor
    from treekit_core.datasets import dataset_path, load_dataset

    model_file, predictions = tmp_path / "m.json", tmp_path / "p.csv"
    path = str(dataset_path("airquality"))
    assert main(["fit", path, "--target", "Ozone", "--out", str(model_file)]) == 0
    out = capsys.readouterr().out
    assert "task: regression ('Ozone' holds" in out and "fitted" in out
    assert "labeler" not in out  # a regressor's composition line names what it uses
    model = TreeRegressor.from_json(str(model_file))
    data = load_dataset("airquality")
    expected = TreeRegressor(
        pruner="cost_complexity", pruner_params={"cv": 10, "rule": "one_se"}, random_state=0
    ).fit(data.X, data.y)
    np.testing.assert_array_equal(model.predict(data.X), expected.predict(data.X))
    assert main(["predict", str(model_file), path, "--out", str(predictions)]) == 0
    written = np.loadtxt(predictions, delimiter=",", skiprows=1)
    assert written.shape == (153,)  # every row of the file, those without Ozone too
    # the rows without Ozone (37 of 153) are dropped by fit and left out by evaluate, and
    # both say so; evaluate's figures are those of the file without them
    assert "37 rows without a value of 'Ozone' dropped" in out
    assert main(["evaluate", str(model_file), path, "--target", "Ozone"]) == 0
    with_empty = capsys.readouterr().out
    assert "37 rows without a value of 'Ozone' left out" in with_empty
    complete = tmp_path / "complete.csv"
    lines = open(path).read().splitlines()
    complete.write_text("\n".join([lines[0], *[row for row in lines[1:] if not row.endswith(",")]]))
    assert main(["evaluate", str(model_file), str(complete), "--target", "Ozone"]) == 0
    figures = capsys.readouterr().out
    assert "left out" not in figures

    def table(text):
        return [
            line for line in text.splitlines() if line.startswith(("rows", "RMSE", "MAE", "R^2"))
        ]

    assert table(with_empty) == table(figures) and "rows  116" in figures
    out = figures
    predicted = model.predict(data.X)
    assert f"MAE   {mean_absolute_error(data.y, predicted):.6g}" in out
    assert f"R^2   {r2_score(data.y, predicted):.6f}" in out
    cv = ["evaluate", str(model_file), str(complete), "--target", "Ozone", "--cv", "5"]
    assert main(cv) == 0
    out = capsys.readouterr().out
    assert "out-of-sample figures: 5-fold cross-validation (seed 0)" in out and "RMSE" in out


def test_the_task_can_be_chosen_and_is_said(tmp_path, capsys):
    from treekit_core.datasets import dataset_path

    path = str(dataset_path("warpbreaks"))
    model_file = tmp_path / "m.json"
    assert main(["fit", path, "--target", "breaks", "--out", str(model_file)]) == 0
    assert "task: regression ('breaks' holds 31 distinct numbers" in capsys.readouterr().out
    argv = ["fit", path, "--target", "breaks", "--out", str(model_file)]
    assert main([*argv, "--task", "classification", "--pruner", "none"]) == 0
    assert "task: classification (--task classification" in capsys.readouterr().out
    assert main([*argv, "--forest", "3"]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(model_file), path, "--target", "breaks", "--cv", "3"]) == 0
    assert "R^2" in capsys.readouterr().out
    from treekit_core import ForestRegressor

    assert isinstance(ForestRegressor.from_json(str(model_file)), ForestRegressor)
    assert main([*argv, "--criterion", "rpart_poisson"]) == 0
    assert main(["path", str(model_file)]) == 0
    assert "Root node error" in capsys.readouterr().out


def test_the_risk_coverage_picture_draws_the_curve_evaluate_printed(tmp_path, capsys, monkeypatch):
    """Issue 55: with --cv K --plots the picture showed the resubstitution curve, unlabelled;
    now it draws the out-of-sample curve the figures printed, labelled with how it was made
    (and without --cv, the resubstitution curve says so)."""
    from treekit_core.datasets import dataset_path
    from treekit_core.tools import plots

    drawn = []
    original = plots.plot_risk_coverage
    monkeypatch.setattr(
        plots,
        "plot_risk_coverage",
        lambda curves, ax=None: drawn.append(curves) or original(curves, ax),
    )
    data_file, model_file = dataset_path("haberman"), tmp_path / "model.json"
    assert _fit(data_file, model_file, "--set", "max_depth=3", "--pruner", "none") == 0
    base = ["evaluate", str(model_file), str(data_file), "--target", "class"]
    assert main([*base, "--cv", "4", "--plots", str(tmp_path / "cv")]) == 0
    out = capsys.readouterr().out
    area = float(out.split("area under the risk-coverage curve: ")[1].split()[0])
    ((label, curve),) = drawn[-1].items()
    assert label == "4-fold stratified cross-validation (seed 0)"
    assert round(curve.area, 4) == area
    assert main([*base, "--plots", str(tmp_path / "plain")]) == 0
    ((label, _),) = drawn[-1].items()
    assert label == "resubstitution"

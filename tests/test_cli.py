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

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

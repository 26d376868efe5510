"""The README's export and rejection examples run as written (issue 36: its own
``to_sklearn(model)`` line used to raise on a default tree)."""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from treekit_core import TreeClassifier
from treekit_core.datasets import load_dataset

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)


def block_with(text):
    found = [block for block in BLOCKS if text in block]
    assert len(found) == 1, f"the README has {len(found)} python blocks with {text!r}"
    return found[0]


def test_the_export_example_runs_on_a_default_tree():
    for tool in ("shap", "onnx", "dtreeviz", "sklearn"):
        pytest.importorskip(tool)
    data = load_dataset("haberman")
    X, y = data.X, data.y
    holed = X.copy()
    holed[::10, 0] = np.nan  # a model that met missing values: each export says so once
    for fitted_on, warned in ((X, 0), (holed, 3)):
        model = TreeClassifier().fit(fitted_on, y)  # missing values by training shares
        namespace = {"model": model, "X": X, "y": y}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exec(block_with("to_sklearn(model)"), namespace)
        said = [w for w in caught if "rows without missing values" in str(w.message)]
        assert len(said) == warned  # one warning per export, none an error
        np.testing.assert_array_equal(
            namespace["sk"].predict_proba(X.astype(np.float32)), model.predict_proba(X)
        )


def test_the_rejection_example_decides_about_four_rows_in_five():
    namespace = {}
    exec(block_with("reject="), namespace)
    decided = (~namespace["decision"].abstained).mean()
    assert 0.7 <= decided <= 0.9, decided


def test_the_regression_example_runs(capsys):
    data = load_dataset("airquality")
    namespace = {"X": data.X, "y": data.y}
    exec(block_with("reg = TreeRegressor("), namespace)
    reg = namespace["reg"]
    out = capsys.readouterr().out
    assert reg.get_n_leaves() >= 2 and "Root node error: 125143/116" in out
    # the 1-SE subtree of rpart's cp sequence is one of its rows
    assert int(reg.pruning_path_["n_splits"][reg.pruning_path_["selected"]][0]) == (
        reg.get_n_leaves() - 1
    )


def test_the_constraints_example_keeps_its_constraints():
    from treekit_core.testing import monotonic_violation, tree_paths

    namespace = {}
    exec(block_with("monotonic_cst={"), namespace)
    model, X = namespace["model"], namespace["X"].to_numpy()
    glucose, mass = 1, 5
    cst = [0] * X.shape[1]
    cst[glucose] = cst[mass] = 1

    def risk(Z):
        return model.predict_proba(Z)[:, list(model.classes_).index("tested_positive")]

    assert model.get_n_leaves() > 2
    assert monotonic_violation(risk, cst, X.shape[1], X=X) == 0.0
    groups = [{1, 5, 7}, {0, 2, 3, 4, 6}]
    assert all(any(path <= g for g in groups) for path in tree_paths(model.tree_))

"""Issue 57: new rows exactly on a cut point go where rpart sends them (x < cut left,
x >= cut right) in rpart's compositions (the surrogate propagator and evaluator), against
rpart's own predictions of such rows (fixtures made by
tests/fixtures/rpart_boundaries/make_fixtures.R)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_regression import as_frame, rpart_like

from treekit_core import TreeClassifier
from treekit_core.datasets import load_dataset

FIXTURES = Path(__file__).parent / "fixtures" / "rpart_boundaries"
CASES = {
    "quakes": "squared_error",
    "airquality": "squared_error",
    "car_test_frame": "squared_error",
    "pima": "class",
}


def _model(name, criterion):
    data = load_dataset(name)
    X = as_frame(data)
    if criterion == "class":
        model = TreeClassifier(
            propagator="surrogate",
            evaluator="surrogate",
            min_samples_split=20,
            min_samples_leaf=7,
            pruner="cost_complexity",
            pruner_params={"alpha": 0.0, "sequence": "rpart"},
        )
    else:
        model = rpart_like(criterion)
    return model.fit(X, data.y), X


@pytest.mark.parametrize("name", sorted(CASES))
def test_rows_on_cut_points_are_predicted_as_rpart_predicts_them(name):
    reference = json.loads((FIXTURES / f"{name}.json").read_text())
    assert reference["rpart_version"] == "4.1.19"
    model, X = _model(name, CASES[name])
    rows = np.asarray(reference["row"]) - 1
    probes = X.iloc[rows].reset_index(drop=True).copy()
    cuts = [float(c) for c in reference["cut"]]  # text: 17 significant digits
    for j, (variable, cut) in enumerate(zip(reference["variable"], cuts, strict=True)):
        probes.loc[j, variable] = cut
    theirs = np.asarray(reference["predict"])
    ours = model.predict(probes)
    if CASES[name] == "class":
        np.testing.assert_array_equal(ours.astype(str), theirs.astype(str))
    else:
        np.testing.assert_allclose(ours, theirs.astype(float), rtol=1e-9, atol=1e-12)
    # the rule lives in the thresholds: a model file keeps it
    again = type(model).from_json(model.to_json())
    np.testing.assert_array_equal(again.predict(probes), ours)


def test_the_text_says_which_side_a_cut_goes():
    model, _ = _model("airquality", "squared_error")
    text = model.export_text()
    assert " < " in text and " >= " in text and " <= " not in text
    plain = rpart_like("squared_error").set_params(propagator="hard", evaluator="hard")
    data = load_dataset("airquality", dropna=True)
    assert " <= " in plain.fit(pd.DataFrame(data.X), data.y).export_text()

"""Lossless JSON save/load that never executes code, and text export."""

import json

import numpy as np
import pytest

from treekit_core import PluginError, TreeClassifier
from treekit_core.datasets import load_dataset


@pytest.fixture(scope="module")
def fitted():
    data = load_dataset("satimage")
    model = TreeClassifier(criterion="entropy", min_samples_leaf=3).fit(data.X[::3], data.y[::3])
    return data, model


def test_round_trip_reproduces_predictions_exactly(fitted, tmp_path):
    data, model = fitted
    path = tmp_path / "model.json"
    model.to_json(path)
    loaded = TreeClassifier.from_json(path)
    np.testing.assert_array_equal(loaded.predict(data.X), model.predict(data.X))
    np.testing.assert_array_equal(loaded.predict_proba(data.X), model.predict_proba(data.X))
    for field in (
        "children_left",
        "children_right",
        "feature",
        "threshold",
        "statistics",
        "weight",
        "impurity",
    ):
        np.testing.assert_array_equal(getattr(loaded.tree_, field), getattr(model.tree_, field))
    assert loaded.get_params() == model.get_params()
    assert loaded.classes_.dtype == model.classes_.dtype
    again = TreeClassifier.from_json(loaded.to_json())
    assert again.to_json() == loaded.to_json()


def test_json_is_plain_and_standard(fitted):
    _, model = fitted
    text = model.to_json()
    payload = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard constant {c}"))
    assert payload["format"] == "treekit-model"
    assert payload["composition"]["criterion"]["name"] == "entropy"


def test_loading_refuses_unknown_components_and_corrupt_trees(fitted):
    _, model = fitted
    payload = json.loads(model.to_json())
    payload["params"]["criterion"] = "os.system"
    with pytest.raises(PluginError, match="unknown criterion 'os.system'"):
        TreeClassifier.from_json(json.dumps(payload))
    payload = json.loads(model.to_json())
    payload["tree"]["children_left"][0] = 10**6
    with pytest.raises(ValueError, match="children_left"):
        TreeClassifier.from_json(json.dumps(payload))
    with pytest.raises(ValueError, match="not a treekit model"):
        TreeClassifier.from_json('{"format": "pickle"}')


def test_export_text_shows_rules_with_feature_names():
    data = load_dataset("haberman")
    model = TreeClassifier(max_depth=1).fit(data.X, data.y)
    text = model.export_text()
    feature = data.feature_names[model.tree_.feature[0]]
    threshold = f"{model.tree_.threshold[0]:.4f}"
    lines = text.splitlines()
    assert lines[0] == f"|--- x[{model.tree_.feature[0]}] <= {threshold}"
    assert lines[2] == f"|--- x[{model.tree_.feature[0]}] >  {threshold}"
    assert "class: negative" in text
    from treekit_core import export_text

    named = export_text(model.tree_, data.feature_names, model.classes_)
    assert named.splitlines()[0] == f"|--- {feature} <= {threshold}"

"""Model files and pickles written by treekit 0.3.0 before the core was put in layers
(tests/fixtures/models_v2, made by make_v2_models.py there) load and predict identically."""

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

from treekit_core import ForestClassifier, TreeClassifier

FIXTURES = Path(__file__).parent / "fixtures" / "models_v2"
NAMES = sorted(p.name[: -len(".expected.json")] for p in FIXTURES.glob("*.expected.json"))


def _data():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_v2", FIXTURES / "make_v2_models.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.mixed_data()


def test_every_fixture_is_there():
    assert NAMES == ["cost_complexity_cv", "forest", "j48", "subset_missing", "surrogates"]


@pytest.mark.parametrize("name", NAMES)
def test_a_0_3_0_model_file_and_pickle_predict_as_they_did(name):
    X, _ = _data()
    expected = json.loads((FIXTURES / f"{name}.expected.json").read_text())
    assert expected["treekit"] == "0.3.0"
    estimator = ForestClassifier if name == "forest" else TreeClassifier
    loaded = estimator.from_json((FIXTURES / f"{name}.json").read_text())
    np.testing.assert_array_equal(loaded.predict_proba(X), np.asarray(expected["proba"]))
    unpickled = pickle.loads((FIXTURES / f"{name}.pickle").read_bytes())
    np.testing.assert_array_equal(unpickled.predict_proba(X), np.asarray(expected["proba"]))
    # the node statistics 0.3.0 named class_sums come back as the statistics (issue 59:
    # before, an unpickled 0.3.0 tree had none, so it could not be exported or pruned)
    trees = unpickled.estimators_ if name == "forest" else [unpickled.tree_]
    loaded_trees = loaded.estimators_ if name == "forest" else [loaded.tree_]
    for tree, from_file in zip(trees, loaded_trees, strict=True):
        np.testing.assert_array_equal(tree.statistics, from_file.statistics)
    # and a refit of the unpickled estimator's composition works (its registry is there):
    # it fits as a fresh estimator with its parameters does (a forest no longer fits as
    # 0.3.0 did: issue 36 removed out-of-bag rows from its trees)
    refit = unpickled.fit(X, _data()[1])
    fresh = estimator(**unpickled.get_params(deep=False)).fit(X, _data()[1])
    np.testing.assert_array_equal(refit.predict_proba(X), fresh.predict_proba(X))
    if name != "forest":
        np.testing.assert_array_equal(refit.predict_proba(X), np.asarray(expected["proba"]))

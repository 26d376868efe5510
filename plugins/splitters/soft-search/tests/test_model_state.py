"""A model file's evaluator state is checked by the evaluator before any kernel reads it."""

import json

import numpy as np
import pytest

from treekit_core import TreeClassifier
from treekit_core.datasets import load_dataset
from treekit_core.testing import check_corrupted_model_files

EVALUATORS = {
    "soft": ["sigma"],
    "quinlan_ramp": ["z_minus", "z_plus"],
    "udt": ["sigma", "lower", "upper", "points"],
}


def _corrupt(state, key, how):
    if how == "truncate":
        state[key] = state[key][:-1]
    elif how == "extend":
        state[key] = state[key] + state[key][-1:]
    elif how == "nan":
        state[key][0] = "nan"
    elif how == "text":
        state[key] = "x"
    else:
        del state[key]


@pytest.mark.parametrize("jit", [True, False])
def test_corrupted_evaluator_state_is_refused_naming_the_field(jit):
    """Each evaluator's state, every way of breaking it, in a separate process (with and
    without numba's JIT)."""
    data = load_dataset("haberman")
    cases = []
    for evaluator, keys in sorted(EVALUATORS.items()):
        model = TreeClassifier(max_depth=3, evaluator=evaluator).fit(data.X, data.y)
        payload = json.loads(model.to_json())
        TreeClassifier.from_json(json.dumps(payload)).predict_proba(data.X)
        for key in keys:
            for how in ("truncate", "extend", "nan", "text", "missing"):
                copy = json.loads(json.dumps(payload))
                _corrupt(copy["tree"]["component_state"]["evaluator"], key, how)
                cases.append((f"{evaluator} {key} {how}", f"evaluator.{key}", copy))
    check_corrupted_model_files(cases, data.X, jit=jit)


def test_a_stack_size_never_comes_from_the_file():
    """The issue's crash: soft evaluation with the depth field zeroed. The depth no longer
    sizes anything; a depth that disagrees with the tree is refused."""
    data = load_dataset("haberman")
    model = TreeClassifier(evaluator="soft").fit(data.X, data.y)
    payload = json.loads(model.to_json())
    payload["tree"]["depth"] = [0] * len(payload["tree"]["depth"])
    with pytest.raises(ValueError, match="depth"):
        TreeClassifier.from_json(json.dumps(payload))
    proba = TreeClassifier.from_json(model.to_json()).predict_proba(data.X)
    np.testing.assert_allclose(proba, model.predict_proba(data.X))


def test_exports_refuse_soft_evaluation():
    pytest.importorskip("sklearn")
    from treekit_core.export import NotExportableError, to_shap, to_sklearn

    data = load_dataset("haberman")
    model = TreeClassifier(evaluator="soft", max_depth=3).fit(data.X, data.y)
    for export in (to_sklearn, to_shap):
        with pytest.raises(NotExportableError, match="evaluator 'soft' mixes several"):
            export(model, missing="larger_share")


def _udt_payload():
    rng = np.random.default_rng(0)
    X = rng.normal(loc=4.0, size=(200, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] > 6.0).astype(int)
    model = TreeClassifier(splitter="udt", propagator="udt", evaluator="udt", max_depth=4)
    return json.loads(model.fit(X, y).to_json()), X


def test_udt_thresholds_outside_their_boxes_still_give_distributions():
    """Issue 33: every threshold set to 0 (with the evaluator's boxes made to match) gave
    rows summing to 333. The gate is a probability whatever the file says."""
    from treekit_soft_search.udt import tested_feature_bounds

    payload, X = _udt_payload()
    # the boxes the crafted thresholds give, from the fitted tree with its thresholds at 0
    crafted = TreeClassifier.from_json(json.dumps(payload)).tree_
    crafted.threshold[~crafted.is_leaf] = 0.0
    lower, upper = tested_feature_bounds(crafted)
    tree = payload["tree"]
    tree["threshold"] = [0.0 if t != -2.0 else t for t in tree["threshold"]]
    state = tree["component_state"]["evaluator"]
    state["lower"] = [float(v) if np.isfinite(v) else ("-inf" if v < 0 else "inf") for v in lower]
    state["upper"] = [float(v) if np.isfinite(v) else ("-inf" if v < 0 else "inf") for v in upper]
    proba = TreeClassifier.from_json(json.dumps(payload)).predict_proba(X)
    assert ((proba >= 0) & (proba <= 1)).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize(
    "key,node,value", [("upper", 0, 0.0), ("lower", 1, 2.0**60), ("lower", 2, 1e308)]
)
def test_udt_boxes_that_disagree_with_the_tree_are_refused(key, node, value):
    from treekit_core import ModelFileError

    payload, _ = _udt_payload()
    payload["tree"]["component_state"]["evaluator"][key][node] = value
    with pytest.raises(ModelFileError, match=f"evaluator.{key} of node {node} is"):
        TreeClassifier.from_json(json.dumps(payload))


def test_node_sums_past_the_fit_bound_are_refused():
    from treekit_core import ModelFileError

    payload, _ = _udt_payload()
    payload["tree"]["statistics"] = [[1e308] * len(row) for row in payload["tree"]["statistics"]]
    with pytest.raises(ModelFileError, match="'statistics' holds 1e\\+308; at most 1e\\+150"):
        TreeClassifier.from_json(json.dumps(payload))

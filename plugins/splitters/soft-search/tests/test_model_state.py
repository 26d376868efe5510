"""A model file's evaluator state is checked by the evaluator before any kernel reads it."""

import json

import numpy as np
import pytest

from treekit_core import TreeClassifier
from treekit_core.datasets import load_dataset

EVALUATORS = {
    "soft": ["sigma"],
    "quinlan_ramp": ["z_minus", "z_plus"],
    "udt": ["sigma", "lower", "upper", "points"],
}


@pytest.mark.parametrize("evaluator", sorted(EVALUATORS))
def test_corrupted_evaluator_state_is_refused_naming_the_field(evaluator):
    data = load_dataset("haberman")
    model = TreeClassifier(max_depth=3, evaluator=evaluator).fit(data.X, data.y)
    payload = json.loads(model.to_json())
    TreeClassifier.from_json(json.dumps(payload)).predict_proba(data.X)
    for key in EVALUATORS[evaluator]:
        for corrupt in ("truncate", "extend", "nan", "text", "missing"):
            copy = json.loads(json.dumps(payload))
            state = copy["tree"]["component_state"]["evaluator"]
            if corrupt == "truncate":
                state[key] = state[key][:-1]
            elif corrupt == "extend":
                state[key] = state[key] + state[key][-1:]
            elif corrupt == "nan":
                state[key][0] = "nan"
            elif corrupt == "text":
                state[key] = "x"
            else:
                del state[key]
            with pytest.raises(ValueError, match=f"evaluator.{key}"):
                TreeClassifier.from_json(json.dumps(copy)).predict_proba(data.X)


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

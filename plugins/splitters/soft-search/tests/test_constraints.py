"""Monotonic constraints through soft propagation, soft evaluation and Quinlan's ramps:
a gate's share of the branch of larger values grows with the feature, so the leaf order the
constraint imposes survives every mixture (the evaluators provide ``monotone_routing``);
the soft and UDT searches, which do not keep the constraint, are refused naming them."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treekit_core import CompositionError, TreeClassifier, TreeRegressor
from treekit_core.testing import monotonic_violation

COMPOSITIONS = {
    "soft evaluation": {"evaluator": "soft", "evaluator_params": {"sigma": [0.4] * 3}},
    "soft propagation": {
        "propagator": "soft",
        "propagator_params": {"sigma": [0.3] * 3},
        "evaluator": "soft",
        "evaluator_params": {"sigma": [0.3] * 3},
    },
    "quinlan ramp": {"evaluator": "quinlan_ramp"},
}


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31 - 1),
    signs=st.lists(st.sampled_from([-1, 0, 1]), min_size=3, max_size=3),
    name=st.sampled_from(sorted(COMPOSITIONS)),
    regression=st.booleans(),
)
def test_soft_mixtures_keep_the_constraint(seed, signs, name, regression):
    if not any(signs):
        signs[0] = 1
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 3))
    signal = X[:, 0] - X[:, 1] + rng.normal(size=120)
    params = {"monotonic_cst": signs, "min_samples_leaf": 3, **COMPOSITIONS[name]}
    if regression:
        if name == "quinlan ramp":  # Quinlan's ramps count misclassified rows
            return
        model = TreeRegressor(**params).fit(X, signal)
        predict = model.predict
    else:
        model = TreeClassifier(**params).fit(X, (signal > 0).astype(int))

        def predict(Z):
            return model.predict_proba(Z)[:, 1]

    assert monotonic_violation(predict, signs, 3, seed=seed) <= 1e-9


@pytest.mark.parametrize("splitter", ["soft_search", "udt"])
@pytest.mark.parametrize("constraint", [{"monotonic_cst": [1, 0]}, {"interaction_cst": [[0], [1]]}])
def test_searches_without_the_constraint_are_refused(splitter, constraint):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    name = next(iter(constraint))
    with pytest.raises(CompositionError, match=f"splitter {splitter!r} cannot keep {name}"):
        TreeClassifier(splitter=splitter, **constraint).fit(X, y)

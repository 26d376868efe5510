"""partykit's surrogate splits (propagator ``ctree_surrogate`` with the core's ``surrogate``
evaluator) against ``ctree(..., control = ctree_control(maxsurrogate = 3))``
(fixtures/make_surrogate_fixtures.R): the same tree, node sizes, surrogates (feature, cut
or level groups, direction, order) and predictions, on data whose split features miss
values every k-th row (a numeric surrogate first, and a nominal one: car_test_frame)."""

import json
from pathlib import Path

import numpy as np
import pytest

from treekit_core import CompositionError, TreeClassifier, TreeRegressor
from treekit_core.datasets import load_dataset

FIXTURES = Path(__file__).parent / "fixtures"
SURROGATES = {
    "min_samples_split": 20,
    "min_samples_leaf": 7,
    "pruner": "none",
    "splitter": "ctree",
    "propagator": "ctree_surrogate",
    "evaluator": "surrogate",
    "propagator_params": {"max_surrogates": 3},
    "evaluator_params": {"max_surrogates": 3},
}


def _case(fixture):
    reference = json.loads((FIXTURES / f"{fixture}_surrogates.json").read_text())
    assert reference["partykit_version"] == "1.2.16"
    data = load_dataset(reference["dataset"])
    complete = ~np.isnan(data.X).any(axis=1)
    X, y = data.X[complete].copy(), data.y[complete]
    assert X.shape[0] == reference["n_rows"]
    X[reference["removed_rows"], data.feature_names.index(reference["missing_feature"])] = np.nan
    categorical = data.categorical if data.categorical.any() else None
    make = TreeClassifier if reference["kind"] == "class" else TreeRegressor
    return reference, data, X, y, make(categorical_features=categorical, **SURROGATES).fit(X, y)


def _kid_of_x_at_or_below(tree, node, slot):
    """The kid (1, 2) a numeric surrogate sends x <= cut to, and the cut."""
    fields = tree.node_fields
    cut = float(np.nextafter(fields["surrogate_threshold"][node][slot], -np.inf))
    return int(fields["surrogate_below"][node][slot]) + 1, cut


@pytest.mark.parametrize("fixture", ["quakes", "pima", "car"])
def test_the_surrogates_partykit_chooses(fixture):
    reference, data, X, y, model = _case(fixture)
    tree = model.tree_
    assert tree.n_nodes == len(reference["nodes"])
    for node, theirs in enumerate(reference["nodes"]):
        assert bool(tree.is_leaf[node]) == theirs["leaf"], node
        assert tree.n_samples[node] == theirs["n"], node
        if theirs["leaf"]:
            continue
        assert tree.feature[node] == theirs["split"]["feature"], node
        features = tree.node_fields["surrogate_feature"][node]
        ours = [int(f) for f in features if np.isfinite(f)]
        assert ours == [s["feature"] for s in theirs["surrogates"]], node
        for slot, surrogate in enumerate(theirs["surrogates"]):
            if surrogate.get("everything"):
                continue  # partykit's cut past every row (fixture script): none offered
            if "cut" in surrogate:
                kid, cut = _kid_of_x_at_or_below(tree, node, slot)
                assert cut == surrogate["cut"] and kid == surrogate["kid_below"], (node, slot)
                continue
            names = data.categories[data.feature_names[surrogate["feature"]]]
            left = int(tree.node_fields["surrogate_left_mask"][node][slot])
            right = int(tree.node_fields["surrogate_right_mask"][node][slot])
            for level, kid in zip(surrogate["levels"], surrogate["kid_of_level"], strict=True):
                code = names.index(level)
                expected = {1: (1, 0), 2: (0, 1), None: (0, 0)}[kid]
                assert ((left >> code) & 1, (right >> code) & 1) == expected, (node, level)
    if reference["kind"] == "class":
        np.testing.assert_allclose(model.predict_proba(X), reference["predict"], atol=1e-9)
    else:
        np.testing.assert_allclose(model.predict(X), reference["predict"], rtol=1e-9)


def test_the_evaluator_must_read_as_many_slots_as_the_propagator_writes():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    with pytest.raises(CompositionError, match="max_surrogates=3 but evaluator 'surrogate' has 5"):
        TreeRegressor(
            splitter="ctree",
            propagator="ctree_surrogate",
            evaluator="surrogate",
            propagator_params={"max_surrogates": 3},
        ).fit(X, X[:, 0])


def test_surrogate_parameters_are_checked_naming_them():
    with pytest.raises(ValueError, match="max_surrogates"):
        TreeRegressor(propagator="ctree_surrogate", propagator_params={"max_surrogates": 99}).fit(
            [[0.0], [1.0]], [0.0, 1.0]
        )


def test_a_model_file_keeps_the_surrogates():
    reference, data, X, y, model = _case("quakes")
    loaded = TreeRegressor.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert "surrogate: " in model.export_text()

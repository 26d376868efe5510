"""rpart's surrogate splits (propagator and evaluator ``surrogate``): rpart 4.1.19 reproduced
exactly on bundled data sets with missing values (fixtures made by
tests/fixtures/rpart_surrogates/make_fixtures.R), and the rules checked by hand."""

import json
from pathlib import Path

import numpy as np
import pytest

from treekit_core import TreeClassifier
from treekit_core.datasets import load_dataset
from treekit_core.engine.composition import CompositionError

FIXTURES = Path(__file__).parent / "fixtures" / "rpart_surrogates"


def rpart_like(data, **params):
    """The composition the fixtures' rpart call corresponds to: cp = 0.01 is alpha = 0.01
    times the root's error rate (rpart's risk is relative to the root as a leaf)."""
    X, y = data.X, data.y
    keep = ~np.isnan(X).all(axis=1)  # rpart's na.rpart drops rows missing every feature
    X, y = X[keep], y[keep]
    root_error = 1 - np.unique(y, return_counts=True)[1].max() / y.size
    model = TreeClassifier(
        propagator="surrogate",
        evaluator="surrogate",
        pruner="cost_complexity",
        pruner_params={"alpha": 0.01 * root_error, "risk": "misclassification"},
        min_samples_split=20,
        min_samples_leaf=7,
        categorical_features=data.categorical if data.categorical.any() else None,
        **params,
    )
    return model.fit(X, y)


def codes_of(model, feature, levels, data):
    """The model's category codes of ``levels`` (names) of a nominal feature."""
    names = data.categories[data.feature_names[feature]]
    known = model.categories_[feature]
    return [known.index(float(names.index(level))) for level in levels]


def branch_of_rpart_left(model, node, record, data):
    """Which of our node's branches is rpart's left son."""
    primary = record["primary"]
    if primary["type"] == "numeric":
        return 0 if primary["below_goes"] == "left" else 1
    codes = codes_of(model, primary["feature"], primary["left_levels"], data)
    mask = int(model.tree_.question_params(node)[0])
    return 0 if all(mask >> c & 1 for c in codes) else 1


@pytest.mark.parametrize("name", ["wisconsin", "vote", "labor"])
def test_rpart_is_reproduced_exactly(name):
    reference = json.loads((FIXTURES / f"{name}.json").read_text())
    assert reference["rpart_version"] == "4.1.19"
    data = load_dataset(name)
    model = rpart_like(data)
    tree, fields = model.tree_, model.tree_.node_fields
    records = {r["node"]: r for r in reference["nodes"]}
    assert model.get_n_leaves() == sum(r["leaf"] for r in reference["nodes"])
    pending = [(1, 0)]
    while pending:
        number, node = pending.pop()
        record = records[number]
        assert tree.n_samples[node] == record["n"], number
        assert str(model.classes_[tree.decision[node]]) == record["yval"], number
        assert bool(tree.is_leaf[node]) == record["leaf"], number
        if record["leaf"]:
            continue
        primary = record["primary"]
        assert tree.feature[node] == primary["feature"], number
        if primary["type"] == "numeric":
            assert tree.threshold[node] == pytest.approx(primary["threshold"], abs=1e-12)
        left = branch_of_rpart_left(model, node, record, data)
        surrogates = record["surrogates"]
        ours = [int(f) for f in fields["surrogate_feature"][node] if np.isfinite(f)]
        assert ours == [s["feature"] for s in surrogates], number
        for s, expected in enumerate(surrogates):
            assert fields["surrogate_agree"][node][s] == pytest.approx(expected["agree"], abs=1e-12)
            assert fields["surrogate_adj"][node][s] == pytest.approx(expected["adj"], abs=1e-12)
            if expected["type"] == "numeric":
                assert fields["surrogate_threshold"][node][s] == pytest.approx(
                    expected["threshold"], abs=1e-12
                )
                below = left if expected["below_goes"] == "left" else 1 - left
                assert fields["surrogate_below"][node][s] == below
            else:
                codes = codes_of(model, expected["feature"], expected["left_levels"], data)
                mask = "surrogate_left_mask" if left == 0 else "surrogate_right_mask"
                assert int(fields[mask][node][s]) == sum(1 << c for c in codes)
        kids = tree.children(node)
        pending += [(2 * number, int(kids[left])), (2 * number + 1, int(kids[1 - left]))]
    predicted = model.predict(data.X)  # all rows, those rpart dropped included
    assert [str(p) for p in predicted] == reference["train_predictions"]


def hand_data():
    """x0 decides the class; x1 agrees with x0's split on 9 of 10 rows; x2 is noise."""
    x0 = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], dtype=float)
    x1 = np.array([1, 1, 1, 1, 5, 5, 5, 5, 5, 5], dtype=float)  # row 4 disagrees
    x2 = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3], dtype=float)
    y = (x0 > 5).astype(int)
    return np.column_stack([x0, x1, x2]), y


def test_a_surrogate_by_hand():
    X, y = hand_data()
    model = TreeClassifier(
        propagator="surrogate", evaluator="surrogate", min_samples_leaf=2, max_depth=1
    ).fit(X, y)
    fields = model.tree_.node_fields
    # rpart's x < 5.5, asked as x <= the largest double below 5.5
    assert model.tree_.feature[0] == 0 and model.tree_.threshold[0] == np.nextafter(5.5, 0)
    assert "< 5.50" in model.export_text() and "<= 5.50" not in model.export_text()
    on_cut = np.array([[5.5, 1.0, 1.0]])
    np.testing.assert_array_equal(model.apply(on_cut), [model.tree_.children(0)[1]])
    # x1 < 3 sends rows 0-3 left, row 4 right: 9 of 10 agree; majority 5/10 ->
    # adj = (0.9 - 0.5) / 0.5 = 0.8
    assert int(fields["surrogate_feature"][0][0]) == 1
    assert fields["surrogate_threshold"][0][0] == 3.0 and fields["surrogate_below"][0][0] == 0
    assert fields["surrogate_agree"][0][0] == pytest.approx(0.9, abs=1e-15)
    assert fields["surrogate_adj"][0][0] == pytest.approx(0.8, abs=1e-15)
    missing = np.array([[np.nan, 1.0, np.nan], [np.nan, 5.0, np.nan], [np.nan] * 3])
    proba = model.predict_proba(missing)
    np.testing.assert_array_equal(proba[0], model.tree_.value[model.tree_.children(0)[0]])
    np.testing.assert_array_equal(proba[1], model.tree_.value[model.tree_.children(0)[1]])
    # both children hold 5 rows: no majority, the sample stays at the root
    np.testing.assert_array_equal(proba[2], model.tree_.value[0])


@pytest.mark.parametrize("use", [0, 1, 2])
def test_use_surrogate_decides_where_a_row_missing_the_primary_goes(use):
    X, y = hand_data()
    X = np.vstack([X, [[np.nan, 1.0, np.nan]] * 3])  # rows only the surrogate x1 can place
    y = np.concatenate([y, [0, 0, 0]])
    params = {"max_surrogates": 5, "use_surrogate": use}
    model = TreeClassifier(
        propagator="surrogate",
        evaluator="surrogate",
        propagator_params=params,
        evaluator_params=params,
        min_samples_leaf=2,
        max_depth=1,
    ).fit(X, y)
    left = model.tree_.children(0)[0]
    placed = 3 if use >= 1 else 0  # use 0: the rows stay at the root, in no child
    assert model.tree_.n_samples[left] == 5 + placed
    proba = model.predict_proba(X[-1:])
    expected = model.tree_.value[left] if use >= 1 else model.tree_.value[0]
    np.testing.assert_array_equal(proba[0], expected)


def test_the_two_components_must_agree():
    X, y = hand_data()
    with pytest.raises(CompositionError, match="give both the same max_surrogates"):
        TreeClassifier(
            propagator="surrogate",
            evaluator="surrogate",
            propagator_params={"max_surrogates": 3},
        ).fit(X, y)
    with pytest.raises(CompositionError, match="surrogate"):
        TreeClassifier(propagator="surrogate").fit(X, y)  # with the hard evaluator
    with pytest.raises(CompositionError, match="surrogate"):
        TreeClassifier(evaluator="surrogate").fit(X, y)
    for bad, message in (
        ({"use_surrogate": 3}, "use_surrogate must be 0, 1 or 2"),
        ({"max_surrogates": -1}, "max_surrogates must be an int"),
    ):
        with pytest.raises(ValueError, match=message):
            TreeClassifier(
                propagator="surrogate", evaluator="surrogate", propagator_params=bad
            ).fit(X, y)


def test_surrogates_travel_through_json_and_print(tmp_path):
    data = load_dataset("wisconsin")
    model = rpart_like(data)
    loaded = TreeClassifier.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.predict_proba(data.X), model.predict_proba(data.X))
    text = model.export_text()
    assert text.count("(surrogate: ") == int(
        np.isfinite(model.tree_.node_fields["surrogate_feature"]).sum()
    )
    payload = json.loads(model.to_json())
    payload["tree"]["node_fields"]["surrogate_feature"][0][0] = 99.0
    with pytest.raises(ValueError, match="surrogate_feature"):
        TreeClassifier.from_json(json.dumps(payload))
    payload = json.loads(model.to_json())
    payload["tree"]["node_fields"]["majority_branch"][0] = 2.0
    with pytest.raises(ValueError, match="majority_branch"):
        TreeClassifier.from_json(json.dumps(payload))


def test_multiway_questions_are_refused_with_a_hint():
    lenses = load_dataset("lenses")
    with pytest.raises(ValueError, match="nominal_split='subset'"):
        TreeClassifier(
            splitter="c45",
            propagator="surrogate",
            evaluator="surrogate",
            categorical_features=lenses.categorical,
        ).fit(lenses.X, lenses.y)

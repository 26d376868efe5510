"""Questions as components: a kind defined here, n-ary trees, multi-way splits, pruning of
trees with every question kind, and version-1 model files."""

import json
from pathlib import Path
from typing import ClassVar

import attrs
import numpy as np
import pytest

from treekit_core import (
    MISSING_BRANCH,
    Question,
    Split,
    Splitter,
    Tree,
    TreeClassifier,
    export_dot,
    export_text,
    hookimpl,
    registered,
)

FIXTURES = Path(__file__).parent / "fixtures" / "models_v1"
PRUNERS = (
    ("none", {}),
    ("cost_complexity", {"alpha": 0.005}),
    ("cost_complexity", {}),
    ("pessimistic", {}),
    ("mdl", {"alpha": 0.005}),
)


# -- a question kind written by a "third party": x_j mod 3, three branches -------------------
def mod3_answer(x, feature, threshold, params, n_branches):
    value = x[feature]
    if np.isnan(value) or value < 0:
        return MISSING_BRANCH
    return np.int64(value) % 3


@attrs.define(slots=False)
class Mod3(Question):
    name: ClassVar[str] = "mod3"
    description: ClassVar[str] = "x_j mod 3: three branches"
    answer: ClassVar[object] = staticmethod(mod3_answer)

    def branch_texts(self, feature, threshold, params, n_branches, context):
        return [f"{context.feature_names[feature]} mod 3 = {b}" for b in range(3)]


@attrs.define(slots=False)
class Mod3Splitter(Splitter):
    """Asks x_j mod 3 on the feature whose three-way partition drops impurity most."""

    name: ClassVar[str] = "mod3_search"
    handles_missing: ClassVar[bool] = True

    def prepare(self, data, criterion, rules):
        return criterion.compiled_impurity(), criterion.impurity_params(data.n_statistics), data

    def find_split(self, state, node, rules):
        impurity, params, data = state
        best = None
        for f in node.features:
            x = data.X[node.rows, f]
            known = ~np.isnan(x)
            branch = np.where(known, np.nan_to_num(x) % 3, -1).astype(int)
            weights = [node.row_weights[branch == b] for b in range(3)]
            if sum(w.size > 0 for w in weights) < 2:
                continue
            known_weight = node.row_weights[known].sum()
            sums = [w @ data.evidence[node.rows[branch == b]] for b, w in enumerate(weights)]
            parent = impurity(np.ascontiguousarray(sum(sums)), known_weight, params)
            children = sum(
                w.sum() * impurity(np.ascontiguousarray(s), w.sum(), params)
                for w, s in zip(weights, sums, strict=True)
                if w.sum() > 0
            )
            drop = (parent - children / known_weight) * known_weight / node.weight
            if best is None or drop > best.improvement:
                best = Split(int(f), -2.0, float(drop), question="mod3", n_branches=3)
        return best


class Mod3Plugin:
    @hookimpl
    def treekit_questions(self):
        return [Mod3]

    @hookimpl
    def treekit_splitters(self):
        return [Mod3Splitter]


def mod3_data(n=300, seed=0, missing=0.0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, 30, n), rng.integers(0, 30, n)]).astype(float)
    y = (X[:, 0] % 3 == 1).astype(int) + (X[:, 1] % 3 == 2).astype(int)
    X[rng.random(X.shape) < missing] = np.nan
    return X, y


def test_a_question_kind_from_a_plugin_grows_predicts_saves_and_prints():
    X, y = mod3_data()
    with registered(Mod3Plugin(), name="mod3-plugin"):
        model = TreeClassifier(splitter="mod3_search", max_depth=2).fit(X, y)
        tree = model.tree_
        assert [q.name for q in tree.questions] == ["mod3"]
        assert tree.n_children[0] == 3 and model.get_n_leaves() == 9
        assert model.score(X, y) == 1.0
        with pytest.raises(ValueError, match="node 0 has 3 children"):
            tree.children_left  # noqa: B018 - the property is the test
        loaded = TreeClassifier.from_json(model.to_json())
        np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
        text = export_text(tree, ["a", "b"])
        root, other = ("a", "b") if tree.feature[0] == 0 else ("b", "a")
        assert text.startswith(f"|--- {root} mod 3 = 0\n")
        assert f"|   |--- {other} mod 3 = 2\n" in text
        assert text.count("class:") == 9
        assert export_dot(tree).count("->") == tree.n_nodes - 1
        payload = json.loads(model.to_json())
        payload["tree"]["questions"] = ["mod4"]  # a kind nobody registered: a clear error
        with pytest.raises(Exception, match="unknown question 'mod4'"):
            TreeClassifier.from_json(json.dumps(payload))


def test_a_sample_that_cannot_answer_mixes_every_branch_by_its_training_share():
    X, y = mod3_data(missing=0.1)
    with registered(Mod3Plugin(), name="mod3-plugin"):
        model = TreeClassifier(splitter="mod3_search", max_depth=1).fit(X, y)
        tree = model.tree_
        f = tree.feature[0]
        known = ~np.isnan(X[:, f])
        counts = np.bincount((X[known, f] % 3).astype(int), minlength=3)
        np.testing.assert_allclose(tree.shares(0), counts / counts.sum())
        row = np.full((1, 2), np.nan)
        expected = sum(
            s * tree.value[c] for s, c in zip(tree.shares(0), tree.children(0), strict=True)
        )
        np.testing.assert_allclose(model.predict_proba(row)[0], expected)
        # the training rows with the value missing went down all three branches
        children_weight = tree.weight[tree.children(0)].sum()
        assert children_weight == pytest.approx(tree.weight[0])


@pytest.mark.parametrize("pruner,params", PRUNERS)
def test_every_pruner_prunes_a_three_way_tree(pruner, params):
    X, y = mod3_data(missing=0.05)
    y = np.where(np.random.default_rng(1).random(y.size) < 0.1, 2 - y, y)  # label noise
    with registered(Mod3Plugin(), name="mod3-plugin"):
        grown = TreeClassifier(splitter="mod3_search").fit(X, y)
        model = TreeClassifier(splitter="mod3_search", pruner=pruner, pruner_params=params)
        model.fit(X, y)
        check_pruned(model, grown, X)


def check_pruned(model, grown, X):
    tree = model.tree_
    tree.check_structure()
    assert 1 <= tree.n_leaves <= grown.tree_.n_leaves
    proba = model.predict_proba(X)
    assert np.isfinite(proba).all() and np.allclose(proba.sum(axis=1), 1.0)
    # the leaves' training weights add up to the root's (every row lands somewhere)
    assert tree.weight[tree.is_leaf].sum() == pytest.approx(tree.weight[0])
    loaded = TreeClassifier.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.predict_proba(X), proba)


# -- nominal features: subset and multi-way questions --------------------------------------
def nominal_data(n=240, seed=0, missing=0.0):
    """colour (4 categories) decides y together with a numeric size; 10% label noise."""
    rng = np.random.default_rng(seed)
    colour = rng.choice(np.array(["red", "green", "blue", "grey"], dtype=object), n)
    size = rng.normal(0, 1, n)
    y = np.where(np.isin(colour, ["red", "blue"]), size > 0.5, size > -0.5).astype(int)
    y = np.where(rng.random(n) < 0.1, 1 - y, y)
    X = np.column_stack([colour, size, rng.normal(0, 1, n)]).astype(object)
    X[rng.random(X.shape) < missing] = np.nan
    return X, y


@pytest.mark.parametrize("nominal_split", ["subset", "multiway"])
@pytest.mark.parametrize("missing", [0.0, 0.05])
@pytest.mark.parametrize("pruner,params", PRUNERS)
def test_every_pruner_prunes_subset_and_multiway_trees(nominal_split, missing, pruner, params):
    X, y = nominal_data(missing=missing)
    common = {
        "criterion": "entropy",
        "categorical_features": [0],
        "splitter_params": {"nominal_split": nominal_split},
    }
    grown = TreeClassifier(**common).fit(X, y)
    assert nominal_split in [q.name for q in grown.tree_.questions]
    model = TreeClassifier(**common, pruner=pruner, pruner_params=params).fit(X, y)
    check_pruned(model, grown, X)


def test_pessimistic_pruning_with_missing_values_never_crashes():
    """The issue's case: exhaustive splitter, 5% NaN, 150 x 3, entropy, 20 data sets."""
    for seed in range(20):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(150, 3))
        y = (X[:, 0] + rng.normal(0, 0.5, 150) > 0).astype(int)
        X[rng.random(X.shape) < 0.05] = np.nan
        grown = TreeClassifier(criterion="entropy").fit(X, y)
        model = TreeClassifier(criterion="entropy", pruner="pessimistic").fit(X, y)
        check_pruned(model, grown, X)


def test_multiway_split_equals_the_hand_computed_gain_and_gain_ratio():
    # categories a: 4 x class 0; b: 2 x class 0, 2 x class 1; c: 4 x class 1
    X = np.array([["a"] * 4 + ["b"] * 4 + ["c"] * 4], dtype=object).T
    y = np.array([0] * 4 + [0, 0, 1, 1] + [1] * 4)
    model = TreeClassifier(
        criterion="entropy",
        max_depth=1,
        categorical_features=[0],
        splitter_params={"nominal_split": "multiway", "gain_ratio": True},
    ).fit(X, y)
    tree = model.tree_
    assert tree.question_of(0).name == "multiway" and tree.n_children[0] == 3
    gain = 1.0 - (4 / 12) * 1.0  # H(root) = 1 bit; only b's branch is impure (1 bit)
    split_info = -3 * (1 / 3) * np.log2(1 / 3)
    assert tree.node_fields["improvement"][0] == pytest.approx(gain)
    assert tree.node_fields["gain_ratio"][0] == pytest.approx(gain / split_info)
    np.testing.assert_allclose(tree.shares(0), [1 / 3, 1 / 3, 1 / 3])
    assert "|--- x[0] = b" in model.export_text()


def test_a_multiway_branch_for_a_category_absent_at_its_node_is_labelled_like_the_node():
    # size splits first (it ties with colour, and the earlier feature wins a tie); the
    # left node holds only colours a and b, so its multi-way question has an empty branch
    # for c
    X = np.array([[-1.0, "a"]] * 4 + [[-1.0, "b"]] * 4 + [[1.0, "a"]] * 4 + [[1.0, "c"]] * 4)
    y = np.array([0] * 4 + [1] * 4 + [1] * 8)
    model = TreeClassifier(
        criterion="entropy",
        categorical_features=[1],
        splitter_params={"nominal_split": "multiway"},
    ).fit(X.astype(object), y)
    tree = model.tree_
    assert tree.question_of(0).name == "threshold"
    node = int(tree.children(0)[0])
    assert tree.question_of(node).name == "multiway" and tree.n_children[node] == 3
    empty = int(tree.children(node)[2])  # category "c"
    assert tree.weight[empty] == 0 and tree.shares(node)[2] == 0
    np.testing.assert_array_equal(tree.value[empty], tree.value[node])
    np.testing.assert_array_equal(
        model.predict_proba(np.array([[-1.0, "c"]], dtype=object))[0], tree.value[node]
    )
    assert model.score(X.astype(object), y) == 1.0


def test_gain_ratio_of_a_threshold_split_is_its_drop_over_its_split_information():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 2))
    y = (X[:, 1] > 0).astype(int)
    plain = TreeClassifier(criterion="entropy", max_depth=1).fit(X, y)
    ratio = TreeClassifier(
        criterion="entropy", max_depth=1, splitter_params={"gain_ratio": True}
    ).fit(X, y)
    assert plain.tree_.feature[0] == ratio.tree_.feature[0] == 1
    tree = ratio.tree_
    left, right = tree.weight[tree.children(0)]
    info = -sum(p * np.log2(p) for p in (left / 200, right / 200))
    assert tree.node_fields["gain_ratio"][0] == pytest.approx(
        tree.node_fields["improvement"][0] / info
    )


# -- model files written by version 1 --------------------------------------------------------
@pytest.mark.parametrize("name", ["subset_missing", "threshold_pruned"])
def test_a_version_1_model_file_loads_and_predicts_identically(name):
    model = TreeClassifier.from_json(FIXTURES / f"{name}.json")
    expected = json.loads((FIXTURES / f"{name}.expected.json").read_text())
    X = np.array(expected["X"], dtype=np.float64)  # None -> NaN
    np.testing.assert_array_equal(model.predict_proba(X), np.array(expected["proba"]))
    again = TreeClassifier.from_json(model.to_json())  # written as version 3
    assert json.loads(again.to_json())["version"] == 4
    np.testing.assert_array_equal(again.predict_proba(X), np.array(expected["proba"]))


def test_version_1_subset_questions_become_named_kinds():
    model = TreeClassifier.from_json(FIXTURES / "subset_missing.json")
    assert [q.name for q in model.tree_.questions] == ["threshold", "subset"]
    assert "x[0] in {" in model.export_text()


def test_from_binary_gives_missing_values_the_branches_training_shares():
    tree = Tree.from_binary(
        [1, -1, -1],
        [2, -1, -1],
        [0, -1, -1],
        [0.5, -2, -2],
        np.array([[3.0, 1.0], [3.0, 0.0], [0.0, 1.0]]),
        [4.0, 3.0, 1.0],
        [4, 3, 1],
        np.zeros(3),
        [0, 1, 1],
        np.zeros((3, 2)),
        np.zeros(3, dtype=int),
        1,
    )
    np.testing.assert_allclose(tree.shares(0), [0.75, 0.25])
    np.testing.assert_array_equal(tree.children_left, [1, -1, -1])
    tree.check_structure()


def test_gain_ratio_turns_the_choice_from_many_branches_to_two():
    """12 pure categories give the largest gain; a threshold with one impure row gives less
    gain but far less split information, so the gain ratio prefers it (the handout's
    reason for the ratio)."""
    rng = np.random.default_rng(0)
    category = np.repeat(np.arange(12), 10)
    y = (category % 2).astype(int)
    size = np.where(y == 1, 1.0, -1.0) + rng.uniform(-0.5, 0.5, y.size)
    size[0] = 2.0  # one class-0 row on the class-1 side of every threshold
    X = np.column_stack([category.astype(object), size]).astype(object)
    common = {
        "criterion": "entropy",
        "max_depth": 1,
        "categorical_features": [0],
    }
    plain = TreeClassifier(**common, splitter_params={"nominal_split": "multiway"}).fit(X, y)
    ratio = TreeClassifier(
        **common, splitter_params={"nominal_split": "multiway", "gain_ratio": True}
    ).fit(X, y)
    assert plain.tree_.question_of(0).name == "multiway" and plain.tree_.n_children[0] == 12
    assert ratio.tree_.question_of(0).name == "threshold" and ratio.tree_.feature[0] == 1


def _internal(tree_payload) -> int:
    """Internal nodes of a tree of format 4 (a binary tree's links)."""
    return sum(child >= 0 for child in tree_payload["children_left"])


@pytest.mark.parametrize(
    "corrupt,message",
    [
        (lambda t: t.update(left_shares=["nan"] * _internal(t)), "left_shares"),
        (
            lambda t: t.update(left_shares=[0.5] * _internal(t), right_shares=[0.7] * _internal(t)),
            "sum to 1",
        ),
        (lambda t: t["children_left"].__setitem__(0, 10**6), "children_left"),
        (lambda t: t["question"].__setitem__(0, 9), "question"),
        (lambda t: t["question"].__setitem__(len(t["question"]) - 1, 0), "question"),
        (lambda t: t["questions"].__setitem__(0, "os.system"), "unknown question 'os.system'"),
        (lambda t: t["node_fields"]["category_mask"].__setitem__(t["_subset"], -3.0), "mask"),
        (lambda t: t["node_fields"].pop("category_mask"), "category_mask"),
        (lambda t: t["feature"].__setitem__(t["_subset"], 99), "feature"),
    ],
)
def test_a_corrupt_tree_in_a_model_file_is_refused_naming_the_field(corrupt, message):
    X, y = nominal_data()
    model = TreeClassifier(criterion="entropy", max_depth=3, categorical_features=[0]).fit(X, y)
    payload = json.loads(model.to_json())
    tree = payload["tree"]
    subset = tree["questions"].index("subset")
    tree["_subset"] = tree["question"].index(subset)
    corrupt(tree)
    del tree["_subset"]
    with pytest.raises(Exception, match=message):
        TreeClassifier.from_json(json.dumps(payload))


def test_a_version_1_file_with_an_unknown_question_code_is_refused():
    payload = json.loads((FIXTURES / "subset_missing.json").read_text())
    payload["tree"]["node_fields"]["question"][7] = 5.0
    with pytest.raises(ValueError, match="codes other than 0, 1, 2"):
        TreeClassifier.from_json(json.dumps(payload))


@pytest.mark.parametrize("nominal_split", ["subset", "multiway"])
def test_rows_reaching_and_leaves_from_any_start_follow_each_question(nominal_split):
    from treekit_core import rows_reaching, tree_leaves_from
    from treekit_core.engine.questions import tree_leaves
    from treekit_core.testing import reference_leaf, reference_reaching

    X, y = nominal_data(missing=0.15)
    model = TreeClassifier(
        categorical_features=[0], splitter_params={"nominal_split": nominal_split}, max_depth=5
    ).fit(X, y)
    tree, encoded = model.tree_, model._check_predict_X(X)
    assert tree.n_nodes > 7
    node, row = rows_reaching(tree, encoded)
    expected = sorted(
        (n, i) for i in range(encoded.shape[0]) for n in reference_reaching(tree, encoded[i])
    )
    assert list(zip(node.tolist(), row.tolist(), strict=True)) == expected
    rng = np.random.default_rng(1)
    rows = rng.integers(0, encoded.shape[0], 500)
    start = rng.integers(0, tree.n_nodes, 500)
    leaves = tree_leaves_from(tree, encoded, rows, start)
    assert leaves.tolist() == [
        reference_leaf(tree, encoded[i], int(s)) for i, s in zip(rows, start, strict=True)
    ]
    np.testing.assert_array_equal(
        tree_leaves_from(tree, encoded, np.arange(encoded.shape[0]), 0), tree_leaves(tree, encoded)
    )
    with pytest.raises(ValueError, match="start nodes must lie in"):
        tree_leaves_from(tree, encoded, rows[:1], tree.n_nodes)

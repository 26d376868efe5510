"""Compact fitted trees (issue 59): a tree holds its node ids, offsets, features, depths,
decisions and row counts in 32 bits and its question kinds in 8 (never wrapping: a value
that does not fit is refused naming the field); the threshold walk reads the tree's own
arrays. Model files of tree format 4 keep a binary tree's links as left/right children
and its shares only where they are not the defaults; files of format 3 (child lists) and
the older formats still load (tests/test_model_files_v2.py holds 0.3.0's files)."""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import ForestRegressor, TreeClassifier, TreeRegressor
from treekit_core.engine.tree import HELD_INTEGERS, NARROWEST_HELD, Tree, held_integers
from treekit_core.estimators import model_file
from treekit_core.registry import get_registry


def _walk(tree, x) -> int:
    """The leaf a complete row reaches, by the child lists in plain Python (int64 ids):
    what the compiled walk over the tree's int32 arrays must agree with."""
    node = 0
    start, ids = tree.child_start.astype(np.int64), tree.child_ids.astype(np.int64)
    while start[node + 1] > start[node]:
        branch = 0 if x[int(tree.feature[node])] <= tree.threshold[node] else 1
        node = int(ids[start[node] + branch])
    return node


def test_a_fitted_tree_holds_its_integers_narrow():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    tree = TreeRegressor().fit(X, X[:, 0] + rng.normal(size=400)).tree_
    for name, dtype in HELD_INTEGERS.items():
        if name not in NARROWEST_HELD:
            assert getattr(tree, name).dtype == dtype, name
    # depths (below 128 here) and decisions (all 0: a regression tree decides nothing)
    # in a byte each
    assert tree.depth.dtype == tree.decision.dtype == np.int8
    # the threshold walk reads one 16-byte record a node: threshold, the first child's
    # slot (the children side by side: the step adds the comparison, no branch), the
    # feature (-id - 1 at a leaf); one cache line a step where three arrays took two
    from treekit_core.engine.questions import packed_thresholds
    from treekit_core.kernels.routing import CHILDREN_WORD, FEATURE_WORD, RECORD_WORDS

    thresholds, words = packed_thresholds(tree)
    assert np.shares_memory(thresholds, words) and words.nbytes == 16 * tree.n_nodes
    records = words.reshape(tree.n_nodes, RECORD_WORDS)
    # the records by hand: the root at slot 0, the internal nodes' children in pairs of
    # slots, the internal nodes in the order of their ids
    slot_of, used = {0: 0}, 1
    for node in range(tree.n_nodes):
        if tree.children_left[node] >= 0:
            slot_of[int(tree.children_left[node])] = used
            slot_of[int(tree.children_right[node])] = used + 1
            used += 2
    assert sorted(slot_of.values()) == list(range(tree.n_nodes))
    for node, slot in slot_of.items():
        left = tree.children_left[node]
        if left >= 0:
            assert thresholds[2 * slot] == tree.threshold[node]
            assert records[slot, FEATURE_WORD] == tree.feature[node]
            assert records[slot, CHILDREN_WORD] == slot_of[int(left)]
            assert slot_of[int(tree.children_right[node])] == slot_of[int(left)] + 1
        else:
            assert records[slot, FEATURE_WORD] == -node - 1
    # a field set later is narrowed as well (attrs runs the converter on assignment)
    tree.decision = np.zeros(tree.n_nodes, dtype=np.int64)
    assert tree.decision.dtype == np.int8
    tree.n_samples = tree.n_samples.astype(np.int64)
    assert tree.n_samples.dtype == np.int32


def test_a_value_that_does_not_fit_is_refused_naming_the_field():
    with pytest.raises(ValueError, match="'question'.*int8"):
        held_integers("question", np.array([-1, 200]))
    with pytest.raises(ValueError, match="'child_ids'.*int32"):
        held_integers("child_ids", np.array([2**31]))
    # a count of rows past int32 is held in 64 bits, never wrapped
    counts = held_integers("n_samples", np.array([2**33, 1]))
    assert counts.dtype == np.int64 and counts[0] == 2**33
    # depths and decisions in the narrowest signed type that holds them, int32 at most
    for values, dtype in (([0, 1, 2], np.int8), ([-1, 127], np.int8), ([0, 128], np.int16)):
        for name in NARROWEST_HELD:
            held = held_integers(name, np.array(values))
            assert held.dtype == dtype and held.tolist() == values, (name, values)
    assert held_integers("depth", np.array([0, 2**20])).dtype == np.int32
    with pytest.raises(ValueError, match="'depth'.*int32"):
        held_integers("depth", np.array([0, 2**31]))
    with pytest.raises(ValueError, match="'decision'.*int32"):
        held_integers("decision", np.array([-(2**31) - 1, 0]))


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(2, 300),
    features=st.integers(1, 4),
    regression=st.booleans(),
)
def test_the_compiled_walk_over_narrow_arrays_reaches_the_plain_walks_leaf(
    seed, n, features, regression
):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, features)).round(1)  # ties between thresholds and rows
    y = X[:, 0] + rng.normal(size=n)
    labels = np.arange(n) % 2 == 0 if n < 10 else y > 0  # two classes at every size
    model = (TreeRegressor() if regression else TreeClassifier()).fit(
        X, y if regression else labels
    )
    tree = model.tree_
    new = rng.normal(size=(50, features)).round(1)
    leaves = model.apply(new)
    assert leaves.tolist() == [_walk(tree, row) for row in new]
    np.testing.assert_array_equal(
        model.predict(new) if regression else model.predict_proba(new),
        tree.value[leaves, :1].ravel() if regression else tree.value[leaves],
    )


def _format3(payload: dict) -> dict:
    """A format-4 tree payload as format 3 wrote it (child lists, every share)."""
    tree = model_file.tree_from_dict(payload, _questions)
    out = {k: v for k, v in payload.items() if k not in model_file.LINK_FIELDS}
    out["tree_format"] = 3
    for name in ("child_start", "child_ids", "child_shares"):
        out[name] = model_file.encode_floats(getattr(tree, name))
    return out


def _questions(name):
    return get_registry().question(name)


def _fitted():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(600, 4))
    X[rng.random(X.shape) < 0.1] = np.nan  # C4.5's shares: not the weights' own
    y = np.nan_to_num(X[:, 0]) + rng.normal(size=600)
    frame = pd.DataFrame({"c": pd.Categorical(rng.choice(list("abcde"), 600)), "x": X[:, 1]})
    return {
        "regression": (TreeRegressor(max_depth=6), np.nan_to_num(X), y),
        "missing shares": (TreeClassifier(max_depth=5), X, y > 0),
        "multiway": (
            TreeClassifier(max_depth=3, splitter_params={"nominal_split": "multiway"}),
            frame,
            y > 0,
        ),
        "j48": (
            TreeClassifier(criterion="entropy", splitter="c45", pruner="pessimistic"),
            X,
            y > 0.5,
        ),
    }


@pytest.mark.parametrize("kind", list(_fitted()))
def test_format_4_files_keep_links_and_format_3_files_still_load(kind):
    model, X, y = _fitted()[kind]
    model.fit(X, y)
    payload = json.loads(model.to_json())
    assert payload["version"] == model_file.MODEL_VERSION == 4
    written = payload["tree"]
    assert written["tree_format"] == 4
    binary = model.tree_.is_binary
    # a binary tree is written by its links, any other by its child lists
    assert ("children_left" in written) == binary
    assert ("child_start" in written) == (not binary)
    again = type(model).from_json(json.dumps(payload))
    old = dict(payload, version=3, tree=_format3(written))
    if "grown_tree" in payload:
        old["grown_tree"] = _format3(payload["grown_tree"])
    older = type(model).from_json(json.dumps(old))
    for loaded in (again, older):
        for name in ("child_start", "child_ids", "child_shares", "feature", "threshold"):
            np.testing.assert_array_equal(getattr(loaded.tree_, name), getattr(model.tree_, name))
        predict = "predict" if kind == "regression" else "predict_proba"
        np.testing.assert_array_equal(getattr(loaded, predict)(X), getattr(model, predict)(X))


def test_format_4_links_are_checked_before_anything_indexes_with_them():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    model = TreeRegressor(max_depth=3).fit(X, X[:, 0])
    payload = json.loads(model.to_json())
    tree = payload["tree"]
    n = len(tree["children_left"])
    internal = [i for i, c in enumerate(tree["children_left"]) if c >= 0]

    def corrupt(**fields):
        bad = dict(payload, tree=dict(tree, **fields))
        return lambda: TreeRegressor.from_json(json.dumps(bad))

    cases = {
        "must hold -1 .a leaf. or a node id": corrupt(
            children_left=[
                n if i == internal[0] else c for i, c in enumerate(tree["children_left"])
            ]
        ),
        "node 0 has one child": corrupt(children_right=[-1] + tree["children_right"][1:]),
        "'left_shares' must hold one share per internal node": corrupt(left_shares=[0.5]),
        "'children_left', 'children_right' and 'weight'": corrupt(children_right=[-1]),
        "'child_ids' points outside the tree or backwards": corrupt(
            children_left=[
                0 if i == internal[0] else c for i, c in enumerate(tree["children_left"])
            ]
        ),
    }
    for message, load in cases.items():
        with pytest.raises(ValueError, match=message):
            load()


def test_a_version_3_reader_would_misread_format_4_so_the_file_says_version_4():
    # a treekit that reads versions 1-3 takes links without child lists for format 1's
    # (question codes, 0.5 shares): the version is what stops it
    assert 4 in model_file.READABLE_MODEL_VERSIONS
    payload = json.loads(TreeRegressor(max_depth=2).fit([[0.0], [1.0]], [0.0, 1.0]).to_json())
    assert payload["version"] == 4


def test_a_forest_pickles_and_predicts_as_before_with_narrow_trees():
    import pickle

    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 6))
    y = X[:, 0] + rng.normal(size=500)
    forest = ForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    new = rng.normal(size=(200, 6))
    # the forest's mean is the mean of the plain walks' leaf values
    expected = np.mean(
        [[tree.value[_walk(tree, row), 0] for row in new] for tree in forest.estimators_], axis=0
    )
    np.testing.assert_allclose(forest.predict(new), expected, rtol=0, atol=1e-12)
    back = pickle.loads(pickle.dumps(forest))
    assert all(isinstance(t, Tree) and t.child_ids.dtype == np.int32 for t in back.estimators_)
    np.testing.assert_array_equal(back.predict(new), forest.predict(new))


def test_the_walk_records_refuse_links_that_do_not_point_down():
    # the records' one pass sets a child's slot at its parent: a link to a lower id (or
    # outside the tree) would leave a slot unset, and a node with two parents would take
    # slots past the end: refused, not read
    from treekit_core.kernels.routing import pack_nodes

    feature, threshold = np.zeros(3, dtype=np.int32), np.zeros(3)
    left, right = np.array([1, -1, -1]), np.array([2, -1, -1])
    thresholds, words = pack_nodes(left, right, feature, threshold)
    assert words.tolist() == [0, 0, 1, 0, 0, 0, -1, -2, 0, 0, -1, -3]
    bad = (
        ([2, -1, 0], [1, -1, -1]),  # a link back up
        ([1, -1, -1], [3, -1, -1]),  # outside the tree
        ([1, 2, -1, -1], [3, 3, -1, -1]),  # node 3 has two parents
    )
    for bad_left, bad_right in bad:
        feature, threshold = np.zeros(len(bad_left), dtype=np.int32), np.zeros(len(bad_left))
        with pytest.raises(ValueError, match="higher node ids inside the tree"):
            pack_nodes(np.array(bad_left), np.array(bad_right), feature, threshold)

"""Pruning log-rank trees (issue 62): LeBlanc & Crowley's split complexity
G_alpha(T) = sum of the splits' chi-squares - alpha x splits. The weakest-link sequence
against a hand computation and against every pruned subtree (brute force), the
cross-validated choice reproducible with a seed, the held-out statistic survdiff's,
prune(alpha) as refitting, printcp, and the refusals."""

import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import CompositionError, SurvivalTree, Tree
from treekit_core.builtins.pruners.cost_complexity import evaluation_alphas
from treekit_core.builtins.pruners.split_complexity import (
    SplitComplexity,
    held_out_statistics,
    split_complexity_sequence,
    split_statistics,
)
from treekit_core.datasets import load_dataset
from treekit_core.engine.questions import rows_reaching
from treekit_core.engine.tree import nodes_kept
from treekit_core.tools.metrics import logrank_test

#  0 -> 1, 2;  1 -> 3, 4;  2 -> 5, 6;  5 -> 7, 8
LEFT = [1, 3, 5, -1, -1, 7, -1, -1, -1]
RIGHT = [2, 4, 6, -1, -1, 8, -1, -1, -1]
INTERNAL = [0, 1, 2, 5]


def small_tree(statistics) -> Tree:
    """The tree above, each internal node's standardised statistic Z (G = Z^2) given."""
    n = len(LEFT)
    improvement = np.full(n, np.nan)
    improvement[INTERNAL] = statistics
    depth = [0, 1, 1, 2, 2, 2, 2, 3, 3]
    weight = np.array([8.0, 3, 5, 1, 2, 3, 2, 1, 2])
    return Tree.from_binary(
        LEFT,
        RIGHT,
        [0 if c >= 0 else -1 for c in LEFT],
        [0.5 if c >= 0 else -2.0 for c in LEFT],
        np.column_stack([weight / 2, weight]),
        weight,
        weight.astype(int),
        np.zeros(n),
        depth,
        np.zeros((n, 1)),
        np.zeros(n, dtype=int),
        1,
        node_fields={"improvement": improvement},
    )


def test_the_sequence_is_the_hand_computation():
    # G: node 0: 9, node 1: 1, node 2: 4, node 5: 0.5. g(h) = G(T_h) / |S(T_h)|:
    # node 5: 0.5 / 1; node 1: 1 / 1; node 2: 4.5 / 2; root 14.5 / 4. Node 5 goes at 0.5;
    # then node 2's branch is 4 / 1, the root's 14 / 3, node 1's 1: node 1 at 1; then the
    # root's 13 / 2 = 6.5 against node 2's 4: node 2 at 4; the root at 9.
    tree = small_tree([3.0, 1.0, 2.0, np.sqrt(0.5)])
    sequence = split_complexity_sequence(tree)
    np.testing.assert_array_equal(sequence.pruned_node, [5, 1, 2, 0])
    np.testing.assert_allclose(sequence.step_alpha, [0.5, 1.0, 4.0, 9.0], rtol=1e-12)
    pruned = SplitComplexity(alpha=2.0).prune(tree, None)
    state = pruned.component_state["pruner"]
    np.testing.assert_allclose(state["alphas"], [0.0, 0.5, 1.0, 4.0, 9.0], rtol=1e-12)
    np.testing.assert_array_equal(state["n_splits"], [4, 3, 2, 1, 0])
    np.testing.assert_allclose(state["split_statistic"], [14.5, 14.0, 13.0, 9.0, 0.0])
    # at alpha 2: nodes 5 and 1 pruned: the root and node 2 split
    assert pruned.n_nodes == 5 and (~pruned.is_leaf).sum() == 2


def _prunings(tree):
    """Every pruned subtree of the small tree, as its set of internal nodes: a node stays a
    split only where its parent does."""
    parent = tree.parents()
    for keep in itertools.product([False, True], repeat=len(INTERNAL)):
        kept = {h for h, k in zip(INTERNAL, keep, strict=True) if k}
        if all(parent[h] in kept for h in kept if parent[h] >= 0):
            yield kept


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0.0, 5.0), min_size=4, max_size=4),
    st.floats(0.0, 30.0),
)
def test_the_pruned_tree_maximises_the_split_complexity(statistics, alpha):
    """At any alpha, the subtree the pruner keeps has the largest G(T) - alpha |S(T)| of
    all pruned subtrees (LeBlanc & Crowley's optimality; nested subtrees)."""
    tree = small_tree(statistics)
    g = dict(zip(INTERNAL, np.square(statistics), strict=True))
    best = max(sum(g[h] for h in kept) - alpha * len(kept) for kept in _prunings(tree))
    pruned = SplitComplexity(alpha=alpha).prune(tree, None)
    improvement = pruned.node_fields["improvement"]
    splits = ~pruned.is_leaf
    found = float(np.sum(np.square(improvement[splits]))) - alpha * int(splits.sum())
    assert found == pytest.approx(best, rel=1e-9, abs=1e-9)


@pytest.fixture(scope="module")
def veteran():
    return load_dataset("veteran")


def test_the_bootstrap_choice_is_reproducible_with_a_seed(veteran):
    fits = [
        SurvivalTree(
            pruner="split_complexity",
            pruner_params={"seed": seed, "n_bootstrap": 10},
            min_samples_leaf=5,
        ).fit(veteran.X, veteran.y)
        for seed in (3, 3, 4)
    ]
    first, again, other = (f.pruning_path_ for f in fits)
    np.testing.assert_array_equal(first["optimism"], again["optimism"])
    np.testing.assert_array_equal(fits[0].tree_.threshold, fits[1].tree_.threshold)
    assert not np.array_equal(first["optimism"], other["optimism"])
    # the choice: the level of largest G(T) - optimism - 4 |S(T)| (ties: the smaller tree)
    corrected = first["split_statistic"] - first["optimism"] - 4.0 * first["n_splits"]
    np.testing.assert_allclose(first["corrected_complexity"], corrected, rtol=1e-12)
    chosen = int(np.flatnonzero(first["selected"])[0])
    assert chosen == int(np.flatnonzero(corrected == corrected.max())[-1])
    assert fits[0].tree_.n_leaves == first["n_leaves"][chosen]
    # the root alone has no optimism; the bootstrap trees' splits score more on the
    # samples that grew them than on the original rows
    assert first["optimism"][-1] == 0 and (first["optimism"][:-1] > 0).all()


def test_the_optimism_is_the_bootstrap_tree_s_statistics_by_hand(veteran):
    """One bootstrap tree, grown again here from the same draw: at each level's evaluation
    alpha its kept splits' statistics on its sample (what the search stored) less on the
    original rows (held_out_statistics), summed."""
    model = SurvivalTree(
        pruner="split_complexity", pruner_params={"seed": 7, "n_bootstrap": 1}, min_samples_leaf=5
    ).fit(veteran.X, veteran.y)
    path = model.pruning_path_
    rng = np.random.default_rng(7)
    n = veteran.y.size
    counts = np.bincount(rng.integers(0, n, n), minlength=n)
    boot = SurvivalTree(min_samples_leaf=5).fit(veteran.X, veteran.y, sample_weight=counts)
    rows = boot.composition_.target.encode(veteran.y, n).rows
    on_original = held_out_statistics(
        boot.tree_, veteran.X, rows, boot.composition_.criterion.two_sample_statistic
    )
    gain = split_statistics(boot.tree_) - on_original
    expected = []
    for alpha in evaluation_alphas(path["alphas"]):
        if np.isinf(alpha):  # the root alone: no split
            expected.append(0.0)
            continue
        pruned = SplitComplexity(alpha=float(alpha)).prune(boot.tree_, None)
        kept = nodes_kept(boot.tree_, pruned)[~pruned.is_leaf]
        expected.append(float(np.sum(gain[kept])))
    np.testing.assert_allclose(path["optimism"], expected, rtol=1e-9, atol=1e-9)


def test_the_held_out_statistic_is_survdiff_s_at_every_split(veteran):
    model = SurvivalTree(max_depth=3, min_samples_leaf=10).fit(veteran.X, veteran.y)
    tree = model.tree_
    names = veteran.y.dtype.names
    event_field = next(n for n in names if veteran.y.dtype[n].kind == "b")
    time_field = next(n for n in names if n != event_field)
    event, time = veteran.y[event_field], veteran.y[time_field].astype(float)
    rows = model.composition_.target.encode(veteran.y, time.size).rows
    found = held_out_statistics(
        tree, veteran.X, rows, model.composition_.criterion.two_sample_statistic
    )
    nodes, rows = rows_reaching(tree, np.ascontiguousarray(veteran.X, dtype=float))
    for h in np.flatnonzero(~tree.is_leaf):
        at = rows[nodes == h]
        goes_left = veteran.X[at, tree.feature[h]] <= tree.threshold[h]
        y = np.column_stack([time[at], event[at]])
        expected = logrank_test(y, goes_left.astype(int)).statistic
        assert found[h] == pytest.approx(expected, rel=1e-10)
        # on the training rows: the statistic the split search stored, squared
        assert found[h] == pytest.approx(tree.node_fields["improvement"][h] ** 2, rel=1e-9)


def test_prune_gives_the_tree_a_refit_at_that_alpha_gives(veteran):
    model = SurvivalTree(pruner="split_complexity", min_samples_leaf=5).fit(veteran.X, veteran.y)
    for copy in (model, SurvivalTree.from_json(model.to_json())):
        pruned = copy.prune(alpha=3.0)
        refit = SurvivalTree(
            pruner="split_complexity", pruner_params={"alpha": 3.0}, min_samples_leaf=5
        ).fit(veteran.X, veteran.y)
        np.testing.assert_array_equal(pruned.tree_.threshold, refit.tree_.threshold)
        np.testing.assert_array_equal(
            pruned.predict_survival_function(veteran.X, return_array=True),
            refit.predict_survival_function(veteran.X, return_array=True),
        )
    mgus2 = load_dataset("mgus2")
    competing = SurvivalTree(
        target="competing_risks", pruner="split_complexity", min_samples_leaf=10
    ).fit(mgus2.X, mgus2.y)
    refit = SurvivalTree(
        target="competing_risks",
        pruner="split_complexity",
        pruner_params={"alpha": 2.0},
        min_samples_leaf=10,
    ).fit(mgus2.X, mgus2.y)
    np.testing.assert_array_equal(
        competing.prune(alpha=2.0).predict_cumulative_incidence(mgus2.X, 2, return_array=True),
        refit.predict_cumulative_incidence(mgus2.X, 2, return_array=True),
    )


def test_printcp_and_refusals(veteran, capsys):
    model = SurvivalTree(pruner="split_complexity", min_samples_leaf=5).fit(veteran.X, veteran.y)
    model.printcp()
    text = capsys.readouterr().out
    assert "alpha nsplit     G(T) optimism corrected" in text and text.count("*") == 1
    with pytest.raises(ValueError, match="give alpha="):
        model.prune(cp=0.01)
    with pytest.raises(CompositionError, match="split_complexity.*gini|gini.*split_complexity"):
        from treekit_core import TreeClassifier

        TreeClassifier(pruner="split_complexity").fit(veteran.X, veteran.y["time"] > 100)
    payload = json.loads(model.to_json())
    payload["tree"]["component_state"]["pruner"]["selected"] = 99
    with pytest.raises(ValueError, match="pruner.selected"):
        SurvivalTree.from_json(json.dumps(payload))

"""rpart's parms = list(prior, loss) in splitting, labelling and pruning (issue 37): the tree
rpart 4.1.19 grows (fixtures made by tests/fixtures/rpart_parms/make_fixtures.R) is grown
by TreeClassifier(**rpart_parms(y, prior, loss)), node for node."""

import json
from pathlib import Path

import numpy as np
import pytest

from treekit_core import TreeClassifier, rpart_parms
from treekit_core.datasets import load_dataset

FIXTURES = Path(__file__).parent / "fixtures" / "rpart_parms"


def rpart_like(data, reference):
    params = rpart_parms(data.y, prior=reference["prior"], loss=reference["loss"])
    grown = TreeClassifier(
        propagator="surrogate",
        evaluator="surrogate",
        min_samples_split=20,
        min_samples_leaf=7,
        **params,
    ).fit(data.X, data.y)
    return grown.prune(cp=0.01)  # rpart's default cp


def in_rpart_order(tree, below_goes_left):
    """Our nodes in rpart's preorder: rpart's left son first, which is our ``x <= t``
    branch unless rpart's split sends values below the threshold right."""
    order, stack, directions = [], [0], iter(below_goes_left)
    while stack:
        node = stack.pop()
        order.append(node)
        if tree.is_leaf[node]:
            continue
        children = list(tree.child_ids[tree.child_start[node] : tree.child_start[node + 1]])
        if not next(directions):
            children.reverse()
        stack.extend(reversed(children))
    return order


def fitted(name):
    reference = json.loads((FIXTURES / f"{name}.json").read_text())
    assert reference["rpart_version"] == "4.1.19"
    data = load_dataset(Path(reference["data"]).stem)
    tree = rpart_like(data, reference).tree_
    order = in_rpart_order(tree, reference["below_goes_left"])
    names = [
        "<leaf>" if tree.is_leaf[node] else data.feature_names[tree.feature[node]] for node in order
    ]
    return reference, data, tree, order, names


@pytest.mark.parametrize("name", ["wdbc_loss", "haberman_prior_loss", "pima_loss"])
def test_rparts_tree_with_prior_and_loss_is_reproduced(name):
    reference, data, tree, order, names = fitted(name)
    assert names == reference["var"]
    internal = [node for node in order if not tree.is_leaf[node]]
    np.testing.assert_allclose(tree.threshold[internal], reference["threshold"], rtol=1e-12)
    # every node holds rpart's rows and decides rpart's class (fitted with prior and loss)
    assert [int(tree.n_samples[node]) for node in order] == reference["n"]
    assert [int(tree.decision[node]) + 1 for node in order] == reference["yval"]
    # rpart's dev is the node's expected loss under the priors: proportional to ours
    params = rpart_parms(data.y, reference["prior"], reference["loss"])
    costs = np.asarray(params["labeler_params"]["costs"])
    risk = (tree.statistics @ costs)[np.arange(tree.n_nodes), tree.decision][order]
    dev = np.asarray(reference["dev"], dtype=float)
    np.testing.assert_allclose(risk / risk[0], dev / dev[0], rtol=1e-9, atol=1e-12)


def test_a_prior_alone_gives_rparts_tree_up_to_a_tie():
    """wdbc with prior (0.5, 0.5): rpart's tree down to a node of 34 rows where
    concave_points_se (rpart) and radius_worst (treekit) both cut the rows into sides of 21
    and 13 with the same class counts, so the same improvement in exact arithmetic: a tie
    that rounding breaks (rpart sums in its order, treekit in its own)."""
    reference, data, tree, order, names = fitted("wdbc_prior")
    differ = [i for i, (a, b) in enumerate(zip(names, reference["var"], strict=True)) if a != b]
    tied = differ[0]
    assert (names[tied], reference["var"][tied]) == ("radius_worst", "concave_points_se")
    assert names[:tied] == reference["var"][:tied]
    assert sorted(tree.n_samples.astype(int)) == sorted(reference["n"])
    node = order[tied]
    reaching = model_rows_reaching(tree, data.X, node)
    assert reaching.size == 34
    split = list(data.feature_names).index("concave_points_se")
    internal_index = sum(1 for i in order[:tied] if not tree.is_leaf[i])
    theirs = data.X[reaching, split] <= reference["threshold"][internal_index]
    ours = data.X[reaching, tree.feature[node]] <= tree.threshold[node]
    labels = data.y[reaching]

    def sides(below):
        return sorted(
            tuple(np.bincount(labels[side] == "M", minlength=2)) for side in (below, ~below)
        )

    assert sides(theirs) == sides(ours)


def model_rows_reaching(tree, X, node):
    """The training rows that reach ``node`` (numeric questions: x <= threshold goes to the
    first child)."""
    rows = np.arange(X.shape[0])
    current = 0
    while current != node:
        children = tree.child_ids[tree.child_start[current] : tree.child_start[current + 1]]
        below = X[rows, tree.feature[current]] <= tree.threshold[current]
        target = next(c for c in children if _holds(tree, c, node))
        rows = rows[below] if target == children[0] else rows[~below]
        current = target
    return rows


def _holds(tree, ancestor, node):
    """Whether ``node`` is in the subtree of ``ancestor``."""
    stack = [ancestor]
    while stack:
        n = stack.pop()
        if n == node:
            return True
        stack.extend(tree.child_ids[tree.child_start[n] : tree.child_start[n + 1]])
    return False


def test_rpart_parms_refuses_what_rpart_refuses():
    y = np.array([0, 0, 1, 1, 1])
    with pytest.raises(ValueError, match="prior must sum to 1"):
        rpart_parms(y, prior=[0.5, 0.6])
    with pytest.raises(ValueError, match="prior must hold 2 positive"):
        rpart_parms(y, prior=[1.0])
    with pytest.raises(ValueError, match="0 on the diagonal and positive off it"):
        rpart_parms(y, loss=[[0, 0], [1, 0]])
    with pytest.raises(ValueError, match="finite 2 x 2"):
        rpart_parms(y, loss=[[0, 1, 1], [1, 0, 1]])
    # without prior and loss: unit class weights and the majority rule
    plain = rpart_parms(y)
    assert plain["labeler"] == "majority"
    assert plain["class_weight"] == pytest.approx({0: 1.0, 1: 1.0})
    # the weights sum to the number of rows; the costs are the loss over its row sums
    params = rpart_parms(y, prior=[0.5, 0.5], loss=[[0, 3], [1, 0]])
    weights = np.array([params["class_weight"][label] for label in y])
    assert weights.sum() == pytest.approx(5.0)
    assert params["labeler_params"]["costs"] == [[0.0, 1.0], [1.0, 0.0]]
    # altered priors by hand: a_i = pi_i * sum_j L_ij / (T f_i), T = sum_i pi_i sum_j L_ij
    t = 0.5 * 3 + 0.5 * 1
    assert params["class_weight"][0] == pytest.approx(0.5 * 3 / (t * 0.4))
    assert params["class_weight"][1] == pytest.approx(0.5 * 1 / (t * 0.6))

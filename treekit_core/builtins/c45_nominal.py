"""C4.5 release 8's splits on a nominal feature, as Weka 3.6's J48 makes them
(docs/algorithms.md section 1.1; J48's C45Split and BinC45Split).

Per feature, on the node's rows whose value is known, with W the node's weight and W_k the
known weight:

* multi-way (default): one branch per category of the feature (every category seen in
  training, so a category absent at the node gets an empty branch); valid when at least two
  categories hold min_objects weight;
* binary (J48 ``-B``): "= v" against "!= v" for every category v holding min_objects
  weight whose two sides both hold it; the first v (in category order) is taken, then any
  later v with a larger gain ratio.

gain = (W_k / W) (H(known) - sum_b (w_b / W_k) H(b)), 0 when that is within 1e-6 of 0;
gain ratio = gain / SplitInfo with SplitInfo = -sum_b (w_b / W) log2(w_b / W) - (u / W)
log2(u / W) over the branches and the unknown weight u = W - W_k; 0 when SplitInfo is 0.
A sample with the value missing goes down every branch with the branch's share of W_k.

The multi-way scores of every nominal feature at a node come from the compiled nominal
search (:func:`c45_multiway_splits`: the same drops, summed alike); the binary splits and
the per-feature :func:`c45_nominal_split` (the reference) are Python.
"""

from __future__ import annotations

import types

import numpy as np

from treekit_core.builtins.nominal_subsets import (
    CompiledNominalQuestions,
    known_category_statistics,
    partition_drop,
    split_information,
)
from treekit_core.components import Split

#: Weka's comparison tolerance (Utils.SMALL).
SMALL = 1e-6


def _gain(impurity, params, sums, weight, node_weight):
    """(gain, known weight) of a partition whose branches have class sums ``sums`` (b x K)
    and weights ``weight`` (b)."""
    known = weight.sum()
    if known <= 0:
        return 0.0, 0.0
    gain = partition_drop(impurity, params, sums, weight, node_weight)
    # Weka tests its numerator, gain x W_k in count units, against its tolerance.
    return (0.0 if abs(gain * known) < SMALL else gain), known


def _ratio(gain, weight, node_weight):
    info = split_information(weight, node_weight)
    return 0.0 if abs(info * node_weight) < SMALL else gain / info


def multiway_scores(impurity, params, sums, weight, node_weight, min_objects):
    """(gain, gain ratio) of C45Split on one nominal feature, or None when not valid."""
    if np.sum(weight >= min_objects - SMALL) < 2:
        return None
    gain, _ = _gain(impurity, params, sums, weight, node_weight)
    return gain, _ratio(gain, weight, node_weight)


def binary_scores(impurity, params, sums, weight, node_weight, min_objects):
    """(gain, gain ratio, category) of BinC45Split on one nominal feature, or None when no
    category qualifies. As J48: the first qualifying category is taken when it is category
    0, any later one when its gain ratio is larger (category -1: valid, none taken)."""
    valid, best = False, (0.0, 0.0, -1)
    total_sums, total_weight = sums.sum(axis=0), weight.sum()
    for v in range(weight.shape[0]):
        if weight[v] < min_objects - SMALL:
            continue
        pair_weight = np.array([weight[v], total_weight - weight[v]])
        if np.sum(pair_weight >= min_objects - SMALL) < 2:
            continue
        valid = True
        pair_sums = np.vstack([sums[v], total_sums - sums[v]])
        gain, _ = _gain(impurity, params, pair_sums, pair_weight, node_weight)
        ratio = _ratio(gain, pair_weight, node_weight)
        if v == 0 or ratio > best[1] + SMALL:
            best = (gain, ratio, v)
    return best if valid else None


def c45_nominal_split(state, node, feature, min_objects, binary):
    """(gain, gain ratio, Split) of C4.5's split of ``node`` on the nominal ``feature``, or
    None when the feature has no valid split. ``state`` is (impurity, params, data)."""

    impurity, params, data = state
    m = int(data.n_categories[feature])
    sums, weight, _ = known_category_statistics(
        data.X, data.evidence, node.rows, node.row_weights, int(feature), m
    )
    known = weight.sum()
    if binary:
        scores = binary_scores(impurity, params, sums, weight, node.weight, min_objects)
        if scores is None:
            return None
        gain, ratio, v = scores
        share = weight[v] / known if v >= 0 and known > 0 else 0.5
        split = Split(
            int(feature),
            -2.0,
            gain,
            {"category_mask": float(1 << max(v, 0)), "gain_ratio": ratio},
            question="subset",
            branch_shares=(share, 1.0 - share),
        )
        return gain, ratio, split
    scores = multiway_scores(impurity, params, sums, weight, node.weight, min_objects)
    if scores is None:
        return None
    gain, ratio = scores
    shares = tuple(weight / known) if known > 0 else tuple(np.full(m, 1.0 / m))
    split = Split(
        int(feature), -2.0, gain, {"gain_ratio": ratio}, question="multiway", n_branches=m
    )
    split.branch_shares = shares
    return gain, ratio, split


#: The compiled multi-way search with no minimum per branch (C4.5 asks min_objects of two
#: branches only, below).
_ANY_BRANCH = types.SimpleNamespace(min_samples_leaf=1, min_weight_leaf=0.0)


def c45_multiway_splits(state, node, features, min_objects) -> dict:
    """C4.5's multi-way split of each nominal feature of ``features`` (their positions ->
    (gain, gain ratio, Split); features without a valid split left out), as
    :func:`c45_nominal_split` makes them, the drops from the compiled nominal search in
    one call for every feature."""
    data = state[2]
    found = CompiledNominalQuestions(state, node, _ANY_BRANCH, features, "multiway")
    splits = {}
    for a, feature in enumerate(features):
        m = int(data.n_categories[feature])
        weight = found.weights[a, :m]
        if np.sum(weight >= min_objects - SMALL) < 2:
            continue
        known = weight.sum()
        gain = float(found.drops[a])
        gain = 0.0 if abs(gain * known) < SMALL else gain  # Weka's tolerance, in counts
        ratio = _ratio(gain, weight, node.weight)
        split = Split(
            int(feature), -2.0, gain, {"gain_ratio": ratio}, question="multiway", n_branches=m
        )
        split.branch_shares = tuple(weight / known)
        splits[a] = (gain, ratio, split)
    return splits

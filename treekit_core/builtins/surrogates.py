"""rpart's surrogate splits as a missing-value strategy: propagator and evaluator ``surrogate``.

A node's primary question is found by the splitter on the rows that know its feature (the
exhaustive splitter judges such a feature on its known rows, its drop scaled by their share,
and counts ``min_samples_leaf`` on known rows: rpart's rules). Surrogates are found when the
node is split, from the rows whose primary answer is known, exactly as rpart 4.1.19 does
(``surrogate.c``, ``choose_surg.c``, ``surrogatestyle = 0``):

- for every other feature, the split that sends the most weight the way the primary sends
  it (numeric: a cut between distinct values, either direction, at least two rows each way
  and better than sending everything one way; nominal: each category to the side most of
  its rows go), its agreement counted over all rows the primary sends (rows missing the
  surrogate count as disagreeing);
- kept when it beats "go with the majority": ``adj = (agree - majority) / (1 - majority)``
  above 1e-10; ranked by agreement, the earlier feature first on ties, at most
  ``max_surrogates`` kept.

A row whose primary answer is missing (or, for a nominal primary, a category the node never
saw) tries the surrogates in order (``use_surrogate`` >= 1); when all of them are missing
too, with ``use_surrogate = 2`` it follows the majority: at fit the side the primary sends
more weight to (rpart's ``nodesplit``), at prediction the child with more training rows
(rpart's ``pred_rpart``), and stays at the node on a tie. With ``use_surrogate`` 0 or 1
such a row stays at the node: it takes no part below it and is predicted by the node's own
distribution. ``use_surrogate = 0`` never tries surrogates.

rpart's LEFT is the child with the smaller mean class index; ties in a nominal surrogate
go by that labelling, so it is kept here too. rpart's primary question asks ``x < cut``:
the propagator asks it as a ``below_cut`` question, whose threshold is the largest double
below the cut, so ``x <= t`` routes every value as rpart does, a new row exactly on the cut
included, and the model file and every exporter carry the rule (``export_text`` prints
``x < cut``).
Difference from rpart: rpart drops rows missing every feature before fitting
(``na.rpart``), treekit keeps them.
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.builtins.questions import category_name
from treekit_core.components import Evaluator, Propagator
from treekit_core.engine.composition import CompositionError
from treekit_core.engine.questions import (
    MAX_CATEGORIES,
    answers_at,
    split_branches,
)
from treekit_core.registry import get_registry

LEFT, RIGHT = -1, 1  # rpart's codes (node.h)
#: Node fields of a surrogate tree: per node, ``max_surrogates`` slots (NaN when unused)
#: and two scalars.
SLOT_FIELDS = (
    "surrogate_feature",  #: the surrogate's feature
    "surrogate_threshold",  #: numeric surrogate: its cut (NaN for a nominal one)
    "surrogate_below",  #: numeric surrogate: the branch (0/1) of x < threshold
    "surrogate_left_mask",  #: nominal surrogate: category codes sent to branch 0 (bit mask)
    "surrogate_right_mask",  #: nominal surrogate: category codes sent to branch 1
    "surrogate_agree",  #: share of the rows the primary sends that it sends alike
    "surrogate_adj",  #: its gain over going with the majority
)
NODE_FIELDS = (
    *SLOT_FIELDS,
    "majority_branch",  #: where the primary sent more weight at fit (-1: a tie)
    "primary_seen",  #: nominal primary: the categories seen at the node (bit mask)
)
USES = (0, 1, 2)


def _check_max(instance, attribute, value):
    if not (isinstance(value, (int, np.integer)) and not isinstance(value, bool)) or not (
        0 <= value <= 50
    ):
        raise ValueError(f"max_surrogates must be an int in [0, 50], got {value!r}")


def _check_use(instance, attribute, value):
    if value not in USES or isinstance(value, bool):
        raise ValueError(f"use_surrogate must be 0, 1 or 2 (rpart's usesurrogate), got {value!r}")


@attrs.define(slots=False)
class SurrogateSettings:
    """The two parameters propagator and evaluator share: rpart's ``maxsurrogate`` and
    ``usesurrogate``."""

    max_surrogates: int = attrs.field(default=5, validator=_check_max)
    use_surrogate: int = attrs.field(default=2, validator=_check_use)

    handles_missing: ClassVar[bool] = True
    provides: ClassVar[frozenset] = frozenset({"surrogate_splits"})
    partner: ClassVar[str] = ""  #: the kind of the other half ("evaluator" / "propagator")

    def check_composition(self, composition) -> None:
        """Refuse a partner with other surrogate parameters."""
        kind = self.partner
        partner = getattr(composition, kind)
        mine = {"max_surrogates": self.max_surrogates, "use_surrogate": self.use_surrogate}
        theirs = {key: partner.get_params().get(key) for key in mine}
        if mine != theirs:
            raise CompositionError(
                f"{self.kind} {self.name!r} has {mine} but {kind} {partner.name!r} has "
                f"{theirs}: give both the same max_surrogates and use_surrogate"
            )


# -- the search ---------------------------------------------------------------------------


def rpart_sides(branch, evidence_rows, weights) -> np.ndarray:
    """rpart's code per row: LEFT / RIGHT for the primary's known answers, 0 for missing.
    rpart's LEFT child is the one with the smaller mean class index."""
    means = []
    for b in (0, 1):
        sums = weights[branch == b] @ evidence_rows[branch == b]
        total = sums.sum()
        means.append(float(sums @ np.arange(sums.size) / total) if total > 0 else 0.0)
    left_branch = 0 if means[0] < means[1] else 1
    return np.where(branch < 0, 0, np.where(branch == left_branch, LEFT, RIGHT)), left_branch


def numeric_surrogate(x, side, weights):
    """(agreement weight, cut, rpart direction of x < cut) of the best numeric surrogate
    (choose_surg.c, continuous case), or None when none beats sending everything one way
    with at least two rows each way."""
    known = ~np.isnan(x)
    order = np.argsort(x[known], kind="stable")
    xs, ys, ws = x[known][order], side[known][order], weights[known][order]
    if xs.size < 2:
        return None
    is_left, is_right = ys == LEFT, ys == RIGHT
    moved_count = np.concatenate([[0], np.cumsum(is_left | is_right)[:-1]])
    moved_left_w = np.concatenate([[0.0], np.cumsum(np.where(is_left, ws, 0.0))[:-1]])
    moved_right_w = np.concatenate([[0.0], np.cumsum(np.where(is_right, ws, 0.0))[:-1]])
    total_count = int((is_left | is_right).sum())
    ll_w0, rl_w0 = float(ws[is_left].sum()), float(ws[is_right].sum())
    running = total_count - moved_count  # rows with an answer still "sent left"
    stop = np.flatnonzero(running < 2)
    end = int(stop[0]) if stop.size else xs.size
    i = np.arange(1, end)
    valid = i[(moved_count[i] >= 2) & (xs[i] != xs[i - 1])]
    agree = max(ll_w0, rl_w0)
    if valid.size == 0:
        return None
    # agreement of "x < cut goes right" (A) and "x < cut goes left" (B) at every cut
    a = (ll_w0 - moved_left_w[valid]) + moved_right_w[valid]
    b = moved_left_w[valid] + (rl_w0 - moved_right_w[valid])
    best = np.maximum(a, b)
    top = best.max()
    if not top > agree:
        return None
    first = int(np.flatnonzero(best == top)[0])
    k = valid[first]
    direction = RIGHT if a[first] == top else LEFT
    return float(top), float((xs[k] + xs[k - 1]) / 2), direction


def nominal_surrogate(codes, side, weights, n_categories):
    """(agreement weight, per-category rpart direction (0: no rows)) of a nominal
    surrogate (choose_surg.c, categorical case), or None without two rows each way."""
    known = ~np.isnan(codes)
    k = codes[known].astype(np.int64)
    ys, ws = side[known], weights[known]
    left_n = np.bincount(k[ys == LEFT], minlength=n_categories)
    right_n = np.bincount(k[ys == RIGHT], minlength=n_categories)
    left_w = np.bincount(k[ys == LEFT], weights=ws[ys == LEFT], minlength=n_categories)
    right_w = np.bincount(k[ys == RIGHT], weights=ws[ys == RIGHT], minlength=n_categories)
    default = LEFT if left_w.sum() > right_w.sum() else RIGHT
    directions = np.zeros(n_categories, dtype=np.int64)
    agree, lcount, rcount = 0.0, 0, 0
    for c in range(n_categories):
        if left_n[c] == 0 and right_n[c] == 0:
            continue
        if left_w[c] < right_w[c] or (left_w[c] == right_w[c] and default == RIGHT):
            directions[c] = RIGHT
            agree += right_w[c]
            lcount += left_n[c]
            rcount += right_n[c]
        else:
            directions[c] = LEFT
            agree += left_w[c]
            lcount += right_n[c]
            rcount += left_n[c]
    if not (lcount > 1 and rcount > 1):
        return None
    return float(agree), directions


def find_surrogates(X, rows, weights, side, primary, n_categories, limit):
    """The kept surrogates, best first: dicts with feature, agree, adj and the rule."""
    left_w, right_w = weights[side == LEFT].sum(), weights[side == RIGHT].sum()
    total = left_w + right_w
    majority = max(left_w, right_w) / total
    found = []
    for f in range(X.shape[1]):
        if f == primary:
            continue
        x = X[rows, f]
        if n_categories[f] > 0:
            result = nominal_surrogate(x, side, weights, int(n_categories[f]))
            rule = None if result is None else {"directions": result[1]}
        else:
            result = numeric_surrogate(x, side, weights)
            rule = None if result is None else {"cut": result[1], "direction": result[2]}
        if result is None:
            continue
        agreement = result[0] / total
        adj = (agreement - majority) / (1.0 - majority)
        if adj <= 1e-10:
            continue
        found.append({"feature": f, "agree": agreement, "adj": adj, **rule})
    found.sort(key=lambda s: -s["agree"])  # stable: the earlier feature first on ties
    return found[:limit]


def _mask(codes) -> float:
    return float(sum(1 << int(c) for c in codes))


def encode_surrogates(found, left_branch, slots) -> dict:
    """The node's slot fields (rpart's LEFT / RIGHT turned into branches 0 / 1)."""
    to_branch = {LEFT: left_branch, RIGHT: 1 - left_branch}
    fields = {name: np.full(slots, np.nan) for name in SLOT_FIELDS}
    for s, surrogate in enumerate(found):
        fields["surrogate_feature"][s] = surrogate["feature"]
        fields["surrogate_agree"][s] = surrogate["agree"]
        fields["surrogate_adj"][s] = surrogate["adj"]
        if "cut" in surrogate:
            fields["surrogate_threshold"][s] = surrogate["cut"]
            fields["surrogate_below"][s] = to_branch[surrogate["direction"]]
        else:
            directions = surrogate["directions"]
            sent = {
                b: [c for c, d in enumerate(directions) if d and to_branch[d] == b] for b in (0, 1)
            }
            fields["surrogate_left_mask"][s] = _mask(sent[0])
            fields["surrogate_right_mask"][s] = _mask(sent[1])
    return fields


# -- routing ------------------------------------------------------------------------------


def surrogate_branches(X_rows, fields, node, use_surrogate) -> np.ndarray:
    """Per row (all missing the primary answer): the branch its first known surrogate
    names, or -1."""
    branch = np.full(X_rows.shape[0], -1, dtype=np.int64)
    if use_surrogate == 0:
        return branch
    features = fields["surrogate_feature"][node]
    for s in range(np.size(features)):
        if not np.isfinite(features[s]):
            break
        open_rows = branch < 0
        if not open_rows.any():
            break
        x = X_rows[:, int(features[s])]
        threshold = fields["surrogate_threshold"][node][s]
        if np.isfinite(threshold):
            below = int(fields["surrogate_below"][node][s])
            answer = np.where(x < threshold, below, 1 - below)
            answer = np.where(np.isnan(x), -1, answer)
        else:
            codes = np.where(np.isnan(x) | (x < 0) | (x >= MAX_CATEGORIES), -1, x)
            codes = codes.astype(np.int64)
            bits = np.where(codes >= 0, np.left_shift(1, np.maximum(codes, 0)), 0)
            left = np.bitwise_and(bits, int(fields["surrogate_left_mask"][node][s])) != 0
            right = np.bitwise_and(bits, int(fields["surrogate_right_mask"][node][s])) != 0
            answer = np.where(left, 0, np.where(right, 1, -1))
        branch = np.where(open_rows & (answer >= 0), answer, branch)
    return branch


def primary_branches(tree, node, X_rows) -> np.ndarray:
    """Per row, the branch the node's primary question names (the core's routing), -1
    where it cannot answer: a missing value, or for a nominal question a category the node
    never saw (rpart sends those to the surrogates too)."""
    branch = answers_at(tree, X_rows, [node])[:, 0].astype(np.int64)
    seen = tree.node_fields["primary_seen"][node]
    if np.isfinite(seen):
        x = X_rows[:, int(tree.feature[node])]
        codes = np.where(branch >= 0, x, 0).astype(np.int64)
        unseen = np.bitwise_and(np.left_shift(1, codes), int(seen)) == 0
        branch = np.where(unseen, -1, branch)
    return branch


# -- the components ------------------------------------------------------------------------


def rpart_threshold(x: np.ndarray, threshold: float) -> float:
    """rpart's question x < cut, with its cut (a + b) / 2 between the node's values a <=
    ``threshold`` < b (rpart's arithmetic: the splitter's midpoint may differ in the last
    bit), as treekit's x <= t: t is the largest double below the cut, which routes the
    training rows as the search did (no value lies between) and a new row on the cut as
    rpart does (right)."""
    x = x[~np.isnan(x)]
    below, above = x[x <= threshold], x[x > threshold]
    if below.size and above.size:
        threshold = (float(below.max()) + float(above.min())) / 2.0
    return float(np.nextafter(threshold, -np.inf))


@attrs.define(slots=False)
class SurrogatePropagator(SurrogateSettings, Propagator):
    """rpart's surrogate splits at fit: finds each split node's surrogates and sends every
    row down its primary answer, else its first known surrogate, else (``use_surrogate=2``)
    the side the primary sends more weight to (see the module docstring)."""

    name: ClassVar[str] = "surrogate"
    description: ClassVar[str] = (
        "rpart's surrogate splits: rows missing the primary follow backup questions"
    )
    requires: ClassVar[dict] = {"evaluator": frozenset({"surrogate_splits"})}
    partner: ClassVar[str] = "evaluator"
    node_field_names: ClassVar[tuple] = NODE_FIELDS

    def propagate(self, state, data, node, split):
        if split.n_branches != 2:
            raise CompositionError(
                f"surrogate splits back up two-branch questions; the splitter asked a "
                f"{split.question!r} question with {split.n_branches} branches (use "
                "nominal_split='subset')"
            )
        question = get_registry().question(split.question)
        if not question.compares_threshold and (
            question.category_branches(
                split.feature, split.threshold, question.parameters(split.node_fields), 2
            )
            is None
        ):
            raise CompositionError(
                f"propagator {self.name!r} backs up threshold and nominal questions with "
                f"surrogate splits; the splitter asked a {split.question!r} question"
            )
        rows, weights = node.rows, node.row_weights
        if question.compares_threshold:  # rpart's x < cut (``below_cut``)
            split.threshold = rpart_threshold(data.X[rows, split.feature], split.threshold)
            split.question = "below_cut"
        branch = split_branches(data.X, rows, split, question)
        side, left_branch = rpart_sides(branch, data.evidence[rows], weights)
        n_categories = (
            data.n_categories
            if data.n_categories is not None
            else np.zeros(data.n_features, dtype=np.int64)
        )
        found = (
            find_surrogates(
                data.X, rows, weights, side, split.feature, n_categories, self.max_surrogates
            )
            if self.max_surrogates > 0
            else []
        )
        fields = encode_surrogates(found, left_branch, self.max_surrogates)
        left_w, right_w = weights[branch == 0].sum(), weights[branch == 1].sum()
        fields["majority_branch"] = 0.0 if left_w > right_w else 1.0 if right_w > left_w else -1.0
        fields["primary_seen"] = np.nan
        if not question.compares_threshold:
            codes = data.X[rows, split.feature]
            fields["primary_seen"] = _mask(np.unique(codes[~np.isnan(codes)]).astype(int))
        split.node_fields.update(fields)
        missing = branch < 0
        if missing.any():
            one_node = {name: [fields[name]] for name in SLOT_FIELDS}
            routed = surrogate_branches(data.X[rows[missing]], one_node, 0, self.use_surrogate)
            if self.use_surrogate == 2 and fields["majority_branch"] >= 0:
                routed = np.where(routed < 0, int(fields["majority_branch"]), routed)
            branch = branch.copy()
            branch[missing] = routed
        return [(rows[branch == b], weights[branch == b]) for b in (0, 1)]

    def node_notes(self, tree, node, context) -> list[str]:
        return surrogate_notes(tree, node, context)


@attrs.define(slots=False)
class SurrogateEvaluator(SurrogateSettings, Evaluator):
    """rpart's prediction with surrogates: a sample missing the primary answer follows its
    first known surrogate, else (``use_surrogate=2``) the child with more training rows;
    a sample that cannot go on is predicted by the node where it stops."""

    name: ClassVar[str] = "surrogate"
    description: ClassVar[str] = (
        "route with rpart's surrogate splits; a sample that cannot go on stops at its node"
    )
    requires: ClassVar[dict] = {"propagator": frozenset({"surrogate_splits"})}
    partner: ClassVar[str] = "propagator"
    # a complete row follows the primary questions; a row missing one tries surrogates
    provides: ClassVar[frozenset] = frozenset({"surrogate_splits", "hard_routing_when_complete"})

    def check_state(self, state, tree) -> None:
        check_surrogate_fields(tree, self.max_surrogates)

    def stopping_nodes(self, tree, X) -> np.ndarray:
        """The node where every sample stops (a leaf, or a node it cannot pass)."""
        X = np.asarray(X, dtype=np.float64)
        stop = np.zeros(X.shape[0], dtype=np.int64)
        stack = [(0, np.arange(X.shape[0]))]
        while stack:
            node, members = stack.pop()
            if members.size == 0:
                continue
            if tree.is_leaf[node]:
                stop[members] = node
                continue
            X_rows = X[members]
            branch = primary_branches(tree, node, X_rows)
            missing = branch < 0
            if missing.any():
                routed = surrogate_branches(
                    X_rows[missing], tree.node_fields, node, self.use_surrogate
                )
                if self.use_surrogate == 2:
                    kids = tree.children(node)
                    counts = tree.n_samples[kids]
                    if counts[0] != counts[1]:
                        routed = np.where(routed < 0, int(np.argmax(counts)), routed)
                branch = branch.copy()
                branch[missing] = routed
            stop[members[branch < 0]] = node
            for b, child in enumerate(tree.children(node)):
                stack.append((int(child), members[branch == b]))
        return stop

    def predict_distribution(self, tree, X):
        return tree.value.take(self.stopping_nodes(tree, X), axis=0)


def check_surrogate_fields(tree, slots: int) -> None:
    """Model-file check: the surrogate fields exist with one row per node, features index
    X, branches are 0/1, masks are category bit masks."""
    fields = tree.node_fields
    for name in NODE_FIELDS:
        if name not in fields:
            raise ValueError(f"model file: tree node field {name!r} is missing")
    internal = ~tree.is_leaf
    for name in NODE_FIELDS[len(SLOT_FIELDS) :]:
        if np.shape(fields[name]) != (tree.n_nodes,):
            raise ValueError(
                f"model file: tree node field {name!r} has shape {np.shape(fields[name])}, "
                f"expected ({tree.n_nodes},)"
            )
    if not internal.any():
        # a single leaf asks nothing: its slot fields hold one NaN each, whatever the width
        return
    for name in SLOT_FIELDS:
        values = np.asarray(fields[name], dtype=np.float64)
        if values.shape != (tree.n_nodes, slots):
            raise ValueError(
                f"model file: tree node field {name!r} has shape {values.shape}, expected "
                f"({tree.n_nodes}, {slots})"
            )
    feature = np.asarray(fields["surrogate_feature"], dtype=np.float64)[internal]
    used = ~np.isnan(feature)  # NaN marks an unused slot; anything else is read
    if ((feature[used] < 0) | (feature[used] >= tree.n_features) | (feature[used] % 1 != 0)).any():
        raise ValueError("model file: tree node field 'surrogate_feature' names no feature of X")
    below = np.asarray(fields["surrogate_below"], dtype=np.float64)[internal]
    if (~np.isin(below[~np.isnan(below)], (0.0, 1.0))).any():
        raise ValueError("model file: tree node field 'surrogate_below' must hold branches 0 or 1")
    for name in ("surrogate_left_mask", "surrogate_right_mask", "primary_seen"):
        values = np.asarray(fields[name], dtype=np.float64)[internal]
        values = values[~np.isnan(values)]
        if ((values < 0) | (values >= 2.0**MAX_CATEGORIES) | (values % 1 != 0)).any():
            raise ValueError(f"model file: tree node field {name!r} must hold category masks")
    majority = np.asarray(fields["majority_branch"], dtype=np.float64)[internal]
    if (~np.isin(majority, (-1.0, 0.0, 1.0))).any():
        raise ValueError("model file: tree node field 'majority_branch' must be -1, 0 or 1")
    if (tree.n_children[internal] != 2).any():
        raise ValueError("model file: a surrogate tree has two branches per internal node")


def surrogate_notes(tree, node, context) -> list[str]:
    """One line per surrogate of ``node``, as ``export_text`` prints them."""
    if "surrogate_feature" not in tree.node_fields or tree.is_leaf[node]:
        return []
    fields, lines = tree.node_fields, []

    for s, f in enumerate(np.atleast_1d(fields["surrogate_feature"][node])):
        if not np.isfinite(f):
            break
        f = int(f)
        name = context.feature_names[f]
        threshold = fields["surrogate_threshold"][node][s]
        if np.isfinite(threshold):
            below = int(fields["surrogate_below"][node][s])
            side = "<" if below == 0 else ">="
            rule = f"{name} {side} {context.number(threshold)}"
        else:
            mask = int(fields["surrogate_left_mask"][node][s])
            levels = [category_name(context, f, c) for c in range(MAX_CATEGORIES) if mask >> c & 1]
            rule = f"{name} in {{{', '.join(levels)}}}"
        lines.append(
            f"surrogate: {rule} (agree {fields['surrogate_agree'][node][s]:.3f}, adj "
            f"{fields['surrogate_adj'][node][s]:.3f})"
        )
    return lines

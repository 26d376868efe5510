"""partykit's surrogate splits of a conditional inference tree (``ctree_control(maxsurrogate
= k)``; partykit 1.2's ``.extree_surrogates``): propagator ``ctree_surrogate``, predicted
with the core's ``surrogate`` evaluator, which reads the same node fields.

At a split node, on the rows whose split feature is known, the primary split's kids
(left, right) are a two-column indicator response; every other feature is tested against
it by the same permutation test that chose the primary (``teststat``), ranked by log(1 -
p) as partykit ranks them, and for the first ``max_surrogates`` the cut (numeric) or the
level groups (nominal) of the largest split statistic is the surrogate, turned round where
its first group mostly goes right. partykit's own details are kept: log(1 - p) values
closer than machine epsilon are ties, broken by adding ``order(statistic)`` (R's order,
not rank) over the sum of the tied columns' positions times 1000; a feature without an
admissible cut is tried again in the next slot (partykit does not set it aside), so it
ends the list.

A row missing the split feature (or, for a nominal split, holding a level the node did
not see) follows its first known surrogate; one missing every surrogate goes with the
majority of the node's known rows at fit (partykit draws a kid at random, in proportion)
and to the child with more training rows at prediction (the core's evaluator); on a tie
it stays at the node.
"""

from __future__ import annotations

import math
from typing import ClassVar

import attrs
import numpy as np

from treekit_core import CompositionError, Propagator
from treekit_ctree.permutation_tests import best_cut, best_subset, linear_test

#: The node fields the core's ``surrogate`` evaluator routes by (its model-file format):
#: ``max_surrogates`` slots per node, then two numbers.
SLOT_FIELDS = (
    "surrogate_feature",
    "surrogate_threshold",
    "surrogate_below",
    "surrogate_left_mask",
    "surrogate_right_mask",
    "surrogate_agree",
    "surrogate_adj",
)
NODE_FIELDS = (*SLOT_FIELDS, "majority_branch", "primary_seen")
#: R's .Machine$double.eps: partykit's tie tolerance for the surrogates' criterion
EPSILON = float(np.finfo(np.float64).eps)


def _slots(instance, attribute, value):
    if not (isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 50):
        raise ValueError(
            f"ctree_surrogate {attribute.name} must be an int in [0, 50], got {value!r}"
        )


def _probability(instance, attribute, value):
    if not (isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1):
        raise ValueError(
            f"ctree_surrogate {attribute.name} must be a number in [0, 1], got {value!r}"
        )


def _bucket(instance, attribute, value):
    if not (isinstance(value, int | float) and not isinstance(value, bool) and value >= 0):
        raise ValueError(f"ctree_surrogate {attribute.name} must be a number >= 0, got {value!r}")


@attrs.define(slots=False)
class ConditionalSurrogates(Propagator):
    """partykit's surrogate splits (module docstring). Parameters (``propagator_params``,
    partykit's ``ctree_control`` names in brackets): ``max_surrogates`` (maxsurrogate; the
    ``surrogate`` evaluator must be given the same), ``teststat`` and ``splitstat``
    ("quadratic" or "maximum"), ``min_bucket`` (minbucket, 7) and ``minprob`` (0.01): a
    surrogate's groups each keep at least max(min_bucket, ceil(minprob x the node's
    weight)). ``use_surrogate`` is 2 (the evaluator's: rows missing every surrogate follow
    the majority)."""

    name: ClassVar[str] = "ctree_surrogate"
    description: ClassVar[str] = (
        "partykit's ctree surrogate splits: rows missing the split feature follow backup "
        "splits chosen by permutation tests"
    )
    requires: ClassVar[dict] = {"evaluator": frozenset({"surrogate_splits"})}
    provides: ClassVar[frozenset] = frozenset({"surrogate_splits"})
    handles_missing: ClassVar[bool] = True
    node_field_names: ClassVar[tuple] = NODE_FIELDS

    max_surrogates: int = attrs.field(default=5, validator=_slots)
    use_surrogate: int = attrs.field(default=2, validator=attrs.validators.in_((2,)))
    teststat: str = attrs.field(
        default="quadratic", validator=attrs.validators.in_(("quadratic", "maximum"))
    )
    splitstat: str = attrs.field(
        default="quadratic", validator=attrs.validators.in_(("quadratic", "maximum"))
    )
    min_bucket: float = attrs.field(default=7, validator=_bucket)
    minprob: float = attrs.field(default=0.01, validator=_probability)

    def check_composition(self, composition) -> None:
        """The ``surrogate`` evaluator reads ``max_surrogates`` slots per node: it must be
        given the same number."""
        evaluator = composition.evaluator
        theirs = getattr(evaluator, "max_surrogates", self.max_surrogates)
        if theirs != self.max_surrogates:
            raise CompositionError(
                f"propagator {self.name!r} has max_surrogates={self.max_surrogates} but "
                f"evaluator {evaluator.name!r} has {theirs}: give both the same"
            )

    def propagate(self, state, data, node, split):
        if split.n_branches != 2 or split.question not in ("threshold", "subset"):
            raise CompositionError(
                f"propagator {self.name!r} backs up two-branch threshold and subset "
                f"questions; the splitter asked {split.question!r} with {split.n_branches} "
                "branches"
            )
        rows, weights = node.rows, node.row_weights
        n_categories = (
            np.zeros(data.n_features, dtype=np.int64)
            if data.n_categories is None
            else np.asarray(data.n_categories)
        )
        branch = _primary_branches(data.X[rows, split.feature], split)
        known = branch >= 0
        # partykit's surrogate splits search with minbucket 0 (ctree_control's
        # svsplitfun = .ctree_split(minbucket = 0)): a group may even hold every row
        minbucket = 0.0
        found = []
        if self.max_surrogates > 0 and known.any():
            found = self._choose(
                data.X,
                rows[known],
                weights[known],
                branch[known],
                split.feature,
                n_categories,
                minbucket,
            )
        fields = _encode(found, self.max_surrogates)
        counts = np.bincount(branch[known], minlength=2)
        fields["majority_branch"] = (
            0.0 if counts[0] > counts[1] else 1.0 if counts[1] > counts[0] else -1.0
        )
        fields["primary_seen"] = math.nan
        if split.question == "subset":
            codes = data.X[rows[known], split.feature].astype(np.int64)
            fields["primary_seen"] = float(sum(2 ** int(c) for c in np.unique(codes)))
        split.node_fields.update(fields)
        missing = ~known
        if missing.any():
            routed = _surrogate_branches(data.X[rows[missing]], found)
            if fields["majority_branch"] >= 0:
                routed = np.where(routed < 0, int(fields["majority_branch"]), routed)
            branch = branch.copy()
            branch[missing] = routed
        return [(rows[branch == b], weights[branch == b]) for b in (0, 1)]

    def _choose(self, X, rows, weights, kid, primary, n_categories, minbucket) -> list:
        """The surrogates in order: dicts with the feature and either the cut and the
        branch of x <= cut, or the branch of every level (-1: not at the node)."""
        indicator = np.zeros((X.shape[0], 2))
        indicator[rows, kid] = 1.0
        n_features = X.shape[1]
        criterion = np.full(n_features, np.nan)
        statistic = np.full(n_features, np.nan)
        candidates = [f for f in range(n_features) if f != primary]
        for feature in candidates:
            x = X[rows, feature]
            ok = ~np.isnan(x)
            if not ok.any():
                continue
            if n_categories[feature] > 0:
                G = np.eye(int(n_categories[feature]))[x[ok].astype(np.int64)]
            else:
                G = x[ok, None]
            value, p_value = linear_test(G, indicator[rows[ok]], weights[ok], self.teststat)
            if not math.isnan(p_value):
                statistic[feature] = value
                with np.errstate(divide="ignore"):
                    criterion[feature] = math.log1p(-p_value) if p_value < 1 else -math.inf
        tested = ~np.isnan(criterion)
        if not tested.any():
            return []
        best = np.nanmax(criterion)
        ties = np.flatnonzero(tested & (np.abs(criterion - best) < EPSILON))
        if ties.size > 1:
            # partykit: crit[ties] + order(statistic[ties]) / (sum(ties) * 1000), positions
            # in its model frame (the response first, so a feature's is its index + 2)
            order = np.argsort(statistic[ties], kind="stable") + 1.0
            criterion[ties] = criterion[ties] + order / ((ties + 2).sum() * 1000.0)
        found = []
        tested = np.flatnonzero(tested)
        for _ in range(min(len(candidates), self.max_surrogates)):
            # R's which.max over the tested features: the first of the largest (-Inf, a
            # p-value of 1, included: partykit then offers the same feature again)
            feature = int(tested[np.argmax(criterion[tested])])
            surrogate = self._split(
                X, rows, weights, kid, indicator, feature, n_categories, minbucket
            )
            if surrogate is None:
                continue  # partykit's `next`: the same feature comes first again
            found.append(surrogate)
            criterion[feature] = -np.inf
        return found

    def _split(self, X, rows, weights, kid, indicator, feature, n_categories, minbucket):
        x = X[rows, feature]
        ok = ~np.isnan(x)
        rows_ok, x_ok, w_ok, kid_ok = rows[ok], x[ok], weights[ok], kid[ok]
        if n_categories[feature] > 0:
            codes = x_ok.astype(np.int64)
            found = best_subset(codes, indicator[rows_ok], w_ok, minbucket, self.splitstat)
            if found is None:
                return None
            second = set(np.asarray(found[0]).tolist())
            present = np.unique(codes)
            branch_of_level = np.full(int(n_categories[feature]), -1)
            for level in present.tolist():
                branch_of_level[level] = 1 if level in second else 0
            sent = branch_of_level[codes]
        else:
            found = best_cut(x_ok, rows_ok, indicator, w_ok, minbucket, self.splitstat)
            if found is None:
                return None
            cut = found[0]
            sent = np.where(x_ok <= cut, 0, 1)
        # partykit's table(surrogate kid, primary kid) on the rows it sends: turned round
        # where its first kid holds fewer rows of the primary's first than of its second
        first = sent.min()
        swapped = np.sum((sent == first) & (kid_ok == 0)) < np.sum((sent == first) & (kid_ok == 1))
        if swapped:
            sent = 1 - sent
            if n_categories[feature] > 0:
                branch_of_level = np.where(branch_of_level >= 0, 1 - branch_of_level, -1)
        agree = float(w_ok[sent == kid_ok].sum() / weights.sum())
        majority = float(max(weights[kid == 0].sum(), weights[kid == 1].sum()) / weights.sum())
        adjusted = (agree - majority) / (1.0 - majority) if majority < 1 else math.nan
        out = {"feature": feature, "agree": agree, "adj": adjusted}
        if n_categories[feature] > 0:
            out["branch_of_level"] = branch_of_level
        else:
            out["cut"] = float(cut)
            out["below"] = 1 if swapped else 0  # the branch of x <= cut
        return out

    def node_notes(self, tree, node, context) -> list[str]:
        """One line per surrogate of ``node`` (feature and its rule), as partykit lists
        them."""
        fields = tree.node_fields
        if "surrogate_feature" not in fields or tree.is_leaf[node]:
            return []
        notes = []
        for s, feature in enumerate(np.atleast_1d(fields["surrogate_feature"][node])):
            if not np.isfinite(feature):
                break
            name = context.feature_names[int(feature)]
            threshold = fields["surrogate_threshold"][node][s]
            if np.isfinite(threshold):
                side = "<=" if int(fields["surrogate_below"][node][s]) == 0 else ">"
                rule = f"{name} {side} {context.number(float(np.nextafter(threshold, -np.inf)))}"
            else:
                mask = int(fields["surrogate_left_mask"][node][s])
                rule = f"{name} in left levels (mask {mask})"
            notes.append(f"surrogate: {rule} (agree {fields['surrogate_agree'][node][s]:.3f})")
        return notes


def _primary_branches(x, split) -> np.ndarray:
    """Per row, the branch of the primary split (-1 where x is missing)."""
    if split.question == "threshold":
        branch = np.where(x <= split.threshold, 0, 1)
    else:
        mask = int(split.node_fields["category_mask"])
        codes = np.where(np.isnan(x), 0, x).astype(np.int64)
        branch = np.where(np.bitwise_and(np.left_shift(1, codes), mask) != 0, 0, 1)
    return np.where(np.isnan(x), -1, branch)


def _surrogate_branches(X_rows, found) -> np.ndarray:
    """Per row (all missing the primary): the branch its first known surrogate names."""
    branch = np.full(X_rows.shape[0], -1, dtype=np.int64)
    for surrogate in found:
        open_rows = branch < 0
        if not open_rows.any():
            break
        x = X_rows[:, surrogate["feature"]]
        if "cut" in surrogate:
            answer = np.where(x <= surrogate["cut"], surrogate["below"], 1 - surrogate["below"])
        else:
            levels = surrogate["branch_of_level"]
            inside = ~np.isnan(x) & (x >= 0) & (x < levels.size)
            answer = np.where(inside, levels[np.where(inside, x, 0).astype(np.int64)], -1)
        answer = np.where(np.isnan(x), -1, answer)
        branch = np.where(open_rows & (answer >= 0), answer, branch)
    return branch


def _encode(found, slots: int) -> dict:
    """The node's slot fields as the core's ``surrogate`` evaluator reads them (x <
    threshold: the largest double above the cut makes it x <= cut)."""
    fields = {name: np.full(slots, np.nan) for name in SLOT_FIELDS}
    for s, surrogate in enumerate(found):
        fields["surrogate_feature"][s] = surrogate["feature"]
        fields["surrogate_agree"][s] = surrogate["agree"]
        fields["surrogate_adj"][s] = surrogate["adj"]
        if "cut" in surrogate:
            fields["surrogate_threshold"][s] = float(np.nextafter(surrogate["cut"], np.inf))
            fields["surrogate_below"][s] = surrogate["below"]
        else:
            levels = surrogate["branch_of_level"]
            fields["surrogate_left_mask"][s] = float(
                sum(2 ** int(c) for c in np.flatnonzero(levels == 0))
            )
            fields["surrogate_right_mask"][s] = float(
                sum(2 ** int(c) for c in np.flatnonzero(levels == 1))
            )
    return fields

"""Minimal cost-complexity pruning (Breiman et al.; rpart; scikit-learn's ccp).

R_alpha(T) = R(T) + alpha |leaves(T)|. The weakest link t (smallest
g(t) = (R(t) - R(T_t)) / (|leaves(T_t)| - 1)) is pruned first, one node per step, the
first node id on ties, exactly as scikit-learn's ``_cost_complexity_prune``. R is a
fraction of the root's training weight, so alpha has scikit-learn's units; rpart's
complexity parameter is ``cp = alpha / R(root)``.

The risk of a node is selectable: ``prediction`` (CART, rpart, Tóth & Pataki: the loss of
the node's own prediction as its target defines it, :meth:`Target.node_risk`: the weighted
errors of the node's decision for classes, as the labeler defines them; the residual sum
of squares for a mean; the deviance for counts and follow-up) or ``impurity``
(scikit-learn: weight x impurity). ``misclassification``, the name the first risk had
when every tree predicted classes, is accepted as a synonym, so settings and model files
that name it keep their meaning.
"""

from __future__ import annotations

import math
from typing import ClassVar

import attrs
import numpy as np

from treekit_core.builtins.pruners.rpart_node_rows import rpart_node_risks
from treekit_core.builtins.targets import ClassLabels
from treekit_core.components import Pruner, state_array
from treekit_core.engine.folds import stratified_folds
from treekit_core.engine.questions import rows_reaching

RISKS = ("prediction", "impurity", "misclassification")  # the last: "prediction"'s old name
RULES = ("min_error", "one_se")


@attrs.frozen
class WeakestLinkSequence:
    """Every pruning step: the node made a leaf and the alpha at which it happens."""

    pruned_node: np.ndarray  #: node id pruned at step s
    step_alpha: np.ndarray  #: effective alpha of step s
    risk: np.ndarray  #: total leaf risk before the first step and after each step (s + 1)
    n_leaves: np.ndarray  #: leaves before the first step and after each step (s + 1)
    #: internal nodes (rpart's nsplit) before the first step and after each step (s + 1);
    #: None in a sequence made without it (counted from the tree then)
    n_internal: np.ndarray | None = None
    #: rpart's levels: two steps make one subtree level (one cp-table row) only where their
    #: alphas are the same double (make_cp_list.c), not within a relative 1e-12
    exact_levels: bool = False
    #: rpart's cp of each step, complexity x (1 / the root's risk) in risk units, the
    #: arithmetic of rpart.c; its levels merge on these doubles (None: alpha / root risk)
    step_cp: np.ndarray | None = None
    #: the running maximum of ``step_alpha`` (what :meth:`steps_up_to` searches)
    running_alpha: np.ndarray = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self):
        alphas = np.asarray(self.step_alpha, dtype=np.float64)
        running = np.maximum.accumulate(alphas) if alphas.size else alphas
        object.__setattr__(self, "running_alpha", running)

    @property
    def alphas(self) -> np.ndarray:
        """scikit-learn's ``ccp_alphas``: 0 for the full tree, then each step's alpha."""
        return np.concatenate([[0.0], self.step_alpha])

    def steps_up_to(self, alpha: float) -> int:
        """Number of steps taken when pruning stops at the first alpha > ``alpha``.

        Alphas within a relative 1e-12 count as equal: mathematically equal alphas of two
        branches differ in their last bits, and a subtree chosen at one of them must not
        depend on that rounding. O(log steps): the first step above ``alpha`` is the first
        where the running maximum of the step alphas is."""
        return int(np.searchsorted(self.running_alpha, _with_slack(alpha), side="right"))

    def prune_mask(self, alpha: float, n_nodes: int) -> np.ndarray:
        mask = np.zeros(n_nodes, dtype=bool)
        mask[self.pruned_node[: self.steps_up_to(alpha)]] = True
        return mask


def _with_slack(alpha: float) -> float:
    return alpha * (1 + 1e-12) + 1e-15


def node_risk(tree, risk: str, labeler, target=None) -> np.ndarray:
    """R(t) of every node as a fraction of the root's weight: the weighted impurity, or the
    target's risk of the node's own prediction (:meth:`Target.node_risk`; without a target,
    class labels')."""
    return node_risk_in_risk_units(tree, risk, labeler, target) / tree.weight[0]


def node_risk_in_risk_units(tree, risk: str, labeler, target=None) -> np.ndarray:
    """R(t) of every node in the target's units (rpart's): :func:`node_risk` times the
    root's weight, without the two roundings."""
    if risk == "impurity":
        return tree.weight * tree.impurity
    target = ClassLabels() if target is None else target
    return target.node_risk(tree.statistics, tree.weight, labeler)


class _Steps:
    """The running counts of a pruning sequence: every branch's risk, leaves and internal
    nodes, and the steps taken (node, alpha) with the total risk, leaves and internal nodes
    after each. Kept in Python lists: rpart's sequence takes a step per snipped node and
    each walks the node's ancestors, where numpy's per-element cost would dominate (the
    arithmetic is the same IEEE arithmetic as numpy's); the weakest-link sequence starts
    from the same counts in its compiled kernel."""

    def __init__(self, tree, r_node: np.ndarray):
        n_leaves = tree.leaves_under().astype(np.float64)
        r_branch = tree.subtree_sums(np.where(tree.is_leaf, r_node, 0.0))
        n_internal = tree.subtree_sums((~tree.is_leaf).astype(np.int64))
        self.parent = tree.parents().tolist()
        self.r_node = np.asarray(r_node, dtype=np.float64).tolist()
        self.n_leaves, self.r_branch = n_leaves.tolist(), r_branch.tolist()
        self.n_internal = n_internal.tolist()
        self.pruned, self.alphas = [], []
        self.risks, self.leaves = [self.r_branch[0]], [self.n_leaves[0]]
        self.internal = [self.n_internal[0]]

    def collapse(self, node: int, alpha: float) -> None:
        """Make ``node`` a leaf at ``alpha``: its branch's risk becomes its own, and every
        ancestor's leaves, internal nodes and branch risk change by what the branch lost."""
        n_leaves, r_branch, n_internal, parent = (
            self.n_leaves,
            self.r_branch,
            self.n_internal,
            self.parent,
        )
        removed_leaves, r_diff = n_leaves[node] - 1, self.r_node[node] - r_branch[node]
        removed_internal = n_internal[node]
        n_leaves[node], r_branch[node], n_internal[node] = 1.0, self.r_node[node], 0
        ancestor = parent[node]
        while ancestor >= 0:
            n_leaves[ancestor] -= removed_leaves
            r_branch[ancestor] += r_diff
            n_internal[ancestor] -= removed_internal
            ancestor = parent[ancestor]
        self.pruned.append(int(node))
        self.alphas.append(alpha)
        self.risks.append(r_branch[0])
        self.leaves.append(n_leaves[0])
        self.internal.append(n_internal[0])

    def sequence(self, exact_levels: bool = False) -> WeakestLinkSequence:
        return WeakestLinkSequence(
            np.array(self.pruned, dtype=np.int64),
            np.array(self.alphas, dtype=np.float64),
            np.array(self.risks),
            np.array(self.leaves, dtype=np.int64),
            np.array(self.internal, dtype=np.int64),
            exact_levels,
        )


def weakest_link_sequence(tree, r_node: np.ndarray) -> WeakestLinkSequence:
    """Breiman's weakest-link sequence: repeatedly collapse the internal node of smallest
    g(t), the first node id on ties (scikit-learn's ``_cost_complexity_prune``), by the
    compiled heap of :mod:`treekit_core.kernels.weakest_link` (O(n log n) for a balanced
    tree; recomputing every g at every step was quadratic)."""
    from treekit_core.kernels.weakest_link import weakest_link_steps

    steps = _Steps(tree, r_node)
    _, position, size = tree.preorder()
    pruned, alphas, risks, leaves, internal = weakest_link_steps(
        np.asarray(steps.parent, dtype=np.int64),
        np.asarray(steps.r_node, dtype=np.float64),
        np.asarray(steps.r_branch, dtype=np.float64),
        np.asarray(steps.n_leaves, dtype=np.float64),
        np.asarray(steps.n_internal, dtype=np.int64),
        np.ascontiguousarray(~tree.is_leaf),
        np.ascontiguousarray(position, dtype=np.int64),
        np.ascontiguousarray(size, dtype=np.int64),
    )
    return WeakestLinkSequence(pruned, alphas, risks, leaves.astype(np.int64), internal)


def rpart_complexities(tree, r_node: np.ndarray) -> np.ndarray:
    """rpart's complexity of every node (alpha units), as rpart 4.1.19 computes it while it
    grows with cp = 0 (partition.c) and then caps it by its parent's (make_cp_list.c).

    A node's complexity is (R(t) - R(branch)) / splits of its branch, where the branch is
    its subtree with the children that "go first" already collapsed: rpart compares the
    node's complexity with its children's and collapses a child whose complexity is
    smaller before computing the node's (a look at children and grandchildren, not the
    exact weakest link). A node whose complexity is <= 0 collapses. A leaf's complexity is
    0. pruning at alpha snips every node whose capped complexity is <= alpha, which is
    what rpart's cp table and ``prune.rpart`` do."""
    n = tree.n_nodes
    complexity = np.zeros(n)
    branch_risk = r_node.astype(np.float64).copy()  # rpart's *sumrisk
    splits = np.zeros(n, dtype=np.int64)  # rpart's return value: splits kept below
    for node in range(n - 1, -1, -1):  # children have larger ids than their parents
        children = tree.children(node)
        if children.size != 2:  # a leaf (rpart's trees are binary)
            continue
        left, right = (int(c) for c in children)
        left_risk, right_risk = branch_risk[left], branch_risk[right]
        left_split, right_split = splits[left], splits[right]
        risk = r_node[node]
        temp = (risk - (left_risk + right_risk)) / (left_split + right_split + 1)
        if complexity[right] > complexity[left]:
            if temp > complexity[left]:  # the left son collapses first
                left_risk, left_split = r_node[left], 0
                temp = (risk - (left_risk + right_risk)) / (left_split + right_split + 1)
                if temp > complexity[right]:  # the right one goes too
                    right_risk, right_split = r_node[right], 0
        elif temp > complexity[right]:  # the right son goes first
            right_risk, right_split = r_node[right], 0
            temp = (risk - (left_risk + right_risk)) / (left_split + right_split + 1)
            if temp > complexity[left]:
                left_risk, left_split = r_node[left], 0
        complexity[node] = (risk - (left_risk + right_risk)) / (left_split + right_split + 1)
        if complexity[node] <= 0.0:  # "all was in vain": the node does not split
            branch_risk[node], splits[node] = risk, 0
        else:
            branch_risk[node] = left_risk + right_risk
            splits[node] = left_split + right_split + 1
    parent = tree.parents()
    for node in range(1, n):  # parents first: cap by the parent's (capped) complexity
        complexity[node] = min(complexity[node], complexity[parent[node]])
    return complexity


def rpart_sequence(tree, risk: np.ndarray) -> WeakestLinkSequence:
    """Pruning steps that snip each internal node at its rpart complexity
    (:func:`rpart_complexities`), smallest first (a parent before its children on ties):
    pruned at alpha, the tree keeps the nodes whose complexity is > alpha. ``risk`` is in
    risk units, as rpart's (not per unit of root weight): the complexities and their cps
    come out with rpart's bits; the alphas are then divided by the root's weight."""
    total = tree.weight[0]
    complexity = rpart_complexities(tree, risk)
    internal = np.flatnonzero(~tree.is_leaf)
    order = internal[np.lexsort((tree.depth[internal], complexity[internal]))]
    steps = _Steps(tree, risk / total)
    removed = np.zeros(tree.n_nodes, dtype=bool)
    cps = []
    scale = 1.0 / risk[0] if risk[0] > 0 else 1.0  # rpart.c: scale = 1 / tree->risk
    for node in order:
        if removed[node]:
            continue  # inside a branch snipped already
        removed[tree.descendants(node)[1:]] = True
        steps.collapse(node, max(complexity[node], 0.0) / total)
        cps.append(max(complexity[node], 0.0) * scale)
    return attrs.evolve(steps.sequence(exact_levels=True), step_cp=np.array(cps))


SEQUENCES = ("weakest_link", "rpart")


def internal_nodes_left(tree, sequence: WeakestLinkSequence, alpha: float) -> int:
    """Internal nodes (rpart's nsplit) of the subtree pruned at ``alpha`` (the sequence's
    count after its steps up to alpha; counted from the tree for a sequence without it)."""
    if sequence.n_internal is not None:
        return int(sequence.n_internal[sequence.steps_up_to(alpha)])
    mask = sequence.prune_mask(alpha, tree.n_nodes)
    removed = np.zeros(tree.n_nodes, dtype=bool)
    for node in np.flatnonzero(mask):
        removed[tree.descendants(node)[1:]] = True
    return int((~tree.is_leaf & ~removed & ~mask).sum())


def subtree_levels(sequence: WeakestLinkSequence) -> np.ndarray:
    """Distinct alphas at which the optimal subtree changes (0 first): the nested
    subtrees T_0 > T_1 > ... > root of the cp table."""
    return np.concatenate([[0.0], sequence.running_alpha[_level_starts(sequence)]])


def level_cps(sequence: WeakestLinkSequence, root_risk: float) -> np.ndarray:
    """rpart's cp of every :func:`subtree_levels` level: the sequence's own (rpart's
    arithmetic) where it has them, else alpha / ``root_risk``."""
    if sequence.step_cp is None:
        levels = subtree_levels(sequence)
        return levels / root_risk if root_risk > 0 else levels
    running = np.maximum.accumulate(np.asarray(sequence.step_cp, dtype=np.float64))
    return np.concatenate([[0.0], running[_level_starts(sequence)]])


def _level_starts(sequence: WeakestLinkSequence) -> np.ndarray:
    """The steps that begin a new subtree level: where the running maximum of the steps'
    alphas (of their cps, where the sequence has rpart's) first exceeds the last level's
    (by the relative 1e-12 of :meth:`WeakestLinkSequence.steps_up_to`, or at all where
    the levels are exact)."""
    key = sequence.step_alpha if sequence.step_cp is None else sequence.step_cp
    starts, last, running = [], 0.0, 0.0
    for step, value in enumerate(np.asarray(key, dtype=np.float64).tolist()):
        running = max(running, value)
        if running > (last if sequence.exact_levels else _with_slack(last)):
            starts.append(step)
            last = running
    return np.array(starts, dtype=np.int64)


def evaluation_alphas(levels: np.ndarray) -> np.ndarray:
    """rpart's and Breiman's: subtree k is evaluated at the geometric mean of its alpha
    interval; the last (the root alone) holds from its alpha on and is evaluated beyond it
    (0 x inf would be NaN when the path has a single level)."""
    return np.append(np.sqrt(levels[:-1] * levels[1:]), np.inf if levels[-1] > 0 else 0.0)


def held_out_errors(composition, tree, train_data, test_data) -> np.ndarray:
    """Weighted loss of every held-out row, as the target counts it (for class labels the
    labeler's errors: an abstention counts as an error)."""
    tree.component_state = {
        "evaluator": composition.evaluator.fit(tree, train_data, composition.labeler)
    }
    target, labeler = composition.target, composition.labeler
    values = composition.evaluator.predict_distribution(tree, test_data.X)
    decision = target.decide(values, labeler)
    loss = target.sample_loss(test_data.evidence, values, decision, labeler)
    return weighted_losses(test_data.weight, loss)


def weighted_losses(weight: np.ndarray, loss: np.ndarray) -> np.ndarray:
    """Each row's loss times its weight; a row of weight 0 (a bootstrap's undrawn row)
    counts nothing, even where its loss is infinite (a Poisson deviance at rate 0): 0 * inf
    would be NaN."""
    weighted = weight > 0
    return np.where(weighted, weight * np.where(weighted, loss, 0.0), 0.0)


def check_choice(state, levels) -> None:
    """A pruning state's choice: ``chosen_alpha`` >= 0 and, where kept, ``selected`` one
    of the ``levels`` (a shape: the number of subtree levels)."""
    state_array(state, "chosen_alpha", (), "pruner", minimum=0.0)
    if "selected" in state:
        selected = state_array(state, "selected", (), "pruner", minimum=0, integer=True)
        if selected >= levels[0]:
            raise ValueError("model file: pruner.selected is not a subtree level")


def _check_alpha(inst, attribute, value):
    if value is not None and not (
        isinstance(value, (int, float)) and value >= 0 and math.isfinite(value)
    ):
        raise ValueError(
            f"alpha must be None (choose by cross-validation) or a finite float >= 0, got {value!r}"
        )


@attrs.define(slots=False)
class CostComplexity(Pruner):
    """Weakest-link pruning; the subtree is chosen by ``alpha`` or by K-fold CV.

    Parameters
    ----------
    risk : "prediction" (CART, rpart: the loss of each node's own prediction, the
        misclassified weight of a classifier, the squared error of a regressor) or
        "impurity" (scikit-learn's ccp_alpha); "misclassification" is "prediction"'s
        older name.
    alpha : prune at this alpha; None chooses the subtree by cross-validation. Its unit
        is the risk as a fraction of the root's training weight (scikit-learn's
        ``ccp_alpha``: misclassified share for classes, mean squared error for a mean),
        so it does not grow with the number of rows; rpart's ``cp`` is alpha divided by
        the root's risk as a leaf (``prune(cp=...)`` takes rpart's unit).
    cv : number of stratified folds for the choice (default 10).
    rule : "min_error" (smallest tree with the least CV error; Tóth & Pataki) or "one_se"
        (smallest tree within one standard error of it; rpart's recommendation).
    seed : seed of the fold assignment (None: the estimator's random_state).
    sequence : "weakest_link" (Breiman et al.'s exact sequence of optimal subtrees) or
        "rpart" (rpart's: every node snipped at the complexity rpart computes while it
        grows, which looks at children and grandchildren only, so its cp table, pruning
        and xerror equal rpart's: :func:`rpart_complexities`; its cp rows merge only equal
        complexities, as rpart's do, where the weakest link merges alphas within a
        relative 1e-12).

    With ``alpha`` given, integer weights and repeated rows give the same tree (the risks
    are weighted sums). Chosen by CV they need not: folds are dealt by row, so three
    repeated rows may fall in three folds where one row of weight 3 falls in one.
    """

    requires: ClassVar[dict] = {"target": frozenset({"node_risk"})}
    name: ClassVar[str] = "cost_complexity"
    description: ClassVar[str] = (
        "minimal cost-complexity (weakest link) pruning, alpha given or chosen by CV"
    )
    risk: str = attrs.field(default="prediction", validator=attrs.validators.in_(RISKS))
    alpha: float | None = attrs.field(default=None, validator=_check_alpha)
    cv: int = attrs.field(
        default=10, validator=[attrs.validators.instance_of(int), attrs.validators.ge(2)]
    )
    rule: str = attrs.field(default="min_error", validator=attrs.validators.in_(RULES))
    seed: int | None = attrs.field(default=0)
    sequence: str = attrs.field(default="weakest_link", validator=attrs.validators.in_(SEQUENCES))

    def check_state(self, state, tree):
        """The pruning path (``pruning_path_``): one entry per subtree level, finite."""

        if not state:
            return
        levels = np.asarray(state.get("alphas", []), dtype=object).shape[:1]
        for key in ("alphas", "n_leaves", "cp"):
            state_array(state, key, levels, "pruner", minimum=0.0)
        # a subtree's risk is a sum of leaf risks >= 0, less its pruned parts: a pure tree's
        # came out as -2.4e-16 before fits clamped it (files of treekit up to issue 58), so
        # rounding below 0 is accepted, and no more
        risk = state_array(state, "risk", levels, "pruner")
        state_array(
            state, "risk", levels, "pruner", minimum=-1e-9 * float(np.abs(risk).max(initial=1.0))
        )
        if "n_splits" in state:
            state_array(state, "n_splits", levels, "pruner", minimum=0, integer=True)
        steps = np.asarray(state.get("step_alphas", []), dtype=object).shape[:1]
        for key in ("step_alphas", "step_risk"):
            state_array(state, key, steps, "pruner", allow_inf=True)
        cv_keys = [key for key in ("cv_error", "cv_std_error") if key in state]
        if len(cv_keys) == 1:  # the cp table prints both or neither
            missing = {"cv_error", "cv_std_error"} - set(cv_keys)
            raise ValueError(f"model file: pruner.{missing.pop()} is missing beside {cv_keys[0]}")
        for key in ("cv_error", "cv_std_error"):
            if key in state:
                state_array(state, key, levels, "pruner", minimum=0.0)
        check_choice(state, levels)

    def path_table(self, state: dict) -> dict:
        """rpart's cp table, one row per nested subtree (largest first): ``alphas``, ``cp``,
        ``n_leaves``, ``n_splits``, ``risk`` and ``rel_error`` (risk relative to the root
        as a leaf), with CV ``cv_error``/``cv_std_error`` and rpart's ``xerror``/``xstd``
        (relative) when the subtree was chosen by CV, and ``selected`` (the subtree in
        use)."""
        levels = np.asarray(state["alphas"], dtype=np.float64)
        risk = np.asarray(state["risk"], dtype=np.float64)
        root = risk[-1] if risk[-1] > 0 else 1.0
        table = {
            "alphas": levels,
            "cp": np.asarray(state["cp"], dtype=np.float64),
            "n_leaves": np.asarray(state["n_leaves"], dtype=np.int64),
        }
        if "n_splits" in state:
            table["n_splits"] = np.asarray(state["n_splits"], dtype=np.int64)
        table["risk"] = risk
        table["rel_error"] = risk / root
        if "cv_error" in state:
            table["cv_error"] = np.asarray(state["cv_error"], dtype=np.float64)
            table["cv_std_error"] = np.asarray(state["cv_std_error"], dtype=np.float64)
            table["xerror"] = table["cv_error"] / root
            table["xstd"] = table["cv_std_error"] / root
        in_use = np.flatnonzero(levels <= _with_slack(float(state["chosen_alpha"])))
        table["selected"] = np.arange(levels.size) == (in_use[-1] if in_use.size else 0)
        return table

    def pruning_sequence(
        self, tree, labeler, target=None, data=None, evaluator=None
    ) -> WeakestLinkSequence:
        """The nested subtrees of ``tree``: every pruning step and its alpha. With the
        training ``data`` and the ``evaluator`` that routes them, rpart's sequence takes
        the target's risks summed in rpart's order (:func:`rpart_node_risks`)."""
        if self.sequence == "rpart":
            ordered = None
            if data is not None and self.risk != "impurity" and target is not None:
                ordered = rpart_node_risks(tree, data, evaluator, target, labeler)
            if ordered is None:
                ordered = node_risk_in_risk_units(tree, self.risk, labeler, target)
            return rpart_sequence(tree, ordered)
        return weakest_link_sequence(tree, node_risk(tree, self.risk, labeler, target))

    def prune(self, tree, context):
        sequence = self.pruning_sequence(
            tree, context.labeler, context.target, context.data, context.composition.evaluator
        )
        levels = subtree_levels(sequence)
        leaves = np.array([sequence.n_leaves[sequence.steps_up_to(a)] for a in levels])
        # >= 0 as every leaf's risk is (the sequence subtracts pruned risks: a pure tree's
        # rounds to -2.4e-16)
        risk = np.maximum([sequence.risk[sequence.steps_up_to(a)] for a in levels], 0.0)
        splits = np.array([internal_nodes_left(tree, sequence, a) for a in levels])
        state = {
            "alphas": levels,
            "n_leaves": leaves,
            "n_splits": splits,
            "risk": risk,
            # rpart's cp: alpha relative to the risk of the root as a leaf (the last subtree)
            "cp": level_cps(sequence, risk[-1]),
            "step_alphas": sequence.alphas,
            "step_risk": sequence.risk,
        }
        if self.alpha is not None:
            chosen_alpha = float(self.alpha)
        else:
            if context.cross_validation is not None:  # folds grown elsewhere
                cv_error, cv_se = (
                    np.asarray(a, dtype=np.float64) for a in context.cross_validation
                )
                if cv_error.shape != levels.shape or cv_se.shape != levels.shape:
                    raise ValueError(
                        f"cross_validation gives {cv_error.shape[0]} errors for the "
                        f"{levels.size} subtree levels of the tree"
                    )
            elif context.data.n_samples == 0:
                raise ValueError(
                    "pruner 'cost_complexity' chooses alpha by cross-validation, which needs "
                    "the training rows or errors measured elsewhere (cross_validation); give "
                    "pruner_params={'alpha': ...}"
                )
            else:
                cv_error, cv_se = self._cross_validate(levels, context)
            state["cv_error"], state["cv_std_error"] = cv_error, cv_se
            if np.isnan(cv_error).any():
                raise ValueError(
                    "pruner 'cost_complexity': the cross-validated error is NaN at some "
                    f"subtree (target {context.target.name!r}'s sample_loss gave NaN)"
                )
            # every error may be infinite (a fold whose rows have no event predicts rate 0,
            # and a held-out event has an infinite deviance): then the root is chosen
            best = cv_error.min()
            minimum = int(np.flatnonzero(cv_error <= best + 1e-12)[-1])
            if self.rule == "min_error":
                selected = minimum
            else:
                spread = cv_se[minimum] if np.isfinite(cv_se[minimum]) else 0.0
                selected = int(np.flatnonzero(cv_error <= best + spread + 1e-12)[-1])
            state["selected"] = selected
            chosen_alpha = float(levels[selected])
        state["chosen_alpha"] = chosen_alpha
        pruned = tree.collapse(sequence.prune_mask(chosen_alpha, tree.n_nodes))
        pruned.component_state = dict(tree.component_state, pruner=state)
        return pruned

    def level_alphas(self, tree, labeler, target=None) -> tuple:
        """(the alphas of the nested subtrees of ``tree``, the alpha each one's subtree is
        evaluated at in cross-validation: the geometric mean of its interval, rpart's and
        Breiman's). Called by ``prune`` and by growers that cross-validate elsewhere (the
        Dask estimators grow the fold trees over a cluster)."""
        levels = subtree_levels(self.pruning_sequence(tree, labeler, target))
        return levels, evaluation_alphas(levels)

    @staticmethod
    def cv_from_sums(weighted_loss, weighted_square, total_weight, n_rows) -> tuple:
        """(cv_error, cv_std_error) per level from the held-out rows' sums of w x loss and
        w x loss^2 (every row held out once): the mean loss and its standard error, as
        ``prune`` computes them from the rows. Called by growers that cross-validate
        elsewhere."""
        cv_error = np.asarray(weighted_loss, dtype=np.float64) / total_weight
        spread = (
            np.asarray(weighted_square, dtype=np.float64)
            - 2.0 * cv_error * weighted_loss
            + cv_error * cv_error * total_weight
        ) / total_weight
        return cv_error, np.sqrt(np.maximum(spread, 0.0) / n_rows)

    def _cross_validate(self, levels, context):
        """(CV error, its standard error) of every subtree level, from ``cv`` folds: each
        fold's tree is grown on the other folds and pruned at each level's evaluation alpha,
        and its held-out rows' losses are summed per level (as sums of loss and of squared
        loss per weight, never a levels x rows matrix)."""
        data = context.data
        rng = np.random.default_rng(self.seed) if self.seed is not None else context.rng
        fold = stratified_folds(context.target.strata(data.evidence, context.labeler), self.cv, rng)
        evaluate_at = evaluation_alphas(levels)
        loss_sum, square_sum = np.zeros(levels.size), np.zeros(levels.size)
        for k in range(self.cv):
            test_rows = np.flatnonzero(fold == k)
            train_rows = np.flatnonzero(fold != k)
            if test_rows.size == 0 or train_rows.size == 0:  # too few rows for this fold
                continue
            train, test = data.subset(train_rows), data.subset(test_rows)
            fold_tree = context.composition.grow(train, rng)
            fold_sequence = self.pruning_sequence(fold_tree, context.labeler, context.target)
            errors = _FoldErrors(levels.size, test.weight)
            along_paths = _routes_along_paths(context.composition.evaluator)
            rest = np.arange(test.n_samples)
            if along_paths:
                complete = ~np.isnan(test.X).any(axis=1)
                branching = _errors_along_paths(
                    context,
                    fold_tree,
                    fold_sequence,
                    evaluate_at,
                    test,
                    np.flatnonzero(complete),
                    errors,
                )
                rest = np.union1d(np.flatnonzero(~complete), branching)
            if rest.size:
                _errors_by_subtree(
                    context, fold_tree, fold_sequence, evaluate_at, train, test, rest, errors
                )
            loss_sum += errors.loss_sum()
            square_sum += errors.square_sum()
        total = data.weight.sum()
        cv_error = loss_sum / total
        with np.errstate(invalid="ignore"):  # inf - inf where a level's error is infinite
            # sum_i w_i (e_i / w_i - c)^2 = sum e_i^2 / w_i - 2 c sum e_i + c^2 sum w_i
            spread = (square_sum - 2 * cv_error * loss_sum + cv_error**2 * total) / total
        spread = np.maximum(spread, 0.0)  # (rounding of a spread of exactly 0)
        # a level whose error is infinite has no finite spread either
        cv_se = np.where(np.isfinite(cv_error), np.sqrt(spread / data.n_samples), np.inf)
        return cv_error, cv_se


class _FoldErrors:
    """A fold's held-out losses per subtree level, kept as two running sums per level
    (weighted loss, and squared weighted loss per weight) through difference arrays: a
    row whose loss is the same over a run of levels is added once for the run."""

    def __init__(self, n_levels: int, weights: np.ndarray):
        self.weights = weights
        self.first = np.zeros(n_levels + 1)
        self.second = np.zeros(n_levels + 1)

    def add(self, rows, start, stop, errors) -> None:
        """Rows ``rows`` have weighted errors ``errors`` at levels start..stop-1."""
        keep = stop > start
        rows, start, stop, errors = rows[keep], start[keep], stop[keep], errors[keep]
        weight = self.weights[rows]
        per_weight = np.where(weight > 0, errors * errors / np.where(weight > 0, weight, 1.0), 0.0)
        for sums, values in ((self.first, errors), (self.second, per_weight)):
            np.add.at(sums, start, values)
            np.subtract.at(sums, stop, values)

    def loss_sum(self) -> np.ndarray:
        return np.cumsum(self.first)[:-1]

    def square_sum(self) -> np.ndarray:
        return np.cumsum(self.second)[:-1]


def _routes_along_paths(evaluator) -> bool:
    """Whether a complete row's prediction by a pruned tree is the value of the node where
    its path is cut: an evaluator routing by the tree's own tests to one leaf, whose state
    is the tree's own (no refit per subtree)."""
    return "hard_routing" in evaluator.provides and not evaluator.reads_training_rows


def _errors_along_paths(context, tree, sequence, evaluate_at, test, rows, errors):
    """Held-out losses of complete ``rows`` at every level in one pass over their paths
    (rpart's way), and the rows left to :func:`_errors_by_subtree` (those that go down
    several branches: a category unseen in training). Pruned at alpha, a row stops at the
    first node of its path collapsed at alpha: a node is collapsed from the running
    maximum of the step alphas up to its step, so the alpha from which a row stops at or
    above a node (``cut``) is the smallest of its own and its ancestors' (a property of the
    node, not the row), and the row stops at the node for the levels from its cut up to
    its parent's. The node's value is the prediction there."""
    if rows.size == 0:
        return np.zeros(0, dtype=np.int64)
    cut = np.full(tree.n_nodes, np.inf)
    cut[tree.is_leaf] = -np.inf  # a leaf stops every row that reaches it
    cut[sequence.pruned_node] = sequence.running_alpha
    parent = tree.parents()
    for nodes in tree.levels()[1:]:  # parents first
        cut[nodes] = np.minimum(cut[nodes], cut[parent[nodes]])
    above = np.where(parent >= 0, cut[np.maximum(parent, 0)], np.inf)
    node, row = rows_reaching(tree, np.ascontiguousarray(test.X[rows]))
    branching = np.bincount(row[tree.is_leaf[node]], minlength=rows.size) != 1
    stops = ~branching[row] & (cut[node] < above[node])  # stops here for [cut, above)
    node, row = node[stops], row[stops]
    thresholds = _with_slack(evaluate_at)  # collapsed at alpha: collapsed from <= slack
    start = np.searchsorted(thresholds, cut[node], side="left")
    stop = np.searchsorted(thresholds, above[node], side="left")
    stop[np.isposinf(above[node])] = evaluate_at.size  # no node above cuts: every level on
    at = rows[row]
    values = tree.value[node]
    target, labeler = context.target, context.labeler
    loss = target.sample_loss(test.evidence[at], values, target.decide(values, labeler), labeler)
    errors.add(at, start, stop, weighted_losses(test.weight[at], loss))
    return rows[branching]


def _errors_by_subtree(context, tree, sequence, evaluate_at, train, test, rows, errors) -> None:
    """Held-out losses of ``rows`` at every level by pruning the fold's tree to each
    distinct subtree, refitting the evaluator and predicting (an evaluator that mixes
    leaves or learns from the rows; rows with a missing value)."""
    if not evaluate_at.size:
        return
    subset = test.subset(rows)
    previous, start = None, 0
    for j, alpha in enumerate(evaluate_at):
        mask = sequence.prune_mask(alpha, tree.n_nodes)
        if previous is not None and np.array_equal(mask, previous[0]):
            continue
        if previous is not None:
            errors.add(rows, np.full(rows.size, start), np.full(rows.size, j), previous[1])
        found = held_out_errors(context.composition, tree.collapse(mask), train, subset)
        previous, start = (mask, found), j
    errors.add(rows, np.full(rows.size, start), np.full(rows.size, evaluate_at.size), previous[1])

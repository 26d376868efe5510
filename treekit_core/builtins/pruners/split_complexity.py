"""Split-complexity pruning (LeBlanc & Crowley 1993, "Survival trees by goodness of
split") for trees whose splits are scored by a standardised test statistic: the log-rank
criteria, which have no node risk for cost-complexity pruning to minimise.

A split's strength is G(h) = Z_h^2, the square of its standardised statistic (the log-rank
|U| / sqrt(V) the search stored as the node's ``improvement``: a chi-square on one degree
of freedom). A tree's split complexity is

    G_alpha(T) = G(T) - alpha |S(T)|,   G(T) = sum over its internal nodes h of G(h),

|S(T)| its number of splits. As for cost complexity, the subtrees that maximise G_alpha
for some alpha are nested and found by the weakest link: the internal node h of smallest
g(h) = G(T_h) / |S(T_h)| (T_h its branch) is made a leaf, one node per step (ties: the
first node id), the alpha of the step being g(h). This is cost-complexity pruning with the
node "risk" r(h) = G(T_h) (then r(h) minus its branch's leaf risks, which are 0, is
G(T_h), and a branch has |S(T_h)| = leaves - 1 splits): the same compiled sequence.

The subtree is the one at ``alpha`` where given, else chosen as LeBlanc & Crowley
choose it with the bootstrap: a subtree's G on the rows that grew it is optimistic, and
the optimism at each alpha level is estimated from ``n_bootstrap`` trees grown on
bootstrap samples (each pruned at the level's alpha: the mean of G on its bootstrap
sample less G of the same splits on the original rows). The level of largest corrected
split complexity G(T) - optimism - ``penalty`` x |S(T)| (their alpha_c, "between 2 and
4"; default 4) wins (ties: the smaller tree). Not K-fold cross-validation: a fold's
held-out statistic is on a tenth of the rows, a scale the penalty does not match (on
``lung`` every split fell to it), where the bootstrap correction stays at the full
sample's.
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.builtins.pruners.cost_complexity import (
    _with_slack,
    check_choice,
    evaluation_alphas,
    internal_nodes_left,
    subtree_levels,
    weakest_link_sequence,
)
from treekit_core.components import Pruner, state_array
from treekit_core.engine.questions import rows_reaching


def split_statistics(tree) -> np.ndarray:
    """G(h) of every node: the square of the standardised statistic its split stored
    (``improvement``), 0 at leaves."""
    improvement = np.asarray(tree.node_fields.get("improvement", np.zeros(tree.n_nodes)))
    internal = ~tree.is_leaf & np.isfinite(improvement)
    return np.where(internal, np.square(np.where(internal, improvement, 0.0)), 0.0)


def split_complexity_sequence(tree):
    """The weakest-link sequence of split complexity: the cost-complexity sequence of the
    node risks r(h) = G(T_h) (the module docstring)."""
    return weakest_link_sequence(tree, tree.subtree_sums(split_statistics(tree)))


def _check_alpha(instance, attribute, value) -> None:
    if value is not None and not (
        isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < np.inf
    ):
        raise ValueError(f"{attribute.name} must be a finite number >= 0 or None, got {value!r}")


@attrs.define(slots=False)
class SplitComplexity(Pruner):
    """LeBlanc & Crowley's split-complexity pruning (the module docstring).

    Parameters
    ----------
    alpha : prune at this alpha (in units of chi-square per split); None chooses the subtree
        by the bootstrap-corrected split complexity.
    n_bootstrap : bootstrap samples for the correction (default 25).
    penalty : LeBlanc & Crowley's alpha_c, the held-out chi-square a split must bring to be
        kept in the choice (default 4; they suggest 2 to 4).
    seed : seed of the bootstrap samples (None: the estimator's random_state).
    """

    requires: ClassVar[dict] = {"criterion": frozenset({"standardised_split_statistic"})}
    name: ClassVar[str] = "split_complexity"
    description: ClassVar[str] = (
        "LeBlanc & Crowley's split-complexity pruning of log-rank trees, alpha given or "
        "chosen by the bootstrap"
    )
    alpha: float | None = attrs.field(default=None, validator=_check_alpha)
    n_bootstrap: int = attrs.field(
        default=25, validator=[attrs.validators.instance_of(int), attrs.validators.ge(1)]
    )
    penalty: float = attrs.field(default=4.0, validator=_check_alpha)
    seed: int | None = attrs.field(default=0)

    def prune(self, tree, context):
        sequence = split_complexity_sequence(tree)
        levels = subtree_levels(sequence)
        total = float(tree.subtree_sums(split_statistics(tree))[0])
        steps = [sequence.steps_up_to(a) for a in levels]
        state = {
            "alphas": levels,
            "n_splits": np.array([internal_nodes_left(tree, sequence, a) for a in levels]),
            "n_leaves": np.array([sequence.n_leaves[s] for s in steps]),
            # G of each subtree: the full tree's less what the steps pruned (r(T) = 0)
            "split_statistic": np.maximum(total - np.array([sequence.risk[s] for s in steps]), 0),
        }
        if self.alpha is not None:
            chosen = float(self.alpha)
        elif context.data is None or context.data.n_samples == 0:
            raise ValueError(
                "pruner 'split_complexity' chooses alpha by the bootstrap, which needs the "
                "training rows; give pruner_params={'alpha': ...}"
            )
        else:
            optimism = self._optimism(levels, context)
            corrected = state["split_statistic"] - optimism - self.penalty * state["n_splits"]
            state["optimism"], state["corrected_complexity"] = optimism, corrected
            best = corrected.max()
            selected = int(np.flatnonzero(corrected >= best - 1e-12 * max(abs(best), 1.0))[-1])
            state["selected"] = selected
            chosen = float(levels[selected])
        state["chosen_alpha"] = chosen
        pruned = tree.collapse(sequence.prune_mask(chosen, tree.n_nodes))
        pruned.component_state = dict(tree.component_state, pruner=state)
        return pruned

    def _optimism(self, levels, context) -> np.ndarray:
        """The bootstrap estimate of each level's optimism (the module docstring): per
        bootstrap tree, its subtree at the level's alpha (its evaluation alpha, as the
        cost-complexity pruner evaluates levels), G on its bootstrap sample less G of the
        same splits on the original rows, averaged over the trees."""
        data = context.data
        rng = np.random.default_rng(self.seed) if self.seed is not None else context.rng
        statistic = context.criterion.two_sample_statistic
        evaluate_at = _with_slack(evaluation_alphas(levels))
        total = np.zeros(levels.size)
        n = data.n_samples
        for _ in range(self.n_bootstrap):
            counts = np.bincount(rng.integers(0, n, n), minlength=n)
            tree = context.composition.grow(data.with_weight(data.weight * counts), rng)
            on_sample = split_statistics(tree)
            on_original = held_out_statistics(tree, data.X, data.evidence, statistic)
            last = internal_until(tree, split_complexity_sequence(tree))
            kept = last[None, :] > evaluate_at[:, None]  # leaves: never (-inf)
            total += kept @ (on_sample - on_original)
        return total / self.n_bootstrap

    def check_state(self, state, tree):
        """The path: one entry per subtree level, finite; the choice a level."""
        if not state:
            return
        levels = np.asarray(state.get("alphas", []), dtype=object).shape[:1]
        for key in ("alphas", "n_leaves", "n_splits", "split_statistic"):
            state_array(state, key, levels, "pruner", minimum=0.0)
        for key in ("optimism", "corrected_complexity"):
            if key in state:
                state_array(state, key, levels, "pruner")
        check_choice(state, levels)

    def path_table(self, state: dict) -> dict:
        """One row per nested subtree (largest first): ``alphas``, ``n_splits``,
        ``n_leaves``, ``split_statistic`` (G(T)), the bootstrap ``optimism`` and the
        ``corrected_complexity`` G(T) - optimism - penalty |S(T)| when the subtree was
        chosen so, and ``selected`` (the subtree in use)."""
        levels = np.asarray(state["alphas"], dtype=np.float64)
        table = {
            "alphas": levels,
            "n_splits": np.asarray(state["n_splits"], dtype=np.int64),
            "n_leaves": np.asarray(state["n_leaves"], dtype=np.int64),
            "split_statistic": np.asarray(state["split_statistic"], dtype=np.float64),
        }
        for key in ("optimism", "corrected_complexity"):
            if key in state:
                table[key] = np.asarray(state[key], dtype=np.float64)
        in_use = np.flatnonzero(levels <= _with_slack(float(state["chosen_alpha"])))
        table["selected"] = np.arange(levels.size) == (in_use[-1] if in_use.size else 0)
        return table


def internal_until(tree, sequence) -> np.ndarray:
    """Per node, the alpha from which it is no longer a split of the pruned tree: the
    smallest running alpha of the steps that collapse it or an ancestor (inf for a split
    never pruned; -inf at leaves)."""
    cut = np.full(tree.n_nodes, np.inf)
    cut[tree.is_leaf] = -np.inf
    cut[sequence.pruned_node] = sequence.running_alpha
    parent = tree.parents()
    for nodes in tree.levels()[1:]:  # parents first
        cut[nodes] = np.minimum(cut[nodes], cut[parent[nodes]])
    return cut


def held_out_statistics(tree, X, evidence, statistic) -> np.ndarray:
    """Per internal node of ``tree``, ``statistic(rows, groups)`` (the criterion's
    two-sample chi-square, :meth:`two_sample_statistic`) of the target's rows
    ``evidence`` of the rows of X that reach it, grouped by the child they reach (a row
    reaching several, by a missing tested value, is left out of that node's test); 0 at
    leaves."""
    node, row = rows_reaching(tree, np.ascontiguousarray(X))
    out = np.zeros(tree.n_nodes)
    bounds = np.searchsorted(node, np.arange(tree.n_nodes + 1))  # node's run of rows
    branch = np.full(tree.n_nodes, -1)
    for h in np.flatnonzero(~tree.is_leaf):
        children = tree.children(h)
        branch[children] = np.arange(children.size)
        reached = [row[bounds[c] : bounds[c + 1]] for c in children]
        rows = np.concatenate(reached)
        groups = np.repeat(branch[children], [r.size for r in reached])
        once = np.bincount(rows, minlength=X.shape[0])[rows] == 1  # reached one child
        out[h] = statistic(evidence[rows[once]], groups[once])
    return out

"""The splitter ``random``: extremely randomised trees (Geurts, Ernst & Wehenkel 2006), the
splitter of scikit-learn's ``ExtraTrees*`` and scikit-survival's ``ExtraSurvivalTrees``.

At every node, for each candidate feature (``max_features`` of them, drawn as for any
forest) one cut is drawn instead of searched: for a numeric feature a threshold uniform
between the node's smallest and largest known value (the largest itself becomes the
smallest, so every cut sends rows both ways); for a nominal feature a random proper subset
of the categories present at the node, each category sent to the first branch with
probability 1/2, drawn again until both branches hold a category. Of these cuts the one the
criterion scores best is taken (impurity drop; a log-rank criterion's two-sample
statistic), if the stopping rules admit it. Rows missing the feature are left out of its
score, which is scaled by their share (C4.5's rule, as the exhaustive splitter's), and go
down the split by the propagator's rule.

Growth: numeric features without missing values grow in one compiled call
(``kernels/random_growth.py``: one array of row ids partitioned in place, a xoshiro256**
seeded per tree; features constant at a node do not count towards ``max_features``, as in
scikit-learn); otherwise node by node, drawing from the fit's generator (``Node.rng``).
Either way a ``random_state`` gives the same tree, and a forest the same trees for any
``n_jobs``.
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.builtins.grown_rows import grown_leaves, keep_grown_rows
from treekit_core.builtins.splitters import Exhaustive, refuse_scored_nominal
from treekit_core.components import Split
from treekit_core.engine.composition import CompositionError
from treekit_core.numerics import FEATURE_THRESHOLD

#: The most bytes a tree's copy of X in its rows' order may take (a thread growing a
#: tree holds one): above it the grower reads X at a node's rows instead.
NODE_ORDER_BYTES = 64 * 2**20


def keeps_columns_in_node_order(max_features: int, n_features: int, n_rows: int) -> bool:
    """Whether the random cuts' grower keeps X's columns in its rows' order
    (``kernels/random_growth.py``): where at least half the features are drawn at every
    node (moving every column at a split then costs less than reading the drawn ones at
    random) and the copy stays within :data:`NODE_ORDER_BYTES`."""
    return 2 * max_features >= n_features and 8 * n_features * n_rows <= NODE_ORDER_BYTES


@attrs.define(slots=False)
class RandomCuts(Exhaustive):
    """One random cut per candidate feature, the best of them (module docstring). No
    parameters beyond the exhaustive splitter's ``missing`` (C4.5's shares only)."""

    name: ClassVar[str] = "random"
    description: ClassVar[str] = (
        "one random cut per candidate feature, the best of them (extremely randomised trees)"
    )
    provides: ClassVar[frozenset] = Exhaustive.provides - {
        "split_scores",
        "absolute_deviation_search",
        "gray_search",
        "monotonic_constraints",
    }

    def check_composition(self, composition) -> None:
        """Searches of other question kinds, gain ratio and scikit-learn's one-side
        missing values belong to the exhaustive search, not to random cuts."""
        if self.questions or self.gain_ratio or self.missing != "shares":
            raise CompositionError(
                f"splitter {self.name!r} draws one threshold or subset cut per feature; "
                "splitter_params 'questions', 'gain_ratio' and missing='one_side' are the "
                "exhaustive splitter's"
            )
        super().check_composition(composition)

    def prepare(self, data, criterion, rules):
        if type(criterion).row_search is not None:
            if "standardised_split_statistic" not in criterion.provides:
                raise CompositionError(
                    f"splitter {self.name!r} scores its random cuts by impurity drops or a "
                    f"two-sample test; criterion {criterion.name!r} gives neither"
                )
            return ("test", criterion, data)
        refuse_scored_nominal(self, criterion, data)
        params = criterion.impurity_params(data.n_statistics)
        return ("sums", criterion.compiled_impurity(), params, data)

    def grows_in_one_call(self, composition, data) -> bool:
        """Numeric features without missing values, a criterion scored by sums, depth
        first."""
        return (
            not data.nominal_features.size
            and not data.has_missing
            and type(composition.criterion).row_search is None
            and composition.stopping.max_leaf_nodes is None
        )

    def build_tree(self, composition, data, rng, rules):
        """The whole tree in one compiled call (``kernels/random_growth.py``), or None
        where :meth:`grows_in_one_call` says no."""
        if not self.grows_in_one_call(composition, data):
            return None
        from treekit_core.kernels import random_bits, random_growth
        from treekit_core.kernels.growth import rule_vector
        from treekit_core.kernels.specialised import impurity_kernels

        max_features, _ = composition.feature_sampler.fused_settings(rng, data.n_features)
        # every tree its own draws, whichever features it may take (the fused settings
        # of a sampler taking every feature carry no seed: the presorted builder draws none)
        seed = int(rng.integers(2**31 - 1))
        criterion = composition.criterion
        samples = np.flatnonzero(data.weight > 0).astype(np.int32)
        # a node reads one feature's values of its rows: a column, in Fortran order
        X = data.cache.get("columns")
        if X is None:
            X = np.asfortranarray(data.X)
        kernels = impurity_kernels(
            random_growth,
            random_growth.ENTRY_SIGNATURES,
            criterion,
            (random_bits,),  # its stream's source keys the cached kernels too
            "random-cut kernels",
        )
        tables = [  # handed on in a list: tree_from_table frees it once it is copied out
            kernels.grow_random_tree(
                criterion.impurity_params(data.n_statistics),
                X,
                _rows_of(data, samples),
                samples,
                rule_vector(rules),
                max_features,
                seed,
                keeps_columns_in_node_order(max_features, data.n_features, samples.size),
            )
        ]
        tree = self._tree_of_table(composition, tables, data, False)
        # the rows as the growth left them, each leaf's together: training_leaves reads
        # them (a grown-out regression tree's leaves for quantiles, without a walk of X)
        keep_grown_rows(data, tree, samples, numbered_depth_first=True)
        return tree

    def training_leaves(self, tree, data):
        """Every row's leaf from the rows' order the growth of ``tree`` left, where
        :meth:`build_tree` grew it on every row of data that asked for its leaves
        (``training_leaves_wanted``), once; None otherwise (the caller walks X)."""
        return grown_leaves(data, tree)

    def share_across_trees(self, data, n_threads: int = 1) -> None:
        """X in Fortran order once for all trees of a forest (no presort: random cuts
        read no sorted values)."""
        if not data.X.flags.f_contiguous and not data.has_missing:
            data.cache["columns"] = np.asfortranarray(data.X)

    def find_split(self, state, node, rules):
        data = state[-1] if state[0] == "test" else state[3]
        rng = node.rng if node.rng is not None else np.random.default_rng(0)
        best, best_score = None, -np.inf
        for feature in node.features.tolist():
            found = self._random_cut(state, data, node, rules, feature, rng)
            if found is not None and found[0] > best_score:
                best_score, best = found
        return best

    def _random_cut(self, state, data, node, rules, feature, rng):
        """(score, Split) of ``feature``'s random cut at ``node``, or None (constant at
        the node, or the stopping rules refuse the cut)."""
        x = data.X[node.rows, feature]
        known = ~np.isnan(x)
        if known.sum() < 2:
            return None
        xs, weights = x[known], node.row_weights[known]
        nominal = data.n_categories is not None and data.n_categories[feature] > 0
        if nominal:
            present = np.unique(xs).astype(np.int64)
            if present.size < 2:
                return None
            while True:
                first = rng.random(present.size) < 0.5
                if 0 < first.sum() < present.size:
                    break
            left = np.isin(xs, present[first])
        else:
            low, high = float(xs.min()), float(xs.max())
            if high <= low + FEATURE_THRESHOLD:
                return None
            u = float(rng.random())
            # a convex combination: within [low, high] even where high - low overflows
            threshold = low * (1.0 - u) + high * u
            if threshold >= high:
                threshold = low
            left = xs <= threshold
        n_left = int(left.sum())
        if n_left < rules.min_samples_leaf or left.size - n_left < rules.min_samples_leaf:
            return None
        left_weight, known_weight = float(weights[left].sum()), float(weights.sum())
        if min(left_weight, known_weight - left_weight) < rules.min_weight_leaf:
            return None
        rows = data.evidence[node.rows[known]]
        if state[0] == "test":
            score = float(state[1].two_sample_statistic(rows, (~left).astype(np.int64)))
        else:
            _, impurity, params, _ = state
            sums = (rows * weights[:, None]).sum(axis=0)
            left_sums = (rows[left] * weights[left, None]).sum(axis=0)
            right_sums = sums - left_sums
            right_weight = known_weight - left_weight
            score = (
                impurity(sums, known_weight, params)
                - (
                    left_weight * impurity(left_sums, left_weight, params)
                    + right_weight * impurity(right_sums, right_weight, params)
                )
                / known_weight
            ) * (known_weight / node.weight)  # C4.5: the known rows' share
        share = left_weight / known_weight
        if nominal:
            mask = float(sum(2 ** int(c) for c in present[first]))
            split = Split(
                int(feature),
                -2.0,
                score,
                {"category_mask": mask},
                question="subset",
                branch_shares=(share, 1.0 - share),
            )
        else:
            split = Split(int(feature), threshold, score, {"missing_left": share})
        return score, split


def _rows_of(data, samples) -> np.ndarray:
    """:func:`~treekit_core.kernels.row_table` with only the drawn rows' entries written (the
    grower reads no other): an isolation tree's 256 rows of 100 000 cost 256 rows' work,
    not 100 000 (a third of such a forest's fit)."""
    from treekit_core.kernels.growth import row_table

    if samples.shape[0] == data.weight.shape[0]:
        return row_table(data.evidence, data.weight)
    table = np.empty((data.weight.shape[0], 1 + data.evidence.shape[1]))
    table[samples] = row_table(data.evidence[samples], data.weight[samples])
    return table

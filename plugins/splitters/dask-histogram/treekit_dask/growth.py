"""One tree grown level by level over a cluster's partitions (PLANET's and XGBoost-hist's
scheme), deciding every node as the histogram splitter decides it in memory.

Per level the client holds the histograms of the open nodes (features x bins x (count,
weight, K sums), summed over the partitions by a tree reduction on the workers); it
chooses every node's question from them with the histogram splitter's compiled search
and tie rule (the first feature with the best drop; a nominal feature's subset question
only where it drops strictly more), sends the chosen questions to the workers, which move
their rows to the children, and asks for the histograms of the smaller child of every
split whose children may split again: the larger one's is its parent's minus the smaller
one's. Only histograms and sums travel; rows stay on their workers.
"""

from __future__ import annotations

import time

import attrs
import numpy as np
from treekit_histogram.splitter import best_cut, histogram_kernels, summed_statistics

from treekit_core.builtins import nominal_questions
from treekit_core.kernels import bounded_value, python_function, rule_vector
from treekit_dask import partitions

COUNT, WEIGHT, SUMS = 0, 1, 2
#: A split whose heavier child keeps more than 1 - this of the node's weight is no split
#: (the in-memory grow loop's rule).
SHRINK_TOLERANCE = 1e-9
#: Histograms of at most this many bytes are asked of a partition at once (a level with
#: more open nodes is asked in batches).
BATCH_BYTES = 64 * 2**20


@attrs.define(eq=False)
class Level:
    """What one level cost: its open nodes, the histograms asked of each partition, and
    the bytes the client received."""

    depth: int
    open_nodes: int
    histograms: int
    bytes_per_partition: int
    bytes_to_client: int
    #: Wall time from the level's questions sent to its histograms received.
    seconds: float = 0.0


@attrs.define(eq=False)
class Grown:
    """The nodes found, in the order they were found (breadth first)."""

    tree: list = attrs.field(factory=list)  # which tree each node belongs to
    parent: list = attrs.field(factory=list)
    is_left: list = attrs.field(factory=list)
    depth: list = attrs.field(factory=list)
    count: list = attrs.field(factory=list)
    weight: list = attrs.field(factory=list)
    sums: list = attrs.field(factory=list)
    impurity: list = attrs.field(factory=list)
    interval: list = attrs.field(factory=list)  # (lower, upper): monotonic constraints
    #: the rows counted by their shares (the in-memory loop's effective samples, which its
    #: stopping rules read where rows divide); the row count where none divided
    effective: list = attrs.field(factory=list)
    used: list = attrs.field(factory=list)  # the features asked on the path (interaction)
    split: dict = attrs.field(factory=dict)  # node -> (kind, feature, threshold, drop, ...)
    children: dict = attrs.field(factory=dict)  # node -> (left, right)

    def add(
        self,
        tree,
        parent,
        is_left,
        depth,
        count,
        weight,
        sums,
        impurity,
        interval=(-np.inf, np.inf),
        used=frozenset(),
        effective=None,
    ) -> int:
        self.interval.append(interval)
        self.effective.append(float(count) if effective is None else float(effective))
        self.used.append(used)
        self.tree.append(tree)
        self.parent.append(parent)
        self.is_left.append(is_left)
        self.depth.append(depth)
        self.count.append(count)
        self.weight.append(weight)
        self.sums.append(np.asarray(sums, dtype=np.float64))
        self.impurity.append(impurity)
        return len(self.parent) - 1


class Grower:
    """The client's side of one distributed fit."""

    def __init__(
        self, client, parts, composition, rules, binning, n_categories, target, divides=False
    ):
        """``rules``: the resolved stopping rules of every tree grown (the tree on all rows,
        then one per cross-validation fold), each on its own rows' count and weight.
        ``divides``: rows may go down both branches (a nominal feature has missing values);
        the histograms then carry a last channel, every bin's rows counted by their shares."""
        self.divides = bool(divides)
        self.client, self.parts = client, parts
        self.composition, self.rules, self.target = composition, list(rules), target
        self.rule_values = [rule_vector(r) for r in self.rules]
        criterion = composition.criterion
        self.kernels = histogram_kernels(criterion)
        self.impurity = criterion.compiled_impurity()
        self.edges, self.n_value_bins, self.max_bins = binning
        self.n_bins = self.max_bins + 1
        self.n_categories = np.asarray(n_categories, dtype=np.int64)
        self.numeric = np.flatnonzero(self.n_categories == 0).astype(np.int64)
        self.nominal = np.flatnonzero(self.n_categories > 0).astype(np.int64)
        self.d = self.n_categories.size
        from treekit_core.kernels import accepts_split, may_split

        self.may_split = python_function(may_split)
        self.accepts_split = python_function(accepts_split)
        self.levels: list[Level] = []
        self.constraints = composition.constraints
        self.groups = self.constraints.groups(self.d) if self.constraints.has_interaction else None
        self.monotone = self.signs = None  # set by grow, which knows the target's width

    # -- cluster work ------------------------------------------------------------
    def _reduce(self, futures):
        """The sum of the futures' arrays, added pairwise on the workers."""
        while len(futures) > 1:
            futures = [
                self.client.submit(partitions.add, *futures[i : i + 2], pure=False)
                for i in range(0, len(futures), 2)
            ]
        return futures[0]

    def _histograms(self, nodes: list, n_nodes: int) -> dict:
        """node -> its histogram summed over the partitions, for ``nodes``."""
        width = 1 + self.parts_width + self.divides
        per_node = self.d * self.n_bins * width * 8
        batch = max(1, BATCH_BYTES // per_node)
        found = {}
        received = 0
        for start in range(0, len(nodes), batch):
            chunk = nodes[start : start + batch]
            slot_of_node = np.full(n_nodes, -1, dtype=np.int64)
            slot_of_node[chunk] = np.arange(len(chunk))
            futures = [
                self.client.submit(
                    partitions.histograms,
                    part,
                    slot_of_node,
                    len(chunk),
                    self.n_bins,
                    self.divides,
                    pure=False,
                )
                for part in self.parts
            ]
            total = self._reduce(futures).result()
            received += total.nbytes
            for slot, node in enumerate(chunk):
                found[node] = total[slot]
        self._last_bytes = (len(nodes) * per_node, received)
        return found

    # -- one node's decision (the histogram splitter's, from summed histograms) ------
    def _node_impurity(self, sums, weight):
        return float(self.impurity(np.ascontiguousarray(sums), weight, self.params))

    def _search_channels(self, hist):
        """The node's histogram as the searches read it: (count, weight, sums) per bin,
        without the shares channel."""
        return np.ascontiguousarray(hist[..., :-1]) if self.divides else hist

    def decide(self, tree, hist, count, weight, sums, impurity, depth, interval, used, effective):
        """(kind, feature, threshold, drop, goes_left per bin, missing share, mask) of the
        node's best question in ``tree``, or None; under constraints, among the features
        its path allows and the cuts its value ``interval`` admits. The stopping rules
        count the node's rows by their shares (``effective``), as the in-memory loop does."""
        rules, rule_values = self.rules[tree], self.rule_values[tree]
        if not self.may_split(effective, weight, impurity, depth, rule_values):
            return None
        hist = self._search_channels(hist)
        numeric, nominal = self.numeric, self.nominal
        if self.groups is not None:
            allowed = self.constraints.allowed_features(self.groups, used, self.d)
            numeric, nominal = numeric[allowed[numeric]], nominal[allowed[nominal]]
        signs, limits = np.zeros(self.d), np.array([-np.inf, np.inf])
        if self.monotone is not None:
            signs, limits = self.signs, self.constraints.limits(self.monotone, *interval)
        best, best_drop = None, -np.inf
        found = None
        if numeric.size:  # the histogram splitter's own search, scoring and tie rule
            # (the statistics its bins leave out at 0: where nominal features grow in
            # its compiled grower, none)
            summed = summed_statistics(
                self.composition.criterion, sums.size, all_of_them=self.nominal.size > 0
            )
            search_hist = hist
            if summed.size < sums.size:
                search_hist = hist.copy()
                left_out = np.setdiff1d(np.arange(sums.size), summed)
                search_hist[..., SUMS + left_out] = 0.0
            found = best_cut(
                self.kernels,
                self.params,
                search_hist,
                self.n_value_bins,
                numeric,
                np.ascontiguousarray(sums),
                weight,
                count,
                impurity,
                rule_values,
                signs,
                limits,
                summed,
            )
        if found is not None:
            f, last_left, drop, missing_left = found
            goes_left = np.zeros(self.n_bins, dtype=np.uint8)
            goes_left[: last_left + 1] = 1
            share = np.nan  # the children's weight shares
            if missing_left is not None:
                goes_left[self.max_bins] = missing_left
                share = float(missing_left)
            best = ("threshold", f, float(self.edges[f, last_left]), drop)
            best += (goes_left, share, np.nan)
            best_drop = drop
        if nominal.size:
            widest = int(self.n_categories[nominal].max())
            counts = hist[nominal, :widest, COUNT].astype(np.int64)
            weights = np.ascontiguousarray(hist[nominal, :widest, WEIGHT])
            category_sums = np.ascontiguousarray(hist[nominal, :widest, SUMS:])
            results = nominal_questions(
                self.impurity,
                self.params,
                self.target,
                category_sums,
                weights,
                counts,
                self.n_categories[nominal],
                weight,
                rules,
                "subset",
            )
            drops = results[:, 0]
            if (drops > -np.inf).any():
                a = int(np.argmax(drops))
                if drops[a] > best_drop:
                    mask = int(results[a, 1])
                    goes_left = np.array(
                        [(mask >> b) & 1 for b in range(self.n_bins)], dtype=np.uint8
                    )
                    # a missing category follows the known weight wholly when it all went
                    # one way; otherwise its rows divide (partitions.route)
                    goes_left[self.max_bins] = results[a, 2] >= 1.0
                    best = ("subset", int(nominal[a]), -2.0, float(drops[a]))
                    best += (goes_left, float(results[a, 2]), float(mask))
        if best is None or not self.accepts_split(best[3], weight, rule_values):
            return None
        return best

    def _child_intervals(self, found, sides, interval):
        """The children's value intervals: a cut on a constrained feature gives them the
        middle of its sides' values (held within the node's), any other cut passes the
        node's down (the in-memory grow loop's rule, engine/constraints.py)."""
        if self.monotone is None or found[0] != "threshold" or self.signs[found[1]] == 0:
            return interval, interval
        limits = self.constraints.limits(self.monotone, *interval)
        value = python_function(bounded_value)  # the searches' value, to the last bit
        left, right = (value(limits, sums, weight) for _, weight, sums, _ in sides)
        middle = min(max(left / 2.0 + right / 2.0, interval[0]), interval[1])
        if self.signs[found[1]] > 0:
            return (interval[0], middle), (middle, interval[1])
        return (middle, interval[1]), (interval[0], middle)

    def _divides(self, hist, found) -> bool:
        """Whether the split sends rows to both children: a subset question whose known
        weight went both ways, at a node with rows missing its category."""
        share = found[5]
        return found[0] == "subset" and hist[found[1], self.max_bins, COUNT] > 0 and 0 < share < 1

    def _sides(self, hist, found, divides) -> list:
        """(count, weight, sums, effective count) of the split's two sides, from the node's
        histogram: the bins each side takes, and where rows divide, every such row in both
        sides (as the in-memory propagator keeps them) with the side's share of its weight,
        sums and count (``divides``: :meth:`_divides`)."""
        feature, goes_left, share = found[1], found[4].astype(bool), found[5]
        stats = slice(SUMS, hist.shape[-1] - 1 if self.divides else None)
        sides = []
        for chosen, part in ((goes_left, share), (~goes_left, 1.0 - share)):
            if divides:
                chosen = chosen.copy()
                chosen[self.max_bins] = False
            totals = hist[feature, chosen].sum(axis=0)
            if divides:
                missing = hist[feature, self.max_bins]
                totals[COUNT] += missing[COUNT]
                totals[WEIGHT:] += part * missing[WEIGHT:]
            effective = totals[-1] if self.divides else totals[COUNT]
            count = int(round(totals[COUNT]))
            sides.append((count, float(totals[WEIGHT]), totals[stats], float(effective)))
        return sides

    # -- the whole tree ----------------------------------------------------------------
    def grow(self, params, root_totals) -> Grown:
        """Grow every tree (``root_totals``: per tree, its root's rows, weight and sums; the
        roots take node ids 0, 1, ... in that order, as the partitions expect)."""
        self.params = params
        self.parts_width = root_totals.shape[1] - 1  # weight + K sums
        if self.constraints.has_monotonic:
            self.monotone = self.target.monotone_value(root_totals.shape[1] - 2)
            self.signs = self.constraints.signs(self.monotone)
        grown = Grown()
        for tree, totals in enumerate(root_totals):
            count, weight, sums = int(round(totals[0])), float(totals[1]), totals[2:]
            impurity = self._node_impurity(sums, weight) if weight > 0 else 0.0
            grown.add(tree, -1, False, 0, count, weight, sums, impurity)
        roots = list(range(len(root_totals)))
        started = time.perf_counter()
        open_hist = self._histograms(roots, len(roots))
        self.levels.append(
            Level(0, len(roots), len(roots), *self._last_bytes, time.perf_counter() - started)
        )
        depth = 0
        while open_hist:
            started = time.perf_counter()
            splits = {}
            for node, hist in open_hist.items():
                found = self.decide(
                    grown.tree[node],
                    hist,
                    grown.count[node],
                    grown.weight[node],
                    grown.sums[node],
                    grown.impurity[node],
                    grown.depth[node],
                    grown.interval[node],
                    grown.used[node],
                    grown.effective[node],
                )
                if found is None:
                    continue
                divides = self._divides(hist, found)
                sides = self._sides(hist, found, divides)
                heaviest = max(side[1] for side in sides)
                if heaviest >= grown.weight[node] * (1.0 - SHRINK_TOLERANCE):
                    continue
                splits[node] = (found, sides, divides)
            if not splits:
                break
            n_nodes = len(grown.parent) + 2 * len(splits)
            feature = np.full(n_nodes, -1, dtype=np.int64)
            goes_left = np.zeros((n_nodes, self.n_bins), dtype=np.uint8)
            left_of = np.full(n_nodes, -1, dtype=np.int64)
            right_of = np.full(n_nodes, -1, dtype=np.int64)
            divide = np.full(n_nodes, np.nan)  # the left share where rows divide
            wanted, pairs = [], []
            for node, (found, sides, divides) in splits.items():
                grown.split[node] = found
                intervals = self._child_intervals(found, sides, grown.interval[node])
                used = grown.used[node] | {found[1]}
                ids = []
                for is_left, (c, w, s, e), interval in zip(
                    (True, False), sides, intervals, strict=True
                ):
                    tree = grown.tree[node]
                    impurity = self._node_impurity(s, w)
                    ids.append(
                        grown.add(
                            tree, node, is_left, depth + 1, c, w, s, impurity, interval, used, e
                        )
                    )
                grown.children[node] = tuple(ids)
                feature[node], goes_left[node] = found[1], found[4]
                left_of[node], right_of[node] = ids
                if found[0] == "subset":  # held-out rows missing the category divide too
                    divide[node] = found[5]
                elif np.isnan(found[5]):
                    # no training row of the node missed the feature: a held-out row that
                    # does is mixed by the children's weights, as the evaluator mixes it
                    left_weight, right_weight = sides[0][1], sides[1][1]
                    divide[node] = left_weight / (left_weight + right_weight)
                splits_again = [
                    self.may_split(
                        grown.effective[i],
                        grown.weight[i],
                        grown.impurity[i],
                        depth + 1,
                        self.rule_values[grown.tree[i]],
                    )
                    for i in ids
                ]
                if any(splits_again) and divides:
                    # rows in both children: no child is its parent minus its sibling
                    wanted.extend(i for i, again in zip(ids, splits_again, strict=True) if again)
                    pairs.append((node, ids, splits_again, None))
                elif any(splits_again):
                    small = ids[0] if grown.count[ids[0]] <= grown.count[ids[1]] else ids[1]
                    wanted.append(small)
                    pairs.append((node, ids, splits_again, small))
            # every open node that is not split becomes a leaf: its rows leave the growth
            self.parts = [
                self.client.submit(
                    partitions.route,
                    part,
                    feature,
                    goes_left,
                    left_of,
                    right_of,
                    divide,
                    self.max_bins,
                    pure=False,
                )
                for part in self.parts
            ]
            depth += 1
            parent_hist, open_hist = open_hist, {}
            if wanted:
                built = self._histograms(wanted, n_nodes)
                for node, ids, splits_again, small in pairs:
                    if small is None:
                        hists = built
                    else:
                        other = ids[1] if small == ids[0] else ids[0]
                        # the sibling by subtraction: the parent's histogram minus the smaller's
                        hists = {small: built[small], other: parent_hist[node] - built[small]}
                    for i, again in zip(ids, splits_again, strict=True):
                        if again:
                            open_hist[i] = hists[i]
                self.levels.append(
                    Level(
                        depth,
                        len(open_hist),
                        len(wanted),
                        *self._last_bytes,
                        time.perf_counter() - started,
                    )
                )
        return grown

"""The ``histogram`` splitter: the composition's criterion over per-node class histograms of
binned features."""

from __future__ import annotations

import contextlib
import numbers
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import ClassVar

import attrs
import numpy as np

from treekit_core import Split, Splitter
from treekit_core.builtins import (
    best_nominal_split,
    compiled_nominal_search,
    grown_leaves,
    keep_grown_rows,
    nominal_question_fields,
    nominal_question_wins,
    refuse_scored_nominal,
)
from treekit_histogram.best_first import grow_best_first
from treekit_histogram.binning import MAX_BINS, bin_features
from treekit_histogram.threads import (
    build_histogram_on_threads,
    feature_chunks,
    grow_with_threads,
    uses_threads,
)

#: Where data.cache keeps the binned features (shared by the trees of a forest).
CACHE_KEY = "histogram_bins"
#: Where data.cache keeps each thread's row-table buffer (with the thread's id).
ROW_TABLE_KEY = "histogram_row_table"


def _check_max_bins(instance, attribute, value):
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or not (2 <= value <= MAX_BINS)
    ):
        raise ValueError(
            f"max_bins must be an int from 2 to {MAX_BINS} (bin codes are bytes; a missing "
            f"value has a bin of its own, as in LightGBM), got {value!r}"
        )


@attrs.define(slots=False)
class Histogram(Splitter):
    """Split search over histograms of binned features (LightGBM's, for any criterion).

    Every numeric feature is binned once per fit into at most ``max_bins`` bins (a bin per
    distinct value when there are that few, else quantile bins); a node's candidate cuts lie
    between its non-empty bins. Missing values have a bin of their own and go, at each
    split, wholly to the side with the larger drop. Nominal features are searched as
    categories with the exhaustive splitter's subset question. With the hard propagator the
    whole tree grows in one compiled call, building the histogram of the smaller child of
    every split and subtracting it from the parent's for the larger; on ``n_threads``
    threads for a large tree (histograms over chunks of features, subtrees as tasks: the
    same tree, :mod:`treekit_histogram.threads`).
    """

    name: ClassVar[str] = "histogram"
    handles_missing: ClassVar[bool] = True
    # its threshold cuts are scored by split_drop, which a criterion's split score replaces
    provides: ClassVar[frozenset] = Splitter.provides | {
        "fused_builder",
        "split_scores",
        "binned_search",
        "monotonic_constraints",
        "interaction_constraints",
    }
    description: ClassVar[str] = "binned features, per-node class histograms (LightGBM's search)"
    max_bins: int = attrs.field(default=MAX_BINS, validator=_check_max_bins)

    def binned(self, data, n_threads=1):
        """The binned features of ``data`` (computed once, kept in ``data.cache``)."""
        cached = data.cache.get(CACHE_KEY)
        if cached is None or cached[0] != self.max_bins:
            numeric = data.X
            if data.nominal_features.size:
                numeric = data.X.copy()
                numeric[:, data.nominal_features] = 0.0  # binned apart: searched as categories
            binned = bin_features(numeric, self.max_bins, n_threads)
            for f in data.nominal_features:  # bin c: category code c (the subset search's)
                if data.n_categories[f] <= self.max_bins:  # else one bin: codes must fit
                    codes = data.X[:, f]
                    binned.codes[f] = np.where(np.isnan(codes), binned.missing_code, codes)
            cached = (self.max_bins, binned)
            data.cache[CACHE_KEY] = cached
        return cached[1]

    def share_across_trees(self, data, n_threads: int = 1) -> None:
        """Bin X once for every tree of a forest or boosting fit, on ``n_threads`` threads
        (1M x 20: 0.4 s on one thread, a 100-round fit's 5%)."""
        self.binned(data, n_threads)

    def training_leaves(self, tree, data):
        """Every row's leaf from the rows' order the growth left (each leaf's rows lie
        together, the leaves in depth-first order, first branch first: 0.6 s against the
        walk of X's 2.0 s in 100 rounds at 1M rows), where :meth:`build_tree` grew
        ``tree`` on every row of data that asked for its leaves (``training_leaves_wanted``),
        once; None otherwise (rows without weight are not in the growth's order, nothing
        was kept, or it was handed over already). A walk of the bin codes for
        those cases took 1.9 s: no faster than the walk of X, so the caller's walk
        decides there."""
        return grown_leaves(data, tree)

    def grows_in_one_call(self, composition, data) -> bool:
        """No monotonic constraints (the node-by-node loop keeps them); nominal features
        where :meth:`_compiled_subsets` takes them."""
        return self._one_call(composition, data)[0]

    def _one_call(self, composition, data):
        """(whether the compiled grower grows the tree, :meth:`_compiled_subsets` or None
        without nominal features): what :meth:`grows_in_one_call` answers and
        :meth:`build_tree` reads, decided once."""
        if composition.constraints.has_monotonic:
            return False, None
        if composition.stopping.max_leaf_nodes is not None:  # best first, numeric features
            return not data.nominal_features.size, None
        if not data.nominal_features.size:
            return True, None
        subsets = self._compiled_subsets(composition, data)
        return subsets is not None, subsets

    def _compiled_subsets(self, composition, data):
        """The core's :func:`treekit_core.builtins.compiled_nominal_search` for subset
        questions (the only nominal questions this splitter asks), or None: a nominal
        feature with a missing value (the loop divides those rows between branches, which
        a row index cannot), more categories than bins, or a composition the core leaves
        to the node-by-node loop."""
        nominal = data.nominal_features
        if "nominal_missing" not in data.cache:  # once for every tree of a forest
            data.cache["nominal_missing"] = bool(np.isnan(data.X[:, nominal]).any())
        if max(data.n_categories) > self.max_bins or data.cache["nominal_missing"]:
            return None
        return compiled_nominal_search(composition, data)

    def build_tree(self, composition, data, rng, rules):
        """Grow the whole tree in one compiled call (None where :meth:`grows_in_one_call`
        says no: the node-by-node loop grows it)."""
        grows, subsets = self._one_call(composition, data)
        if not grows:
            return None
        from treekit_core import tree_from_table
        from treekit_core.kernels import NODE_COLUMNS, no_nominal_search, rule_vector
        from treekit_histogram.kernels import SUMS

        n_threads = composition.fit_threads()
        binned = self.binned(data, n_threads)
        kernels = histogram_kernels(composition.criterion)
        max_features, seed = composition.feature_sampler.fused_settings(rng, data.n_features)
        # a zero-weight row (a forest's out-of-bag row) is a removed row: the root holds
        # the others (every row: a boosting round's, written without the search)
        weight = data.weight
        lightest = weight.min() if weight.size else 0.0
        if lightest > 0:
            index = np.arange(weight.size, dtype=np.int32)
        else:
            index = np.flatnonzero(weight > 0).astype(np.int32)
        rows = self._row_table(data, unit_rows=lightest == 1.0 and weight.max() == 1.0)
        params = composition.criterion.impurity_params(data.n_statistics)
        # a nominal feature's subset search sums its categories' bins: every statistic
        summed = summed_statistics(
            composition.criterion, data.n_statistics, all_of_them=subsets is not None
        )
        threaded = subsets is None and uses_threads(
            n_threads, index.size, data.n_features, max_features
        )
        max_leaves = composition.stopping.max_leaf_nodes
        if max_leaves is not None and max_features < data.n_features:
            return None  # features drawn per node: the node-by-node loop draws them
        if max_leaves is not None:  # best first (best_first.py), threads for large nodes
            threads = n_threads if threaded else 1
            root = self._histogram(binned.codes, rows, index, data, summed, threads)
            table = grow_best_first(
                kernels,
                params,
                binned,
                rows,
                index,
                root,
                rule_vector(rules),
                max_leaves,
                threads,
                summed,
            )
        elif threaded:  # the same tree, grown on n_threads threads (threads.py)
            root = self._histogram(binned.codes, rows, index, data, summed, n_threads)
            table = grow_with_threads(
                kernels, params, binned, rows, index, root, rule_vector(rules), n_threads, summed
            )
        else:
            root = self._histogram(binned.codes, rows, index, data, summed)
            if subsets is None:  # no candidate is nominal: the search is never called
                subsets = (no_nominal_search(), np.zeros(data.n_features, dtype=np.int64), -1, 0)
            table = kernels.grow_subtree(
                params,
                binned.codes,
                rows,
                binned.edges,
                binned.n_value_bins,
                index,
                0,
                index.size,
                0,
                rule_vector(rules),
                max_features,
                seed,
                root,
                np.full(1 + data.n_statistics, np.nan),  # the root's statistics: from its rows
                summed,
                *subsets,
            )
        questions, question, fields = nominal_question_fields(
            np.ascontiguousarray(table[:, SUMS + data.n_statistics + 1]),
            None,  # subset questions only
            table[:, NODE_COLUMNS.index("left")] >= 0,
            composition.registry,
        )
        missing_left = np.ascontiguousarray(table[:, SUMS + data.n_statistics])
        tables = [table]  # handed on in a list: tree_from_table frees it once it is copied
        del table, binned, rows, root
        tree = tree_from_table(
            tables,
            data.n_features,
            data.n_statistics,
            missing_left,
            questions=questions,
            question=question,
            node_fields=fields,
        )
        # the rows as the growth left them, each leaf's together (training_leaves reads
        # them); kept with their tree, so another tree's call never takes them
        keep_grown_rows(data, tree, index)
        return tree

    def _row_table(self, data, unit_rows=False):
        """The tree's row table: where every row weighs exactly 1 (``unit_rows``: a
        boosting round's unweighted rows) and the evidence is a C-ordered float64 array,
        the evidence itself (``kernels.table_weighs_rows``: no table written, 6 ms a
        round at 1M rows, and a third fewer bytes a row gathered); else ``row_table``'s,
        written into a buffer this thread keeps in ``data.cache`` from one tree to the
        next (boosting's rounds share their data's cache; a forest's trees each get a
        cache of their own): the table is read only while the tree grows, and a thread
        grows one tree at a time."""
        from treekit_core.kernels import row_table

        evidence = data.evidence
        if unit_rows and evidence.dtype == np.float64 and evidence.flags.c_contiguous:
            return evidence
        key = (ROW_TABLE_KEY, threading.get_ident())
        table = row_table(evidence, data.weight, out=data.cache.get(key))
        data.cache[key] = table
        return table

    def prepare(self, data, criterion, rules):
        from treekit_core.kernels import rule_vector

        refuse_scored_nominal(self, criterion, data)
        return {
            "binned": self.binned(data),
            "summed": summed_statistics(criterion, data.n_statistics),
            "kernels": histogram_kernels(criterion),
            "params": criterion.impurity_params(data.n_statistics),
            "rules": rule_vector(rules),
            "data": data,
        }

    def find_split(self, state, node, rules):
        """The best cut of the node's histograms (fractional row weights welcome), or the
        best category subset of a nominal feature if that drops more."""
        from treekit_core.kernels import row_table
        from treekit_histogram.kernels import WEIGHT

        data, binned, kernels = state["data"], state["binned"], state["kernels"]
        features = node.features
        nominal = np.zeros(0, dtype=np.int64)
        if data.nominal_features.size:
            is_nominal = data.n_categories[features] > 0
            nominal, features = features[is_nominal], features[~is_nominal]
        best, best_drop = None, -np.inf
        if features.size:
            rows = row_table(data.evidence[node.rows], node.row_weights)
            index = np.arange(node.n_samples, dtype=np.int32)
            hist = self._histogram(binned.codes[:, node.rows], rows, index, data, state["summed"])
            found = best_cut(
                kernels,
                state["params"],
                hist,
                binned.n_value_bins,
                np.ascontiguousarray(features, dtype=np.int64),
                node.statistics,
                node.weight,
                node.n_samples,
                node.impurity,
                state["rules"],
                *node.search_constraints(data.n_features),
                state["summed"],
            )
            if found is not None:
                f, last_left, drop, missing_left = found
                if missing_left is not None:
                    share = float(missing_left)
                else:
                    known = hist[f, : binned.n_value_bins[f], WEIGHT]
                    share = float(known[: last_left + 1].sum() / known.sum())
                best = Split(f, float(binned.edges[f, last_left]), drop)
                best.branch_shares = (share, 1.0 - share)
                best_drop = drop
        if nominal.size:
            split, score = best_nominal_split(
                (kernels.impurity, state["params"], data), node, rules, nominal, "subset", False
            )
            if nominal_question_wins(split, score, best, best_drop):
                best = split
        return best

    def _histogram(self, codes, rows, index, data, summed, n_threads=1):
        """The class histograms (features x (max_bins + 1) x channels) of the rows
        ``index`` of ``codes`` (their row table: ``rows``; the statistics ``summed``), with
        ``n_threads`` > 1 chunks of features on the threads (the same bits)."""
        from treekit_histogram.kernels import CHANNELS

        hist = np.empty((data.n_features, self.max_bins + 1, CHANNELS + data.n_statistics))
        side_sums = np.empty(data.n_statistics)  # not read: the node's come from its rows
        chunks = feature_chunks(data.n_features, n_threads, summed.size)
        with ThreadPoolExecutor(n_threads) if n_threads > 1 else contextlib.nullcontext() as pool:
            build_histogram_on_threads(
                pool, chunks, codes, rows, index, 0, index.size, hist, summed, side_sums
            )
        return hist


def summed_statistics(criterion, n_statistics, all_of_them=False) -> np.ndarray:
    """The statistics (of ``n_statistics``) a histogram's bins sum for ``criterion``: all
    of them (``all_of_them``, or where the criterion's drop reads every one), else all
    but its :meth:`~treekit_core.Criterion.drop_free_statistics` (a regression tree's sum
    of y^2: a bin's cuts are scored without it, each child's summed once from its rows).
    Called by the splitter once per tree, and by growers that sum a node's histograms
    elsewhere (treekit-dask), which score cuts as the splitter does."""
    n = n_statistics
    free = () if all_of_them else criterion.drop_free_statistics(n)
    return np.array([k for k in range(n) if k not in free], dtype=np.int64)


def best_cut(
    kernels,
    params,
    hist,
    n_value_bins,
    features,
    sums,
    weight,
    count,
    impurity,
    rules,
    signs,
    limits,
    summed=None,
):
    """The best threshold cut of a node from its histograms ``hist`` over ``features``:
    (feature, last bin on the left, drop, where its missing values go: 1 left, 0 right,
    None when the node has none of that feature), or None without an admissible cut. The
    first feature with the best drop wins (the splitter's tie rule); ``signs`` and
    ``limits`` are the node's monotonic constraints (``Node.search_constraints``). Called
    by the splitter node by node, and by growers that sum a node's histograms elsewhere
    (treekit-dask). ``summed``: the statistics the bins sum (None: all of them; the others
    are scored as :func:`~treekit_histogram.kernels.scored_parent` says)."""
    from treekit_histogram.kernels import COUNT

    if summed is not None:
        sums = np.ascontiguousarray(sums, dtype=np.float64)
        scored_sums = np.empty_like(sums)
        impurity = kernels.scored_parent(params, sums, float(weight), summed, scored_sums)
        sums = scored_sums
    m = features.size
    drops, bins, sides = np.empty(m), np.empty(m, dtype=np.int64), np.empty(m, np.uint8)
    kernels.scan_histograms(
        params,
        hist,
        n_value_bins,
        features,
        sums,
        weight,
        float(count),
        impurity,
        rules,
        drops,
        bins,
        sides,
        signs,
        limits,
    )
    usable = np.flatnonzero(bins >= 0)
    if not usable.size:
        return None
    c = int(usable[np.argmax(drops[usable])])  # the first of the best
    f = int(features[c])
    missing_left = int(sides[c]) if hist[f, hist.shape[1] - 1, COUNT] > 0 else None
    return f, int(bins[c]), float(drops[c]), missing_left


def histogram_kernels(criterion):
    """The histogram kernels specialised to ``criterion`` (see
    :func:`treekit_core.kernels.specialised.impurity_kernels`)."""
    from treekit_core.kernels import impurity_kernels
    from treekit_histogram import kernels

    return impurity_kernels(
        kernels, kernels.ENTRY_SIGNATURES, criterion, purpose="histogram kernels"
    )

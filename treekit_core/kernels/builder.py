"""The presorted builder: grows the whole tree of an exhaustive, hard-partition composition.

Gives the tree of :func:`treekit_core.engine.grow.grow_tree` (same stopping rules, same node
numbering, same tie breaking), faster: see :mod:`.growth` for the kernels and
:mod:`.specialised` for how they are compiled per criterion.

Threads. With one thread the whole tree is one compiled call. With more, the work is handed
out as tasks to a pool of Python threads running the kernels without the GIL, never as a
parallel region per node (whose barrier waits for every thread, so one thread whose core is
taken by another process stalls them all):

* the large nodes near the root are split one at a time, their feature scans and
  partitions spread over the pool in chunks of features that idle threads pick up;
* every node smaller than a share of the data becomes a task growing its whole subtree in
  one call; tasks run largest first and a thread takes the next when it is done.

A slow thread therefore delays only the chunk or subtree it holds. The tree is the same
for any number of threads: nodes are numbered afterwards, in the order one thread grows
them. Trees that draw features at random per node (``max_features`` < d) grow in one
call, so numba's generator draws in the same order as ever.
"""

from __future__ import annotations

import functools
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from treekit_core.kernels import growth, nominal_questions
from treekit_core.kernels.compiling import jit, python_function

#: A tree is grown with threads only when rows x features reaches this (50 000 x 20):
#: below it the whole fit takes a fraction of a second, and handing out work (and loading
#: the kernels that do it) costs more than it saves.
PARALLEL_MIN_WORK = 1_000_000
#: Nodes with fewer rows than 1 / (this x threads) of the data become subtree tasks, so
#: there are several tasks per thread to balance.
TASKS_PER_THREAD = 4
#: ... but never smaller than this many rows.
MIN_TASK_ROWS = 2_000


# The steps of splitting a large node that do not involve the criterion, called from
# Python (compiled on first use: a tree small enough for one thread never needs them).
node_statistics = jit()(python_function(growth.node_statistics))
may_split = jit()(python_function(growth.may_split))
choose_split = jit()(python_function(growth.choose_split))
mark_left = jit()(python_function(growth.mark_left))
fill_node = jit()(python_function(growth.fill_node))
partition_sorted = jit()(python_function(growth.partition_sorted))


SIGN_BIT = np.uint64(1 << 63)
EXPONENT_BITS = np.uint64(0x7FF0000000000000)
MANTISSA_BITS = np.uint64(0x000FFFFFFFFFFFFF)
ALL_BITS = np.uint64(0xFFFFFFFFFFFFFFFF)
#: Bits of the key sorted per pass (6 passes cover 64 bits; 2 048 counters fit in L1).
DIGIT_BITS = 11


def radix_order(bits, order):
    """The stable argsort of a float64 column (given as its bits, ``values.view(uint64)``)
    into ``order`` (int32): a least-significant-digit radix sort of keys whose unsigned
    order is the values' order (the sign bit set for a positive value, every bit flipped
    for a negative one; -0.0 keyed as 0.0, NaN as the largest key, so NaN goes last), a
    pass skipped where every key shares its digit. Linear in the rows, and stable by
    construction (a pass keeps the order of equal digits), so ties stay in row order."""
    n = bits.shape[0]
    keys = np.empty(n, dtype=np.uint64)
    for i in range(n):
        b = bits[i]
        if b == SIGN_BIT:
            b = np.uint64(0)
        if (b & EXPONENT_BITS) == EXPONENT_BITS and (b & MANTISSA_BITS) != 0:
            keys[i] = ALL_BITS
        elif b & SIGN_BIT:
            keys[i] = ~b
        else:
            keys[i] = b | SIGN_BIT
    rows = np.empty(n, dtype=np.int32)
    for i in range(n):
        rows[i] = i
    other_rows = np.empty(n, dtype=np.int32)
    other_keys = np.empty(n, dtype=np.uint64)
    counts = np.empty(1 << DIGIT_BITS, dtype=np.int64)
    mask = np.uint64((1 << DIGIT_BITS) - 1)
    for p in range(0, 64, DIGIT_BITS):
        shift = np.uint64(p)
        counts[:] = 0
        for i in range(n):
            counts[(keys[i] >> shift) & mask] += 1
        first = 0
        while counts[first] == 0:
            first += 1
        if counts[first] == n:  # every key has this digit: the pass would move nothing
            continue
        total = 0
        for c in range(counts.shape[0]):
            k = counts[c]
            counts[c] = total
            total += k
        for i in range(n):
            digit = (keys[i] >> shift) & mask
            j = counts[digit]
            counts[digit] = j + 1
            other_rows[j] = rows[i]
            other_keys[j] = keys[i]
        rows, other_rows = other_rows, rows
        keys, other_keys = other_keys, keys
    for i in range(n):
        order[i] = rows[i]


_radix_order = jit()(radix_order)


def stable_order(values):
    """``np.argsort(values, kind="stable")`` (NaN last, equal values in row order) as
    int32, by :func:`radix_order`: about 4x numpy's sort on a 100 000-row column, with or
    without ties."""
    order = np.empty(values.shape[0], dtype=np.int32)
    if order.size:
        _radix_order(np.ascontiguousarray(values, dtype=np.float64).view(np.uint64), order)
    return order


#: Rows below which :func:`presort` sorts every column in one numpy call: the radix sort's
#: fixed cost per column (its counters) outweighs its speed there, and wide data of few
#: rows (a million columns) would pay it a million times.
RADIX_MIN_ROWS = 256


def presort(X, n_threads=1):
    """For every feature, the row ids sorted by value (stable), as int32 (features x rows).
    numpy's sort releases the GIL, so features sort in parallel threads. Few rows: one
    stable argsort of all the columns (the same orders: NaN last, -0.0 equal to 0.0, ties
    in row order)."""
    n, d = X.shape
    if n < RADIX_MIN_ROWS:
        return np.ascontiguousarray(np.argsort(X, axis=0, kind="stable").T, dtype=np.int32)
    order = np.empty((d, n), dtype=np.int32)

    def sort(feature):
        order[feature] = stable_order(X[:, feature])

    if n_threads > 1 and n * d >= PARALLEL_MIN_WORK:
        with ThreadPoolExecutor(min(n_threads, d)) as pool:
            list(pool.map(sort, range(d)))
    else:
        for feature in range(d):
            sort(feature)
    return order


def gather_sorted(X, order, values):
    """values[f, j] = X[order[f, j], f]: every feature's values in its sorted order."""
    for f in range(order.shape[0]):
        for j in range(order.shape[1]):
            values[f, j] = X[order[f, j], f]


_gather_sorted = jit()(gather_sorted)


def sorted_values(X, order):
    """Every feature's values in ``order``'s order (features x rows, float64), the
    columns the presorted grower sweeps and partitions along with ``order``: one pass of
    random reads of X here instead of one per node and feature."""
    values = np.empty(order.shape)
    if values.size:
        _gather_sorted(X, order, values)
    return values


def no_search(
    params,
    sums,
    weights,
    counts,
    categories,
    n_features,
    order_column,
    exact_limit,
    multiway,
    weight,
    node_sums,
    node_count,
    rules,
    results,
):
    """The nominal search of a fit without nominal features (never called: no candidate is
    nominal)."""
    return -1


@functools.cache
def no_nominal_search():
    """:func:`no_search` compiled (loaded from the cache) for the grower's function-value
    argument (:data:`.nominal_questions.NOMINAL_SEARCH_SIGNATURE`), on the first fit that
    needs it."""
    return jit(nominal_questions.NOMINAL_SEARCH_SIGNATURE)(no_search)


def kept_first(order, weight):
    """(``order`` with each row's rows of positive weight first, still sorted; how many
    there are). A zero-weight row is a removed row (a forest's out-of-bag rows): it must
    place no threshold and make no leaf, and the root holds only the others. Partitions
    ``order`` in place (a fit's own copy) in one stable pass per feature."""
    kept = weight > 0
    if kept.all():
        return order, order.shape[1]
    # the stable partition a split makes, with every feature's whole order as the node
    partition_sorted(
        order,
        np.empty((0, 0)),
        np.arange(order.shape[0], dtype=np.int64),
        -1,
        0,
        order.shape[1],
        kept.view(np.uint8),
        np.empty(order.shape[1], dtype=np.int32),
        np.empty(0),
    )
    return order, int(kept.sum())


def build_table(
    criterion,
    params,
    X,
    evidence,
    weight,
    rules,
    max_features,
    seed,
    n_threads=1,
    presorted=None,
    signs=None,
    limits=None,
    nominal=None,
):
    """Grow the tree with ``n_threads`` threads; returns its node table
    (:data:`.growth.NODE_COLUMNS`, the statistics, then, with monotonic constraints or
    nominal features, :data:`.growth.TRAILING_COLUMNS`; nodes numbered depth first).
    ``criterion`` gives the impurity (``type(criterion).impurity``) and ``params`` its
    parameters; ``evidence`` and ``weight`` are the training rows' evidence and weights,
    ``rules`` the stopping rules as :func:`.growth.rule_vector` gives them; ``presorted``
    the rows sorted per feature when a forest shares them (:func:`presort`). ``signs`` and
    ``limits``: monotonic constraints (per feature, and the root's value limits:
    ``growth.within_bounds``); a constrained tree grows in one call (the threads' large-node
    path keeps no intervals). ``nominal``: (the criterion's compiled nominal search,
    :func:`.nominal_questions.best_nominal_question`; categories per feature, 0 for a numeric
    one; the statistic column ordering the categories, -1 for none; the limit of the exhaustive
    subset search; whether the questions are multi-way) when some feature is nominal; such a
    tree grows in one call too."""
    from treekit_core.kernels.specialised import criterion_kernels

    kernels = criterion_kernels(criterion, n_statistics=evidence.shape[1])
    n, d = X.shape
    order = presorted.copy() if presorted is not None else presort(X, n_threads)
    order, n = kept_first(order, weight)
    constrained = signs is not None and bool(np.any(signs))
    if not constrained:
        signs, limits = np.zeros(d), np.array([-np.inf, np.inf])
    rows = growth.row_table(evidence, weight)
    grow = _Growth(kernels, params, sorted_values(X, order), rows, order, rules, X.shape[0])
    grow.signs, grow.limits = signs, limits
    grow.nominal = (
        nominal
        if nominal is not None
        else (no_nominal_search(), np.zeros(d, dtype=np.int64), -1, 0, False)
    )
    grow.width = growth.table_width(rows.shape[1] - 1, signs, grow.nominal[1])
    if (
        n_threads > 1
        and max_features >= d
        and n * d >= PARALLEL_MIN_WORK
        and not constrained
        and nominal is None
    ):
        return grow.with_threads(n_threads, n)
    return grow.subtree(0, n, 0, max_features, seed)


class _Growth:
    """One tree's growth: the arrays every kernel reads, and the two ways to grow."""

    def __init__(self, kernels, params, values, rows, order, rules, n_rows):
        self.kernels, self.params, self.values = kernels, params, values
        self.rows, self.order, self.rules = rows, order, rules
        self.goes_left = np.zeros(n_rows, dtype=np.uint8)

    def subtree(self, start, end, depth, max_features, seed, out=None):
        """The node table of the subtree of rows [start, end), written to ``out`` (rows of
        a larger table) when it has room for the most nodes they can make."""
        if out is None:
            out = np.empty((0, self.width))
        return self.kernels.grow_subtree(
            self.params,
            self.values,
            self.rows,
            self.order,
            start,
            end,
            depth,
            self.rules,
            max_features,
            seed,
            self.goes_left,
            self.signs,
            self.limits,
            *self.nominal,
            out,
        )

    def with_threads(self, n_threads, n_rows):
        """Split the large nodes here (their features in parallel chunks), then grow every
        smaller node's subtree as a task, largest first; number the nodes depth first. The
        root holds the first ``n_rows`` rows of every feature's order."""
        n, d = n_rows, self.order.shape[0]
        task_rows = max(n // (TASKS_PER_THREAD * n_threads), MIN_TASK_ROWS)
        chunks = [
            np.ascontiguousarray(c, dtype=np.int64)
            for c in np.array_split(np.arange(d), min(d, TASKS_PER_THREAD * n_threads))
        ]
        scratch = _Scratch(n, self.rows.shape[1] - 1)
        pieces = []  # depth-first order: a node split here (1-row table) or a task's range
        with ThreadPoolExecutor(n_threads) as pool:
            stack = [(0, n, 0, -1, 0)]  # start, end, depth, parent piece, is_left
            while stack:
                start, end, depth, parent, is_left = stack.pop()
                if parent >= 0:  # the piece's index for now; its node id once numbered
                    pieces[parent][0, growth.LEFT if is_left else growth.RIGHT] = len(pieces)
                if end - start < task_rows:
                    pieces.append((start, end, depth))
                    continue
                record, n_left = self._split_large_node(pool, chunks, scratch, start, end, depth)
                pieces.append(record)
                if n_left > 0:
                    parent = len(pieces) - 1
                    stack.append((start + n_left, end, depth + 1, parent, 0))
                    stack.append((start, start + n_left, depth + 1, parent, 1))
            # The large nodes' buffers (each pool thread's, as long as the data) are not
            # needed by the tasks, which allocate their own: freed before the table fills.
            del scratch
            # One table for the tree: a block per piece, in depth-first order, as large as
            # the most nodes the piece can make (the nodes split here one row each); each
            # task writes its subtree into its block (only the rows it fills are touched).
            split_here = [isinstance(p, np.ndarray) for p in pieces]
            room = [
                1 if here else max(2 * (p[1] - p[0]) - 1, 1)
                for p, here in zip(pieces, split_here, strict=True)
            ]
            starts = np.concatenate([[0], np.cumsum(room)]).astype(np.int64)
            table = np.empty((int(starts[-1]), self.width))
            for i in np.flatnonzero(split_here):
                table[starts[i]] = pieces[i][0]
            # Largest first, so the last task to finish is a small one.
            tasks = sorted(
                (i for i, here in enumerate(split_here) if not here),
                key=lambda i: pieces[i][0] - pieces[i][1],
            )

            def block(i):
                return table[starts[i] : starts[i + 1]]

            grown = {i: pool.submit(self.subtree, *pieces[i], d, 0, block(i)) for i in tasks}
            tables = [grown[i].result() if i in grown else block(i) for i in range(len(pieces))]
        return number_depth_first(table, tables, split_here)

    def _split_large_node(self, pool, chunks, scratch, start, end, depth):
        """A node too large for one task: its table row, and the rows it sends left (0
        when it is a leaf)."""
        kernels, d = self.kernels, self.order.shape[0]
        sums = np.empty(self.rows.shape[1] - 1)
        weight = node_statistics(self.rows, self.order, start, end, sums)
        imp = kernels.impurity(sums, weight, self.params)
        count = end - start
        record = np.empty((1, self.width))
        fill_node(record[0], sums, weight, count, imp, depth)
        # no constraint and no nominal feature on this path: no trailing columns
        if not may_split(count, weight, imp, depth, self.rules):
            return record, 0
        drops, thresholds = np.empty(d), np.empty(d)
        positions = np.empty(d, dtype=np.int64)

        def scan(chunk):
            weights, evidence, _, _ = scratch.get()
            part = slice(chunk[0], chunk[-1] + 1)
            kernels.scan_features(
                self.params,
                self.values,
                self.rows,
                self.order,
                chunk,
                start,
                end,
                sums,
                weight,
                imp,
                self.rules,
                drops[part],
                thresholds[part],
                positions[part],
                weights,
                evidence,
            )

        list(pool.map(scan, chunks))
        chosen = choose_split(drops, positions, d, weight, self.rules)
        if chosen < 0:
            return record, 0
        n_left = int(positions[chosen])
        mark_left(self.order, chosen, start, end, n_left, self.goes_left)

        def partition(chunk):
            _, _, rows, values = scratch.get()
            partition_sorted(
                self.order, self.values, chunk, chosen, start, end, self.goes_left, rows, values
            )

        list(pool.map(partition, chunks))
        record[0, growth.FEATURE] = chosen
        record[0, growth.THRESHOLD] = thresholds[chosen]
        record[0, growth.IMPROVEMENT] = drops[chosen]
        return record, n_left


class _Scratch(threading.local):
    """Each pool thread's buffers for scanning and partitioning large nodes, allocated on
    its first use and reused for every later node (fresh buffers per call cost page faults
    at every node)."""

    def __init__(self, n, n_stats):
        self.n, self.n_statistics, self.buffers = n, n_stats, None

    def get(self):
        if self.buffers is None:
            self.buffers = (  # weights, statistics; rows, values (partitions)
                np.empty(self.n),
                np.empty((self.n, self.n_statistics)),
                np.empty(self.n, dtype=np.int32),
                np.empty(self.n),
            )
        return self.buffers


def number_depth_first(table, tables, split_here):
    """The node table of the pieces, listed in depth-first order: nodes split here (whose
    children are piece indices) and subtree tables (children numbered within the
    subtree), each in its block of ``table`` (or, where a subtree outgrew its block, in
    its own array). A subtree's nodes follow its root, so a piece's first node id is the
    number of nodes before it: each piece's rows move down to there, in order (a row
    never moves up, so no piece is overwritten before it moves), and ``table``'s first
    rows are returned; no second table is made."""
    offsets = np.concatenate([[0], np.cumsum([t.shape[0] for t in tables])]).astype(np.int64)
    for piece, at, here in zip(tables, offsets[:-1], split_here, strict=True):
        children = piece[:, growth.LEFT : growth.RIGHT + 1]
        if here:
            children[children >= 0] = offsets[children[children >= 0].astype(np.int64)]
        else:
            children[children >= 0] += at
        table[at : at + piece.shape[0]] = piece  # numpy copies overlapping rows safely
    return table[: offsets[-1]]

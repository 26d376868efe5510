"""The fitted tree: flat numpy arrays indexed by node id, as in scikit-learn.

Node 0 is the root; nodes are numbered depth first, first branch first, so a binary tree
is numbered exactly as scikit-learn numbers it. A node may have any number of children:
those of node i are ``child_ids[child_start[i]:child_start[i + 1]]``, in branch order, and
``child_shares`` holds, per child, the share of the node's known training weight that went
down that branch (where a sample that cannot answer goes, C4.5's rule). A leaf has no
children, ``question == -1``, ``feature == -1`` and ``threshold == -2``. An internal
node's question is ``questions[question[i]]`` (a :class:`treekit_core.components.Question`).

Per-node fields a component needs (a question's parameters, a splitter's gain ratio) live
in ``node_fields`` (name -> array of length n_nodes); fitted state of components (for
example the spreads of soft evaluation) lives in ``component_state`` (kind -> dict). Both
travel through JSON. ``children_left`` / ``children_right`` exist for trees whose internal
nodes all have two children.

A tree whose every internal node asks a two-branch question holds only those two arrays
(int32, 8 bytes a node) and, where they are not the ones the training weights give, the
left children's shares (issue 59): the child lists are derived from them when something
asks for them, and remembered while the tree lives.
"""

from __future__ import annotations

import threading
import weakref

import attrs
import numpy as np

from treekit_core.components.question import MISSING_BRANCH, Threshold
from treekit_core.engine.constraints import VALUE_LOWER, VALUE_UPPER
from treekit_core.engine.validation import MAX_TOTAL_WEIGHT

#: Node fields every node holds, a leaf too (the others are a question's parameters or
#: notes, which a leaf lacks): the value interval of monotonic constraints.
NODE_WIDE_FIELDS = (VALUE_LOWER, VALUE_UPPER)

LEAF = -1
UNDEFINED_THRESHOLD = -2.0

ARRAY_FIELDS = {
    "child_start": np.int64,
    "child_ids": np.int64,
    "child_shares": np.float64,
    "question": np.int64,
    "feature": np.int64,
    "threshold": np.float64,
    "statistics": np.float64,
    "weight": np.float64,
    "n_samples": np.int64,
    "impurity": np.float64,
    "depth": np.int64,
    "value": np.float64,
    "decision": np.int64,
}


#: Fields whose length is not the number of nodes.
EDGE_FIELDS = ("child_start", "child_ids", "child_shares")


def default_questions() -> tuple:
    """The question kinds of a tree built from threshold tests only (the contract's
    default kind)."""
    return (Threshold(),)


#: The integer fields' types in memory (issue 59): node ids, offsets and features in 32
#: bits, the question kind in 8 (a tree asks at most 127 kinds), counts of rows in 32 bits
#: where they fit. What a node costs: 8 bytes less per field than int64, and the threshold
#: walk reads the tree's own arrays (no packed copy).
HELD_INTEGERS = {
    "child_start": np.int32,
    "child_ids": np.int32,
    "question": np.int8,
    "feature": np.int32,
    "n_samples": np.int32,
    "depth": np.int32,
    "decision": np.int32,
}

#: Fields no kernel reads, held in the narrowest of int8, int16 and int32 that holds their
#: values (their :data:`HELD_INTEGERS` type the widest): depths and decisions fit a byte
#: in all but the deepest trees and the largest label sets, 3 bytes a node less each, and a
#: pickle keeps them as they are held (no narrowed copy alive until the pickle ends).
NARROWEST_HELD = ("depth", "decision")


def held_integers(name: str, values) -> np.ndarray:
    """``values`` of the integer tree field ``name`` in the type the tree holds it in
    (:data:`HELD_INTEGERS`, or the narrowest type that holds them for
    :data:`NARROWEST_HELD`); a value outside that type is refused naming the field (a
    count of rows past 2**31 - 1 is held in 64 bits instead). Never wraps around."""
    dtype = HELD_INTEGERS[name]
    values = np.asarray(values)
    if name in NARROWEST_HELD and values.dtype.kind in "iu":
        narrowest = narrowest_integers(values)  # signed: an abstention (-1) fits
        if narrowest.dtype.itemsize <= np.dtype(dtype).itemsize:
            return narrowest
    if values.dtype == dtype:
        return values
    if values.size:
        info = np.iinfo(dtype)
        low, high = values.min(), values.max()
        if low < info.min or high > info.max:
            if name == "n_samples":
                return values.astype(np.int64)
            raise ValueError(
                f"tree field {name!r} holds {low if low < info.min else high}; it must fit "
                f"{np.dtype(dtype).name} ({info.min}..{info.max})"
            )
    return values.astype(dtype)


def _held(name: str):
    return attrs.field(converter=lambda values: held_integers(name, values))


def _held_or_none(name: str):
    """A keyword-only field of the child lists: None where the tree holds binary links."""

    def convert(values):
        if values is None:
            return None
        if name == "child_shares":
            return np.asarray(values, dtype=np.float64)
        return held_integers(name, values)

    return attrs.field(default=None, kw_only=True, alias=name, converter=convert)


def _links_or_none(links):
    if links is None:
        return None
    left, right = links
    return held_integers("child_ids", left), held_integers("child_ids", right)


#: The fields a tree had before binary links (issue 59), in attrs' order: the state a
#: pickle written by attrs before 22.2 holds as a tuple, and the names a pickle keeps.
PICKLED_FIELDS = (
    "child_start",
    "child_ids",
    "child_shares",
    "question",
    "feature",
    "threshold",
    "statistics",
    "weight",
    "n_samples",
    "impurity",
    "depth",
    "value",
    "decision",
    "n_features",
    "questions",
    "node_fields",
    "component_state",
)


@attrs.define(eq=False)
class Tree:
    question: np.ndarray = _held("question")  #: index into ``questions``, -1 at leaves
    feature: np.ndarray = _held("feature")
    threshold: np.ndarray
    statistics: np.ndarray  #: n_nodes x K weighted evidence sums
    weight: np.ndarray  #: weighted number of training samples
    n_samples: np.ndarray = _held("n_samples")  #: training rows (fractional copies once each)
    impurity: np.ndarray
    depth: np.ndarray = _held("depth")
    value: np.ndarray  #: n_nodes x K class distribution from the labeler
    decision: np.ndarray = _held("decision")  #: class index per node, -1 = abstain
    n_features: int
    questions: tuple = attrs.field(factory=default_questions, converter=tuple)
    node_fields: dict = attrs.field(factory=dict)
    component_state: dict = attrs.field(factory=dict)
    # The links: either the child lists (child_start: n_nodes + 1 offsets into child_ids;
    # child_ids: the children of every node, in branch order; child_shares: per child, its
    # share of the parent's known training weight), or for a binary tree ``links`` (left,
    # right children per node, -1 at leaves) with ``link_shares`` (per internal node, the
    # left child's share; None: the training weights' shares, the right's the rest). Given
    # lists of a binary tree are turned into links (__attrs_post_init__).
    _child_start: np.ndarray | None = _held_or_none("child_start")
    _child_ids: np.ndarray | None = _held_or_none("child_ids")
    _child_shares: np.ndarray | None = _held_or_none("child_shares")
    _links: tuple | None = attrs.field(
        default=None, kw_only=True, alias="links", converter=_links_or_none
    )
    _link_shares: np.ndarray | None = attrs.field(default=None, kw_only=True, alias="link_shares")

    def __attrs_post_init__(self) -> None:
        if self._links is None:
            if self._child_start is None or self._child_ids is None or self._child_shares is None:
                raise ValueError("a tree needs child_start, child_ids and child_shares, or links")
            self._hold_binary_links()
        elif self._link_shares is not None:
            self._link_shares = np.asarray(self._link_shares, dtype=np.float64)

    def _hold_binary_links(self) -> None:
        """Hold a binary tree's child lists as links (8 bytes a node, not 16 plus 8 per
        share): where every node has 0 or 2 children and each right share is the rest of
        the left's. The lists are dropped; what reads them derives them again."""
        start, ids, shares = self._child_start, self._child_ids, self._child_shares
        n = start.shape[0] - 1
        if (
            n < 1
            or start.ndim != 1
            or ids.shape != shares.shape
            or start[0] != 0
            or start[-1] != ids.shape[0]
            or (np.diff(start) < 0).any()
            or ((ids < 0) | (ids >= n)).any()
            or self.weight.shape != (n,)
        ):
            return  # not a tree: check_structure says why
        links = links_of_lists(start, ids, shares, self.weight)
        if links is None or links[3] is not None:
            return
        left, right, left_shares, _ = links
        self._links, self._link_shares = (left, right), left_shares
        self._child_start = self._child_ids = self._child_shares = None

    @property
    def child_start(self) -> np.ndarray:
        """n_nodes + 1 offsets into ``child_ids`` (derived from a binary tree's links)."""
        return self._child_lists()[0]

    @property
    def child_ids(self) -> np.ndarray:
        """The children of every node, in branch order."""
        return self._child_lists()[1]

    @property
    def child_shares(self) -> np.ndarray:
        """Per child: its share of the parent's known training weight."""
        return self._child_lists()[2]

    def _child_lists(self, remember: bool = True) -> tuple:
        if self._links is None:
            return self._child_start, self._child_ids, self._child_shares
        if not remember:
            return self._derive_child_lists()
        return self.derived("child lists", self._derive_child_lists)

    def _derive_child_lists(self) -> tuple:
        left, right = self._links
        start, ids, shares = children_from_links(left, right, self._link_shares, None, self.weight)
        return held_integers("child_start", start), held_integers("child_ids", ids), shares

    def set_child_shares(self, shares) -> None:
        """Replace every child's share of its parent's training weight (``child_shares``'s
        layout): where a sample that cannot answer goes."""
        start, ids, _ = self._child_lists(remember=False)
        self._child_start, self._child_ids = start, ids
        self._child_shares = np.asarray(shares, dtype=np.float64)
        self._links = self._link_shares = None
        with _DERIVED_LOCK:
            _DERIVED.pop(self, None)
        self._hold_binary_links()

    @classmethod
    def from_binary(
        cls,
        children_left,
        children_right,
        feature,
        threshold,
        statistics,
        weight,
        n_samples,
        impurity,
        depth,
        value,
        decision,
        n_features,
        node_fields=None,
        component_state=None,
        questions=None,
        question=None,
        missing_left=None,
    ) -> "Tree":
        """A tree from scikit-learn style arrays (leaves: -1 children). Without
        ``question`` every internal node asks a threshold. ``missing_left`` is, per node,
        the share of a sample that cannot answer sent left; where it is None or NaN, the
        sample goes down each branch with the branch's share of the training weight."""
        children_left = np.asarray(children_left)
        weight = np.asarray(weight, dtype=np.float64)
        internal = children_left >= 0
        # held as int32 by the links' converter
        left = np.where(internal, children_left, LEAF)
        right = np.where(internal, np.asarray(children_right), LEAF)
        link_shares = None
        if missing_left is not None:
            given = np.asarray(missing_left, dtype=np.float64)[internal]
            if not np.isnan(given).all():
                default = _weight_shares(weight, left[internal], right[internal])
                link_shares = np.where(np.isnan(given), default, given)
        if question is None:
            question = np.where(internal, 0, LEAF)
        return cls(
            links=(left, right),
            link_shares=link_shares,
            question=question,
            feature=feature,
            threshold=np.asarray(threshold, dtype=np.float64),
            statistics=np.asarray(statistics, dtype=np.float64),
            weight=weight,
            n_samples=n_samples,
            impurity=np.asarray(impurity, dtype=np.float64),
            depth=depth,
            value=np.asarray(value, dtype=np.float64),
            decision=decision,
            n_features=int(n_features),
            questions=default_questions() if questions is None else questions,
            node_fields=dict(node_fields or {}),
            component_state=dict(component_state or {}),
        )

    @classmethod
    def from_children(
        cls,
        child_start,
        child_ids,
        child_shares,
        feature,
        threshold,
        statistics,
        weight,
        n_samples,
        impurity,
        depth,
        value,
        decision,
        n_features,
        node_fields=None,
        component_state=None,
        questions=None,
        question=None,
    ) -> "Tree":
        """A tree from its children lists (``child_start``, ``child_ids``,
        ``child_shares``: the fields of the same names) and per-node arrays. Without
        ``question`` every internal node asks a threshold."""
        child_start = np.asarray(child_start, dtype=np.int64)
        if question is None:
            question = np.where(np.diff(child_start) > 0, 0, LEAF)
        return cls(
            child_start=child_start,
            child_ids=child_ids,
            child_shares=np.asarray(child_shares, dtype=np.float64),
            question=question,
            feature=feature,
            threshold=np.asarray(threshold, dtype=np.float64),
            statistics=np.asarray(statistics, dtype=np.float64),
            weight=np.asarray(weight, dtype=np.float64),
            n_samples=n_samples,
            impurity=np.asarray(impurity, dtype=np.float64),
            depth=depth,
            value=np.asarray(value, dtype=np.float64),
            decision=decision,
            n_features=int(n_features),
            questions=default_questions() if questions is None else questions,
            node_fields=dict(node_fields or {}),
            component_state=dict(component_state or {}),
        )

    # -- pickles: compact (issue 59) -------------------------------------------------
    def __getstate__(self) -> dict:
        """What a pickle keeps of the tree: every field, losslessly, in less room. Integer
        arrays in the narrowest type that holds their values (a node's feature, question,
        decision and depth in a byte where they fit), a binary tree's links as its left and
        right children (no offsets), and the children's shares only where they are not the
        ones the training weights give (:meth:`from_binary`'s default): about 72 bytes a
        node of a regression tree (128 as the arrays are held), as scikit-learn's. Loaded
        back as the arrays were (:meth:`__setstate__`), so everything reading a tree reads
        the same values."""
        state = {name: getattr(self, name) for name in PICKLED_FIELDS if name not in EDGE_FIELDS}
        links = binary_links(self)
        if links is None:
            state.update(zip(EDGE_FIELDS, self._child_lists(remember=False), strict=True))
        else:
            left, right, shares, right_shares = links
            state["binary_children"] = (narrowest_integers(left), narrowest_integers(right))
            state["left_shares"], state["right_shares"] = shares, right_shares
        for name in ("question", "feature", "n_samples", "depth", "decision"):
            state[name] = narrowest_integers(state[name])
        # from the links where the tree holds them: no per-tree cache made for a pickle
        internal = self._links[0] >= 0 if self._links is not None else ~self.is_leaf
        # what a leaf holds one constant in (it asks nothing): the internal nodes' entries
        state["leaf_constants"] = leaf_constants = {}
        for name in ("feature", "threshold"):
            state[name], leaf_constants[name] = _at_internal_nodes(state[name], internal)
        fields = dict(state["node_fields"])
        state["node_field_leaf_constants"] = field_constants = {}
        for name, values in fields.items():
            if np.ndim(values) == 1:
                fields[name], field_constants[name] = _at_internal_nodes(values, internal)
        state["node_fields"] = fields
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = self.statistics[:, : self.value.shape[1]] / self.weight[:, None]
        if self.value.shape[1] <= self.statistics.shape[1] and np.array_equal(ratio, self.value):
            # the statistics' first columns over the weight: not kept twice
            state["value"], state["value_columns"] = None, self.value.shape[1]
        state["pickled_compact"] = 1
        return state

    def __setstate__(self, state) -> None:
        """A tree from :meth:`__getstate__`'s state, or from a pickle written before it
        (attrs' state: every field as it was held)."""
        if isinstance(state, tuple):  # attrs before 22.2 pickled the fields in order
            state = dict(zip(PICKLED_FIELDS, state, strict=True))
        state = dict(state)
        if "class_sums" in state and "statistics" not in state:
            # treekit 0.3's name of the statistics (attrs' own __setstate__ dropped them, so
            # such a tree predicted but could not be exported or pruned)
            state["statistics"] = state.pop("class_sums")
        compact = state.pop("pickled_compact", None) is not None
        if compact and "leaf_constants" in state:
            _restore_leaf_constants(state)
        if compact and "binary_children" in state:
            left, right = state.pop("binary_children")
            left_shares, right_shares = state.pop("left_shares"), state.pop("right_shares")
            if right_shares is None:
                state["links"], state["link_shares"] = (left, right), left_shares
            else:
                lists = children_from_links(left, right, left_shares, right_shares, state["weight"])
                state.update(zip(EDGE_FIELDS, lists, strict=True))
        self.__init__(
            **{
                name: state[name]
                for name in (*PICKLED_FIELDS, "links", "link_shares")
                if name in state
            }
        )

    @property
    def n_nodes(self) -> int:
        if self._links is not None:
            return int(self._links[0].shape[0])
        return int(self._child_start.shape[0]) - 1

    @property
    def n_statistics(self) -> int:
        return int(self.statistics.shape[1])

    @property
    def n_children(self) -> np.ndarray:
        """Children per node (remembered: reports and exports ask it once per node)."""

        def compute():
            if self._links is not None:
                return np.where(self._links[0] >= 0, 2, 0).astype(np.int32)
            return np.diff(self._child_start)

        return self.derived("n_children", compute)

    @property
    def is_leaf(self) -> np.ndarray:
        return self.derived("is_leaf", lambda: self.n_children == 0)

    @property
    def n_leaves(self) -> int:
        return int(self.is_leaf.sum())

    @property
    def max_depth(self) -> int:
        return int(self.depth.max())

    def children(self, node: int) -> np.ndarray:
        """The children of ``node`` in branch order (empty for a leaf)."""
        return self.child_ids[self.child_start[node] : self.child_start[node + 1]]

    def shares(self, node: int) -> np.ndarray:
        """Per child of ``node``: its share of the node's known training weight."""
        return self.child_shares[self.child_start[node] : self.child_start[node + 1]]

    def question_of(self, node: int):
        """The :class:`Question` an internal node asks (None at a leaf)."""
        index = int(self.question[node])
        return None if index < 0 else self.questions[index]

    def question_params(self, node: int) -> np.ndarray:
        """The node's value of its question's parameter field, as a float vector."""
        return self.question_of(node).parameters(self.node_fields, node)

    def traversal_stack_size(self) -> int:
        """Entries a depth-first walk that may follow every branch needs on its stack: at
        most (branches - 1) pending siblings per level, plus the current node; computed from
        the structure, never from a stored field; remembered for the tree (every routing
        call asks it)."""

        def compute():
            counts = self.n_children
            widest = int(counts.max()) if self.n_nodes else 0
            return self.structural_depth() * max(widest - 1, 1) + 2

        return self.derived("traversal_stack_size", compute)

    @property
    def is_binary(self) -> bool:
        return bool(np.all(self.n_children[~self.is_leaf] == 2))

    def derived(self, key: str, compute):
        """``compute()``, remembered for this tree under ``key``: for values derived from
        the structure (packed kernel records, binary child arrays), which never changes
        once a tree is built (pruning and loading build new trees). Kept outside the
        instance, so pickles and copies carry none of it."""
        values = _DERIVED.get(self)
        if values is None or key not in values:
            value = compute()
            with _DERIVED_LOCK:
                _DERIVED.setdefault(self, {})[key] = value
            return value
        return values[key]

    def _binary_children(self):
        if self._links is not None:
            return self._links
        return self.derived("binary children", self._compute_binary_children)

    def _compute_binary_children(self):
        counts = self.n_children
        wider = np.flatnonzero((counts != 2) & (counts != 0))  # vectorised: 1M leaves
        if wider.size:
            node = int(wider[0])
            raise ValueError(
                f"children_left / children_right describe binary trees; node {node} has "
                f"{int(counts[node])} children. Use tree.children(node) instead."
            )
        left, right, _ = binary_children_of_lists(self.child_start, self.child_ids, counts)
        return left, right

    @property
    def children_left(self) -> np.ndarray:
        """First child of every node (-1 at leaves); binary trees only."""
        return self._binary_children()[0]

    @property
    def children_right(self) -> np.ndarray:
        """Second child of every node (-1 at leaves); binary trees only."""
        return self._binary_children()[1]

    def node_depths(self) -> np.ndarray:
        """Every node's depth computed from the children (not the stored ``depth``), one
        level at a time."""
        counts = self.n_children
        depths = np.zeros(self.n_nodes, dtype=np.int64)
        frontier, depth = np.zeros(1, dtype=np.int64), 0
        while True:
            sizes = counts[frontier]
            total = int(sizes.sum())
            if total == 0:
                return depths
            offsets = np.repeat(self.child_start[frontier] - np.cumsum(sizes) + sizes, sizes)
            frontier = self.child_ids[offsets + np.arange(total)]
            depth += 1
            if depth > self.n_nodes:
                raise ValueError("tree field 'child_ids' forms a cycle")
            depths[frontier] = depth

    def structural_depth(self) -> int:
        """Depth of the deepest leaf, computed from the children (not the stored depth)."""
        return int(self.node_depths().max())

    def levels(self) -> list:
        """The node ids at each depth, root first (remembered): what a pass over the tree
        one level at a time (a numpy operation per level, not a Python step per node)
        walks."""

        def compute():
            depth = self.node_depths()
            by_depth = np.argsort(depth, kind="stable")
            bounds = np.searchsorted(depth[by_depth], np.arange(depth.max() + 2))
            return [by_depth[bounds[d] : bounds[d + 1]] for d in range(int(depth.max()) + 1)]

        return self.derived("levels", compute)

    def subtree_sums(self, values: np.ndarray) -> np.ndarray:
        """Every node's ``values`` summed over its subtree: its own value plus its children's
        sums, added first child first (for a float sum, the order a loop over the children
        adds them in): compiled from the last node to the first where every child is
        numbered after its parent (as trees are grown; honest forests sum every tree), else
        one level at a time from the deepest."""
        from treekit_core.kernels.tree_sums import add_subtree_sums

        values = np.asarray(values)
        if values.dtype in (np.float64, np.int64) and values.ndim in (1, 2):
            sums = np.array(values.reshape(values.shape[0], -1), order="C")
            if add_subtree_sums(sums, self.child_start, self.child_ids):
                return sums.reshape(values.shape)
        sums = values.copy()
        counts, internal = self.n_children, ~self.is_leaf
        for nodes in reversed(self.levels()[:-1]):
            nodes = nodes[internal[nodes]]
            if not nodes.size:
                continue
            width, starts = counts[nodes], self.child_start[nodes]
            total = sums[nodes]
            for branch in range(int(width.max())):
                has = width > branch
                total[has] = total[has] + sums[self.child_ids[starts[has] + branch]]
            sums[nodes] = total
        return sums

    def leaves_under(self) -> np.ndarray:
        """Number of leaves in the subtree of every node: the leaves among the run of the
        depth-first order a subtree is (a prefix sum; no walk per node)."""
        order, position, size = self.preorder()
        before = np.concatenate([[0], np.cumsum(self.is_leaf[order])])
        return (before[position + size] - before[position]).astype(np.int64)

    def parents(self) -> np.ndarray:
        parent = np.full(self.n_nodes, -1, dtype=np.int64)
        parent[self.child_ids] = np.repeat(np.arange(self.n_nodes), self.n_children)
        return parent

    def preorder(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(nodes in depth-first order, first branch first; every node's position in it;
        every node's subtree size): a subtree is one contiguous run of that order."""

        def compute():
            n = self.n_nodes
            size = self.subtree_sums(np.ones(n, dtype=np.int64))
            # the usual numbering is depth first already: each first child follows its
            # parent, each next child follows its elder sibling's subtree
            counts = self.n_children
            first = self.child_start[:-1]
            internal = np.flatnonzero(counts > 0)
            ids, start = self.child_ids, self.child_start
            numbered = bool((ids[first[internal]] == internal + 1).all())
            if numbered and ids.size:
                later = np.ones(ids.size, dtype=bool)
                later[first[internal]] = False
                previous = np.flatnonzero(later) - 1
                numbered = bool((ids[later] == ids[previous] + size[ids[previous]]).all())
            if numbered:
                order = np.arange(n, dtype=np.int64)
                return order, order.copy(), size
            order = np.empty(n, dtype=np.int64)  # any other numbering: walk it
            stack, k = [0], 0
            while stack:
                node = stack.pop()
                order[k] = node
                k += 1
                stack.extend(ids[start[node] : start[node + 1]][::-1].tolist())
            position = np.empty(n, dtype=np.int64)
            position[order] = np.arange(n)
            return order, position, size

        return self.derived("preorder", compute)

    def descendants(self, node: int) -> np.ndarray:
        """``node`` and every node below it (depth first)."""
        order, position, size = self.preorder()
        return order[position[node] : position[node] + size[node]]

    def collapse(self, make_leaf: np.ndarray) -> "Tree":
        """A copy in which every node flagged in ``make_leaf`` becomes a leaf; its
        descendants are removed and nodes are renumbered (depth first, first branch first)."""
        make_leaf = np.asarray(make_leaf, dtype=bool)
        order, position, size = self.preorder()
        # the nodes below a flagged node are the run after it in depth-first order
        flagged = np.flatnonzero(make_leaf & ~self.is_leaf)
        below = np.zeros(self.n_nodes + 1, dtype=np.int64)
        np.add.at(below, position[flagged] + 1, 1)
        np.add.at(below, position[flagged] + size[flagged], -1)
        keep = order[np.cumsum(below[:-1]) == 0]
        new_id = np.full(self.n_nodes, -1, dtype=np.int64)
        new_id[keep] = np.arange(keep.size)
        leaf_now = self.is_leaf[keep] | make_leaf[keep]
        counts = np.where(leaf_now, 0, self.n_children[keep])
        start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        edges = np.repeat(self.child_start[keep] - start[:-1], counts) + np.arange(start[-1])
        node_fields = {}
        for name, values in self.node_fields.items():
            values = np.asarray(values)[keep].copy()
            if values.dtype.kind == "f" and name not in NODE_WIDE_FIELDS:
                values[leaf_now] = np.nan  # a leaf asks nothing
            node_fields[name] = values
        return Tree(
            child_start=start,
            child_ids=new_id[self.child_ids[edges]],
            child_shares=self.child_shares[edges].copy(),
            question=np.where(leaf_now, LEAF, self.question[keep]),
            feature=np.where(leaf_now, LEAF, self.feature[keep]),
            threshold=np.where(leaf_now, UNDEFINED_THRESHOLD, self.threshold[keep]),
            statistics=self.statistics[keep].copy(),
            weight=self.weight[keep].copy(),
            n_samples=self.n_samples[keep].copy(),
            impurity=self.impurity[keep].copy(),
            depth=self.depth[keep].copy(),
            value=self.value[keep].copy(),
            decision=self.decision[keep].copy(),
            n_features=self.n_features,
            questions=self.questions,
            node_fields=node_fields,
            component_state=dict(self.component_state),
        )

    def relabel(self, target, labeler) -> None:
        """(Re)compute every node's values and decision from its statistics with the
        ``target`` (:meth:`~treekit_core.components.Target.node_values`, which may ask the
        ``labeler``). A node no training weight reached (a branch for a category absent at
        its parent) takes its parent's values and decision, as C4.5 labels empty branches.
        A tree grown under monotonic constraints (node fields ``value_lower`` and
        ``value_upper``) has every node's value clipped to its interval
        (:meth:`~treekit_core.components.Target.clip_node_values`), then its decision taken
        from the clipped values: this is what keeps the constraint through every pruner."""
        empty = self.weight <= 0
        weight = np.where(empty, 1.0, self.weight)
        values, decisions = target.node_values(self.statistics, weight, labeler)
        self.value = np.asarray(values, dtype=np.float64).reshape(self.n_nodes, -1)
        self.decision = np.asarray(decisions, dtype=np.int64).reshape(self.n_nodes)
        if empty.any():
            parent = self.parents()
            for node in np.flatnonzero(empty):  # parents first: ids increase downwards
                if parent[node] >= 0:
                    self.value[node] = self.value[parent[node]]
                    self.decision[node] = self.decision[parent[node]]
        if VALUE_LOWER in self.node_fields:  # grown under monotonic constraints
            monotone = target.monotone_value(self.statistics.shape[1])
            self.value = target.clip_node_values(
                self.value,
                self.node_fields[VALUE_LOWER],
                self.node_fields[VALUE_UPPER],
                monotone,
            ).reshape(self.n_nodes, -1)
            self.decision = np.asarray(target.decide(self.value, labeler), dtype=np.int64)

    def check_structure(self) -> None:
        """Raise ValueError when the arrays do not describe a tree (corrupt model file)."""
        n = self.n_nodes
        if n < 1:
            raise ValueError("tree has no nodes")
        for name in ARRAY_FIELDS:
            if name in EDGE_FIELDS:
                continue
            if getattr(self, name).shape[0] != n:
                raise ValueError(
                    f"tree field {name!r} has {getattr(self, name).shape[0]} entries, expected "
                    f"{n} (one per node)"
                )
        if not np.isfinite(self.threshold).all():
            raise ValueError("tree field 'threshold' must hold finite numbers")
        # What the statistics, values and decisions may hold beyond being finite is the
        # target's to say (Target.check_tree); the weight is every target's.
        for name in ("statistics", "impurity", "value"):
            if not np.isfinite(getattr(self, name)).all():
                raise ValueError(f"tree field {name!r} must hold finite numbers")
        if not np.isfinite(self.weight).all() or (self.weight < 0).any():
            raise ValueError("tree field 'weight' must hold finite numbers >= 0")
        # the bound fit puts on the total weight: pruning adds and multiplies these sums,
        # and a file with 1e308 gave rows that were no distribution
        if self.weight.size and self.weight.max() > MAX_TOTAL_WEIGHT:
            raise ValueError(
                f"tree field 'weight' holds {self.weight.max():.3g}; at most "
                f"{MAX_TOTAL_WEIGHT:g} (sums of sample weights, as fit bounds them)"
            )
        if (self.n_samples < 0).any():
            raise ValueError("tree field 'n_samples' must hold counts >= 0")
        if (self.decision < -1).any():
            raise ValueError("tree field 'decision' holds an index below -1")
        start, ids, shares = self._child_lists(remember=False)
        if start.shape != (n + 1,) or start[0] != 0 or (np.diff(start) < 0).any():
            raise ValueError("tree field 'child_start' must hold n_nodes + 1 rising offsets from 0")
        if start[-1] != ids.shape[0] or shares.shape != ids.shape:
            raise ValueError("tree fields 'child_ids' / 'child_shares' do not match 'child_start'")
        owner = np.repeat(np.arange(n), np.diff(start))
        if ((ids <= owner) | (ids >= n)).any():
            raise ValueError("tree field 'child_ids' points outside the tree or backwards")
        if np.bincount(ids, minlength=n)[1:].tolist() != [1] * (n - 1) or (ids == 0).any():
            raise ValueError("tree field 'child_ids': every node but the root needs one parent")
        if not np.isfinite(shares).all() or (shares < 0).any():
            raise ValueError("tree field 'child_shares' must hold finite shares >= 0")
        internal = ~self.is_leaf
        sums = np.add.reduceat(shares, start[:-1][internal]) if internal.any() else np.zeros(0)
        if (np.abs(sums - 1.0) > 1e-6).any():
            raise ValueError("tree field 'child_shares': each node's shares must sum to 1")
        q = self.question
        if (q[~internal] != LEAF).any() or (q[internal] < 0).any():
            raise ValueError("tree field 'question' must be -1 at leaves and >= 0 elsewhere")
        if (q >= len(self.questions)).any():
            raise ValueError("tree field 'question' names a kind outside 'questions'")
        if (self.feature[~internal] != LEAF).any():
            raise ValueError("tree field 'feature' must be -1 at leaves")
        if (self.depth != self.node_depths()).any():
            raise ValueError("tree field 'depth' does not match the tree's structure")
        for name, values in self.node_fields.items():
            if np.shape(values)[:1] != (n,):
                raise ValueError(f"tree node field {name!r} does not have one row per node")
        if VALUE_LOWER in self.node_fields or VALUE_UPPER in self.node_fields:
            lower = np.asarray(self.node_fields.get(VALUE_LOWER, np.full(n, np.nan)))
            upper = np.asarray(self.node_fields.get(VALUE_UPPER, np.full(n, np.nan)))
            if lower.ndim != 1 or upper.ndim != 1 or np.isnan(lower).any() or np.isnan(upper).any():
                raise ValueError(
                    f"tree node fields {VALUE_LOWER!r} and {VALUE_UPPER!r} (monotonic "
                    "constraints) must hold a number at every node"
                )
            if (lower > upper).any():
                node = int(np.flatnonzero(lower > upper)[0])
                raise ValueError(f"tree node {node}: {VALUE_LOWER!r} is above {VALUE_UPPER!r}")
            # a bound at the wrong infinity would clip the node's value to it
            if np.isposinf(lower).any() or np.isneginf(upper).any():
                node = int(np.flatnonzero(np.isposinf(lower) | np.isneginf(upper))[0])
                raise ValueError(
                    f"tree node {node}: {VALUE_LOWER!r} is +inf or {VALUE_UPPER!r} -inf; a "
                    "value interval bounds finite values"
                )
        counts = self.n_children
        for node in np.flatnonzero(internal):
            kind = self.questions[q[node]]
            field = kind.parameter_field
            if field is not None and field not in self.node_fields:
                raise ValueError(f"tree lacks the node field {field!r} of question {kind.name!r}")
            params = self.question_params(int(node))
            problem = (
                "parameters are not finite"
                if not np.isfinite(params).all()
                else kind.check_node(
                    int(self.feature[node]),
                    float(self.threshold[node]),
                    params,
                    int(counts[node]),
                    self.n_features,
                )
            )
            if problem:
                raise ValueError(f"tree node {node} ({kind.name!r} question): {problem}")
            if field is not None:
                _probe_answer(
                    kind,
                    node,
                    self.feature[node],
                    self.threshold[node],
                    params,
                    counts[node],
                    self.n_features,
                )


def _probe_answer(kind, node, feature, threshold, params, n_branches, n_features) -> None:
    """What the core can check of a question that reads parameters, beyond what its
    ``check_node`` says: its ``answer``, run as plain Python (numpy checks every index;
    compiled, numba does not) on a row of zeros as wide as the tree's features, must give a
    branch or ``MISSING_BRANCH``. A crafted file's index-like parameter past the row, which
    a ``check_node`` forgot, is refused here, before any kernel routes a row."""
    row = np.zeros(n_features)
    try:
        branch = int(
            type(kind).answer(row, int(feature), float(threshold), params, int(n_branches))
        )
    except (IndexError, ValueError, OverflowError) as exc:
        raise ValueError(
            f"tree node {node} ({kind.name!r} question): its parameters "
            f"({kind.parameter_field!r}) make its answer fail ({type(exc).__name__}: {exc})"
        ) from None
    if not (branch == MISSING_BRANCH or 0 <= branch < n_branches):
        raise ValueError(
            f"tree node {node} ({kind.name!r} question): its parameters "
            f"({kind.parameter_field!r}) give branch {branch} of {n_branches}"
        )


def nodes_kept(original: Tree, collapsed: Tree) -> np.ndarray:
    """Per node of ``collapsed`` (``original`` with some nodes made leaves,
    :meth:`Tree.collapse`), its id in ``original``: the two walked together, child by
    child."""
    out = np.empty(collapsed.n_nodes, dtype=np.int64)
    stack = [(0, 0)]
    while stack:
        node, source = stack.pop()
        out[node] = source
        children = collapsed.children(node)
        if children.size:
            stack.extend(zip(children.tolist(), original.children(source).tolist(), strict=True))
    return out


def narrowest_integers(values: np.ndarray) -> np.ndarray:
    """Integer ``values`` (or whole numbers held as floats, within int64) in the narrowest
    signed type that holds them all: how pickles keep integer arrays (loaded back in their
    own type)."""
    values = np.asarray(values)
    if values.size == 0:
        return values.astype(np.int8)
    low, high = int(values.min()), int(values.max())
    # the most negative of the two bounds names the type: -high - 1 fits where high does
    narrowest = np.min_scalar_type(min(low, -high - 1))
    return values.astype(narrowest, copy=False)  # no copy where it is held so already


def binary_links(tree: Tree):
    """A binary tree's links as the compact forms keep them (pickles; model files of tree
    format 4): (children_left, children_right, left_shares, right_shares) with the
    children as int32 (-1 at leaves) and, per internal node, the children's shares of the
    training weight, each None where it is the default (the left share: what the training
    weights give, :meth:`Tree.from_binary`'s; the right: 1 - the left). None for a tree
    with a node of other than 0 or 2 children."""
    if tree._links is not None:
        left, right = tree._links
        return left, right, tree._link_shares, None
    return links_of_lists(tree.child_start, tree.child_ids, tree.child_shares, tree.weight)


def _at_internal_nodes(values, internal):
    """(the internal nodes' entries, the leaves' one value) of a per-node array whose
    leaves all hold one value (bitwise, NaN included), else (values, None)."""
    values = np.asarray(values)
    at_leaves = values[~internal]
    if not at_leaves.size:
        return values, None
    first = at_leaves[:1]
    same = at_leaves.view(np.uint8).reshape(at_leaves.size, -1) == first.view(np.uint8)
    if not same.all():
        return values, None
    return values[internal], first.item()


def _restore_leaf_constants(state: dict) -> None:
    """Undo :meth:`Tree.__getstate__`'s per-node arrays kept at internal nodes only, and
    the values left to the statistics."""
    if "binary_children" in state:
        internal = np.asarray(state["binary_children"][0]) >= 0
    else:
        internal = np.diff(np.asarray(state["child_start"])) > 0

    def whole(values, leaf_value):
        if leaf_value is None:
            return values
        values = np.asarray(values)
        out = np.full(internal.shape[0], leaf_value, dtype=values.dtype)
        out[internal] = values
        return out

    for name, leaf_value in state.pop("leaf_constants").items():
        state[name] = whole(state[name], leaf_value)
    fields = dict(state["node_fields"])
    for name, leaf_value in state.pop("node_field_leaf_constants").items():
        fields[name] = whole(fields[name], leaf_value)
    state["node_fields"] = fields
    if state["value"] is None:
        statistics, weight = np.asarray(state["statistics"]), np.asarray(state["weight"])
        with np.errstate(divide="ignore", invalid="ignore"):
            state["value"] = statistics[:, : state.pop("value_columns")] / weight[:, None]


def binary_children_of_lists(child_start, child_ids, counts) -> tuple:
    """(left, right, internal nodes) of child lists whose nodes all have 0 or 2 children
    (``counts`` per node): the children as int32, -1 at leaves."""
    internal = np.flatnonzero(counts == 2)
    first = child_start[internal]
    left = np.full(counts.shape[0], LEAF, dtype=np.int32)
    right = left.copy()
    left[internal], right[internal] = child_ids[first], child_ids[first + 1]
    return left, right, internal


def links_of_lists(child_start, child_ids, child_shares, weight):
    """:func:`binary_links` of child lists (None where a node has other than 0 or 2
    children)."""
    counts = np.diff(child_start)
    if not np.all((counts == 0) | (counts == 2)):
        return None
    left, right, internal = binary_children_of_lists(child_start, child_ids, counts)
    first = child_start[internal]
    shares = child_shares[first]
    right_shares = child_shares[first + 1]
    if np.array_equal(right_shares, 1.0 - shares):
        right_shares = None  # the rest of the left child's (as from_binary makes them)
    if right_shares is None and np.array_equal(
        shares, _weight_shares(np.asarray(weight), left[internal], right[internal])
    ):
        shares = None  # the training weights give them
    return left, right, shares, right_shares


def children_from_links(left, right, left_shares, right_shares, weight) -> tuple:
    """(child_start, child_ids, child_shares) from :func:`binary_links`'s form (None
    shares: the defaults it names). The links must be checked already: every entry -1 or
    a node id, -1 in both at the same nodes, shares one per internal node."""
    left, right = np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)
    internal = np.flatnonzero(left >= 0)
    if left_shares is None:
        left_shares = _weight_shares(np.asarray(weight), left[internal], right[internal])
    if right_shares is None:
        right_shares = 1.0 - np.asarray(left_shares, dtype=np.float64)
    counts = np.where(left >= 0, 2, 0)
    start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    ids = np.column_stack([left, right])[internal].reshape(-1)
    shares = np.column_stack([left_shares, right_shares]).reshape(-1).astype(np.float64)
    return start, ids, shares


def _weight_shares(weight, left, right) -> np.ndarray:
    """The left child's share of its parent's known training weight, per internal node
    (:meth:`Tree.from_binary`'s default shares: 0.5 where both children weigh nothing)."""
    left_w, right_w = weight[left], weight[right]
    total = left_w + right_w
    return np.where(total > 0, left_w / np.where(total > 0, total, 1), 0.5)


_DERIVED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_DERIVED_LOCK = threading.Lock()


class TreeAssembler:
    """Builds a :class:`Tree` node by node, in the order nodes are numbered (a parent
    before its children): the grow loop and the pruners that rebuild trees use it."""

    def __init__(self, n_features: int, n_stats: int):
        self.n_features, self.n_statistics = n_features, n_stats
        self.children: list[list[int]] = []
        self.shares: list = []
        self.question, self.feature, self.threshold = [], [], []
        self.statistics, self.weight, self.n_samples, self.impurity, self.depth = (
            [],
            [],
            [],
            [],
            [],
        )
        self.fields: dict[str, dict[int, object]] = {}
        self.questions: list = []

    def add_node(self, parent, branch, statistics, weight, n_samples, impurity, depth) -> int:
        """A new leaf, child ``branch`` of ``parent`` (-1: the root). Returns its id."""
        node_id = len(self.children)
        if parent >= 0:
            self.children[parent][branch] = node_id
        self.children.append([])
        self.shares.append(())
        self.question.append(LEAF)
        self.feature.append(LEAF)
        self.threshold.append(UNDEFINED_THRESHOLD)
        self.statistics.append(statistics)
        self.weight.append(weight)
        self.n_samples.append(n_samples)
        self.impurity.append(impurity)
        self.depth.append(depth)
        return node_id

    def set_question(self, node_id, question, feature, threshold, shares, fields) -> None:
        """Make ``node_id`` ask ``question`` (an instance) with one branch per share; its
        children are added next with :meth:`add_node`."""
        kinds = [type(q) for q in self.questions]
        if type(question) not in kinds:
            self.questions.append(question)
            kinds.append(type(question))
        self.question[node_id] = kinds.index(type(question))
        self.feature[node_id] = int(feature)
        self.threshold[node_id] = float(threshold)
        self.children[node_id] = [LEAF] * len(shares)
        self.shares[node_id] = tuple(float(s) for s in shares)
        self.set_fields(node_id, fields)

    def set_fields(self, node_id, fields) -> None:
        """Store per-node values (name -> value) at ``node_id``, a leaf or not."""
        for name, value in fields.items():
            self.fields.setdefault(name, {})[node_id] = value

    def to_tree(self, field_names=(), component_state=None) -> Tree:
        """The tree; ``field_names`` are node fields to store even where no node set them."""
        n = len(self.children)
        counts = [len(c) for c in self.children]
        columns = {name: self.fields.get(name, {}) for name in (*field_names, *self.fields)}
        return Tree(
            child_start=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
            child_ids=np.array([c for kids in self.children for c in kids], dtype=np.int64),
            child_shares=np.array([s for shares in self.shares for s in shares], dtype=float),
            question=np.asarray(self.question, dtype=np.int64),
            feature=np.asarray(self.feature, dtype=np.int64),
            threshold=np.asarray(self.threshold, dtype=np.float64),
            statistics=np.asarray(self.statistics, dtype=np.float64).reshape(n, self.n_statistics),
            weight=np.asarray(self.weight, dtype=np.float64),
            n_samples=np.asarray(self.n_samples, dtype=np.int64),
            impurity=np.asarray(self.impurity, dtype=np.float64),
            depth=np.asarray(self.depth, dtype=np.int64),
            value=np.zeros((n, self.n_statistics)),
            decision=np.zeros(n, dtype=np.int64),
            n_features=self.n_features,
            questions=tuple(self.questions) or default_questions(),
            node_fields={
                name: stack_field([values.get(i, np.nan) for i in range(n)])
                for name, values in columns.items()
            },
            component_state=dict(component_state or {}),
        )


def tree_from_table(
    table,
    n_features,
    n_stats=None,
    missing_left=None,
    questions=None,
    question=None,
    node_fields=None,
    n_branches=None,
) -> Tree:
    """An unlabelled Tree from a compiled grower's node table (the columns of
    :data:`treekit_core.kernels.NODE_COLUMNS`, the statistics from column ``SUMS``;
    ``n_stats`` of them, default: every column after). ``missing_left`` (per node; NaN:
    the share of the training weight sent left) says where a sample with a missing tested
    value goes. ``questions``, ``question`` and ``node_fields``: the question kinds, each
    node's index into them and their parameters, where not every internal node asks a
    threshold (:meth:`Tree.from_binary`). ``n_branches`` (per node; NaN: two at an
    internal node) marks multi-way questions, whose children are the nodes one level deeper
    between the node's ``left`` (first) and ``right`` (last) child (nodes numbered depth
    first): :func:`preorder_children`. The kernels return tables; the engine makes trees
    of them.

    ``table`` may come in a one-element list, which this function empties: it then holds
    the only reference and frees the table once its columns are copied out, before the
    tree's other arrays are made (a grown-out tree's table is as large as the tree: the
    fit's peak memory would hold both)."""
    from treekit_core.kernels import growth  # the column layout; numba is loaded by now

    table = table.pop() if isinstance(table, list) else table
    n_nodes = table.shape[0]
    n_stats = table.shape[1] - growth.SUMS if n_stats is None else n_stats

    def column(index, dtype=np.float64):
        return np.ascontiguousarray(table[:, index], dtype=dtype)

    weight, depth = column(growth.WEIGHT), column(growth.DEPTH, np.int64)
    left, right = column(growth.LEFT, np.int64), column(growth.RIGHT, np.int64)
    improvement = column(growth.IMPROVEMENT)
    copied = (  # what Tree.from_children and Tree.from_binary take after the children
        column(growth.FEATURE, np.int64),
        column(growth.THRESHOLD),
        np.ascontiguousarray(table[:, growth.SUMS : growth.SUMS + n_stats]),
        weight,
        column(growth.N_SAMPLES, np.int64),
        column(growth.IMPURITY),
        depth,
    )
    table = None  # freed here unless the caller kept a reference
    nodes = (
        *copied,
        np.zeros((n_nodes, n_stats)),
        np.zeros(n_nodes, dtype=np.int64),
        n_features,
    )
    kinds = {"node_fields": node_fields, "questions": questions, "question": question}
    if n_branches is not None and not np.isnan(n_branches).all():
        if missing_left is not None:
            raise ValueError("a table with multi-way questions takes no missing_left")
        start, ids = preorder_children(depth, left >= 0)
        tree = Tree.from_children(start, ids, branch_shares(start, ids, weight), *nodes, **kinds)
    else:
        tree = Tree.from_binary(left, right, *nodes, missing_left=missing_left, **kinds)
    tree.node_fields["improvement"] = improvement
    return tree


def preorder_children(depth, internal):
    """(child_start, child_ids) of a tree whose nodes are numbered depth first (a node
    before its children, each child's subtree before the next child): a node's parent is
    the last node before it one level up, and its children come in node order, the first
    branch first. ``depth`` per node, ``internal`` per node (checked: the nodes with
    children)."""
    n = depth.shape[0]
    parent = np.full(n, LEAF, dtype=np.int64)
    by_level = np.argsort(depth, kind="stable")  # each level's nodes in node order
    levels = depth[by_level]
    bounds = np.searchsorted(levels, np.arange(levels[0], levels[-1] + 2))
    for level in range(1, bounds.shape[0] - 1):
        above = by_level[bounds[level - 1] : bounds[level]]
        here = by_level[bounds[level] : bounds[level + 1]]
        position = np.searchsorted(above, here) - 1
        if (position < 0).any():  # a node before any node one level up
            raise ValueError("the node table is not numbered depth first")
        parent[here] = above[position]
    ids = np.argsort(parent, kind="stable")[1:]  # the root (parent -1) first, then children
    counts = np.bincount(parent[ids], minlength=n)
    if not np.array_equal(counts > 0, internal):
        raise ValueError("the node table is not numbered depth first")
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), ids.astype(np.int64)


def branch_shares(child_start, child_ids, weight) -> np.ndarray:
    """Each child's share of its parent's training weight that reached a child (where
    none did, the branches share equally)."""
    counts = np.diff(child_start)
    owner = np.repeat(np.arange(counts.shape[0]), counts)
    totals = np.bincount(owner, weights=weight[child_ids], minlength=counts.shape[0])
    total = totals[owner]
    return np.where(
        total > 0, weight[child_ids] / np.where(total > 0, total, 1.0), 1.0 / counts[owner]
    )


def every_node_memberships(tree, rows, nodes, shares) -> tuple:
    """(rows, nodes, shares) of the rows reaching ``tree``'s leaves as given, repeated for
    every ancestor of each leaf: a row counts at every node on its paths, with its share."""
    parent = tree.parents()
    parts = [(rows, nodes, shares)]
    while nodes.size:
        up = parent[nodes]
        above = up >= 0
        rows, nodes, shares = rows[above], up[above], shares[above]
        parts.append((rows, nodes, shares))
    return tuple(np.concatenate(part) for part in zip(*parts, strict=True))


def stack_field(values) -> np.ndarray:
    """Per-node values as one array; vector values (e.g. oblique coefficients) become rows,
    with NaN rows for nodes that have none."""
    width = next((np.size(v) for v in values if np.ndim(v) > 0), None)
    if width is None:
        return np.asarray(values, dtype=np.float64)
    out = np.full((len(values), width), np.nan)
    for i, v in enumerate(values):
        if np.ndim(v) > 0:
            out[i] = v
    return out


def narrow_box(box, question, feature: int, threshold: float, n_branches: int) -> list:
    """The boxes of a node's children, from the node's ``box`` (lower, upper) per feature,
    where a sample of the region has lower < x <= upper: a threshold question makes the
    threshold the first child's upper bound and the second child's lower bound on its
    feature; other questions leave every child the node's box (which then contains the
    child's region). The one box narrowing: the grow loop, J48's pruner and
    :func:`node_boxes` use it."""
    lower, upper = box
    if not question.compares_threshold or feature < 0:
        return [box] * n_branches
    left_upper, right_lower = upper.copy(), lower.copy()
    left_upper[feature] = min(upper[feature], threshold)
    right_lower[feature] = max(lower[feature], threshold)
    return [(lower, left_upper), (right_lower, upper)]


def node_boxes(tree: Tree):
    """(lower, upper), n_nodes x n_features: the region of every node as the box
    lower < x <= upper (+-inf where its path sets no bound), narrowed by
    :func:`narrow_box` from the root down."""
    lower = np.full((tree.n_nodes, tree.n_features), -np.inf)
    upper = np.full((tree.n_nodes, tree.n_features), np.inf)
    for node in range(tree.n_nodes):  # parents come before their children
        kids = tree.children(node)
        if kids.size == 0:
            continue
        boxes = narrow_box(
            (lower[node], upper[node]),
            tree.question_of(node),
            int(tree.feature[node]),
            float(tree.threshold[node]),
            int(kids.size),
        )
        for kid, (kid_lower, kid_upper) in zip(kids.tolist(), boxes, strict=True):
            lower[kid], upper[kid] = kid_lower, kid_upper
    return lower, upper


def leaf_boxes(tree: Tree):
    """(leaf ids, lower, upper): the box of every leaf (see :func:`node_boxes`)."""
    lower, upper = node_boxes(tree)
    leaves = np.flatnonzero(tree.is_leaf)
    return leaves, lower[leaves], upper[leaves]

"""The fitted tree: flat numpy arrays indexed by node id, as in scikit-learn.

Node 0 is the root; nodes are numbered depth first, left child first. Leaves have
``children_left == children_right == -1``, ``feature == -1`` and ``threshold == -2``.
Per-node fields a component needs live in ``node_fields`` (name -> array of length
n_nodes); fitted state of components (for example the spreads of soft evaluation) lives
in ``component_state`` (kind -> dict). Both travel through JSON.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

LEAF = -1
UNDEFINED_THRESHOLD = -2.0

_ARRAY_FIELDS = {
    "children_left": np.int64,
    "children_right": np.int64,
    "feature": np.int64,
    "threshold": np.float64,
    "class_sums": np.float64,
    "weight": np.float64,
    "n_samples": np.int64,
    "impurity": np.float64,
    "depth": np.int64,
    "value": np.float64,
    "decision": np.int64,
}


def encode_floats(obj):
    """JSON-safe copy: non-finite floats become the strings 'inf', '-inf', 'nan'."""
    if isinstance(obj, np.ndarray):
        return encode_floats(obj.tolist())
    if isinstance(obj, float):
        if math.isfinite(obj):
            return obj
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, (np.floating,)):
        return encode_floats(float(obj))
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, (list, tuple)):
        return [encode_floats(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): encode_floats(v) for k, v in obj.items()}
    return obj


_SPECIAL = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def decode_floats(obj):
    """Inverse of :func:`encode_floats` for numeric lists (strings are kept in other places)."""
    if isinstance(obj, list):
        return [decode_floats(v) for v in obj]
    if isinstance(obj, str) and obj in _SPECIAL:
        return _SPECIAL[obj]
    return obj


@attrs.define(eq=False)
class Tree:
    children_left: np.ndarray
    children_right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    class_sums: np.ndarray  #: n_nodes x K weighted evidence sums
    weight: np.ndarray  #: weighted number of training samples
    n_samples: np.ndarray  #: number of training rows (fractional copies count once each)
    impurity: np.ndarray
    depth: np.ndarray
    value: np.ndarray  #: n_nodes x K class distribution from the labeler
    decision: np.ndarray  #: class index per node, -1 = abstain
    n_features: int
    node_fields: dict = attrs.field(factory=dict)
    component_state: dict = attrs.field(factory=dict)

    @property
    def n_nodes(self) -> int:
        return int(self.children_left.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.class_sums.shape[1])

    @property
    def is_leaf(self) -> np.ndarray:
        return self.children_left == LEAF

    @property
    def n_leaves(self) -> int:
        return int(self.is_leaf.sum())

    @property
    def max_depth(self) -> int:
        return int(self.depth.max())

    def leaves_under(self) -> np.ndarray:
        """Number of leaves in the subtree of every node."""
        counts = np.zeros(self.n_nodes, dtype=np.int64)
        for node in range(self.n_nodes - 1, -1, -1):  # children have larger ids
            if self.children_left[node] == LEAF:
                counts[node] = 1
            else:
                counts[node] = counts[self.children_left[node]] + counts[self.children_right[node]]
        return counts

    def parents(self) -> np.ndarray:
        parent = np.full(self.n_nodes, -1, dtype=np.int64)
        internal = np.flatnonzero(~self.is_leaf)
        parent[self.children_left[internal]] = internal
        parent[self.children_right[internal]] = internal
        return parent

    def collapse(self, make_leaf: np.ndarray) -> "Tree":
        """A copy in which every node flagged in ``make_leaf`` becomes a leaf; its
        descendants are removed and nodes are renumbered (depth first, left first)."""
        make_leaf = np.asarray(make_leaf, dtype=bool)
        keep = []
        stack = [0]
        while stack:
            node = stack.pop()
            keep.append(node)
            if self.children_left[node] != LEAF and not make_leaf[node]:
                stack.append(int(self.children_right[node]))
                stack.append(int(self.children_left[node]))
        keep = np.array(keep, dtype=np.int64)
        new_id = np.full(self.n_nodes, -1, dtype=np.int64)
        new_id[keep] = np.arange(keep.size)
        left = self.children_left[keep].copy()
        right = self.children_right[keep].copy()
        leaf_now = (left == LEAF) | make_leaf[keep]
        left = np.where(leaf_now, LEAF, new_id[np.maximum(left, 0)])
        right = np.where(leaf_now, LEAF, new_id[np.maximum(right, 0)])
        return Tree(
            children_left=left,
            children_right=right,
            feature=np.where(leaf_now, LEAF, self.feature[keep]),
            threshold=np.where(leaf_now, UNDEFINED_THRESHOLD, self.threshold[keep]),
            class_sums=self.class_sums[keep].copy(),
            weight=self.weight[keep].copy(),
            n_samples=self.n_samples[keep].copy(),
            impurity=self.impurity[keep].copy(),
            depth=self.depth[keep].copy(),
            value=self.value[keep].copy(),
            decision=self.decision[keep].copy(),
            n_features=self.n_features,
            node_fields={k: np.asarray(v)[keep].copy() for k, v in self.node_fields.items()},
            component_state=dict(self.component_state),
        )

    def relabel(self, labeler) -> None:
        """(Re)compute every node's distribution and decision with ``labeler``."""
        self.value = labeler.distribution(self.class_sums, self.weight)
        self.decision = np.asarray(labeler.decide(self.value), dtype=np.int64)

    # -- serialisation --------------------------------------------------------------
    def to_dict(self) -> dict:
        out = {name: encode_floats(getattr(self, name)) for name in _ARRAY_FIELDS}
        out["n_features"] = int(self.n_features)
        out["node_fields"] = {k: encode_floats(np.asarray(v)) for k, v in self.node_fields.items()}
        out["component_state"] = encode_floats(self.component_state)
        return out

    @classmethod
    def from_dict(cls, payload: dict) -> "Tree":
        if not isinstance(payload, dict):
            raise ValueError("tree payload must be a JSON object")
        missing = [name for name in _ARRAY_FIELDS if name not in payload]
        if missing:
            raise ValueError(f"tree payload lacks the fields {missing}")
        arrays = {}
        for name, dtype in _ARRAY_FIELDS.items():
            arrays[name] = np.asarray(decode_floats(payload[name]), dtype=dtype)
        n_classes = len(payload["class_sums"][0]) if payload["class_sums"] else 0
        for name in ("class_sums", "value"):
            arrays[name] = arrays[name].reshape(-1, n_classes)
        tree = cls(
            **arrays,
            n_features=int(payload["n_features"]),
            node_fields={
                k: np.asarray(decode_floats(v)) for k, v in payload.get("node_fields", {}).items()
            },
            component_state=_decode_state(payload.get("component_state", {})),
        )
        tree.check_structure()
        return tree

    def check_structure(self) -> None:
        """Raise ValueError when the arrays do not describe a tree (corrupt model file)."""
        n = self.n_nodes
        for name in _ARRAY_FIELDS:
            if getattr(self, name).shape[0] != n:
                raise ValueError(
                    f"tree field {name!r} has {getattr(self, name).shape[0]} rows, expected {n}"
                )
        internal = ~self.is_leaf
        for name in ("children_left", "children_right"):
            child = getattr(self, name)[internal]
            if ((child <= np.flatnonzero(internal)) | (child >= n)).any():
                raise ValueError(f"tree field {name!r} points outside the tree or backwards")
        if ((self.feature[internal] < 0) | (self.feature[internal] >= self.n_features)).any():
            raise ValueError("tree field 'feature' holds a feature index out of range")


def node_boxes(tree: Tree):
    """(lower, upper), n_nodes x n_features: the region of every node as the box
    lower < x <= upper (+-inf where its path sets no bound). Needs axis-aligned tests."""
    lower = np.full((tree.n_nodes, tree.n_features), -np.inf)
    upper = np.full((tree.n_nodes, tree.n_features), np.inf)
    for node in range(tree.n_nodes):  # parents come before their children
        if tree.children_left[node] == LEAF:
            continue
        f, t = tree.feature[node], tree.threshold[node]
        left, right = int(tree.children_left[node]), int(tree.children_right[node])
        lower[left], upper[left] = lower[node], upper[node]
        lower[right], upper[right] = lower[node], upper[node]
        upper[left, f] = min(upper[node, f], t)
        lower[right, f] = max(lower[node, f], t)
    return lower, upper


def leaf_boxes(tree: Tree):
    """(leaf ids, lower, upper): the box of every leaf (see :func:`node_boxes`)."""
    lower, upper = node_boxes(tree)
    leaves = np.flatnonzero(tree.is_leaf)
    return leaves, lower[leaves], upper[leaves]


def _decode_state(state):
    if isinstance(state, dict):
        return {k: _decode_state(v) for k, v in state.items()}
    if isinstance(state, list):
        decoded = decode_floats(state)
        try:
            return np.asarray(decoded, dtype=np.float64)
        except (TypeError, ValueError):
            return decoded
    return state

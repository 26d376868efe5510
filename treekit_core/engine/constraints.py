"""Monotonic and interaction constraints: what every tree of a composition must respect.

A monotonic constraint (scikit-learn's ``monotonic_cst``: 1, -1 or 0 per feature) orders
the value a target declares (:meth:`treekit_core.components.Target.monotone_value`: a
class's share, a mean, a rate). The grow loop keeps, per node, the interval its value must
lie in (scikit-learn's rule): the root's is unbounded; a split on an unconstrained feature
passes the node's interval to its children; a split on a constrained feature is a
candidate only where both children's unclipped values lie in the interval and are ordered
by the constraint (the splitter's search applies ``kernels.growth.within_bounds``), and
its children then share the bound m = (left value + right value) / 2: for an increasing
constraint the left child gets [lower, m], the right one [m, upper]. Every node stores its
interval (node fields ``value_lower`` and ``value_upper``) and its value is clipped to it
whenever the tree is labelled (:meth:`Tree.relabel`: after growth, after every pruner, on
reading a model file).

Why no pruner, missing-value rule or soft evaluation can break it: intervals nest (a
child's lies within its parent's, and m within the parent's), and every node's value lies
in its own. Two points that differ only in a constrained feature part at a node splitting
on it; every leaf below the side of the larger value is >= m >= every leaf below the
other side. Collapsing a subtree (cost-complexity, MDL, rpart's CV-chosen subtree) leaves
a node whose clipped value keeps that order, raising a subtree (J48) keeps the raised
nodes' intervals, a mixture of leaves by shares that do not depend on the constrained
feature (C4.5's missing-value shares) or that grow with it (soft evaluation of a threshold
question) keeps it too. :func:`check_monotone_tree` checks exactly that order, so a model
file whose intervals were edited is refused.

An interaction constraint (``interaction_cst``, LightGBM's meaning): groups of features
that may appear together on one path from the root. A node may ask about a feature only
if some group holds it and every feature already asked on its path; features named in no
group form one group of their own (as scikit-learn's HistGradientBoosting reads them).
"""

from __future__ import annotations

import numbers

import attrs
import numpy as np

#: The node fields holding each node's value interval.
VALUE_LOWER, VALUE_UPPER = "value_lower", "value_upper"


def _monotonic_tuple(value):
    return None if value is None else tuple(int(v) for v in value)


def _groups_tuple(value):
    return None if value is None else tuple(frozenset(int(f) for f in g) for g in value)


@attrs.frozen
class Constraints:
    """The constraints a composition grows its trees under, resolved to feature indices."""

    #: Per feature: 1 (the value rises with it), -1 (falls), 0 (free); None: no constraint.
    monotonic: tuple | None = attrs.field(default=None, converter=_monotonic_tuple)
    #: Groups of features that may share a path (features in no group form one more group);
    #: None: any features may.
    interaction: tuple | None = attrs.field(default=None, converter=_groups_tuple)

    @property
    def has_monotonic(self) -> bool:
        return self.monotonic is not None and any(self.monotonic)

    @property
    def has_interaction(self) -> bool:
        return self.interaction is not None

    @property
    def active(self) -> bool:
        return self.has_monotonic or self.has_interaction

    def describe(self) -> dict:
        """The constraints as plain JSON (what a model file records)."""
        return {
            "monotonic": None if self.monotonic is None else list(self.monotonic),
            "interaction": None
            if self.interaction is None
            else [sorted(group) for group in self.interaction],
        }

    # -- monotonic ----------------------------------------------------------------
    def signs(self, value) -> np.ndarray:
        """Per feature, the direction the target's value (``value``: a
        :class:`~treekit_core.components.MonotoneValue`) must move in as the feature grows
        (float64, what the searches read): the user's constraint times the value's sign."""
        return np.asarray(self.monotonic, dtype=np.float64) * float(value.sign)

    @staticmethod
    def limits(value, lower: float, upper: float) -> np.ndarray:
        """The float64 vector the searches read (``kernels.growth.within_bounds``): the
        node's bounds, then the value's numerator and denominator coefficients."""
        return np.concatenate(([lower, upper], value.numerator, value.denominator)).astype(
            np.float64
        )

    # -- interaction --------------------------------------------------------------
    def groups(self, n_features: int) -> tuple:
        """The interaction groups with the features named in none as one more group."""
        named = frozenset().union(*self.interaction) if self.interaction else frozenset()
        rest = frozenset(range(n_features)) - named
        return tuple(self.interaction) + ((rest,) if rest else ())

    @staticmethod
    def allowed_features(groups, used: frozenset, n_features: int) -> np.ndarray:
        """Bool per feature: whether a node whose path asked about ``used`` may ask about it
        (some group holds it and every feature of ``used``)."""
        allowed = np.zeros(n_features, dtype=bool)
        for group in groups:
            if used <= group:
                allowed[list(group)] = True
        return allowed


def resolve_constraints(monotonic_cst, interaction_cst, n_features, feature_names=None):
    """:class:`Constraints` from the estimator's ``monotonic_cst`` (None, a sequence of -1,
    0, 1 per feature, or a dict feature name -> constraint when X had column names) and
    ``interaction_cst`` (None, or a sequence of groups of feature indices or names); a
    ValueError names the parameter and what was expected."""
    names = None if feature_names is None else [str(n) for n in feature_names]

    def index_of(feature, parameter):
        if isinstance(feature, (bool, np.bool_)):
            raise ValueError(f"{parameter}: feature {feature!r} is neither an index nor a name")
        if isinstance(feature, numbers.Integral):
            if not 0 <= int(feature) < n_features:
                raise ValueError(
                    f"{parameter}: feature index {feature} is out of range for X with "
                    f"{n_features} features"
                )
            return int(feature)
        if isinstance(feature, str):
            if names is None:
                raise ValueError(
                    f"{parameter} names feature {feature!r}, but X has no column names "
                    "(fit on a DataFrame, or give feature indices)"
                )
            if feature not in names:
                raise ValueError(f"{parameter} names feature {feature!r}, which X does not have")
            return names.index(feature)
        raise ValueError(f"{parameter}: feature {feature!r} is neither an index nor a name")

    monotonic = None
    if monotonic_cst is not None:
        if isinstance(monotonic_cst, dict):
            monotonic = [0] * n_features
            for feature, sign in monotonic_cst.items():
                monotonic[index_of(feature, "monotonic_cst")] = _sign(sign, feature)
        else:
            given = list(np.asarray(monotonic_cst, dtype=object).ravel())
            if len(given) != n_features:
                raise ValueError(
                    f"monotonic_cst has {len(given)} entries but X has {n_features} features "
                    "(one of -1, 0, 1 per feature, or a dict of feature names)"
                )
            monotonic = [_sign(sign, j) for j, sign in enumerate(given)]
    interaction = None
    if interaction_cst is not None:
        if isinstance(interaction_cst, (str, bytes)) or not hasattr(interaction_cst, "__iter__"):
            raise ValueError(
                "interaction_cst must be a list of groups of features (indices or names), "
                f"got {interaction_cst!r}"
            )
        interaction = []
        for group in interaction_cst:
            if isinstance(group, (str, bytes)) or not hasattr(group, "__iter__"):
                raise ValueError(
                    f"interaction_cst: each group is a list of features, got {group!r}"
                )
            interaction.append(frozenset(index_of(f, "interaction_cst") for f in group))
    return Constraints(monotonic, interaction)


def _sign(value, feature) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(
            f"monotonic_cst must hold -1, 0 or 1 per feature, got {value!r} for feature {feature!r}"
        )
    if value not in (-1, 0, 1):
        raise ValueError(
            f"monotonic_cst must hold -1, 0 or 1 per feature, got {value!r} for feature {feature!r}"
        )
    return int(value)


def child_intervals(sign, lower, upper, left_value, right_value):
    """The value intervals of the two children of a split on a feature whose constraint
    orders the value by ``sign`` (1: rising, -1: falling, 0: free), at a node whose
    interval is [lower, upper], given the children's unclipped values: they share the
    bound m = left / 2 + right / 2 (scikit-learn's middle value, held within the node's
    interval), or keep the node's interval for a free feature."""
    if sign == 0:
        return (lower, upper), (lower, upper)
    middle = min(max(left_value / 2.0 + right_value / 2.0, lower), upper)
    if sign > 0:
        return (lower, middle), (middle, upper)
    return (middle, upper), (lower, middle)


def check_monotone_tree(tree, constraints, value, constrained_values) -> None:
    """Raise ValueError naming the node when the tree breaks a monotonic constraint: at a
    binary threshold node on a constrained feature, some leaf below the side of the smaller
    values has a larger value (``constrained_values``, per node: the target's value read
    from the node values) than some leaf below the other side."""
    signs = constraints.signs(value)
    leaves_low = {}

    def extremes(node):
        if node in leaves_low:
            return leaves_low[node]
        children = tree.children(node)
        if len(children) == 0:
            found = (constrained_values[node], constrained_values[node])
        else:
            found = (
                min(extremes(c)[0] for c in children),
                max(extremes(c)[1] for c in children),
            )
        leaves_low[node] = found
        return found

    for node in reversed(range(tree.n_nodes)):  # children first: no deep recursion
        extremes(node)
    for node in range(tree.n_nodes):
        children = tree.children(node)
        if len(children) != 2 or tree.feature[node] < 0:
            continue
        sign = signs[tree.feature[node]]
        if sign == 0:
            continue
        low_side, high_side = (children[0], children[1]) if sign > 0 else children[::-1]
        if extremes(low_side)[1] > extremes(high_side)[0]:
            raise ValueError(
                f"tree node {node} splits on feature {int(tree.feature[node])}, constrained "
                f"monotonic ({int(constraints.monotonic[tree.feature[node]])}), but its "
                "leaves do not respect the constraint"
            )


def check_tree_constraints(tree, constraints, target) -> None:
    """Raise ValueError naming the node or field when a tree (read from a model file, its
    values recomputed) does not keep ``constraints``: monotonic ones need every node's
    value interval (``Tree.check_structure`` checks its numbers) and leaves ordered at
    every constrained split (:func:`check_monotone_tree`); interaction ones need every
    root-to-leaf path's features within one group."""
    if constraints.has_monotonic:
        if VALUE_LOWER not in tree.node_fields or VALUE_UPPER not in tree.node_fields:
            raise ValueError(
                f"tree has no node fields {VALUE_LOWER!r} and {VALUE_UPPER!r}, which a tree "
                "grown under monotonic_cst holds"
            )
        value = target.monotone_value(tree.statistics.shape[1])
        if value is None:
            raise ValueError(f"target {target.name!r} declares no value monotonic_cst orders")
        check_monotone_tree(tree, constraints, value, tree.value[:, value.column])
    if constraints.has_interaction:
        groups = constraints.groups(tree.n_features)
        above = features_above(tree)
        for node in np.flatnonzero(~tree.is_leaf):
            path = above[node] | {int(tree.feature[node])}
            if not any(path <= group for group in groups):
                raise ValueError(
                    f"tree node {node} asks about feature {int(tree.feature[node])} below "
                    f"features {sorted(above[node])}: no interaction_cst group holds them all"
                )


def features_above(tree) -> list:
    """Per node, the features the nodes on its path from the root ask about (its own
    question not included): what interaction constraints restrict."""
    above = [frozenset()] * tree.n_nodes
    parents = tree.parents()
    for node in range(1, tree.n_nodes):  # ids increase downwards: parents come first
        parent = parents[node]
        above[node] = above[parent] | {int(tree.feature[parent])}
    return above

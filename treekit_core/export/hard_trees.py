"""What every exporter needs: the fitted trees, and the checks that a composition is one
other tools can express (hard routing, no abstention, labels = the most probable class,
a side for missing values)."""

from __future__ import annotations

import warnings

import numpy as np


class NotExportableError(ValueError):
    """The composition cannot be written in the target format; the message says why."""


class MissingValueExportWarning(UserWarning):
    """An export sends a sample with a missing value down one branch where treekit sends it
    down every branch by the training shares: rows without missing values are exact."""


#: How an exporter treats a node that sends a sample with a missing value down several
#: branches by their training shares (C4.5's rule, treekit's default), which none of the
#: formats can express: ``"warn"`` (the default) sends it down the branch with the larger
#: share and says so once, ``"larger_share"`` does the same silently, ``"error"`` refuses.
MISSING_RULES = ("warn", "larger_share", "error")


def fitted_trees(model) -> list:
    model._check_fitted()
    return list(getattr(model, "estimators_", None) or [model.tree_])


def check_hard_routing(model, target: str) -> None:
    """Samples reach one leaf: the evaluator routes hard, at least on rows missing no
    tested value (rpart's surrogate evaluator: exact there; the rest follows
    :func:`check_missing_rule`)."""
    evaluator = model.composition_.evaluator
    if not {"hard_routing", "hard_routing_when_complete"} & evaluator.provides:
        raise NotExportableError(
            f"{target} routes every sample to one leaf by the tree's own tests; evaluator "
            f"{evaluator.name!r} mixes several leaves or routes by other tests, and declares "
            "neither hard_routing nor hard_routing_when_complete"
        )


def routes_missing_by_other_tests(model) -> bool:
    """Whether a sample missing a tested value follows tests the tree's arrays do not hold
    (surrogate splits), which no export format expresses."""
    return "hard_routing" not in model.composition_.evaluator.provides


def check_hard(model, target: str) -> None:
    """Samples reach one leaf and the model never abstains."""
    check_hard_routing(model, target)
    if model.can_abstain_:
        raise NotExportableError(
            f"{target} always names a class; this composition can abstain (labeler "
            f"{model.composition_.labeler.name!r} or a reject rule)"
        )


def check_argmax_labels(model, target: str) -> None:
    """The model's decision rule (the labeler's, or a target's own) picks the most
    probable class (first on ties): checked on every leaf distribution and on 1000 random
    ones, since a forest averages leaves."""
    rng = np.random.default_rng(0)
    probes = [tree.value for tree in fitted_trees(model)]
    probes.append(rng.dirichlet(np.ones(model.n_classes_), size=1000))
    probes = np.vstack(probes)
    composition = model.composition_
    decided = np.asarray(composition.target.decide(probes, composition.labeler))
    if (decided != probes.argmax(axis=1)).any():
        rule = (
            f"labeler {composition.labeler.name!r}"
            if composition.target.decides_with_labeler
            else f"target {composition.target.name!r} (its own rule)"
        )
        raise NotExportableError(
            f"{target} labels a sample with its most probable class; {rule} decides otherwise"
        )


def check_missing_rule(missing: str, model, target: str) -> None:
    """Refuse an unknown ``missing``; with ``"warn"``, one warning when some node of the
    model's trees sends a sample with a missing value down several branches, or its
    evaluator follows surrogate splits for it: rows without missing values are exact,
    rows missing a tested value may differ. A model that met no missing value at fit
    (``missing_at_fit_`` False) learned nothing about them: no warning."""
    if missing not in MISSING_RULES:
        raise ValueError(f"missing must be one of {MISSING_RULES}, got {missing!r}")
    if not getattr(model, "missing_at_fit_", True):
        return
    if routes_missing_by_other_tests(model):
        if missing == "error":
            raise NotExportableError(
                f"evaluator {model.composition_.evaluator.name!r} sends a sample missing a "
                f"tested value down its surrogate splits, which {target} cannot express; pass "
                "missing='larger_share' (or leave the default, 'warn') to send it down the "
                "branch with the larger share (predictions then differ from treekit's only "
                "on rows missing a tested value)"
            )
        if missing == "warn":
            warnings.warn(
                f"{target} sends a sample with a missing value down the branch with the "
                "larger training share; treekit follows the node's surrogate splits: rows "
                "without missing values are predicted exactly as by treekit, rows missing a "
                "tested value may differ. Pass missing='larger_share' to accept this "
                "without the warning, or missing='error' to refuse",
                MissingValueExportWarning,
                stacklevel=3,
            )
        return
    if missing != "warn":
        return
    shared = sum(int((_largest_shares(tree) < 1).sum()) for tree in fitted_trees(model))
    if shared:
        warnings.warn(
            f"{target} sends a sample with a missing value down one branch; at {shared} "
            "node(s) treekit sends it down every branch by the training shares, and there "
            "it follows the branch with the larger share: rows without missing values are "
            "predicted exactly as by treekit, rows missing a tested value may differ. Pass "
            "missing='larger_share' to accept this without the warning, or missing='error' "
            "to refuse",
            MissingValueExportWarning,
            stacklevel=3,
        )


def _largest_shares(tree) -> np.ndarray:
    """Per internal node, the largest of its children's training shares (1: a sample that
    cannot answer goes one way, as the formats can say)."""
    internal = ~tree.is_leaf
    if not internal.any():
        return np.zeros(0)
    return np.maximum.reduceat(tree.child_shares, tree.child_start[:-1][internal])


def missing_branch(tree, node: int, missing: str, target: str) -> int:
    """The branch (0-based) a sample with a missing tested value takes at ``node``."""
    shares = tree.shares(node)
    branch = int(np.argmax(shares))
    if shares[branch] < 1.0 and missing == "error":
        raise NotExportableError(
            f"node {node} sends a sample with a missing value down every branch by the "
            f"training shares {np.round(shares, 4).tolist()}, which {target} cannot express; "
            "pass missing='larger_share' (or leave the default, 'warn') to send it down the "
            "branch with the larger share (predictions then differ from treekit's only on "
            "rows missing a tested value), or use a splitter that sends missing values to "
            "one side (histogram)"
        )
    return branch


def binary_threshold_arrays(tree, missing: str, target: str) -> dict:
    """scikit-learn style arrays of a tree whose every question is ``x <= t`` with two
    branches: children_left/right (-1 at leaves), children_default (the child a missing
    value goes to; -1 at leaves), feature and threshold (-2 at leaves)."""
    n = tree.n_nodes
    left = np.full(n, -1, dtype=np.int64)
    right = np.full(n, -1, dtype=np.int64)
    default = np.full(n, -1, dtype=np.int64)
    feature = np.full(n, -2, dtype=np.int64)
    threshold = np.full(n, -2.0)
    for node in np.flatnonzero(~tree.is_leaf):
        question = tree.question_of(node)
        if not question.compares_threshold:
            raise NotExportableError(
                f"{target} holds binary trees of x <= t tests; node {node} asks a "
                f"{question.name!r} question"
            )
        kids = tree.children(node)
        left[node], right[node] = kids
        default[node] = kids[missing_branch(tree, node, missing, target)]
        feature[node], threshold[node] = tree.feature[node], tree.threshold[node]
    return {
        "children_left": left,
        "children_right": right,
        "children_default": default,
        "feature": feature,
        "threshold": threshold,
    }


def float32_floor(value: float) -> float:
    """The largest float32 <= value: for a float32 input v, ``v <= value`` exactly when
    ``v <= float32_floor(value)`` (skl2onnx rounds scikit-learn's thresholds this way)."""
    rounded = np.float32(value)
    if float(rounded) > value:
        rounded = np.nextafter(rounded, np.float32(-np.inf), dtype=np.float32)
    return float(rounded)

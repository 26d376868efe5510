"""Learning decision trees from counterexamples (Cebron, Richter & Lienhart, 2012).

A training sample carries y = (y_1..y_K) with y_k = 1 when it is known *not* to be class k
and 0 when nothing is known; an ordinary label is K-1 ones. These rows are the core's
evidence rows, so the node sums are sum_i w_i y_ik and the complementary probability of a
node is pbar(k) = (weight of samples with y_k = 1) / W. With q_k = 1 - pbar(k):

    H = -sum_k q_k ln q_k                      (normalize=False: the paper's equation (5),
                                                sign corrected, in nats)
    H = -sum_k (q_k / Q) ln (q_k / Q), Q = sum q  (normalize=True, the default)

With full information q is the class distribution and both are the Shannon entropy in nats.
With missing information the q_k no longer sum to 1, and a node whose rows carry no
information has q_k = 1 for all k: the literal formula calls it pure (H = 0); normalised it
is maximally uncertain (ln K).
"""

from __future__ import annotations

import math
from typing import ClassVar

import attrs
import numpy as np

from treekit_core import ABSTAIN, Criterion, Labeler, TargetRows, hookimpl, one_hot
from treekit_core.builtins import ClassLabels, check_class_statistics

#: The treekit plugin API this plugin is written for (see treekit_core's CHANGELOG.md).
TREEKIT_PLUGIN_API = 4


def labels_as_counterexamples(encoded, n_classes: int) -> np.ndarray:
    """Counterexample rows for ordinary labels (class indices): K-1 ones, the sample is
    known not to be any other class."""
    return 1.0 - one_hot(np.asarray(encoded), n_classes)


def check_counterexamples(counterexamples, n_samples: int, classes=None):
    """Validate an n x K 0/1 counterexample matrix (1: known not this class); return
    (classes, evidence). A row of zeros (no information) is accepted; a row of ones
    (excludes every class) is an error naming the row."""
    Y = np.asarray(counterexamples)
    if Y.ndim != 2:
        raise ValueError(
            f"counterexamples must be a 2-D (n_samples, n_classes) 0/1 matrix, got shape {Y.shape}"
        )
    if Y.shape[0] != n_samples:
        raise ValueError(f"counterexamples has {Y.shape[0]} rows but X has {n_samples} samples")
    if Y.shape[1] < 2:
        raise ValueError(f"counterexamples needs at least two classes (columns), got {Y.shape[1]}")
    try:
        values = Y.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError("counterexamples must hold only 0 and 1") from None
    bad = ~np.isin(values, (0.0, 1.0))
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(
            f"counterexamples must hold only 0 and 1; row {row}, column {col} is {Y[row, col]!r}"
        )
    full = np.flatnonzero(values.sum(axis=1) == values.shape[1])
    if full.size:
        raise ValueError(
            f"counterexamples row {int(full[0])} excludes every class ({full.size} such rows); "
            f"a sample must belong to some class"
        )
    if classes is None:
        classes = np.arange(values.shape[1])
    classes = np.asarray(classes)
    if classes.shape != (values.shape[1],):
        raise ValueError(
            f"classes must name the {values.shape[1]} columns of counterexamples, got "
            f"{classes.shape[0] if classes.ndim else classes}"
        )
    if np.unique(classes).size != classes.size:
        raise ValueError("classes must be distinct")
    return classes, values


class CounterexampleEvidence:
    """Evidence rows are counterexample rows: the target of this plugin writes them, its
    criterion and labeler read them."""

    evidence: ClassVar[str] = "counterexamples"


@attrs.define(slots=False)
class Counterexamples(CounterexampleEvidence, ClassLabels):
    """``fit(X, counterexamples=Y, classes=...)``: Y is n x K, 1 where the sample is known not
    to be that class, 0 where nothing is known; ``fit(X, y)`` reads ordinary labels as
    K-1 ones. Nodes store the sums of these rows; the labeler decides."""

    name: ClassVar[str] = "counterexamples"
    description: ClassVar[str] = "counterexample rows (1: known not this class) per sample"
    fit_arguments: ClassVar[frozenset] = frozenset({"y", "counterexamples", "classes"})

    def encode(self, y, n_samples, counterexamples=None, classes=None):
        if counterexamples is None:
            if classes is not None:
                raise ValueError(
                    "classes= only applies with counterexamples=; with y the classes come from y"
                )
            labels = super().encode(y, n_samples)  # one-hot rows: K-1 ones are their complement
            return TargetRows(1.0 - labels.rows, labels.labels)
        if y is not None:
            raise ValueError(
                "give either y (class labels) or counterexamples, not both; encode labelled "
                "rows as counterexample rows with K-1 ones"
            )
        classes, matrix = check_counterexamples(counterexamples, n_samples, classes)
        check_class_statistics(n_samples, classes.shape[0], "counterexamples")
        return TargetRows(matrix, classes)


def counterexample_entropy(class_sums, total_weight, params):
    """-sum q ln q with q_k = 1 - class_sums[k] / total_weight (normalised when params[0] = 1)."""
    if total_weight <= 0.0:
        return 0.0
    n_classes = class_sums.shape[0]
    total_q = 0.0
    for k in range(n_classes):
        q = 1.0 - class_sums[k] / total_weight
        if q > 0.0:
            total_q += q
    if total_q <= 0.0:
        return 0.0
    scale = total_q if params[0] > 0.5 else 1.0
    h = 0.0
    for k in range(n_classes):
        q = (1.0 - class_sums[k] / total_weight) / scale
        if q > 0.0:
            h -= q * math.log(q)
    return h


@attrs.define(slots=False)
class CounterexampleEntropy(CounterexampleEvidence, Criterion):
    """Parameter ``normalize`` (default True): entropy of q / sum(q), so a node without
    information is maximally uncertain instead of pure; False is the paper's literal formula."""

    name: ClassVar[str] = "counterexample_entropy"
    description: ClassVar[str] = (
        "entropy of complementary probabilities q = 1 - pbar (Cebron et al.)"
    )
    default_target: ClassVar[str] = "counterexamples"
    normalize: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))
    impurity = staticmethod(counterexample_entropy)

    def impurity_params(self, n_classes: int) -> np.ndarray:
        return np.array([1.0 if self.normalize else 0.0])


@attrs.define(slots=False)
class Complementary(CounterexampleEvidence, Labeler):
    """Leaves keep the complementary distribution pbar (``Tree.statistics / weight``); the
    class distribution is q / sum(q) with q = 1 - pbar, and the decision its majority."""

    name: ClassVar[str] = "complementary"
    description: ClassVar[str] = (
        "class probabilities from complementary probabilities, majority decision"
    )

    def distribution(self, class_sums, weights):
        weights = np.asarray(weights, dtype=np.float64)[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            q = np.clip(1.0 - class_sums / np.where(weights > 0, weights, 1.0), 0.0, None)
        total = q.sum(axis=1, keepdims=True)
        k = class_sums.shape[1]
        return np.where((weights > 0) & (total > 0), q / np.where(total > 0, total, 1.0), 1.0 / k)

    def decide(self, proba):
        return np.argmax(proba, axis=1).astype(np.int64)

    def sample_errors(self, evidence, decision):
        """Known errors: 1 when the sample is known not to be the decided class."""
        rows = np.arange(decision.shape[0])
        return np.where(decision == ABSTAIN, 1.0, evidence[rows, np.maximum(decision, 0)])

    def row_labels(self, evidence):
        return np.argmax(1.0 - evidence, axis=1)

    def node_error(self, class_sums, weights):
        """Weight of the samples known not to be the decided class (for full information,
        weight minus the decided class's weight, as for ordinary labels)."""
        decision = self.decide(self.distribution(class_sums, weights))
        return class_sums[np.arange(len(weights)), decision]


def complementary_probabilities(tree) -> np.ndarray:
    """pbar(k) of every node: the weight share of samples known not to be class k."""
    return tree.statistics / np.where(tree.weight > 0, tree.weight, 1.0)[:, None]


def remove_information(counterexamples, fraction, rng) -> np.ndarray:
    """A copy with a random ``fraction`` of the entries set to 0 ("no information"), as in
    the paper's experiments."""
    Y = np.array(counterexamples, dtype=np.float64)
    mask = rng.random(Y.shape) < fraction
    Y[mask] = 0.0
    return Y


@hookimpl
def treekit_criteria():
    return [CounterexampleEntropy]


@hookimpl
def treekit_labelers():
    return [Complementary]


@hookimpl
def treekit_targets():
    return [Counterexamples]

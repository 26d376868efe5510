"""Built-in target ``class_labels``: y holds class labels, a node stores the labeler's class
distribution and decision, prediction returns labels."""

from __future__ import annotations

from typing import ClassVar

import attrs

from treekit_core.components import Target, TargetRows, one_hot
from treekit_core.engine.validation import MAX_TOTAL_WEIGHT, check_statistics_size, check_y


def check_class_statistics(n_samples: int, n_classes: int, name: str = "y") -> None:
    """Refuse class labels whose statistics (a column per class) would not fit in memory
    (:func:`~treekit_core.engine.validation.check_statistics_size`), with a hint when nearly
    every row has a class of its own."""
    hint = (
        "; nearly every row has a class of its own: is the target an ID column, or a "
        "measurement rather than a class?"
        if n_classes * 2 > n_samples
        else ""
    )
    check_statistics_size(n_samples, n_classes, name, "classes", hint)


@attrs.define(slots=False)
class ClassLabels(Target):
    """y holds one class label per sample; its row is one-hot (1 in the column of its
    class), so a node's statistics are its weighted class counts. The labeler decides."""

    name: ClassVar[str] = "class_labels"
    description: ClassVar[str] = "class labels: class counts per node, the labeler decides"

    def encode(self, y, n_samples, **given):
        classes, encoded = check_y(y, n_samples)
        check_class_statistics(n_samples, classes.shape[0])
        return TargetRows(one_hot(encoded, classes.shape[0]), classes)

    def check_tree(self, tree, labels) -> None:
        """Sums of weights per class: one column per label, >= 0 and within the bound fit
        puts on weights; distributions >= 0; decisions index a label or abstain (-1)."""
        n_labels = len(labels)
        if tree.statistics.shape[1] != n_labels:
            raise ValueError(
                f"tree field 'statistics' has {tree.statistics.shape[1]} columns, expected "
                f"{n_labels} (one per class)"
            )
        sums = tree.statistics
        if (sums < 0).any():
            raise ValueError("tree field 'statistics' must hold finite numbers >= 0")
        # the bound fit puts on the total weight: pruning adds and multiplies these sums,
        # and a file with 1e308 gave rows that were no distribution
        if sums.size and sums.max() > MAX_TOTAL_WEIGHT:
            raise ValueError(
                f"tree field 'statistics' holds {sums.max():.3g}; at most "
                f"{MAX_TOTAL_WEIGHT:g} (sums of sample weights, as fit bounds them)"
            )
        if tree.value.shape[1] != n_labels or (tree.value < 0).any():
            raise ValueError(
                f"tree field 'value' must hold {n_labels} finite probabilities >= 0 per node"
            )
        if ((tree.decision < -1) | (tree.decision >= n_labels)).any():
            raise ValueError("tree field 'decision' holds a class index out of range")

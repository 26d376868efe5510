"""The ``class_label_sets`` target: several class labels per sample (a 2-D ``y``, n x k: one
class set per output), as scikit-learn's multi-output classifiers take them (one tree
deciding several labels: several findings from one examination).

A row is the outputs' one-hot rows side by side (output j's block holds a column per class
of output j), so a node's statistics are each output's weighted class counts, and every
block of a node sums to the node's weight. The criteria of several outputs (``gini``'s and
``entropy``'s ``for_outputs()``) score such rows as the mean of the outputs' impurities, as
scikit-learn's (they read the number of outputs from the sums: k = sum(sums) / W). A node
predicts each output's class shares and,
per output, the most probable class (the first of equals, as scikit-learn's ``argmax``);
its risk is the misclassified weight summed over the outputs.

Where the classes of each output lie among the columns is known from the labels
:meth:`ClassLabelSets.encode` found (a list of arrays, one per output):
:meth:`ClassLabelSets.with_labels` gives the target that knows them, which fit and the
model-file reader use."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components import Target, TargetRows, one_hot
from treekit_core.engine.validation import check_statistics_size, check_weight_sums, check_y


def label_columns(y, n_samples: int) -> list:
    """The columns of a 2-D ``y`` (a DataFrame's keep their own dtypes), each 1-D, or
    ValueError naming what was expected."""
    if hasattr(y, "iloc") and getattr(y, "ndim", 1) == 2:
        columns = [y.iloc[:, j] for j in range(y.shape[1])]
    else:
        array = np.asarray(y)
        if array.ndim == 1:
            return [array]
        if array.ndim != 2:
            raise ValueError(
                f"y must be 1-D or 2-D (n_samples, n_outputs); got shape {array.shape}"
            )
        columns = [array[:, j] for j in range(array.shape[1])]
    if not columns:
        raise ValueError("y has no columns; at least one output of class labels is required")
    return columns


def output_blocks(sizes) -> list:
    """The slices of the columns each output's classes take, from the outputs' numbers
    of classes."""
    edges = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    return [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]


def output_argmax(values, sizes) -> np.ndarray:
    """Each output's most probable class index per row (n x k; the first of equals) of
    rows or values of outputs of ``sizes`` classes side by side (one-hot rows: each
    output's class)."""
    return np.column_stack([np.argmax(values[:, block], axis=1) for block in output_blocks(sizes)])


def labels_dtype(labels) -> np.dtype:
    """One dtype that holds every output's labels unchanged: numpy's common type where all
    are numbers or all strings, else object."""
    kinds = {np.asarray(classes).dtype.kind for classes in labels}
    if kinds <= set("biuf") or len(kinds) == 1 and kinds != {"O"}:
        return np.result_type(*[np.asarray(classes).dtype for classes in labels])
    return np.dtype(object)


@attrs.define(slots=False)
class ClassLabelSets(Target):
    """y holds k class labels per sample (n x k; a 1-D y is one output): a row is the
    outputs' one-hot rows side by side, a node's statistics each output's class counts.
    A node stores every output's class shares and predicts each output's most probable
    class; its risk is the misclassified weight summed over the outputs, a sample's loss the
    number of its outputs predicted wrongly. Decides without the labeler (the majority of
    each output); refuses what decides otherwise (a cost matrix, rejection, abstention)
    through the classifier."""

    name: ClassVar[str] = "class_label_sets"
    description: ClassVar[str] = (
        "several class labels per sample (2-D y): class counts per output, each output's majority"
    )
    provides: ClassVar[frozenset] = frozenset({"node_risk"})
    several_outputs: ClassVar[bool] = True
    decides_with_labeler: ClassVar[bool] = False
    decides_among_labels: ClassVar[bool] = True

    def encode(self, y, n_samples, **given):
        """One-hot rows per output, side by side; the labels: a list of each output's
        classes (sorted, as ``np.unique`` sorts them)."""
        if y is None:
            raise ValueError("this classifier requires y (class labels, n x k), but y is None")
        columns = label_columns(y, n_samples)
        labels, blocks = [], []
        for j, column in enumerate(columns):
            name = "y" if len(columns) == 1 else f"y column {j}"
            classes, codes = check_y(column, n_samples, name=name)
            labels.append(classes)
            blocks.append(one_hot(codes, classes.shape[0]))
        width = sum(block.shape[1] for block in blocks)
        check_statistics_size(n_samples, width, "y", "classes of all outputs")
        return TargetRows(np.hstack(blocks), labels)

    def with_labels(self, labels):
        """A copy that knows where each output's classes lie among the columns (what
        :meth:`node_risk`, :meth:`sample_loss` and :meth:`strata` read)."""
        if not isinstance(labels, list) or not labels:
            raise ValueError(
                f"target {self.name!r} needs a list of class arrays, one per output; got "
                f"{type(labels).__name__}"
            )
        known = attrs.evolve(self)
        known.output_sizes = tuple(int(np.asarray(classes).shape[0]) for classes in labels)
        return known

    def __reduce_ex__(self, protocol):
        """Pickled as every component (by name and parameters), keeping what
        :meth:`with_labels` taught it (a forest's trees may grow in other processes)."""
        reduced = super().__reduce_ex__(protocol)
        if len(reduced) > 2:  # pickled by its class: its attributes travel with it
            return reduced
        return (*reduced, {"output_sizes": getattr(self, "output_sizes", None)})

    def _sizes(self) -> tuple:
        """How many classes each output has (what :meth:`with_labels` taught it)."""
        sizes = getattr(self, "output_sizes", None)
        if sizes is None:
            raise ValueError(
                f"target {self.name!r} does not know its outputs' classes yet: it is used "
                "through with_labels(labels) (fit and the model-file reader call it)"
            )
        return sizes

    def node_values(self, statistics, weights, labeler):
        """Every output's class shares (each block over the node's weight; 0 for a node
        without weight); the decisions are 0 (each output's class comes from its shares:
        :meth:`predictions`)."""
        weights = np.asarray(weights, dtype=np.float64)[:, None]
        safe = np.where(weights > 0, weights, 1.0)
        values = np.where(weights > 0, statistics / safe, 0.0)
        return values, np.zeros(statistics.shape[0], dtype=np.int64)

    def decide(self, values, labeler):
        return np.zeros(values.shape[0], dtype=np.int64)

    def output_choices(self, values) -> np.ndarray:
        """Each output's most probable class index per row (n x k; the first of equals)."""
        return output_argmax(values, self._sizes())

    def predictions(self, values, decisions, labels):
        """Each output's most probable class (n x k labels, in one dtype that holds them)."""
        if labels is None:
            raise ValueError(f"target {self.name!r} predicts labels: predict needs its classes")
        chosen = self.output_choices(values)
        out = np.empty(chosen.shape, dtype=labels_dtype(labels))
        for j, classes in enumerate(labels):
            out[:, j] = np.asarray(classes)[chosen[:, j]]
        return out

    def node_risk(self, statistics, weights, labeler):
        """The misclassified weight summed over the outputs: sum_j (W - max of block j)."""
        weights = np.asarray(weights, dtype=np.float64)
        risk = np.zeros(statistics.shape[0])
        for block in output_blocks(self._sizes()):
            risk += np.maximum(weights - statistics[:, block].max(axis=1), 0.0)
        return risk

    def sample_loss(self, rows, values, decisions, labeler):
        """The number of outputs whose predicted class is not the row's (0 to k; the
        summed risk's units)."""
        return self.output_errors(rows, values).sum(axis=1).astype(np.float64)

    def output_errors(self, rows, values) -> np.ndarray:
        """Whether each output of each row is predicted wrongly (n x k bool)."""
        chosen = self.output_choices(values)
        at = np.arange(rows.shape[0])
        blocks = output_blocks(self._sizes())
        taken = [rows[at, block.start + chosen[:, j]] for j, block in enumerate(blocks)]
        return np.column_stack(taken) < 0.5

    def strata(self, rows, labeler):
        """The first output's class (the first 1 of each row): folds and bootstraps keep its
        proportions."""
        return np.asarray(np.argmax(rows, axis=1), dtype=np.int64)

    def check_tree(self, tree, labels) -> None:
        """Sums of weights per class of every output: as many columns as the outputs have
        classes, >= 0, within fit's bound on weights, each output's summing to the node's
        weight; the values each output's shares."""
        if not isinstance(labels, list):
            raise ValueError("model file: 'classes' must list one list of labels per output")
        sizes = [len(classes) for classes in labels]
        width = sum(sizes)
        if tree.statistics.shape[1] != width:
            raise ValueError(
                f"tree field 'statistics' has {tree.statistics.shape[1]} columns, expected "
                f"{width} (one per class of every output: {sizes})"
            )
        sums = tree.statistics
        check_weight_sums(sums)
        for j, block in enumerate(output_blocks(sizes)):
            totals = sums[:, block].sum(axis=1)
            if not np.allclose(totals, tree.weight, rtol=1e-9, atol=1e-12):
                node = int(np.flatnonzero(~np.isclose(totals, tree.weight, rtol=1e-9))[0])
                raise ValueError(
                    f"tree field 'statistics': node {node}'s class counts of output {j} sum "
                    f"to {totals[node]:.6g}, not its weight {tree.weight[node]:.6g}"
                )
        if tree.value.shape[1] != width or (tree.value < 0).any():
            raise ValueError(
                f"tree field 'value' must hold {width} finite shares >= 0 per node (every "
                "output's classes)"
            )

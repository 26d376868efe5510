"""Component base classes: the contract every built-in and plugin implements.

A component is a small attrs class. Its attributes are its parameters (validated when it is
constructed), its class attribute ``name`` is its registry name, and ``kind`` says which
step of growing or using a tree it performs. Components hold no fitted state: whatever a
component learns from training data it returns as a plain dict that the tree stores
(``Tree.component_state[kind]``), so a model is saved as JSON and loaded without pickle.

Compatibility is declared, not discovered by failure: ``provides`` is a set of
capabilities a component offers, ``requires`` maps another kind to the capabilities needed
from that kind's component. :meth:`treekit_core.composition.Composition.check` refuses a
composition that does not meet them, naming both components and the capability.

Capabilities used by the built-ins and the paper plugins:

``axis_aligned``        (splitter)   every question is ``x[feature] <= threshold``
``hard_routing``        (evaluator)  a sample reaches exactly one leaf
``crisp_labels``        (labeler)    a leaf's decision is one class or an explicit abstention
``fractional_weights``  (pruner, splitter, criterion) handles non-integer sample weights
``soft_labels``         (labeler)    reads evidence rows that are not one-hot

Evidence kinds: a criterion and a labeler declare which rows they read (``evidence``):
``"one_hot"`` (an ordinary label is a one-hot row) or ``"counterexamples"`` (a 1 marks a
class the sample is known not to be; an ordinary label is K-1 ones). The estimator encodes
``y`` in the kind the composition reads, so no component special-cases another.
"""
from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

ABSTAIN = -1  #: decision index meaning "no class"; never a valid class index.


def _json_value(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    return value


@attrs.define(slots=False)
class Component:
    """Base of every component kind."""

    name: ClassVar[str] = ""
    kind: ClassVar[str] = ""
    description: ClassVar[str] = ""
    #: Whether the component copes with NaN in X (C4.5's rules). Components that see X
    #: (splitter, propagator, evaluator, confidence) must all say so for NaN to be accepted.
    handles_missing: ClassVar[bool] = False
    provides: ClassVar[frozenset] = frozenset()
    requires: ClassVar[dict] = {}

    def get_params(self) -> dict:
        """The component's parameters as a JSON-able dict (attribute name -> value)."""
        return {f.name: _json_value(getattr(self, f.name)) for f in attrs.fields(type(self))}

    @classmethod
    def parameter_names(cls) -> list[str]:
        return [f.name for f in attrs.fields(cls)]

    def check_data(self, data) -> None:
        """Raise ValueError when this component cannot handle the training data."""

    def check_composition(self, composition) -> None:
        """Raise CompositionError when the other components' parameters contradict this one's
        (capabilities are checked generically through ``provides`` / ``requires``)."""


@attrs.define(slots=False)
class Criterion(Component):
    """Impurity of a node from its weighted class-evidence sums.

    Subclasses define ``impurity`` as a *plain Python* static method following the
    criterion ABI (see :mod:`treekit_core._jit`); the core compiles it with numba. Parameters
    reach the compiled function through :meth:`impurity_params`, a float64 array.
    """

    kind: ClassVar[str] = "criterion"
    provides: ClassVar[frozenset] = frozenset({"fractional_weights"})
    evidence: ClassVar[str] = "one_hot"

    @staticmethod
    def impurity(class_sums, total_weight, params):  # pragma: no cover - abstract
        raise NotImplementedError

    def impurity_params(self, n_classes: int) -> np.ndarray:
        """Parameters passed to the compiled impurity, as a float64 array (default: none)."""
        return np.zeros(1)

    def compiled_impurity(self):
        """The numba-compiled impurity function (compiled once per function and machine)."""
        from treekit_core._jit import compile_impurity

        return compile_impurity(type(self).impurity)

    def node_impurity(self, class_sums, total_weight: float, n_classes: int | None = None) -> float:
        """Evaluate the impurity of one node in Python (tests, pruning, reports)."""
        sums = np.ascontiguousarray(class_sums, dtype=np.float64)
        k = sums.shape[0] if n_classes is None else n_classes
        return float(self.compiled_impurity()(sums, float(total_weight), self.impurity_params(k)))


@attrs.define(slots=False)
class Split:
    """A question found by a splitter. ``improvement`` is the unweighted impurity drop."""

    feature: int
    threshold: float
    improvement: float
    node_fields: dict = attrs.field(factory=dict)  #: per-node values the tree stores


@attrs.define(slots=False)
class Splitter(Component):
    """Finds the best question at a node.

    ``prepare`` runs once per fit and returns whatever the splitter precomputes (sorted
    orders, per-feature spreads); ``find_split`` runs once per node and returns a
    :class:`Split` or ``None`` when no admissible question exists.
    """

    kind: ClassVar[str] = "splitter"
    provides: ClassVar[frozenset] = frozenset({"axis_aligned", "fractional_weights"})
    def companions(self) -> dict:
        """Components this splitter is meant to work with (kind -> instance), e.g. UDT's own
        propagation and evaluation with the same pdfs; used by the conformance kit."""
        return {}

    def prepare(self, data, criterion, rules) -> Any:
        return None

    def find_split(self, state, node, rules):  # pragma: no cover - abstract
        """Return the best :class:`Split` for ``node`` (a :class:`treekit_core.grow.Node`) or None."""
        raise NotImplementedError


@attrs.define(slots=False)
class Propagator(Component):
    """Sends a node's training samples to its children (hard: one child; soft: both, weighted)."""

    kind: ClassVar[str] = "propagator"
    produces_fractional_weights: ClassVar[bool] = False

    def prepare(self, data) -> Any:
        return None

    def propagate(self, state, data, node, split):  # pragma: no cover - abstract
        """Return ``((left_rows, left_weights), (right_rows, right_weights))``."""
        raise NotImplementedError


@attrs.define(slots=False)
class Pruner(Component):
    """Turns a grown tree into the final tree (may refit the composition, e.g. for CV)."""

    kind: ClassVar[str] = "pruner"
    provides: ClassVar[frozenset] = frozenset({"fractional_weights"})

    def prune(self, tree, context):  # pragma: no cover - abstract
        """Return the pruned :class:`treekit_core.tree.Tree`; never a larger one.

        ``context`` is a :class:`treekit_core.composition.PruningContext`: the training data,
        the composition (to regrow on folds), the labeler and a random generator.
        """
        raise NotImplementedError


@attrs.define(slots=False)
class Labeler(Component):
    """Turns class-evidence sums into a class distribution and a decision (or abstention)."""

    kind: ClassVar[str] = "labeler"
    provides: ClassVar[frozenset] = frozenset({"crisp_labels"})
    evidence: ClassVar[str] = "one_hot"

    @property
    def can_abstain(self) -> bool:
        return False

    def distribution(self, class_sums: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Class distribution per row of ``class_sums`` (n x K) -> (n x K), rows summing to 1."""
        totals = class_sums.sum(axis=1, keepdims=True)
        k = class_sums.shape[1]
        with np.errstate(invalid="ignore", divide="ignore"):
            proba = np.where(totals > 0, class_sums / np.where(totals > 0, totals, 1.0), 1.0 / k)
        return proba

    def decide(self, proba: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """Class index per row of ``proba``, or :data:`ABSTAIN` (-1)."""
        raise NotImplementedError

    def sample_errors(self, evidence: np.ndarray, decision: np.ndarray) -> np.ndarray:
        """Error (0..1) of deciding ``decision`` for samples with these evidence rows; an
        abstention counts as an error. One-hot rows: 1 - evidence of the decided class."""
        rows = np.arange(decision.shape[0])
        credit = np.where(decision == ABSTAIN, 0.0, evidence[rows, np.maximum(decision, 0)])
        return 1.0 - np.clip(credit, 0.0, 1.0)

    def row_labels(self, evidence: np.ndarray) -> np.ndarray:
        """A class index per evidence row, to stratify folds (one-hot: the labelled class)."""
        return np.argmax(evidence, axis=1)

    def node_error(self, class_sums: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Weighted training errors of each node's decision (the risk cost-complexity
        pruning uses). An abstaining node is charged as if it decided its majority class."""
        decision = self.decide(self.distribution(class_sums, weights))
        chosen = np.where(decision >= 0, decision, np.argmax(class_sums, axis=1))
        return weights - class_sums[np.arange(len(weights)), chosen]


@attrs.define(slots=False)
class Evaluator(Component):
    """Routes new samples through a tree and mixes leaf distributions."""

    kind: ClassVar[str] = "evaluator"
    provides: ClassVar[frozenset] = frozenset({"hard_routing"})

    def fit(self, tree, data, labeler) -> dict:
        """Return the state this evaluator needs at prediction time (stored in the tree).
        ``labeler`` says how decisions and errors are counted."""
        return {}

    def predict_distribution(self, tree, X: np.ndarray) -> np.ndarray:  # pragma: no cover
        """Class distribution per sample (n x K): leaf distributions mixed by routing weights."""
        raise NotImplementedError


@attrs.define(slots=False)
class Confidence(Component):
    """Scores how much a prediction can be trusted (larger = more confident)."""

    kind: ClassVar[str] = "confidence"

    def fit(self, tree, data, labeler) -> dict:
        """Return the state this confidence needs at scoring time (stored in the tree)."""
        return {}

    def score(self, tree, X: np.ndarray, proba: np.ndarray, decision: np.ndarray) -> np.ndarray:
        """One finite score per sample."""  # pragma: no cover
        raise NotImplementedError


KINDS = {
    "criterion": Criterion,
    "splitter": Splitter,
    "propagator": Propagator,
    "pruner": Pruner,
    "labeler": Labeler,
    "evaluator": Evaluator,
    "confidence": Confidence,
}

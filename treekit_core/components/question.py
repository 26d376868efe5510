"""The question a node asks: which branch a sample goes to.

A question kind is registered like every other component (hook ``treekit_questions``), but
it is not chosen per composition: every registered kind is available to every splitter,
which names the kind it asks in :attr:`treekit_core.Split.question`. A fitted tree stores,
per internal node, the kind (by its index into ``Tree.questions``), ``feature``,
``threshold``, the kind's parameter field (:attr:`Question.parameter_field`) and one child
per branch.

Routing never calls a question through Python per sample: :attr:`Question.answer` is a
plain function that the core compiles (numba) into routing kernels specialised to the
kinds a tree uses, cached on disk like every other kernel.
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components.base import Component

#: What an answer returns when the sample cannot answer (its tested value is missing, or a
#: category the tree never saw): the sample is then sent down every branch, in proportion
#: to the training weight each branch received (C4.5's rule).
MISSING_BRANCH = -1


@attrs.define(slots=False)
class Question(Component):
    """A kind of question. Subclasses set :attr:`name`, :attr:`answer` and
    :meth:`branch_texts`; the other members have defaults."""

    kind: ClassVar[str] = "question"
    sees_features: ClassVar[bool] = True
    handles_missing: ClassVar[bool] = True

    answer: ClassVar[object] = None
    """A plain Python function (a ``staticmethod``), compilable by numba in nopython mode::

        answer(x: float64[::1], feature: int64, threshold: float64,
               params: float64[::1], n_branches: int64) -> int

    ``x`` is one sample's feature row, ``params`` the node's value of
    :attr:`parameter_field` (length 1 for a scalar field, an unused length-1 array when the
    kind has none). Returns the branch in ``[0, n_branches)`` or :data:`MISSING_BRANCH`.
    Called by compiled routing kernels, per sample per node; never by Python per sample.
    It must be defined at module level of an importable module (the generated kernels
    import it by name, which is what lets them be cached)."""

    parameter_field: ClassVar[str | None] = None
    """Name of the node field (``Tree.node_fields``) that holds this kind's parameters at a
    node (a scalar or a vector per node), or None. Read by the routing kernels' packing and
    by the model-file check."""

    compares_threshold: ClassVar[bool] = False
    """True only for ``x[feature] <= threshold`` with two branches (yes = branch 0). Such
    a question may be softened (soft propagation, soft evaluation, UDT, Quinlan's ramps
    replace its step by a gate) and narrows the node boxes of :func:`treekit_core.node_boxes`.
    Every other question routes hard, also under soft components. Read by the soft
    components, the box narrowing, the exporters and the surrogate splits, per node."""

    range_count: ClassVar[object] = None
    """Optional, with :attr:`range_candidate`: declares that this kind has two-branch
    questions on one numeric feature that send a contiguous run of the node's sorted
    distinct values to branch 0 and the rest to branch 1, so the built-in exhaustive
    splitter can search them at compiled speed (``splitter_params={"questions": [name]}``).
    A plain function, compilable like :attr:`answer`::

        range_count(n_values: int64) -> int64

    the number of candidates at a node whose feature has ``n_values`` distinct known
    values. Called by the compiled range search (:mod:`treekit_core.kernels.range_search`)
    once per feature per node."""

    range_candidate: ClassVar[object] = None
    """A plain function (with :attr:`range_count`)::

        range_candidate(values: float64[::1], n_values: int64, index: int64)
            -> (int64, int64)

    candidate ``index`` in ``[0, range_count(n_values))``: the run ``[start, end)`` of the
    ascending distinct values ``values`` that goes to branch 0. A run outside
    ``0 <= start < end <= n_values``, or holding every value, is skipped. Called by the
    compiled range search once per candidate."""

    def range_parameters(self, before: float, first: float, last: float, after: float):
        """(threshold, node_fields) of the chosen run: ``first`` and ``last`` are its
        smallest and largest values, ``before`` and ``after`` the node's values next to it
        (-inf / +inf where the run starts or ends the feature's range). Called by the
        exhaustive splitter once per node whose best question is of this kind."""
        raise NotImplementedError(f"question kind {self.name!r} declares no range candidates")

    def parameters(self, fields: dict, node=None):
        """This kind's parameters as the float vector :attr:`answer` receives: the value of
        :attr:`parameter_field` in ``fields`` (a split's node fields, or a tree's, at
        ``node``); an unused length-1 vector when the kind has none. Called by the grow
        loop (a split's branches) and by the tree (``question_params``) per node."""
        import numpy as np

        if self.parameter_field is None:
            return np.zeros(1)
        value = fields[self.parameter_field]
        if node is not None:
            value = value[node]
        return np.ascontiguousarray(np.atleast_1d(np.asarray(value, dtype=np.float64)))

    def branch_texts(
        self, feature: int, threshold: float, params, n_branches: int, context
    ) -> list[str]:  # pragma: no cover - abstract
        """One condition per branch, as :func:`treekit_core.export_text` prints it (for
        example ``["age <= 40.5", "age >  40.5"]``). ``params`` is the node's parameter
        vector (see :attr:`answer`); ``context`` a :class:`QuestionTextContext` (feature
        names, category names, decimals). Called by the exports, once per internal node."""
        raise NotImplementedError

    def tested_features(self, feature: int, params, n_features: int):
        """(feature indices, shares summing to 1): how a node's impurity decrease is
        credited in ``feature_importances_``. Called by ``feature_importances_`` once per
        internal node. Default: all of it to ``feature``."""
        import numpy as np

        return np.array([feature], dtype=np.int64), np.ones(1)

    def category_branches(self, feature: int, threshold: float, params, n_branches: int):
        """For a question on one nominal feature: the branch of every category code
        (index = code), so exporters can write it as equality tests; None when the
        question is not a lookup of category codes (the default). Called by
        ``treekit_core.export.to_onnx`` once per node asking this kind."""
        return None

    def check_node(self, feature: int, threshold: float, params, n_branches: int, n_features):
        """Return None when the stored node is well formed, else a sentence saying what is
        wrong (for example "category mask is negative"). Called when a model file is
        loaded, before any kernel reads the node. Default: feature in range, 2+ branches."""
        if not 0 <= feature < n_features:
            return f"feature {feature} is outside [0, {n_features})"
        if n_branches < 2:
            return f"{n_branches} branches; a question needs at least 2"
        return None


@attrs.frozen
class QuestionTextContext:
    """What :meth:`Question.branch_texts` may use to word a question."""

    feature_names: list  #: one name per feature
    categories: dict  #: nominal feature index -> category names (may be empty)
    decimals: int = 4
    #: "sklearn" (scikit-learn's export_text) or "j48" (Weka's J48 output)
    style: str = "sklearn"

    def number(self, value: float) -> str:
        """A threshold as the style prints it: fixed ``decimals``, or Weka's
        ``Utils.doubleToString(value, 6)`` (6 decimals, trailing zeros dropped)."""
        if self.style != "j48":
            return f"{value:.{self.decimals}f}"
        text = f"{value:.6f}".rstrip("0").rstrip(".")
        return "0" if text in ("-0", "") else text


# The threshold question belongs to the contract: it is every split's default kind
# (:attr:`treekit_core.Split.question`), the kind the tree format's ``threshold`` field and
# the compiled growers are built around. ``treekit_core.builtins`` registers it.


def threshold_answer(x, feature, threshold, params, n_branches):
    value = x[feature]
    if np.isnan(value):
        return MISSING_BRANCH
    return 0 if value <= threshold else 1


@attrs.define(slots=False)
class Threshold(Question):
    """x[feature] <= threshold (branch 0, "yes") or > threshold (branch 1)."""

    name: ClassVar[str] = "threshold"
    description: ClassVar[str] = "x[feature] <= threshold: two branches (CART, C4.5 on numbers)"
    answer: ClassVar[object] = staticmethod(threshold_answer)
    compares_threshold: ClassVar[bool] = True

    def branch_texts(self, feature, threshold, params, n_branches, context):
        name, value = context.feature_names[feature], context.number(threshold)
        wider = " " if context.style == "sklearn" else ""  # scikit-learn aligns the values
        return [f"{name} <= {value}", f"{name} >{wider} {value}"]

    def check_node(self, feature, threshold, params, n_branches, n_features):
        problem = super().check_node(feature, threshold, params, n_branches, n_features)
        if problem is None and n_branches != 2:
            return f"{n_branches} branches; a threshold question has 2"
        if problem is None and not np.isfinite(threshold):
            return f"threshold {threshold!r} is not a finite number"
        return problem

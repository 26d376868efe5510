"""The criterion: impurity of a node from its weighted class-evidence sums."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components.base import Component
from treekit_core.components.evidence import ReadsEvidence


@attrs.define(slots=False)
class Criterion(ReadsEvidence, Component):
    """Impurity of a node from its weighted class-evidence sums.

    Subclasses define ``impurity`` as a *plain Python* static method following the
    criterion ABI (see :mod:`treekit_core.kernels.compiling`); the core compiles it with numba.
    Parameters reach the compiled function through :meth:`impurity_params`, a float64 array,
    so changing a parameter never recompiles anything.
    """

    kind: ClassVar[str] = "criterion"
    provides: ClassVar[frozenset] = frozenset({"fractional_weights"})

    default_target: ClassVar[str] = "class_labels"
    """The target an estimator uses with this criterion when its ``target`` parameter is None
    (the registered name of a target writing the rows this criterion reads). Read when the
    estimator makes its composition."""

    symmetric: ClassVar[bool] = False
    """True when the impurity does not change if the classes are reordered (gini, entropy).
    Read by the conformance kit, which then checks it."""

    concave: ClassVar[bool] = False
    """True when the weighted impurity W * i(v, W), with W = sum(v), is a concave function
    of the class sums v >= 0 (gini, entropy, misclassification: the perspective of an
    impurity concave on the simplex). Then the children's weighted impurity over a box of
    left class sums is smallest at a corner of the box, so a search may skip candidates the
    corners bound (UDT's pruned search reads it). Checked by the conformance kit."""

    infinite_impurity: ClassVar[bool] = False
    """True when the impurity is +inf for statistics no node may have (scikit-learn's
    Poisson deviance of a node without response): a split that would make such a child has
    the drop -inf and is never chosen. Read by the conformance kit, which then accepts
    +inf (and only +inf) from the impurity."""

    @staticmethod
    def impurity(class_sums, total_weight, params):  # pragma: no cover - abstract
        """``impurity(class_sums: float64[::1], total_weight: float64, params: float64[::1])
        -> float64``, plain Python that numba compiles. Called by the split-search kernels
        for every candidate child and by the grow loop for every node."""
        raise NotImplementedError

    split_score: ClassVar = None
    """None (the default), or a *plain Python* static method scoring a binary split for
    criteria that are not "parent minus weighted children" (CART's twoing rule, Hellinger
    distance, a log-rank statistic)::

        split_score(left_sums, left_weight, right_sums, right_weight,
                    parent_sums, parent_weight, parent_impurity, params) -> float64

    larger is better, 0 or less: no use. Called by the split-search kernels for every
    candidate cut, compiled into kernels specialised to the criterion (so it needs a source
    file, and specialises even with ``TREEKIT_SPECIALISE=0``). Without it a split scores
    its impurity drop ``i(t) - (w_L i(L) + w_R i(R)) / w_t``. The score is what
    ``min_impurity_decrease``, ``min_gain`` and the importances read (``improvement``).
    A criterion with a split score needs a splitter that provides ``split_scores``
    (:meth:`requirements`)."""

    drop_bound: ClassVar = None
    """None (the default), or a *plain Python* static method bounding from above w_t times
    the drop a threshold search computes for a binary cut (the fall of the weighted
    impurity, ``w_t i(t) - (w_L i(L) + w_R i(R))``), cheaper than the drop itself::

        drop_bound(left_sums, left_weight, parent_sums, parent_weight, parent_impurity,
                   params) -> float64

    (the right side is the parent less the left side, as the search computes it). Called
    by the threshold searches (the presorted grower, the node-by-node search) for every
    admissible cut before its drop, in kernels specialised to the criterion: a cut whose
    bound is at most the best drop found times w_t is skipped, so the bound must exceed
    w_t times the computed drop (or :attr:`split_score`) by more than the rounding of that
    product, for every cut; then the trees are the same to the last bit, only grown
    faster (squared error's bound takes two divisions, its drop five; a division by w_t in
    the bound costs more than it saves). Only a bound defined in the class that defines
    :attr:`impurity` is used (:meth:`drop_bound_function`): a subclass with an impurity of
    its own gets none. Checked by the conformance kit on random cuts."""

    fixed_statistics: ClassVar[int | None] = None
    """None (the default: the impurity reads as many statistics as the target writes, one
    per class), or the number of statistics :attr:`impurity` is written for when that is
    one number (squared error's 2: the sums of w y and w y^2). Read when the split-search
    kernels are specialised to the criterion (:meth:`fixed_statistics_count`, once per
    process): for a fit whose target writes that many, the kernels hold the number as a
    constant, so the compiler unrolls their loops over a node's statistics (a regression
    tree's fit 20% faster); the same trees. Only a number declared in the class that
    defines :attr:`impurity` is used. Checked by the conformance kit against the rows the
    criterion's default target writes."""

    row_search: ClassVar[str | None] = None
    """None (the default), or the capability a splitter must provide to score this
    criterion's cuts from a node's rows, for a criterion whose impurity is no function of
    summed statistics (``"absolute_deviation_search"``: the absolute deviations from each
    side's weighted median, which reads the ``median`` target's node summaries). Read by
    :meth:`requirements`, and by a splitter, which then searches with its kernel for that
    capability instead of running sums; :attr:`impurity` still scores a whole node from
    its statistics (the target's summary)."""

    def drop_bound_function(self):
        """:attr:`drop_bound` where the class defining :attr:`impurity` defines it too (a
        bound belongs to the impurity it bounds), else None. Called when the split-search
        kernels are specialised to the criterion, once per process."""
        bound = self._declared_beside_impurity("drop_bound")
        return getattr(bound, "__func__", bound)

    def fixed_statistics_count(self) -> int | None:
        """:attr:`fixed_statistics` where the class defining :attr:`impurity` declares it
        (the number belongs to the impurity), else None. Called when the split-search
        kernels are specialised to the criterion, once per process."""
        return self._declared_beside_impurity("fixed_statistics")

    def _declared_beside_impurity(self, name: str):
        """The class attribute ``name`` as the class defining :attr:`impurity` declares it
        (None where it declares none): what belongs to one impurity is not inherited by
        a subclass with an impurity of its own."""
        for klass in type(self).__mro__:
            if "impurity" in vars(klass):
                return vars(klass).get(name)
        return None

    def drop_free_statistics(self, n_statistics: int) -> tuple:
        """The statistics (indices into a node's ``n_statistics`` sums) that cancel out of
        every split's drop: those s_k of which the weighted impurity W * i(v, W) is a
        constant times s_k plus a function of the other sums (squared error's sum of y^2,
        Poisson's sum of y log y), so that a cut's drop is the same however s_k divides
        between its sides. A splitter that sums statistics per candidate side (the
        histogram splitter's bins) may leave them out of those sums, scoring each cut with
        s_k at 0 in the parent and on both sides (each W * i then lacks the same term), and
        sum them once per child (a quarter less work a bin for a regression tree).
        Default: none; a criterion with a :attr:`split_score` must keep the score unchanged
        too. Called by a splitter once per tree it grows; checked by the conformance kit
        (the drops of random cuts of its target's rows with and without those sums)."""
        return ()

    def row_columns(self, default: tuple, n_columns: int) -> tuple:
        """The columns of the target's rows that the :attr:`row_search` kernel reads, in
        its order: ``default``, the search's own (the log-rank search's (event, time,
        entry)), unless the criterion reads others (``logrank_cause``: one cause's events,
        the time and the entry). ``n_columns``: how many columns the rows have; a column
        the rows lack is refused with a ValueError naming the criterion's parameter.
        Called by a splitter once per fit when it prepares a row search."""
        return default

    def row_search_arguments(self) -> tuple:
        """Numbers the :attr:`row_search` kernel takes after ``min_weight_leaf`` (Gray's
        search: how many cuts a feature gets scored). Default: none. Called by a splitter
        once per fit when it prepares a row search."""
        return ()

    def requirements(self) -> dict:
        """Default :attr:`requires`, plus ``split_scores`` of the splitter when the criterion
        defines :attr:`split_score` and the :attr:`row_search` capability when it names one.
        Called by the composition check at fit."""
        needs = dict(self.requires)
        if type(self).split_score is not None:
            needs["splitter"] = frozenset(needs.get("splitter", ())) | {"split_scores"}
        if type(self).row_search is not None:
            needs["splitter"] = frozenset(needs.get("splitter", ())) | {type(self).row_search}
        return needs

    def node_decreases(self, tree) -> np.ndarray:
        """What ``feature_importances_`` credits each node of ``tree`` with (0 at leaves),
        in the criterion's own units: the decrease of the weighted impurity,
        ``w_t i(t) - sum_c w_c i(c)`` over the children (scikit-learn's mean decrease in
        impurity; :mod:`treekit_core.engine.importances` divides by the root's weight and
        normalises). A criterion whose impurity does not measure what its splits improve
        (a log-rank search, whose node impurity is its share of events) overrides it.
        Called by ``feature_importances_`` once per tree."""
        weighted = tree.weight * tree.impurity
        decreases = np.zeros(tree.n_nodes)
        for node in np.flatnonzero(~tree.is_leaf):
            decreases[node] = weighted[node] - weighted[tree.children(node)].sum()
        return decreases

    def for_outputs(self):
        """The criterion that scores the statistics of several outputs side by side as the
        mean of the outputs' impurities (scikit-learn's multi-output criteria): a
        criterion of its own (``gini``, ``entropy``: the class counts of the outputs side by
        side; ``squared_error``, ``poisson``: a pair of sums per output), so that one
        output's impurity pays nothing for several, or None (the default): then a y of
        several outputs is refused, naming this criterion and the target. Called by fit
        when the target's rows hold several outputs, and by every refit and model-file read
        of such a model."""
        return None

    def impurity_params(self, n_classes: int) -> np.ndarray:
        """Parameters passed to the compiled impurity, as a float64 array. Called once per
        fit (and per pruning evaluation) with the number of classes. Default: none."""
        return np.zeros(1)

    def compiled_impurity(self):
        """The numba-compiled impurity (compiled once per function and machine). Called by
        the splitters' ``prepare`` and by the grow loop."""
        from treekit_core.kernels.compiling import compile_impurity

        return compile_impurity(type(self).impurity)

    def node_impurity(self, class_sums, total_weight: float, n_classes: int | None = None) -> float:
        """The impurity of one node, evaluated from Python (tests, pruning, reports)."""
        sums = np.ascontiguousarray(class_sums, dtype=np.float64)
        k = sums.shape[0] if n_classes is None else n_classes
        return float(self.compiled_impurity()(sums, float(total_weight), self.impurity_params(k)))


def improvement_decreases(tree) -> np.ndarray:
    """A split node's weight times the score its search stored (``improvement``), 0 at
    leaves and where the score is not finite or below 0: what a criterion whose impurity
    does not measure what its splits improve (a log-rank statistic, a treatment effect's
    heterogeneity) credits each node with in :meth:`Criterion.node_decreases`."""
    improvement = np.asarray(tree.node_fields.get("improvement", np.zeros(tree.n_nodes)))
    internal = ~tree.is_leaf
    scores = np.where(internal & np.isfinite(improvement), improvement, 0.0)
    return tree.weight * np.maximum(scores, 0.0)

"""SurvivalTree: a composed tree for censored follow-up, with scikit-survival's API.

``fit(X, y)`` takes y as scikit-survival's ``Surv`` makes it (a structured array of
(event, time)) or two columns (time, event); ``predict`` returns a risk score (higher:
riskier), ``predict_cumulative_hazard_function`` and ``predict_survival_function`` the
curves on the grid of every distinct training time (``unique_times_``), ``score`` Harrell's
concordance index.
"""

from __future__ import annotations

import numpy as np

from treekit_core.builtins.survival_curves import (
    expand_runs,
    last_follow_up,
    survival_quantiles,
)
from treekit_core.engine.tree import every_node_memberships
from treekit_core.engine.validation import check_event_codes, check_survival_y, split_entry
from treekit_core.estimators import model_file
from treekit_core.estimators.ensemble import EnsembleEstimator
from treekit_core.estimators.incidence import IncidencePredictions
from treekit_core.estimators.parameter_docs import document_parameters
from treekit_core.estimators.single_tree import SingleTreeEstimator
from treekit_core.estimators.step_functions import StepFunction, warn_past_follow_up

#: Steps gathered before they are added into the curves (bounds the memory of a forest's
#: curves to about rows x times plus this many entries).
STEP_BLOCK = 4_000_000


def _stepped_curves(steps_of, trees, mixtures, which, n, width) -> np.ndarray:
    """The sum over ``trees`` of every row's curve, from the leaves' steps
    (``steps_of(state, tree, nodes)``: a target's ``curve_steps`` for one curve): each row
    reaching a leaf (with its share) adds the leaf's changes at their grid positions; a
    running sum along the grid then gives the curves, started at 0 hazard or incidence,
    or survival 1, per tree."""
    total = np.zeros(n * width)
    cells, changes, gathered = [], [], 0
    for tree, (rows, nodes, shares) in zip(trees, mixtures, strict=True):
        reached, position = np.unique(nodes, return_inverse=True)
        offsets, jumps, change = steps_of(tree.component_state.get("target", {}), tree, reached)
        lengths = offsets[position + 1] - offsets[position]
        entry = expand_runs(offsets[position], lengths)
        cells.append(np.repeat(rows, lengths) * width + jumps[entry])
        changes.append(np.repeat(shares, lengths) * change[entry])
        gathered += entry.size
        if gathered >= STEP_BLOCK:
            total += np.bincount(np.concatenate(cells), np.concatenate(changes), n * width)
            cells, changes, gathered = [], [], 0
    if cells:
        total += np.bincount(np.concatenate(cells), np.concatenate(changes), n * width)
    curves = np.cumsum(total.reshape(n, width), axis=1)
    if which == "survival":
        curves += len(trees)  # each tree's curve starts at 1
        return np.clip(curves, 0.0, len(trees), out=curves)  # rounding may not leave [0, 1]
    if which == "incidence":
        return np.clip(curves, 0.0, len(trees), out=curves)
    return np.maximum(curves, 0.0, out=curves)


def _dense_curves(method, trees, mixtures, n, grid) -> np.ndarray:
    """The sum over ``trees`` of every row's curve at ``grid`` (``method(state, tree,
    nodes, grid)``: a target's curves of one kind): each tree's leaves evaluated there, a
    row taking its leaf's curve (one leaf) or their mixture (a sparse product), added in
    place."""
    from scipy.sparse import csr_matrix

    total, taken = np.zeros((n, grid.size)), np.empty((n, grid.size))
    for tree, (rows, nodes, shares) in zip(trees, mixtures, strict=True):
        reached, position = np.unique(nodes, return_inverse=True)
        per_node = method(tree.component_state.get("target", {}), tree, reached, grid)
        if rows.size == n and (shares == 1.0).all():  # one leaf per row, in order
            total += np.take(per_node, position, axis=0, out=taken, mode="clip")
        else:
            mixing = csr_matrix((shares, (rows, position)), shape=(n, reached.size))
            total += mixing @ per_node
    return total


class SurvivalFamily(IncidencePredictions):
    """The family of estimators for censored follow-up (placed before the structure:
    ``class SurvivalTree(SurvivalFamily, SingleTreeEstimator)``): ``fit`` on (event, time),
    risk scores and curves from the target's state kept per tree, ``score`` Harrell's
    concordance index; scikit-learn's regressor tags (as the rest of treekit has always
    declared them). No labeler, confidence, rejection, calibration or class weights
    (:attr:`fixed_components`)."""

    estimator_type = "regressor"
    fixed_components = {"labeler": "majority", "confidence": "probability"}

    def fit(self, X, y, sample_weight=None, entry=None):
        """Fit on censored follow-up ``y`` (see the class docstring); ``entry``: each row's
        delayed entry (left truncation; or a field ``entry`` of a structured ``y``): a row
        is at risk at the times in (entry, time] only."""
        self._fit_survival(X, y, sample_weight, entry)
        return self

    def _fit_survival(self, X, y, sample_weight, entry=None) -> tuple:
        """Grow the trees and keep every tree's target state; (the training data, each
        tree's training weights)."""
        data = self._fit_checked(X, y, sample_weight, entry=entry)
        weights = self._tree_weights(data)
        self._keep_survival_state(data, y, weights)
        return data, weights

    def _check_target(self, composition) -> None:
        super()._check_target(composition)
        if "survival_curves" not in composition.target.provides:
            raise ValueError(
                f"{type(self).__name__} predicts from censored follow-up, but criterion "
                f"{composition.criterion.name!r} reads other rows (its target is "
                f"{composition.target.name!r}); use 'logrank' or 'exponential'"
            )

    def _keep_survival_state(self, data, y, tree_weights) -> None:
        """Every tree's target state (its leaves' curves, or rpart's rescaling) from the
        training rows with the weights it was grown with, kept on the tree (model files
        keep it) and, for a single tree, on its grown tree too (``prune``)."""
        target = self.composition_.target
        for tree, weights in zip(self._trees(), tree_weights, strict=True):
            rows, nodes, shares = self._mixtures(tree, data.X, training=True)
            shares = shares * weights[rows]
            kept = shares > 0
            memberships = (rows[kept], nodes[kept], shares[kept])
            tree.component_state["target"] = target.fit_state(y, data.evidence, tree, memberships)
        grown = getattr(self, "_grown_tree", None)
        if grown is not None and not target.state_per_node:
            grown.component_state["target"] = self.tree_.component_state["target"]
        elif grown is not None:
            # every node's curve, so prune() can give any pruned tree its leaves' curves
            rows, nodes, shares = self._mixtures(grown, data.X, training=True)
            shares = shares * tree_weights[0][rows]
            kept = shares > 0
            memberships = every_node_memberships(grown, rows[kept], nodes[kept], shares[kept])
            grown.component_state["target"] = target.fit_state(y, data.evidence, grown, memberships)

    def _read_trees(self, payload, composition, labels) -> list:
        """The trees a model file holds (the base's reading), which must share one time
        grid: every curve is read on ``unique_times_``, the first tree's; a grown tree's
        target state, when it is not per node, is the tree's."""
        trees = super()._read_trees(payload, composition, labels)
        for index, tree in enumerate(trees):
            if not tree.component_state.get("target"):  # the curves predict reads
                where = "tree" if len(trees) == 1 else f"trees[{index}]"
                raise model_file.ModelFileError(
                    f"model file: {where}: target state is missing: a fitted survival model "
                    "keeps its time grid and every leaf's curve"
                )
        grown = getattr(self, "_grown_tree", None)
        if grown is not None and not composition.target.state_per_node:
            # a state not per node (rpart's rescaling of time) is the tree's: derived for
            # the grown tree prune() starts from, never read from the file's copy of it
            grown.component_state["target"] = trees[0].component_state["target"]
        first = trees[0].component_state.get("target", {})
        for index, tree in enumerate(trees[1:], start=1):
            state = tree.component_state.get("target", {})
            for name in ("grid", "is_event_time"):
                if not np.array_equal(
                    np.asarray(state.get(name, []), dtype=np.float64),
                    np.asarray(first.get(name, []), dtype=np.float64),
                ):
                    raise model_file.ModelFileError(
                        f"model file: trees[{index}]: target.{name} differs from trees[0]'s; "
                        "the trees of one model share the training times"
                    )
        return trees

    @property
    def unique_times_(self) -> np.ndarray:
        """Every distinct training time, event or censored, ascending (the grid of the
        curves; kept in the trees' target state, so model files keep it)."""
        self._check_fitted()
        state = self._trees()[0].component_state["target"]
        return np.asarray(state["grid"], dtype=np.float64)

    @property
    def is_event_time_(self) -> np.ndarray:
        """Whether an event happened at each of :attr:`unique_times_`."""
        self._check_fitted()
        return np.asarray(self._trees()[0].component_state["target"]["is_event_time"]) == 1

    def node_risk_values(self, tree) -> np.ndarray:
        """Every node's risk score in ``tree`` (one of this model's): a leaf's is what
        :meth:`predict` gives a row reaching it, an inner node's the training-weight average
        of its children's (what SHAP's tree explainer reads as the expected output); a
        column per cause where ``predict`` gives one (competing risks)."""
        target = self.composition_.target
        leaves = np.flatnonzero(tree.is_leaf)
        risk = target.risk_scores(tree.component_state["target"], tree, leaves)
        values = np.zeros((tree.n_nodes, *np.shape(risk)[1:]))
        values[leaves] = risk
        for node in range(tree.n_nodes - 1, -1, -1):  # children have larger ids
            children = tree.children(node)
            if children.size:
                weight = tree.weight[children]
                values[node] = np.dot(weight, values[children]) / weight.sum()
        return values

    def _averaged(self, X, evaluate) -> np.ndarray:
        """The mean over the trees of ``evaluate(tree, state, rows, nodes, shares, reached,
        n)``, where the samples of X (n of them) reach the leaves ``nodes`` with ``shares``
        (``reached``: those leaves, sorted)."""
        self._check_fitted()
        with self._checked_for_predict(X) as checked:
            total = 0.0
            for tree in self._trees():
                rows, nodes, shares = self._mixtures(tree, checked)
                state = tree.component_state.get("target", {})
                total = total + evaluate(
                    tree, state, rows, nodes, shares, np.unique(nodes), checked.shape[0]
                )
            return total / len(self._trees())

    def _curves(self, X, which: str, times=None) -> np.ndarray:
        """Every sample's cumulative hazard or survival at ``times`` (default
        ``unique_times_``): its leaf's (the mixture of the leaves it reaches, by their
        shares), averaged over the trees. A forest's curves on the training grid, where the
        target gives them as steps (``curve_steps``): each row adds its leaves' few jumps
        and one running sum makes the curves (a leaf changes at its own event times only),
        equal to the average of the trees' curves within a few units in the last place
        (kept in [0, 1] for survival, >= 0 for the hazard). Else (one tree: exactly its
        leaf's curve; times asked) each tree's leaves are evaluated at the times asked
        (memory rows x times, not rows x every training time) and mixed in place."""
        self._check_fitted()
        with self._checked_for_predict(X) as checked:
            mixtures = (self._mixtures(tree, checked) for tree in self._trees())
            return self._mixed_curves(mixtures, which, checked.shape[0], times)

    def _mixed_curves(self, mixtures, which: str, n: int, times=None) -> np.ndarray:
        """:meth:`_curves` of n rows reaching the trees' leaves as ``mixtures`` (one
        (rows, nodes, shares) per tree) says."""
        target = self.composition_.target
        return self._mixed_target_curves(
            mixtures,
            which,
            n,
            times,
            target.hazard_curves if which == "hazard" else target.survival_curves,
            lambda state, tree, nodes: target.curve_steps(state, tree, nodes, which),
        )

    def _mixed_target_curves(self, mixtures, which, n, times, curves_of, steps_of):
        """The trees' mean curve of one kind (``which``: "hazard", "survival" or
        "incidence") for n rows reaching their leaves as ``mixtures`` says: from the
        leaves' steps (``steps_of``) for a forest on the training grid, else from the
        leaves' curves at the times (``curves_of``)."""
        trees = self._trees()
        grid = self.unique_times_ if times is None else np.asarray(times, dtype=np.float64)
        first = trees[0].component_state.get("target", {})
        stepped = (
            len(trees) > 1
            and times is None
            and steps_of(first, trees[0], np.zeros(0, np.int64)) is not None
        )
        if stepped:
            total = _stepped_curves(steps_of, trees, mixtures, which, n, grid.size)
        else:
            total = _dense_curves(curves_of, trees, mixtures, n, grid)
        total /= len(trees)
        return total

    def predict_cumulative_hazard_function(self, X, return_array=False):
        """Every sample's cumulative hazard at ``unique_times_`` (an n x len(unique_times_)
        array with ``return_array``; else one :class:`StepFunction` per sample)."""
        curves = self._curves(X, "hazard")
        if return_array:
            return curves
        return np.array([StepFunction(self.unique_times_, c, 0.0) for c in curves], dtype=object)

    def predict_survival_function(self, X, return_array=False, return_conf_int=False):
        """Every sample's survival function at ``unique_times_`` (array or step
        functions, as :meth:`predict_cumulative_hazard_function`). ``return_conf_int``
        (with ``return_array``): also the 95% band of the leaf's Kaplan-Meier curve
        (survfit's default: Greenwood's variance, conf.type "log"; NaN where the curve is
        0), as ``(S, lower, upper)``, each n x len(unique_times_); a band is a leaf's, so
        each row must reach one leaf of one tree (a forest's mean curve, or a row that
        goes down several branches, has none: refused)."""
        if return_conf_int:
            if not return_array:
                raise ValueError("return_conf_int=True needs return_array=True")
            return self._curves_with_bands(X)
        curves = self._curves(X, "survival")
        if return_array:
            return curves
        return np.array([StepFunction(self.unique_times_, c, 1.0) for c in curves], dtype=object)

    def _curves_with_bands(self, X) -> tuple:
        """(S, lower, upper) of every row's leaf (one tree, one leaf per row)."""
        self._check_fitted()
        trees = self._trees()
        if len(trees) != 1:
            raise ValueError(
                "confidence bands are a leaf's Kaplan-Meier band: a forest's averaged curve "
                "has none (a tree's predict_survival_function gives them)"
            )
        tree, target, grid = trees[0], self.composition_.target, self.unique_times_
        state = tree.component_state.get("target", {})
        with self._checked_for_predict(X) as checked:
            rows, nodes, shares = self._mixtures(tree, checked)
            n = checked.shape[0]
        if rows.size != n or not (shares == 1.0).all():
            row = int(np.flatnonzero(np.bincount(rows, minlength=n) != 1)[0])
            raise ValueError(
                f"row {row} of X reaches several leaves (a missing tested value): a band is "
                "one leaf's; give the row's value, or use a propagator that sends it to one "
                "leaf (surrogates)"
            )
        leaf = np.empty(n, dtype=np.int64)
        leaf[rows] = nodes
        reached, position = np.unique(leaf, return_inverse=True)
        curves = target.survival_curves(state, tree, reached, grid)
        lower, upper = target.survival_bands(state, tree, reached, grid)
        return curves[position], lower[position], upper[position]

    def predict_survival_at(self, X, times) -> np.ndarray:
        """Every sample's survival at ``times`` (n x len(times)): the value of its survival
        function (:meth:`predict_survival_function`) at the last training time <= t, 1
        before the first; without a step function per sample. A time past the last
        training time gets the curve's last value, which no row observed: a
        :class:`FollowUpWarning` says so (scikit-survival's step functions refuse such
        times)."""
        times = np.asarray(times, dtype=np.float64).reshape(-1)
        if not np.isfinite(times).all():
            raise ValueError("times must be finite numbers (no NaN or infinity)")
        warn_past_follow_up(times, self.unique_times_)
        survival = self._curves(X, "survival", times)
        survival[:, times < self.unique_times_[0]] = 1.0  # exactly, not a sum of shares
        return survival

    def predict_survival_time(self, X, q: float = 0.5) -> np.ndarray:
        """Every sample's survival time at level ``q`` (0 < q <= 1; 0.5: the median): the
        first time its survival function (:meth:`predict_survival_function`) falls to q or
        below, except where it equals q (within sqrt(machine epsilon)) over an interval,
        where it is that interval's midpoint (the interval at the end of a leaf's curve
        ends at the leaf's last follow-up time); infinity where the curve never reaches
        q. For a sample reaching one leaf, the leaf's Kaplan-Meier quantile as
        ``survival::quantile.survfit`` gives it at ``probs = 1 - q``
        (:func:`~treekit_core.builtins.survival_curves.survival_quantiles`)."""
        if isinstance(q, bool) or not isinstance(q, (int, float, np.floating, np.integer)):
            raise ValueError(f"q must be a number in (0, 1], got {q!r}")
        if not 0.0 < float(q) <= 1.0:
            raise ValueError(f"q must be a number in (0, 1], got {q!r}")
        self._check_fitted()
        grid, trees = self.unique_times_, self._trees()
        with self._checked_for_predict(X) as checked:
            n = checked.shape[0]
            mixtures = [self._mixtures(tree, checked) for tree in trees]  # routed once
            curves = self._mixed_curves(mixtures, "survival", n)
            # the mean over the trees of the latest follow-up among the leaves a row
            # reaches: for a row reaching one leaf of one tree, that leaf's own
            last_time = np.zeros(n)
            for tree, (rows, nodes, _) in zip(trees, mixtures, strict=True):
                state = tree.component_state.get("target", {})
                latest = np.full(n, -np.inf)
                np.maximum.at(latest, rows, last_follow_up(state, nodes, grid, 0.0))
                last_time += latest
            last_time /= len(trees)
        return survival_quantiles(grid, curves, float(q), last_time)

    def node_median_survival(self, tree, nodes) -> np.ndarray:
        """The median survival time of each of ``nodes`` of ``tree`` (one of this model's):
        its own curve's, as :meth:`predict_survival_time` reads a row's."""
        nodes = np.asarray(nodes, dtype=np.int64)
        grid, state = self.unique_times_, tree.component_state.get("target", {})
        curves = self.composition_.target.survival_curves(state, tree, nodes, grid)
        return survival_quantiles(grid, curves, 0.5, last_follow_up(state, nodes, grid, grid[-1]))

    def _leaf_text(self, decimals: int):
        """A leaf's training rows, events (column 0 of both survival targets' statistics),
        median survival time and risk score (what :meth:`predict` gives its rows), as
        rpart's ``print`` and partykit's show a survival tree's nodes."""
        tree = self.tree_
        leaves = np.flatnonzero(tree.is_leaf)
        median = dict(zip(leaves.tolist(), self.node_median_survival(tree, leaves), strict=True))
        risk = dict(zip(leaves.tolist(), self.node_risk_values(tree)[leaves], strict=True))

        def text(node):
            # one risk, or per cause (competing risks: the time lost to each)
            value = np.atleast_1d(risk[node])
            shown = "/".join(f"{v:.{decimals}g}" for v in value)
            return (
                f"n={int(tree.n_samples[node])}, events={tree.statistics[node, 0]:.{decimals}g}, "
                f"median survival={median[node]:.{decimals}g}, "
                + (f"risk={shown}" if value.size == 1 else f"time lost by cause={shown}")
            )

        return text

    def predict(self, X, quantiles=None) -> np.ndarray:
        """The risk score of every sample (higher: riskier): scikit-survival's, the sum of
        its cumulative hazard over the training event times; for rpart's exponential
        method, its leaf's event rate relative to the whole sample (rpart's ``predict``)."""
        if quantiles is not None:
            raise ValueError("a survival tree predicts no quantiles of a response")
        return self._averaged(X, self._mixed_risks)

    def _mixed_risks(self, tree, state, rows, nodes, shares, reached, n) -> np.ndarray:
        """The risk score of each of n samples reaching ``nodes`` of ``tree`` with
        ``shares``: the leaves' risk scores mixed by the shares (a column per score where
        the target gives several: one per cause)."""
        risk = self.composition_.target.risk_scores(state, tree, reached)
        taken = risk[np.searchsorted(reached, nodes)]
        if taken.ndim == 1:
            return np.bincount(rows, weights=shares * taken, minlength=n)
        return np.column_stack(
            [np.bincount(rows, weights=shares * column, minlength=n) for column in taken.T]
        )

    def score(self, X, y, sample_weight=None) -> float:
        """Harrell's concordance index of :meth:`predict` on censored ``y``
        (:func:`concordance_index`). With several causes (the ``competing_risks``
        target): the mean over the causes that occur in ``y`` of each cause's concordance
        (:func:`concordance_index_cause`) of its column of :meth:`predict`."""
        if sample_weight is not None:
            raise ValueError("Harrell's concordance index takes no sample_weight")
        y, entry = split_entry(y)
        if "cumulative_incidence" in self.composition_.target.provides:
            time, code = check_event_codes(y, len(y))
            risk = self.predict(X)
            causes = [k for k in range(1, risk.shape[1] + 1) if (code == k).any()]
            if not causes:
                raise ValueError("y holds no event of a cause the model was fitted on")
            return float(
                np.mean(
                    [
                        concordance_index_cause(time, code, risk[:, k - 1], k, entry=entry)
                        for k in causes
                    ]
                )
            )
        event, time = check_survival_y(y, len(y))
        return concordance_index(event, time, self.predict(X), entry=entry)


def concordance_index_cause(
    time, code, estimate, cause: int, tied_tol: float = 1e-8, entry=None
) -> float:
    """The concordance of a risk score for one cause under competing risks (Wolbers et al.
    2009): over the pairs (i, j) where row i ended in ``cause`` at T_i and row j was still
    free of any event after T_i, or ended in another cause (at any time: it never has this
    one), the share where i's estimate is the higher (ties in the estimate count 1/2).
    Harrell's index (:func:`concordance_index`) with the rows ended by another cause
    followed past every time. ``code``: 0 censored, 1..K the cause; ``entry``: delayed
    entry (a pair counts where the other row had entered by the earlier time)."""
    time = np.asarray(time, dtype=np.float64)
    code = np.asarray(code)
    other = (code > 0) & (code != cause)
    beyond = np.where(other, time.max(initial=0.0) + 1.0, time)
    return concordance_index(code == cause, beyond, estimate, tied_tol, entry=entry)


def concordance_index(
    event, time, estimate, tied_tol: float = 1e-8, weights=None, entry=None
) -> float:
    """Harrell's concordance index, as scikit-survival's ``concordance_index_censored``:
    over the pairs where the earlier time ends in an event (and an event with a censored
    time equal to it), the share whose earlier one has the higher estimate, estimates
    within ``tied_tol`` counting a half. ``weights``: a weight per row for the pairs its
    event opens (Uno's inverse probability of censoring weights; default 1). ``entry``:
    delayed entry; a pair counts only where the later row was at risk at the earlier
    event time (entered before it: its risk set). O(n log n) (a Fenwick tree over the
    estimates' ranks, the times taken from the latest)."""
    weights = np.ones(len(time)) if weights is None else np.asarray(weights, dtype=np.float64)
    event = np.asarray(event, dtype=bool)
    time = np.asarray(time, dtype=np.float64)
    estimate = np.asarray(estimate, dtype=np.float64)
    if not (event.shape == time.shape == estimate.shape == weights.shape and time.ndim == 1):
        raise ValueError(
            f"event, time and estimate must be 1-D of one length; got shapes {event.shape}, "
            f"{time.shape}, {estimate.shape}"
        )
    if not (np.isfinite(estimate).all() and np.isfinite(time).all()):
        raise ValueError("estimate and time must be finite numbers (no NaN or infinity)")
    n = estimate.size
    values = np.sort(estimate)
    position = np.searchsorted(values, estimate, side="left")
    below = np.searchsorted(values, estimate - tied_tol, side="left")
    within = np.searchsorted(values, estimate + tied_tol, side="right")
    counts = np.zeros(n + 1)

    def add(p, value=1.0):
        p += 1
        while p <= n:
            counts[p] += value
            p += p & -p

    def prefix(p):  # entries at positions < p
        total = 0.0
        while p > 0:
            total += counts[p]
            p -= p & -p
        return total

    order = np.argsort(-time, kind="stable")
    entry = np.zeros(n) if entry is None else np.asarray(entry, dtype=np.float64)
    by_entry = np.argsort(-entry, kind="stable")  # rows leave the risk sets, latest entry first
    leaving = 0
    numerator = denominator = 0.0
    inserted = 0
    start = 0
    while start < n:
        end = start
        while end < n and time[order[end]] == time[order[start]]:
            end += 1
        group = order[start:end]
        now = time[group[0]]
        while leaving < n and entry[by_entry[leaving]] > 0 and entry[by_entry[leaving]] >= now:
            j = by_entry[leaving]  # not yet entered at this time (a later time: inserted)
            if time[j] > now:
                add(position[j], -1.0)
                inserted -= 1
            leaving += 1
        for i in group[~event[group]]:  # censored at this time: comparable to its events
            add(position[i])
            inserted += 1
        for i in group[event[group]]:
            lower = prefix(below[i])
            numerator += weights[i] * lower + 0.5 * weights[i] * (prefix(within[i]) - lower)
            denominator += weights[i] * inserted
        for i in group[event[group]]:
            add(position[i])
            inserted += 1
        start = end
    if denominator == 0:
        raise ValueError("no comparable pairs: the concordance index is undefined")
    return numerator / denominator


@document_parameters
class SurvivalTree(SurvivalFamily, SingleTreeEstimator):
    """A survival tree composed from registered components by name.

    ``criterion``: ``logrank`` (the log-rank statistic between the children, LeBlanc and
    Crowley; scikit-survival's ``SurvivalTree``; leaves hold the Nelson-Aalen cumulative
    hazard and the Kaplan-Meier survival of their training rows) or ``exponential``
    (rpart's ``method = "exp"``: its Poisson method on rpart's rescaled time; a leaf's
    rate relative to the whole sample, cumulative hazard the rate times the rescaled time;
    ``prune(cp=...)``, ``pruning_path_`` and ``printcp()`` as rpart's). Defaults are
    scikit-survival's (``min_samples_split=6``, ``min_samples_leaf=3``, unpruned);
    ``pruner="split_complexity"`` prunes a log-rank tree (LeBlanc & Crowley).

    ``fit(X, y, entry=...)`` (or a field ``entry`` of a structured ``y``): delayed entry
    (left truncation): a row is at risk at the times in (entry, time] only, in the
    leaves' curves and in the log-rank search.

    ``target="competing_risks"``: y a time and an event code per row (0 censored, 1..K the
    cause); leaves keep each cause's Aalen-Johansen incidence and cause-specific hazard
    (:meth:`predict_cumulative_incidence`, :meth:`predict_cause_specific_hazard`),
    ``predict`` one column per cause; criterion ``logrank`` splits on any event,
    ``logrank_cause`` (``criterion_params={"cause": k}``) on one cause's log-rank statistic.

    ``fit(X, y)``: y a structured array of (event, time) as ``sksurv.util.Surv`` makes it
    (the boolean field is the event), or two columns (time, event); times >= 0 (> 0 for
    ``exponential``). ``unique_times_`` holds every distinct training time (event or
    censored), ``is_event_time_`` marks those with an event. Missing values go down every
    branch by the training shares (C4.5) or by rpart's surrogates
    (``propagator="surrogate", evaluator="surrogate"``), as for the other targets.
    """

    def __init__(
        self,
        criterion="logrank",
        splitter="exhaustive",
        propagator="hard",
        pruner="none",
        evaluator="hard",
        *,
        target=None,
        target_params=None,
        criterion_params=None,
        splitter_params=None,
        propagator_params=None,
        pruner_params=None,
        evaluator_params=None,
        max_depth=None,
        min_samples_split=6,
        min_samples_leaf=3,
        min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0,
        min_gain=None,
        categorical_features=None,
        random_state=None,
        honest=False,
        honest_fraction=0.5,
        honest_prune_leaves=True,
        n_threads=None,
    ):
        self._store_params(locals())


@document_parameters
class ForestSurvival(SurvivalFamily, EnsembleEstimator):
    """A random survival forest of composed survival trees (scikit-survival's
    ``RandomSurvivalForest``): every tree is grown by the same components on a bootstrap
    sample with ``max_features`` features drawn at every node; the forest's cumulative
    hazard and survival functions are the averages of its trees' (each tree's leaves hold
    the curves of the rows it drew, as weighted by its bootstrap), its risk score the
    average of theirs. ``oob_score=True`` gives ``oob_prediction_`` (each row's risk
    averaged over the trees that did not draw it) and ``oob_score_``, their Harrell's
    concordance. ``max_samples``, ``warm_start``, ``n_jobs`` and the joblib backends as
    the classifier's forest; SurvivalTree's parameters."""

    def __init__(
        self,
        n_estimators=100,
        criterion="logrank",
        splitter="exhaustive",
        propagator="hard",
        pruner="none",
        evaluator="hard",
        *,
        target=None,
        target_params=None,
        criterion_params=None,
        splitter_params=None,
        propagator_params=None,
        pruner_params=None,
        evaluator_params=None,
        max_features="sqrt",
        bootstrap=True,
        max_samples=None,
        oob_score=False,
        warm_start=False,
        max_depth=None,
        min_samples_split=6,
        min_samples_leaf=3,
        min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0,
        min_gain=None,
        categorical_features=None,
        n_jobs=None,
        random_state=None,
        honest=False,
        honest_fraction=0.5,
        honest_prune_leaves=True,
    ):
        self._store_params(locals())

    def fit(self, X, y, sample_weight=None, entry=None):
        """Fit on censored follow-up ``y`` (as :class:`SurvivalTree`, ``entry`` too)."""
        data, weights = self._fit_survival(X, y, sample_weight, entry)
        self._survival_oob(data, y, sample_weight, weights)
        return self

    def _competing_oob(self, y, sample_weight, scored, entry) -> None:
        """The out-of-bag score of a competing-risk forest: the mean over the causes with
        an event among the scored rows of each cause's concordance
        (:func:`concordance_index_cause`) of its out-of-bag column (a callable
        ``oob_score`` is given (event codes, times, predictions))."""
        y, _ = split_entry(y)
        time, code = check_event_codes(y, len(y))
        if sample_weight is not None:  # the rows fit kept (a weight of 0 removes a row)
            positive = np.asarray(sample_weight, dtype=np.float64) > 0
            time, code = time[positive], code[positive]
        time, code, prediction = time[scored], code[scored], self.oob_prediction_[scored]
        if callable(self.oob_score):
            self.oob_score_ = float(self.oob_score(code, time, prediction))
            return
        causes = [k for k in range(1, prediction.shape[1] + 1) if (code == k).any()]
        entry = entry[scored]
        self.oob_score_ = float(
            np.mean(
                [
                    concordance_index_cause(time, code, prediction[:, k - 1], k, entry=entry)
                    for k in causes
                ]
            )
        )

    def _fit_oob_score(self, data, labels, n_strata, draws) -> None:
        """Nothing while the trees grow: the out-of-bag risks need every tree's curves
        (:meth:`_survival_oob` scores them after)."""
        for name in ("oob_score_", "oob_prediction_"):
            if hasattr(self, name):
                delattr(self, name)

    def _survival_oob(self, data, y, sample_weight, weights) -> None:
        if not self.oob_score:
            return
        total, count = None, np.zeros(data.n_samples)
        for tree, tree_weight in zip(self.estimators_, weights, strict=True):
            unseen = np.flatnonzero(tree_weight == 0)
            if unseen.size == 0:
                continue
            rows, nodes, shares = self._mixtures(tree, data.X[unseen])
            state = tree.component_state["target"]
            reached = np.unique(nodes)
            risk = self._mixed_risks(tree, state, rows, nodes, shares, reached, unseen.size)
            if total is None:  # a column per cause where the target gives several
                total = np.zeros((data.n_samples, *risk.shape[1:]))
            total[unseen] += risk
            count[unseen] += 1
        if total is None:
            total = np.zeros(data.n_samples)
        scale = np.maximum(count, 1).reshape(-1, *([1] * (total.ndim - 1)))
        seen = (count > 0).reshape(scale.shape)
        with np.errstate(invalid="ignore"):
            self.oob_prediction_ = np.where(seen, total / scale, np.nan)
        entry = data.evidence[:, 2]  # the rows fit kept: delayed entry (0: none)
        if "cumulative_incidence" in self.composition_.target.provides:
            self._competing_oob(y, sample_weight, count > 0, entry)
            return
        event, time = check_survival_y(y, len(y))
        if sample_weight is not None:  # the rows fit kept (a weight of 0 removes a row)
            positive = np.asarray(sample_weight, dtype=np.float64) > 0
            event, time = event[positive], time[positive]
        scored = count > 0
        if callable(self.oob_score):
            self.oob_score_ = float(
                self.oob_score(event[scored], time[scored], self.oob_prediction_[scored])
            )
            return
        self.oob_score_ = concordance_index(
            event[scored], time[scored], self.oob_prediction_[scored], entry=entry[scored]
        )

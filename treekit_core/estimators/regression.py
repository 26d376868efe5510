"""The regressor family: predict (the target's, or quantiles), score (R^2), the leaves'
training responses that quantiles read."""

from __future__ import annotations

import attrs
import numpy as np

from treekit_core.engine.masses import pair_masses
from treekit_core.engine.tree import narrowest_integers
from treekit_core.estimators.conformal import ConformalIntervals
from treekit_core.estimators.inputs import encode_target_rows
from treekit_core.estimators.memberships import grown_leaf_mixtures


class RegressorFamily(ConformalIntervals):
    """The family of estimators that predict a number (placed before the structure:
    ``class TreeRegressor(RegressorFamily, SingleTreeEstimator)``): ``fit`` on a numeric
    response, ``predict`` the target's prediction or quantiles of the leaves' training
    responses, ``score`` R^2, and scikit-learn's regressor tags. No labeler, confidence,
    rejection, calibration or class weights: there are no classes (the composition's
    labeler and confidence are fixed, :attr:`fixed_components`)."""

    estimator_type = "regressor"
    #: Whether this estimator fits several outputs where its target does (a boosted
    #: regressor does not: one loss per model).
    _several_outputs = True
    fixed_components = {"labeler": "majority", "confidence": "probability"}

    def fit(self, X, y, sample_weight=None, conformal_rows=None):
        """Fit on a numeric response ``y`` (one number per row of X). ``conformal_rows``:
        (X_c, y_c), rows the model does not train on that calibrate
        :meth:`predict_interval` (or the constructor's ``conformal_fraction``)."""
        X, y, sample_weight, held = self._hold_out_conformal_rows(
            X, y, sample_weight, conformal_rows
        )
        shape = np.asarray(y).shape if held is not None else ()
        if len(shape) == 2 and shape[1] > 1:
            target = self._make_composition().target
            outputs = target.responses(target.encode(y, shape[0]).rows)
            if outputs is not None and outputs.ndim == 2:
                raise ValueError(
                    f"conformal rows calibrate intervals of one output; y has "
                    f"{outputs.shape[1]} (fit one model per output to calibrate intervals)"
                )
        data = self._fit_checked(X, y, sample_weight)
        self._keep_leaf_responses(data, self._tree_weights(data))
        self._keep_conformal_rows(held)
        return self

    def _validate_training(self, X, y, sample_weight, composition, **target_arguments):
        data, classes = super()._validate_training(
            X, y, sample_weight, composition, **target_arguments
        )
        # every tree's training rows' leaves are asked for after growth (quantiles:
        # _keep_leaf_responses), where the target gives responses
        data.training_leaves_wanted = composition.target.responses(data.evidence[:1]) is not None
        return data, classes

    @property
    def n_outputs_(self) -> int:
        """How many numbers ``predict`` returns per row (scikit-learn's ``n_outputs_``): k
        for a y of k outputs (``predict`` then returns n x k), else 1."""
        self._check_fitted()
        tree = self._trees()[0]
        predicted = self.composition_.target.predictions(
            tree.value[:1], np.zeros(1, dtype=np.int64), None
        )
        return 1 if np.ndim(predicted) == 1 else int(np.shape(predicted)[1])

    def _check_target(self, composition) -> None:
        super()._check_target(composition)
        if composition.target.predicts_labels():
            raise ValueError(
                f"{type(self).__name__} predicts a number, but criterion "
                f"{composition.criterion.name!r} reads class labels (its target is "
                f"{composition.target.name!r}); use a regression criterion such as "
                "'squared_error', or the classifier"
            )

    def _fitted_without_rows(self) -> None:
        # quantiles need the training rows: a grower that sees them in parts keeps them
        # afterwards (keep_leaf_response_masses)
        self._leaf_responses = None

    def _target_predictions(self, X) -> np.ndarray:
        """The target's predictions from the values the evaluator mixes (the means of a
        leaf, say), averaged over the trees."""
        with self._checked_for_predict(X) as checked:
            return self._predict_checked(checked)

    def _predict_checked(self, checked) -> np.ndarray:
        """The target's predictions of checked X."""
        values = self._node_values(checked)
        composition = self.composition_
        decision = composition.target.decide(values, composition.labeler)
        return composition.target.predictions(values, decision, None)

    def predict(self, X, quantiles=None, interpolation="inverted_cdf") -> np.ndarray:
        """The prediction for every sample: its leaf's (the mixture of the leaves it
        reaches, where routing splits it), or with ``quantiles`` (numbers in [0, 1]) an
        (n, len(quantiles)) array of the weighted quantiles of the training responses of
        the leaf the sample reaches (a forest: of every tree's leaf, each tree's rows
        weighted by their bootstrap weight over their leaf's, averaged over the trees:
        Meinshausen's quantile regression forest). The quantile is the smallest training
        response whose cumulative weight share reaches q (with unit weights numpy's
        ``method="inverted_cdf"``). Where a sample reaches several leaves (a missing tested
        value and C4.5's shares; soft evaluation), every leaf's rows are weighted by the
        leaf's share in the sample's mixture, as its mean mixes the leaves' means. A
        training row is counted in the leaves hard routing sends it to, with C4.5's shares
        for a missing value (the node rpart's surrogates send it to, with them).

        ``interpolation``: ``"inverted_cdf"`` (the default, above), or quantile-forest's
        ``"linear"`` (its default), ``"lower"``, ``"higher"``, ``"midpoint"``,
        ``"nearest"`` (:func:`weighted_quantiles`): with these the weights are scaled to
        the number of training rows in the sample's leaves, as quantile-forest's
        ``weighted_leaves=True`` weighs them, and the quantiles equal its
        ``RandomForestQuantileRegressor(bootstrap=False, max_samples_leaf=None)``'s on the
        same trees."""
        self._check_fitted()
        if quantiles is None:
            return self._target_predictions(X)
        q = check_quantiles(quantiles)
        check_interpolation(interpolation)
        training = getattr(self, "_leaf_responses", None)
        if training is None:
            raise ValueError(
                "quantiles need the training responses of the leaves, which this model does "
                "not hold (a model read from a JSON file written without "
                "to_json(leaf_responses=True), or its target gives no responses): refit it, "
                "or keep it with to_json(leaf_responses=True) or pickle"
            )
        with self._checked_for_predict(X) as checked:
            if training[0].responses.ndim == 1:
                return self._quantiles(checked, q, training, interpolation)
            # several outputs: (n, k, len(q)), each output's quantiles from its column of
            # the training responses (quantile-forest's layout)
            return np.stack(
                [
                    self._quantiles(checked, q, [m.of_output(j) for m in training], interpolation)
                    for j in range(training[0].responses.shape[1])
                ],
                axis=1,
            )

    def _keep_leaf_responses(self, data, tree_weights) -> None:
        """Remember, per tree, every training row's share in each leaf hard routing sends
        it to (C4.5's shares for a missing value; the node rpart's surrogates send it to),
        times its weight in that tree, grouped by node (what quantiles read). Rows of
        weight 0 in a tree (out of its bootstrap) are left out. Per tree this keeps 4 bytes
        per training row it holds (the row), 8 more where some share is not 1, and 8 per
        node; the response column is shared by the trees."""
        from treekit_core.kernels.tree_sums import group_by_node

        self._leaf_responses = None
        responses = self.composition_.target.responses(data.evidence)
        if responses is None:
            return  # predict(quantiles=...) says why
        members = []
        for tree, weights in zip(self._trees(), tree_weights, strict=True):
            rows, nodes, shares = self._grown_memberships(tree, data, weights)
            order, starts = group_by_node(np.asarray(nodes, dtype=np.int64), tree.n_nodes)
            shares = shares[order]
            members.append(
                LeafMembers(
                    responses,
                    rows[order].astype(np.int32),
                    None if np.all(shares == 1.0) else shares,
                    starts,
                )
            )
        self._leaf_responses = members

    def leaf_response_masses(self, X, y, sample_weight=None) -> list:
        """Per tree, (nodes, responses, weights): every distinct (leaf, response) pair of
        the rows of (X, y), counted in the leaves as quantiles count training rows (hard
        routing; C4.5's shares for a missing value), with its summed share x weight
        (``sample_weight``, default 1); nodes are int32, sorted; weights is None where
        every one is 1 (the pairs then take 12 bytes each). Called by growers that see the
        data in parts, on each part (treekit-dask), before
        :meth:`keep_leaf_response_masses`."""
        self._check_fitted()
        target = self.composition_.target
        y = np.asarray(y)
        responses = target.responses(encode_target_rows(target, y))
        if responses is None:
            raise ValueError(
                f"target {target.name!r} gives no responses, so its predictions have no quantiles"
            )
        if responses.ndim != 1:
            raise ValueError(
                f"leaf response masses pair a leaf with one response; y has "
                f"{responses.shape[1]} outputs (fit the model on the whole data to keep the "
                "quantiles of several outputs)"
            )
        weight = np.ones(y.shape[0]) if sample_weight is None else np.asarray(sample_weight)
        found = []
        with self._checked_for_predict(X) as checked:
            for tree in self._trees():
                rows, nodes, shares = self._training_memberships(tree, checked, weight)
                nodes, values, weights = response_masses(nodes, responses[rows], shares)
                unit = np.all(weights == 1.0)
                found.append((nodes.astype(np.int32), values, None if unit else weights))
        return found

    def _grown_memberships(self, tree, data, weights):
        """:meth:`_training_memberships` of the training rows, their leaves from the
        growth where the splitter can say them (:func:`grown_leaf_mixtures`: a tenth of a
        histogram tree's fit at 1M rows is the walk)."""
        rows, nodes, shares = grown_leaf_mixtures(self.composition_, tree, data)
        shares = weights[rows] if shares is None else shares * weights[rows]
        kept = shares > 0
        return rows[kept], nodes[kept], shares[kept]

    def _training_memberships(self, tree, X, weights):
        """(rows, nodes, shares) of the rows of X in the leaves quantiles count them in
        (:meth:`_mixtures` for training rows), each share times the row's ``weights``,
        rows of no weight there left out."""
        rows, nodes, shares = self._mixtures(tree, X, training=True)
        shares = shares * weights[rows]
        kept = shares > 0
        return rows[kept], nodes[kept], shares[kept]

    def leaf_response_counts(self, masses) -> list:
        """Per tree, how many of one part's :meth:`leaf_response_masses` pairs each node
        holds: summed over the parts, the ``node_counts`` of
        :meth:`keep_leaf_response_masses` (a grower that sees the data in parts counts on
        its workers, where the pairs stay until the client asks for them)."""
        trees = self._trees()
        return [
            np.bincount(nodes, minlength=tree.n_nodes)
            for (nodes, _, _), tree in zip(_checked_part(masses, trees), trees, strict=True)
        ]

    def keep_leaf_response_masses(self, parts, node_counts=None) -> None:
        """Keep what ``predict(X, quantiles=...)`` reads from the parts'
        :meth:`leaf_response_masses` (an iterable of them, one per part of the training
        rows), every pair standing for its rows: the quantiles of ``fit``. ``node_counts``
        (per tree, the pairs each node gets, :meth:`leaf_response_counts` summed over the
        parts) lets the parts be read once, as they
        arrive, each written in place and dropped: the client holds the kept pairs (8
        bytes each, 16 where some weight is not 1) and one part at a time. Without it the
        parts are read twice (give a list). Called by growers that see the data in parts,
        after ``fit_grown_tree``."""
        trees = self._trees()
        if node_counts is None:
            parts = list(parts)
            per_part = [self.leaf_response_counts(part) for part in parts]
            node_counts = [sum(counts[t] for counts in per_part) for t in range(len(trees))]
        if len(node_counts) != len(trees):
            raise ValueError(
                f"node counts for {len(node_counts)} trees; the model has {len(trees)}"
            )
        starts, values, weights, cursor = [], [], [], []
        for tree, counts in zip(trees, node_counts, strict=True):
            counts = np.asarray(counts, dtype=np.int64)
            if counts.shape != (tree.n_nodes,) or (counts < 0).any():
                raise ValueError(f"node counts must be {tree.n_nodes} counts >= 0 per tree")
            starts.append(np.concatenate([[0], np.cumsum(counts)]))
            values.append(np.empty(int(starts[-1][-1])))
            weights.append(None)
            cursor.append(starts[-1][:-1].copy())
        for part in parts:
            for t, (nodes, responses, masses) in enumerate(_checked_part(part, trees)):
                # a part's pairs are sorted by node: each node's run goes to the next free
                # slots of that node
                nodes = np.asarray(nodes, dtype=np.int64)
                run_start = np.searchsorted(nodes, nodes, side="left")
                slot = cursor[t][nodes] + (np.arange(nodes.size) - run_start)
                if nodes.size and (slot >= starts[t][nodes + 1]).any():
                    raise ValueError("leaf response masses hold more pairs than node_counts")
                values[t][slot] = responses
                if masses is not None and weights[t] is None:
                    weights[t] = np.ones(values[t].size)
                if weights[t] is not None:
                    weights[t][slot] = 1.0 if masses is None else masses
                np.add.at(cursor[t], nodes, 1)
        if any((c != s[1:]).any() for c, s in zip(cursor, starts, strict=True)):
            raise ValueError("leaf response masses hold fewer pairs than node_counts")
        self._leaf_responses = [
            LeafMembers(v, None, w, s) for v, w, s in zip(values, weights, starts, strict=True)
        ]

    def _quantiles(self, X, q, members, interpolation="inverted_cdf", compiled=True):
        """Per row of checked X, the weighted quantiles ``q`` of the training responses
        of the leaves it reaches (:meth:`predict`); ``compiled``: rows reaching one leaf
        per tree go to the compiled kernel (False: every row walks the Python loop, the
        reference the kernel is tested against)."""
        trees = self._trees()
        n = X.shape[0]
        mixtures = []
        for tree in trees:
            rows, nodes, shares = self._mixtures(tree, X)
            mixtures.append((np.searchsorted(rows, np.arange(n + 1)), nodes, shares))
        one_leaf = all(
            nodes.shape[0] == n and (shares == 1.0).all() for _, nodes, shares in mixtures
        )
        if compiled and one_leaf and interpolation == "inverted_cdf" and n:
            return compiled_quantiles([nodes for _, nodes, _ in mixtures], members, q)
        out = np.empty((n, q.size))
        for i in range(n):
            chosen, weights, ids, count = [], [], [], 0.0
            for member, (bounds, nodes, shares) in zip(members, mixtures, strict=True):
                for k in range(bounds[i], bounds[i + 1]):
                    values, w, rows = member.of(nodes[k])
                    total = w.sum()
                    if total > 0:
                        chosen.append(values)
                        weights.append(w * (shares[k] / (total * len(trees))))
                        ids.append(rows)
                        count += total
            if not chosen:
                out[i] = np.nan
                continue
            values, weights = np.concatenate(chosen), np.concatenate(weights)
            if interpolation != "inverted_cdf":
                # quantile-forest's weighted_leaves: a row weighs (the rows in the
                # sample's leaves) / (its leaf's rows x the trees), summed over the trees
                # (the same shares, summing to the rows reached: its interpolation reads
                # each row's total weight)
                weights = weights * count
                if all(r is not None for r in ids):
                    rows, first, inverse = np.unique(
                        np.concatenate(ids), return_index=True, return_inverse=True
                    )
                    values = values[first]
                    weights = np.bincount(inverse, weights=weights, minlength=rows.size)
            out[i] = weighted_quantiles(values, weights, q, interpolation)
        return out

    def _leaf_text(self, decimals: int):
        """A leaf's value, its training rows and, where the target has a node risk, its
        deviance (what rpart's ``print`` shows of a node: n, deviance, yval)."""
        tree, target = self.tree_, self.composition_.target
        risk = None
        if "node_risk" in target.provides:
            risk = target.node_risk(tree.statistics, tree.weight, self.composition_.labeler)

        def text(node):
            value = ", ".join(f"{v:.{decimals}f}" for v in tree.value[node])
            deviance = "" if risk is None else f", deviance={risk[node]:.{decimals}g}"
            return f"value: [{value}]  (n={int(tree.n_samples[node])}{deviance})"

        return text

    def score(self, X, y, sample_weight=None) -> float:
        """The coefficient of determination R^2 of ``predict(X)`` (:func:`r2_score`)
        against the observed response: y itself, or, for a y of several columns (rpart's
        ``cbind(time, events)``), each row's response as the target reads it (the observed
        rate events / time)."""
        predicted = self.predict(X)
        array = np.asarray(y)
        if array.ndim == 2 and array.shape[1] > 1 and predicted.ndim == 1:
            target = self.composition_.target
            truth = target.observed(target.encode(y, predicted.shape[0]).rows)
            if truth is None:
                raise ValueError(
                    f"y has {array.shape[1]} columns and target {target.name!r} gives no one "
                    "response per row to score predict(X) against"
                )
        else:
            truth = np.asarray(y, dtype=np.float64).reshape(predicted.shape)
        return r2_score(truth, predicted, sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            target = self._make_composition().target
        except Exception:  # an unknown component: fit will say so
            return tags
        tags.target_tags.positive_only = target.nonnegative_response
        tags.target_tags.multi_output = target.several_outputs and self._several_outputs
        return tags


def r2_score(truth, predicted, weight=None) -> float:
    """The coefficient of determination, scikit-learn's ``r2_score``: 1 - SSE / SST, both
    weighted by ``weight``; for a constant ``truth``, 1.0 when predicted exactly, else 0.0.
    For several outputs (n x k) the mean of the outputs' (scikit-learn's
    ``multioutput="uniform_average"``)."""
    truth, predicted = np.asarray(truth, dtype=np.float64), np.asarray(predicted, float)
    if truth.ndim == 2:
        return float(
            np.mean([r2_score(truth[:, j], predicted[:, j], weight) for j in range(truth.shape[1])])
        )
    weight = np.ones_like(truth) if weight is None else np.asarray(weight, dtype=np.float64)
    residual = float(np.sum(weight * (truth - predicted) ** 2))
    centre = float(np.average(truth, weights=weight))
    total = float(np.sum(weight * (truth - centre) ** 2))
    if total == 0.0:
        return 1.0 if residual == 0.0 else 0.0
    return 1.0 - residual / total


def check_quantiles(quantiles) -> np.ndarray:
    """``quantiles`` as a 1-D float array in [0, 1], or ValueError naming the parameter."""
    try:
        q = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
    except (TypeError, ValueError):
        raise ValueError(f"quantiles must be numbers in [0, 1], got {quantiles!r}") from None
    if (
        q.ndim != 1
        or q.size == 0
        or not (np.isfinite(q).all() and (q >= 0).all() and (q <= 1).all())
    ):
        raise ValueError(f"quantiles must be numbers in [0, 1], got {quantiles!r}")
    return q


@attrs.frozen(eq=False)
class LeafMembers:
    """A tree's training responses grouped by the node whose leaf holds them: entries
    ``starts[node]:starts[node + 1]``; entry k is ``responses[rows[k]]`` (``rows`` None:
    ``responses[k]``) with weight ``shares[k]`` (``shares`` None: 1)."""

    responses: np.ndarray
    rows: np.ndarray | None
    shares: np.ndarray | None = attrs.field(converter=lambda v: compact_weights(v))
    starts: np.ndarray = attrs.field(converter=lambda v: compact_offsets(v))

    def __getstate__(self) -> dict:
        """A pickle keeps each node's number of entries in the narrowest integer type
        (a byte where no leaf holds more than 127: a forest's leaves hold a few rows), not
        the int64 offsets: 1 byte a node instead of 8 (issue 59)."""
        return {
            "responses": self.responses,
            "rows": self.rows,
            "shares": self.shares,  # a bootstrap's counts: held as small integers already
            "counts": narrowest_integers(np.diff(self.starts)),
        }

    def __setstate__(self, state) -> None:
        if isinstance(state, tuple):  # attrs' state before 22.2: the fields in order
            state = dict(zip(("responses", "rows", "shares", "starts"), state, strict=True))
        if "counts" in state:
            counts = np.asarray(state["counts"], dtype=np.int64)
            shares = state["shares"]
            state = {**state, "starts": np.concatenate([[0], np.cumsum(counts)]), "shares": shares}
        state["shares"] = compact_weights(state["shares"])
        state["starts"] = compact_offsets(state["starts"])
        for name in ("responses", "rows", "shares", "starts"):
            object.__setattr__(self, name, state[name])

    def of_output(self, output: int) -> LeafMembers:
        """The members of one output of responses held as several (a column each)."""
        return LeafMembers(self.responses[:, output], self.rows, self.shares, self.starts)

    def of(self, node: int) -> tuple:
        """(responses, weights, training rows or None) of the entries of ``node``."""
        lo, hi = int(self.starts[node]), int(self.starts[node + 1])
        rows = None if self.rows is None else self.rows[lo:hi]
        values = self.responses[lo:hi] if rows is None else self.responses[rows]
        weights = np.ones(hi - lo) if self.shares is None else self.shares[lo:hi].astype(float)
        return values, weights, rows


def compact_weights(weights):
    """A tree's weights of its kept training rows as held (issue 59): a bootstrap's counts
    (whole numbers) in the narrowest integer type, a byte each; other weights as float64."""
    if weights is None:
        return None
    weights = np.asarray(weights)
    if weights.dtype.kind in "iu":
        return narrowest_integers(weights)
    weights = np.asarray(weights, dtype=np.float64)
    whole = weights.size and np.array_equal(weights, np.round(weights))
    if whole and -(2**31) <= weights.min() and weights.max() < 2**31:
        return narrowest_integers(weights)
    return weights


def compact_offsets(starts) -> np.ndarray:
    """Offsets into a tree's kept rows, int32 where they fit (4 bytes a node)."""
    starts = np.asarray(starts)
    if starts.size and starts[-1] < 2**31:
        return starts.astype(np.int32, copy=False)
    return starts.astype(np.int64, copy=False)


def compiled_quantiles(leaves, members, q) -> np.ndarray:
    """:meth:`RegressorFamily._quantiles` with ``"inverted_cdf"`` where every row reaches
    one leaf per tree (``leaves``: per tree, each row's leaf), in the compiled kernel
    (``kernels/leaf_quantiles.py``), rows in chunks on threads: every tree's entries packed
    into one array with per-tree node offsets."""
    from treekit_core.kernels.leaf_quantiles import leaf_quantiles
    from treekit_core.kernels.row_chunks import for_row_chunks

    values, weights, starts, offsets, entries, nodes = [], [], [], [], 0, 0
    for member in members:
        rows = member.rows
        values.append(member.responses if rows is None else member.responses[rows])
        size = values[-1].shape[0]
        weights.append(np.ones(size) if member.shares is None else member.shares.astype(float))
        starts.append(np.asarray(member.starts, dtype=np.int64) + entries)
        offsets.append(nodes)
        entries += size
        nodes += member.starts.shape[0]
    leaves = np.ascontiguousarray(np.column_stack(leaves), dtype=np.int64)
    out = np.empty((leaves.shape[0], q.size))
    arguments = (
        leaves,
        np.asarray(offsets, dtype=np.int64),
        np.concatenate(starts),
        np.ascontiguousarray(np.concatenate(values), dtype=np.float64),
        np.concatenate(weights),
        np.ascontiguousarray(q, dtype=np.float64),
        out,
    )
    for_row_chunks(leaf_quantiles, leaves.shape[0], *arguments, cost=float(len(members)) * 20)
    return out


def _checked_part(part, trees) -> list:
    """One part's :meth:`RegressionEstimator.leaf_response_masses`, checked against the
    model's trees (one (nodes, responses, weights) per tree, nodes sorted and in range)."""
    if len(part) != len(trees):
        raise ValueError(f"masses for {len(part)} trees; the model has {len(trees)}")
    for (nodes, responses, weights), tree in zip(part, trees, strict=True):
        nodes = np.asarray(nodes)
        if (
            nodes.ndim != 1
            or np.shape(responses) != nodes.shape
            or (weights is not None and np.shape(weights) != nodes.shape)
        ):
            raise ValueError("leaf response masses: nodes, responses and weights differ in length")
        if nodes.size and not (
            0 <= nodes.min() and nodes.max() < tree.n_nodes and (np.diff(nodes) >= 0).all()
        ):
            raise ValueError(
                "leaf response masses name a node the tree does not have, or are not sorted by node"
            )
    return part


def response_masses(nodes, responses, weights) -> tuple:
    """(nodes, responses, summed weights): every distinct (node, response) pair once, sorted
    by node, then response, which is all the weighted quantiles of a node read."""
    return pair_masses(
        np.asarray(nodes, dtype=np.int64), np.asarray(responses, dtype=np.float64), weights
    )


#: ``predict(X, quantiles=..., interpolation=...)``'s choices: treekit's default, then
#: quantile-forest's.
INTERPOLATIONS = ("inverted_cdf", "linear", "lower", "higher", "midpoint", "nearest")


def check_interpolation(interpolation) -> None:
    if interpolation not in INTERPOLATIONS:
        raise ValueError(
            f"interpolation must be one of {', '.join(map(repr, INTERPOLATIONS))}, got "
            f"{interpolation!r}"
        )


def weighted_quantiles(values, weights, q, interpolation="inverted_cdf") -> np.ndarray:
    """The weighted quantiles ``q`` of ``values`` (sorted here). ``"inverted_cdf"``: the
    smallest value whose cumulative weight share reaches each q (with unit weights,
    numpy's ``np.quantile(values, q, method="inverted_cdf")``). The others are
    quantile-forest's ``calc_weighted_quantile`` (:func:`interpolated_quantile`)."""
    order = np.argsort(values, kind="stable")
    if interpolation != "inverted_cdf":
        return interpolated_quantiles(values[order], weights[order], q, interpolation)
    values, cumulative = values[order], np.cumsum(weights[order])
    total = cumulative[-1]
    # the first index whose share reaches q; a relative 1e-12 absorbs the sums' rounding
    index = np.searchsorted(cumulative, q * total * (1 - 1e-12), side="left")
    return values[np.minimum(index, values.size - 1)]


def interpolated_quantiles(values, weights, q, interpolation) -> np.ndarray:
    """quantile-forest 1.4's ``calc_weighted_quantile`` (C = 1), on ``values`` sorted
    ascending with their ``weights`` (> 0; integer weights count as repeated rows): the
    position p = q (W - 1) + 1 on the cumulative weights W_j; the floor is the last value
    whose cumulative weight p reaches, the ceiling the next; between them their
    proportions (W - 1) / (W_total - 1) (the ceiling's moved to its first repeat,
    ``(p_ceil - p_floor) / w_ceil`` past the floor) place q, and ``interpolation`` says
    what lies between: ``"linear"`` the straight line, ``"lower"`` / ``"higher"`` the
    floor / ceiling, ``"midpoint"`` their mean, ``"nearest"`` the nearer (on a tie, the
    floor where its cumulative weight is odd)."""
    n = values.size
    out = np.empty(q.size)
    cumulative = np.cumsum(weights)
    f = cumulative[-1] + 1.0 - 2.0  # quantile-forest's W + 1 - 2C, rounded as it rounds
    for i, quantile in enumerate(q):
        p = quantile * f + 1.0
        # the last index whose cumulative weight p reaches (quantile-forest's loop from 0)
        floor = max(int(np.searchsorted(cumulative, p, side="right")) - 1, 0)
        ceil = min(floor + 1, n - 1)
        if floor >= n - 1:
            out[i] = values[n - 1]
            continue
        v_floor, v_ceil = values[floor], values[ceil]
        if v_floor == v_ceil:
            out[i] = v_floor
            continue
        p_floor = min(quantile, (cumulative[floor] - 1.0) / f)
        p_ceil = max(quantile, (cumulative[ceil] - 1.0) / f)
        p_ceil = p_floor + (p_ceil - p_floor) / weights[ceil]
        if quantile >= p_ceil:
            out[i] = v_ceil
            continue
        frac = (quantile - p_floor) / (p_ceil - p_floor)
        if frac <= 0:
            out[i] = v_floor
        elif frac >= 1:
            out[i] = v_ceil
        elif interpolation == "lower":
            out[i] = v_floor
        elif interpolation == "higher":
            out[i] = v_ceil
        elif interpolation == "midpoint":
            out[i] = 0.5 * (v_floor + v_ceil)
        elif interpolation == "nearest":
            if abs(frac - 0.5) < 1e-16:
                out[i] = v_floor if cumulative[floor] % 2 else v_ceil
            else:
                out[i] = v_floor if frac < 0.5 else v_ceil
        else:
            out[i] = v_floor + frac * (v_ceil - v_floor)
    return out

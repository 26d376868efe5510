"""DaskTreeClassifier and DaskTreeRegressor: one histogram tree grown over a Dask cluster's
partitions (lightgbm.dask's and xgboost.dask's conventions: the user's ``Client``, Dask
collections in, Dask collections out, ``to_local()`` for the ordinary fitted estimator)."""

from __future__ import annotations

import numpy as np
from treekit_histogram.binning import MAX_BINS, edge_table, edges_from_counts

from treekit_core import (
    MAX_TOTAL_WEIGHT,
    CalibrationRule,
    CompositionError,
    OutOfFold,
    ParamsMixin,
    RejectRule,
    TrainingData,
    Tree,
    TreeClassifier,
    TreeRegressor,
    category_levels,
    class_weights,
    document_parameters,
    get_registry,
    resolve_categorical,
)
from treekit_dask import partitions
from treekit_dask.growth import Grower

#: Pruners that need no training rows after growth (cost-complexity from node sums).
ROWLESS_PRUNERS = ("none", "cost_complexity")


def _is_dask(obj) -> bool:
    return hasattr(obj, "dask") and hasattr(obj, "__dask_graph__")


def _client(client):
    if client is not None:
        return client
    from distributed import get_client

    try:
        return get_client()
    except ValueError:
        raise ValueError(
            "no Dask client: create one (distributed.Client(...)) or pass client=..."
        ) from None


class DaskTreeMixin(ParamsMixin):
    """What the two Dask estimators share: the local estimator that names the composition
    (its family's: the Dask estimator's ``estimator_type`` and tags are the local class's),
    the partitions, the growth and prediction. Parameters and scikit-learn's tags as the
    core's estimators (:class:`treekit_core.ParamsMixin`)."""

    local_class = TreeClassifier

    @property
    def estimator_type(self):
        return self.local_class.estimator_type

    def _input_tags(self) -> dict:
        """What X may hold: what the local estimator accepts."""
        return self._local()._input_tags()

    def _local(self):
        """The in-memory estimator with these parameters and the histogram splitter: what
        ``to_local()`` returns fitted."""
        # rejection and calibration are fitted after the tree, from scores the workers sum
        fixed = ("client", "max_bins", "splitter", "propagator", "reject", "calibration")
        fixed += ("keep_leaf_responses",)
        params = {n: v for n, v in self.get_params().items() if n not in fixed}
        return self.local_class(
            splitter="histogram",
            splitter_params={"max_bins": self.max_bins},
            propagator="hard",
            **params,
        )

    def _refuse(self, local, composition) -> None:
        for kind, only in (("splitter", "histogram"), ("propagator", "hard")):
            given = getattr(self, kind)
            if given != only:
                name = given if isinstance(given, str) else getattr(given, "name", given)
                raise CompositionError(
                    f"{kind} {name!r} cannot grow a tree over partitions: the Dask estimators "
                    f"grow the {only!r} {kind}'s tree (its histograms add up across "
                    "partitions); use the in-memory estimators for other compositions"
                )
        if not isinstance(self.max_bins, int) or not 2 <= self.max_bins <= MAX_BINS:
            raise ValueError(f"max_bins must be an int from 2 to {MAX_BINS}, got {self.max_bins!r}")
        composition.check_finish_without_rows()
        pruner = composition.pruner
        if pruner.name not in ROWLESS_PRUNERS:
            raise CompositionError(
                f"pruner {pruner.name!r} cannot prune a tree grown over partitions: it needs "
                "the training rows after growth; use 'none' or 'cost_complexity' (with an "
                "alpha, or cv folds grown over the cluster in the same passes)"
            )

    # -- inputs --------------------------------------------------------------------
    @staticmethod
    def _partitions(X, y, sample_weight, categorical_features=None):
        """(delayed X parts, delayed y parts, delayed weight parts or Nones, feature names,
        nominal feature indices) of Dask (or in-memory) inputs, aligned by partition."""
        import dask.array as da

        if not _is_dask(X):
            X = da.from_array(np.asarray(X), chunks=(max(1, len(X) // 4), -1))
        if hasattr(X, "columns"):  # a Dask DataFrame
            names = [str(c) for c in X.columns]
            x_parts = list(X.to_delayed())
            rows = None
        else:
            if X.ndim != 2:
                raise ValueError(f"X must be 2-D, got {X.ndim} dimensions")
            X = X.rechunk({1: -1})
            names = None
            x_parts = list(X.to_delayed().ravel())
            rows = X.chunks[0]
        # nominal columns as fit finds them, from X's empty meta (its columns and dtypes)
        meta = X._meta if names is not None else np.empty((0, X.shape[1]), dtype=X.dtype)
        nominal = resolve_categorical(categorical_features, meta, names)

        def split(v, what):
            if v is None:
                return [None] * len(x_parts)
            if not _is_dask(v):
                v = np.asarray(v)
                if rows is None:
                    raise ValueError(f"{what} must be a Dask collection when X is a DataFrame")
                v = da.from_array(v, chunks=(rows,) + v.shape[1:])
            elif rows is not None and hasattr(v, "rechunk"):
                v = v.rechunk((rows,) + tuple(-1 for _ in v.shape[1:]))
            parts = list(v.to_delayed().ravel()) if hasattr(v, "chunks") else list(v.to_delayed())
            if len(parts) != len(x_parts):
                raise ValueError(
                    f"{what} has {len(parts)} partitions, X {len(x_parts)}: they must be aligned"
                )
            return parts

        return x_parts, split(y, "y"), split(sample_weight, "sample_weight"), names, nominal

    # -- fit -----------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None):
        """Grow the tree over the partitions of X (a Dask array or DataFrame; category
        columns are nominal) and y (and sample_weight), then finish it as ``fit`` does.
        A worker lost mid-fit has its tasks run again by Dask; a task that keeps killing
        workers fails the fit with a RuntimeError saying so."""
        from distributed import KilledWorker

        try:
            return self._fit(X, y, sample_weight)
        except KilledWorker as error:
            raise RuntimeError(
                f"the Dask fit of {type(self).__name__} failed: a task killed every worker "
                f"that ran it ({error}); a worker out of memory is the usual cause: smaller "
                "chunks, more memory per worker, or fewer features per partition"
            ) from None

    def _fit(self, X, y, sample_weight):
        import dask

        client = _client(self.client)
        local = self._local()
        composition = local.make_composition()
        self._refuse(local, composition)
        target = composition.target
        if target.decides_with_labeler and len(getattr(y, "shape", ())) == 2 and y.shape[1] > 1:
            raise ValueError(
                f"y has {y.shape[1]} columns of class labels; {type(self).__name__} takes one "
                "(a local TreeClassifier takes several outputs: fit one on a sample, or one "
                "Dask tree per column)"
            )
        x_parts, y_parts, w_parts, names, nominal = self._partitions(
            X, y, sample_weight, self.categorical_features
        )

        # pass 1: what binning, categories and classes need, from every partition
        summaries = client.gather(
            client.compute(
                [dask.delayed(partitions.summarise)(p, set(nominal), names) for p in x_parts]
            )
        )
        d = len(summaries[0][0])
        # the constraints resolved against the columns, as fit resolves them
        composition.constraints = local.make_composition(d, names).constraints
        categories = self._categories(summaries, nominal, names)
        edges, n_value_bins = self._edges(summaries, d)
        classes = None
        if target.decides_with_labeler:
            labels = client.gather(client.compute([dask.delayed(np.unique)(p) for p in y_parts]))
            classes = np.unique(np.concatenate(labels))
        class_weight = getattr(self, "class_weight", None)
        if class_weight is not None and classes is None:
            raise ValueError(
                f"class_weight weighs classes, and target {target.name!r} decides among none; "
                "weight the rows with sample_weight"
            )
        # cost-complexity without an alpha: its cv folds' trees grow in the same passes
        pruner = composition.pruner
        n_folds = int(pruner.cv) if getattr(pruner, "alpha", 0.0) is None else 0
        evaluator = composition.evaluator
        if n_folds and "hard_routing" not in evaluator.provides:
            raise CompositionError(
                f"evaluator {evaluator.name!r} mixes leaves, and the workers sum the held-out "
                "losses of cross-validated pruning where each row stops (hard routing): "
                "give the pruner an alpha, or an evaluator that routes hard"
            )
        # rejection and calibration by cross-validation: a copy of the fit per outer fold,
        # grown in the same passes (one family of outer folds per (cv, seed) asked)
        reject = RejectRule.from_param(getattr(self, "reject", None))
        calibration = CalibrationRule.from_param(getattr(self, "calibration", None))
        outer = []
        if reject is not None and reject.threshold is None and reject.cv is not None:
            outer.append((int(reject.cv), int(reject.seed)))
        if calibration is not None and (calibration.cv, calibration.seed) not in outer:
            outer.append((int(calibration.cv), int(calibration.seed)))
        specs = partitions.tree_specs(n_folds, outer)
        first_rows = np.concatenate([[0], np.cumsum([s[2] for s in summaries])[:-1]])
        # pass 2: the partitions binned, encoded and kept on the workers
        parts = client.compute(
            [
                dask.delayed(partitions.load)(
                    xp,
                    yp,
                    wp,
                    edges,
                    self.max_bins,
                    categories,
                    target,
                    classes,
                    int(first),
                    n_folds,
                    composition.labeler if class_weight is not None else None,
                    outer,
                )
                for xp, yp, wp, first in zip(x_parts, y_parts, w_parts, first_rows, strict=True)
            ]
        )
        if class_weight is not None:  # scikit-learn's, from every partition's class counts
            counts = client.gather(
                client.submit(
                    partitions.add,
                    *[
                        client.submit(partitions.class_counts, p, len(classes), pure=False)
                        for p in parts
                    ],
                    pure=False,
                )
            )
            labels = np.repeat(np.arange(len(classes)), counts.astype(np.int64))
            weights = class_weights(class_weight, labels, len(classes), classes)
            parts = [client.submit(partitions.reweight, p, weights, pure=False) for p in parts]
        totals = client.gather(
            client.submit(
                partitions.add,
                *[client.submit(partitions.root_statistics, p, pure=False) for p in parts],
                pure=False,
            )
        )
        if not np.isfinite(totals[0, 1]) or totals[0, 1] > MAX_TOTAL_WEIGHT:
            raise ValueError(
                f"sample_weight sums to {totals[0, 1]:g} over the partitions; the sums of "
                "weights (and of weighted statistics and their squares) must stay finite: "
                f"rescale the weights so they sum to at most {MAX_TOTAL_WEIGHT:g}"
            )
        if (totals[:, 0] < 1).any():
            raise ValueError(
                "X has no rows of positive weight"
                if totals[0, 0] < 1
                else "too few rows for the cross-validation folds: a fold's tree would have none"
            )
        rules = [composition.stopping.resolve(int(round(t[0])), float(t[1])) for t in totals]
        n_categories = np.zeros(d, dtype=np.int64)
        for j, levels in categories.items():
            n_categories[j] = len(levels)
        divides = categories and any(
            client.gather([client.submit(partitions.may_divide, p, pure=False) for p in parts])
        )
        grower = Grower(
            client,
            parts,
            composition,
            rules,
            (edges, n_value_bins, self.max_bins),
            n_categories,
            target,
            divides,
        )
        n_stats = totals.shape[1] - 2
        grown = grower.grow(composition.criterion.impurity_params(n_stats), totals)
        summary = TrainingData(
            np.zeros((0, d)),
            np.zeros((0, n_stats)),
            np.zeros(0),
            names,
            classes=classes,
            n_categories=n_categories,
            target=target,
        )
        summary.cache["has_missing"] = True  # not counted over the partitions: assume so

        def finish(model, root):
            """``model`` fitted to the tree grown from ``root``, pruned as its pruner says
            (by the errors of the fold trees that follow the root in ``specs``)."""
            tree, _ = _tree_of(grown, d, n_stats, root, composition.constraints.has_monotonic)
            cross_validation = None
            if n_folds:
                fold_roots = np.arange(root + 1, root + 1 + n_folds)
                cross_validation = self._cross_validate(
                    client, grower.parts, grown, tree, composition, totals[root], fold_roots
                )
            return model.fit_grown_tree(tree, summary, categories, cross_validation)

        finish(local, 0)
        copies = [
            [
                finish(self._local(), int(np.flatnonzero((specs == (f, c, -1)).all(axis=1))[0]))
                for c in range(n_outer)
            ]
            for f, (n_outer, _) in enumerate(outer)
        ]
        if reject is not None or calibration is not None:
            self._fit_decision_rules(
                client, local, copies, outer, reject, (x_parts, y_parts, w_parts), first_rows
            )
        if getattr(self, "keep_leaf_responses", False):
            self._gather_leaf_responses(client, local, x_parts, y_parts, w_parts)
        self.local_ = local
        self.levels_ = grower.levels
        self.n_features_in_ = d
        if names is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        if classes is not None:
            self.classes_ = local.classes_
            self.n_classes_ = local.n_classes_
        return self

    @staticmethod
    def _gather_leaf_responses(client, local, x_parts, y_parts, w_parts):
        """Every leaf's distinct responses with their weights, for quantiles. The workers
        keep their parts' pairs and send the client each node's count first; the client
        then writes each part in place as it arrives and drops it, so it holds the kept
        pairs and one part, not every part and their concatenation."""
        import dask
        from distributed import as_completed

        masses = client.compute(
            [
                dask.delayed(local.leaf_response_masses)(xp, yp, wp)
                for xp, yp, wp in zip(x_parts, y_parts, w_parts, strict=True)
            ]
        )
        counts = client.gather(
            [client.submit(local.leaf_response_counts, part, pure=False) for part in masses]
        )
        node_counts = [np.sum([c[t] for c in counts], axis=0) for t in range(len(local._trees()))]

        def arriving():
            for future in as_completed(masses):
                part = future.result()
                future.release()
                yield part

        local.keep_leaf_response_masses(arriving(), node_counts)

    def _fit_decision_rules(self, client, local, copies, outer, reject, inputs, first_rows):
        """The reject threshold and calibration of ``local`` from score masses the workers
        sum: the model's of its training rows, and per outer fold its copy's of the fold's
        rows and of its own (what ``fit`` reads from its rows and its copies)."""
        import dask

        needs_model = reject is not None and reject.threshold is None
        tables = client.gather(
            client.compute(
                [
                    dask.delayed(partitions.decision_scores)(
                        xp, yp, wp, local if needs_model else None, copies, outer, int(first)
                    )
                    for xp, yp, wp, first in zip(*inputs, first_rows, strict=True)
                ]
            )
        )

        def merged(key):
            s, c, w = (np.concatenate([t[key][i] for t in tables]) for i in range(3))
            return partitions.score_masses(s, c, w)

        def out_of_fold(n_folds, seed):
            family = outer.index((n_folds, seed))
            held = [merged((family, c, "held_out")) for c in range(n_folds)]
            sizes = np.cumsum([0] + [h[0].size for h in held])
            folds = []
            for c in range(n_folds):
                own_scores, _, own_weight = merged((family, c, "own"))
                folds.append((own_scores, own_weight, np.arange(sizes[c], sizes[c + 1])))
            scores, correct, weight = (np.concatenate([h[i] for h in held]) for i in range(3))
            return OutOfFold(scores, correct, weight, tuple(folds))

        local.set_params(reject=self.reject, calibration=self.calibration)
        local.fit_decision_rules(lambda: merged("model"), out_of_fold)

    @staticmethod
    def _cross_validate(client, parts, grown, tree, composition, root_totals, fold_roots):
        """(cv_error, cv_std_error) per subtree level of ``tree`` from the fold trees grown
        beside it (``fold_roots``): each fold tree is pruned at every level's evaluation
        alpha, and the workers sum the losses of the rows held out of it where they stopped
        in it."""
        d, n_stats = tree.n_features, tree.statistics.shape[1]
        pruner, target, labeler = composition.pruner, composition.target, composition.labeler
        tree.relabel(target, labeler)
        levels, evaluate_at = pruner.level_alphas(tree, labeler, target)
        n_nodes = len(grown.parent)
        values, decisions = None, None
        for root in fold_roots:
            fold_tree, order = _tree_of(
                grown, d, n_stats, root, composition.constraints.has_monotonic
            )
            fold_tree.relabel(target, labeler)
            sequence = pruner.pruning_sequence(fold_tree, labeler, target)
            parents = fold_tree.parents()
            depth = np.asarray(fold_tree.depth)
            # the nodes of each depth below the root, shallowest first
            by_depth = [np.flatnonzero(depth == k) for k in range(1, int(depth.max()) + 1)]
            if values is None:
                values = np.zeros((levels.size, n_nodes, fold_tree.value.shape[1]))
                decisions = np.zeros((levels.size, n_nodes), dtype=np.int64)
            for j, alpha in enumerate(evaluate_at):
                collapsed = sequence.prune_mask(alpha, fold_tree.n_nodes)
                # the node each node's rows are predicted by: its highest collapsed ancestor
                # (a depth at a time: a node takes its parent's when the parent is
                # collapsed or below a collapsed node)
                by = np.arange(fold_tree.n_nodes)
                for nodes in by_depth:
                    parent = parents[nodes]
                    under = collapsed[parent] | (by[parent] != parent)
                    by[nodes[under]] = by[parent[under]]
                values[j, order] = fold_tree.value[by]
                decisions[j, order] = target.decide(fold_tree.value[by], labeler)
        losses = [
            client.submit(
                partitions.held_out_losses,
                p,
                fold_roots,
                values,
                decisions,
                target,
                labeler,
                pure=False,
            )
            for p in parts
        ]
        sums = client.gather(client.submit(partitions.add, *losses, pure=False))
        return pruner.cv_from_sums(
            sums[:, 0], sums[:, 1], float(root_totals[1]), int(round(root_totals[0]))
        )

    def _categories(self, summaries, nominal, names) -> dict:
        """Feature index -> its categories, in the order the in-memory fit numbers them."""
        categories = {}
        for j in nominal:
            present = set()
            for _, found, _ in summaries:
                present.update(found.get(j, []))
            levels = category_levels(present)
            if len(levels) > min(self.max_bins, 62):
                label = f"column {j}" + (f" ({names[j]!r})" if names else "")
                raise ValueError(
                    f"nominal {label} has {len(levels)} categories; the Dask estimators take at "
                    f"most {min(self.max_bins, 62)} (one bin each)"
                )
            categories[j] = levels
        return categories

    def _edges(self, summaries, d):
        """The bin edges of every feature from the partitions' summaries: their distinct
        values and counts merged (the in-memory edges exactly, up to the in-memory
        sampling of more than 200 000 rows), or their order statistics merged, weighted
        by the rows each stands for, where a partition had too many distinct values."""
        per_feature = []
        for j in range(d):
            found = [s[0][j] for s in summaries if s[0][j] is not None]
            if not found:
                per_feature.append(np.zeros(0))
                continue
            values = np.concatenate([f[1] for f in found])
            counts = np.concatenate([f[2] for f in found])
            distinct, inverse = np.unique(values, return_inverse=True)
            merged = np.bincount(inverse, weights=counts, minlength=distinct.size)
            per_feature.append(edges_from_counts(distinct, merged, self.max_bins))
        return edge_table(per_feature)

    # -- use -----------------------------------------------------------------------
    def _check_fitted(self):
        if not hasattr(self, "local_"):
            raise AttributeError(f"this {type(self).__name__} is not fitted yet; call fit first")

    def to_local(self):
        """The fitted in-memory estimator (TreeClassifier or TreeRegressor with the
        histogram splitter): the same tree, JSON, pickle and exports."""
        self._check_fitted()
        return self.local_

    def _apply(self, X, method, width=None, **options):
        """``method`` of the local model (with ``options``) on every partition of a Dask X
        (a Dask array back), or on an in-memory X (a NumPy array back)."""
        self._check_fitted()
        if not _is_dask(X):
            return getattr(self.local_, method)(X, **options)
        import dask
        import dask.array as da

        local = self.local_
        parts = list(X.to_delayed()) if hasattr(X, "columns") else None
        if parts is None:
            X = X.rechunk({1: -1})
            parts = list(X.to_delayed().ravel())
        labels = method == "predict" and hasattr(local, "classes_") and not options
        dtype = local.labels_dtype_ if labels else np.float64
        shape = (np.nan,) if width is None else (np.nan, width)
        return da.concatenate(
            [
                da.from_delayed(
                    dask.delayed(getattr(local, method))(p, **options), shape=shape, dtype=dtype
                )
                for p in parts
            ]
        )

    def predict(self, X):
        """The local model's predictions, per partition of a Dask X (a Dask array), or for
        an in-memory X (a NumPy array)."""
        return self._apply(X, "predict")

    def score(self, X, y, sample_weight=None):
        """The local model's score on in-memory data."""
        self._check_fitted()
        return self.local_.score(X, y, sample_weight)


def _tree_of(grown, n_features, n_stats, root=0, intervals=False) -> tuple:
    """(the tree grown from ``root`` as an unlabelled Tree, numbered depth first, first
    branch first: the in-memory grower's numbering; the grown node of each of its nodes).
    With ``intervals``, every node's value interval of monotonic constraints goes to the
    node fields ``value_lower`` and ``value_upper`` (where relabelling clips values)."""
    order, stack = [], [root]
    while stack:
        node = stack.pop()
        order.append(node)
        if node in grown.children:
            left, right = grown.children[node]
            stack.extend((right, left))
    new_id = {old: new for new, old in enumerate(order)}
    n = len(order)
    left, right = np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    feature, threshold = np.full(n, -1, dtype=np.int64), np.full(n, -2.0)
    improvement, mask, share = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    question = np.full(n, -1, dtype=np.int64)
    kinds = []
    for new, old in enumerate(order):
        if old not in grown.split:
            continue
        kind, f, t, drop, _, missing_share, category_mask = grown.split[old]
        if kind not in kinds:
            kinds.append(kind)
        question[new] = kinds.index(kind)
        a, b = grown.children[old]
        left[new], right[new] = new_id[a], new_id[b]
        feature[new], threshold[new], improvement[new] = f, t, drop
        share[new], mask[new] = missing_share, category_mask
    fields = {"improvement": improvement}
    if intervals:
        fields["value_lower"] = np.array([grown.interval[o][0] for o in order])
        fields["value_upper"] = np.array([grown.interval[o][1] for o in order])
    if "subset" in kinds:
        fields["category_mask"] = mask
    registry = get_registry()
    tree = Tree.from_binary(
        left,
        right,
        feature,
        threshold,
        np.array([grown.sums[o] for o in order]).reshape(n, n_stats),
        np.array([grown.weight[o] for o in order]),
        np.array([grown.count[o] for o in order], dtype=np.int64),
        np.array([grown.impurity[o] for o in order]),
        np.array([grown.depth[o] for o in order], dtype=np.int64),
        np.zeros((n, n_stats)),
        np.zeros(n, dtype=np.int64),
        n_features,
        node_fields=fields,
        questions=tuple(registry.question(k) for k in kinds) or None,
        question=question,
        missing_left=share,
    )
    return tree, np.asarray(order, dtype=np.int64)


@document_parameters
class DaskTreeClassifier(DaskTreeMixin):
    """A classification tree grown over a Dask cluster's partitions: the tree
    ``TreeClassifier(splitter="histogram", ...)`` grows in memory (TreeClassifier's
    parameters, the histogram splitter's ``max_bins``). ``client``: the user's
    ``distributed.Client`` (None: the current one)."""

    local_class = TreeClassifier

    def __init__(
        self,
        criterion="gini",
        pruner="none",
        labeler="majority",
        confidence="probability",
        *,
        splitter="histogram",
        propagator="hard",
        evaluator="hard",
        target=None,
        target_params=None,
        criterion_params=None,
        pruner_params=None,
        evaluator_params=None,
        labeler_params=None,
        confidence_params=None,
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0,
        min_gain=None,
        categorical_features=None,
        monotonic_cst=None,
        interaction_cst=None,
        class_weight=None,
        reject=None,
        calibration=None,
        abstain_value=None,
        max_bins=MAX_BINS,
        random_state=None,
        n_threads=None,
        client=None,
    ):
        self._store_params(locals())

    def predict_proba(self, X):
        """Class probabilities, per partition of a Dask X (a Dask array), or for an
        in-memory X (a NumPy array)."""
        self._check_fitted()
        return self._apply(X, "predict_proba", width=len(self.classes_))


@document_parameters
class DaskTreeRegressor(DaskTreeMixin):
    """A regression tree grown over a Dask cluster's partitions: the tree
    ``TreeRegressor(splitter="histogram", ...)`` grows in memory."""

    local_class = TreeRegressor

    def __init__(
        self,
        criterion="squared_error",
        pruner="none",
        *,
        splitter="histogram",
        propagator="hard",
        evaluator="hard",
        target=None,
        target_params=None,
        criterion_params=None,
        pruner_params=None,
        evaluator_params=None,
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0,
        min_gain=None,
        categorical_features=None,
        monotonic_cst=None,
        interaction_cst=None,
        max_bins=MAX_BINS,
        keep_leaf_responses=False,
        random_state=None,
        n_threads=None,
        client=None,
    ):
        self._store_params(locals())

    def predict(self, X, quantiles=None, interpolation="inverted_cdf"):
        """The local model's predictions (with ``quantiles``: the weighted quantiles of the
        training responses of the leaves a sample reaches, which ``keep_leaf_responses=True``
        gathers at fit), per partition of a Dask X, or for an in-memory X."""
        if quantiles is None:
            return self._apply(X, "predict")
        if not self.keep_leaf_responses:
            raise ValueError(
                "quantiles need every leaf's training responses, which a Dask fit gathers to "
                "the client only when asked (each leaf's distinct responses with their "
                "weights): fit with keep_leaf_responses=True"
            )
        width = np.size(quantiles)
        return self._apply(
            X, "predict", width=width, quantiles=quantiles, interpolation=interpolation
        )

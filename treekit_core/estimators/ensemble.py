"""The ensemble structure: Breiman's bagging of composed trees, every tree grown by the
same components on a bootstrap sample with a fresh random feature subset per node, whatever
the trees predict (the family says that: ``base.py``).

As scikit-learn's forests: ``max_samples`` draws fewer rows per bootstrap than there are
rows; ``oob_score=True`` (or a metric) scores every row by the trees that did not draw it;
``warm_start=True`` keeps the fitted trees and grows only the ones ``n_estimators`` adds,
drawing their seeds as one fit of all of them would (so 5 + 5 trees are the 10 of one fit
with the same integer ``random_state``).

Trees are grown through joblib. The default backend is threads: the numba kernels release
the GIL, and plugins registered in this process are visible to every tree. A process (loky)
or Dask/Ray backend set with ``joblib.parallel_backend`` spreads trees over cores or a
cluster without code change, but then components must be importable by the workers.
"""

from __future__ import annotations

import math
import numbers

import attrs
import numpy as np

from treekit_core.builtins.evaluators import apply_tree
from treekit_core.engine.composition import Composition
from treekit_core.engine.feature_sampling import AllFeatures, RandomFeatureSubset
from treekit_core.engine.importances import forest_importances
from treekit_core.estimators import model_file
from treekit_core.estimators.base import ComposedEstimator, node_indicator
from treekit_core.estimators.honesty import HonestSplit, honest_parts
from treekit_core.estimators.inputs import _rng, refuse_heavy_rows
from treekit_core.registry import get_registry, is_registered, recreate_component


def resolve_max_features(max_features, n_features: int) -> int:
    if max_features is None:
        return n_features
    if max_features == "sqrt":
        return max(1, int(math.sqrt(n_features)))
    if max_features == "log2":
        return max(1, int(math.log2(n_features)))
    if isinstance(max_features, numbers.Integral) and not isinstance(max_features, bool):
        if not 1 <= max_features <= n_features:
            raise ValueError(
                f"max_features={max_features} must be between 1 and n_features={n_features}"
            )
        return int(max_features)
    if isinstance(max_features, numbers.Real) and 0.0 < max_features <= 1.0:
        return max(1, int(max_features * n_features))
    raise ValueError(
        "max_features must be 'sqrt', 'log2', None, an int >= 1 or a float in (0, 1], got "
        f"{max_features!r}"
    )


def _threads_backend() -> bool:
    """Whether joblib would run this forest's trees in threads (its default here); a
    backend of processes or a cluster set with ``joblib.parallel_backend`` is the user's."""
    from treekit_core.kernels.usable_cpus import joblib_parallel

    backend, _ = joblib_parallel().get_active_backend(prefer="threads")
    return bool(getattr(backend, "uses_threads", False))


def resolve_max_samples(max_samples, n_samples: int) -> int:
    """How many rows one bootstrap draws (scikit-learn's ``max_samples``)."""
    if max_samples is None:
        return n_samples
    if isinstance(max_samples, numbers.Integral) and not isinstance(max_samples, bool):
        if not 1 <= max_samples <= n_samples:
            raise ValueError(
                f"max_samples must be an int in [1, n_samples={n_samples}], got {max_samples}"
            )
        return int(max_samples)
    if isinstance(max_samples, numbers.Real) and 0.0 < max_samples <= 1.0:
        return max(round(n_samples * float(max_samples)), 1)
    raise ValueError(
        f"max_samples must be None, an int >= 1 or a float in (0, 1], got {max_samples!r}"
    )


def bootstrap_counts(
    rng, labels, n_classes, balanced: bool, size=None, replace: bool = True, among=None
) -> np.ndarray:
    """How often each row is drawn, ``size`` draws (default: as many as rows). Balanced:
    as many draws from every class as the smallest class has rows (BRF). Without
    ``replace``: ``size`` distinct rows, each once (an isolation forest's subsample), of
    the rows ``among`` (indices; default all: a little bag's subsample of its half)."""
    n = labels.shape[0]
    if not replace:
        counts = np.zeros(n)
        pool = n if among is None else among
        counts[rng.choice(pool, size=n if size is None else size, replace=False)] = 1.0
        return counts
    if not balanced:
        draws = n if size is None else size
        return np.bincount(rng.integers(0, n, size=draws), minlength=n).astype(np.float64)
    per_class = [np.flatnonzero(labels == k) for k in range(n_classes)]
    size = min(rows.size for rows in per_class if rows.size > 0)
    counts = np.zeros(n)
    for rows in per_class:
        if rows.size:
            np.add.at(counts, rng.choice(rows, size=size, replace=True), 1.0)
    return counts


#: The arrays of the training data a forest's task is sent without (it gets them as
#: arguments).
_NO_ROWS, _NO_WEIGHT = np.zeros((0, 0)), np.zeros(0)


def half_sample(group_rng, n_samples: int) -> np.ndarray:
    """The rows of a little bag's half-sample: n // 2 of them, drawn without replacement
    from the group's generator (grf's ``ci.group.size`` trees share one)."""
    return np.sort(group_rng.choice(n_samples, size=n_samples // 2, replace=False))


def draw_tree_rows(rng, weight, labels, drawing, group_rng=None) -> tuple:
    """(a tree's training weights, its honest split or None), drawn from the tree's
    generator ``rng`` in this order: its rows (``weight`` times the bootstrap's counts,
    or a subsample; a tree of a little bag subsamples its group's half-sample, drawn from
    the group's generator ``group_rng``), then the honest split of the rows drawn.
    ``drawing`` is :meth:`EnsembleEstimator._drawing`'s. The one definition of a tree's
    draw: growth (:func:`_grow_one`) and every later re-draw (``_tree_weights``, the
    out-of-bag rows) read it."""
    draws_rows, balanced, draws, n_strata, replace, honesty, bags = drawing
    if draws_rows:
        among = half_sample(group_rng, labels.shape[0]) if bags else None
        weight = weight * bootstrap_counts(
            rng, labels, n_strata, balanced, draws, replace, among=among
        )
    honest = None
    if honesty is not None:
        fraction, prune_leaves = honesty
        honest = HonestSplit(honest_parts(weight, labels, fraction, rng), prune_leaves)
    return weight, honest


def _grow_one(seeds, shipped, settings, X, evidence, weight, labels, *cached):
    """One tree of a forest: its rows drawn from ``seeds`` (the tree's, its little bag's:
    :func:`draw_tree_rows`), grown by the shipped composition. Runs in a thread, or in a
    worker process or on a cluster with its own copies of the arrays."""
    drawing, shell, keys = settings
    tree_rng, group_rng = generators_of(seeds)
    data = attrs.evolve(
        shell, X=X, evidence=evidence, weight=weight, cache=dict(zip(keys, cached, strict=True))
    ).writeable()
    weight, honest = draw_tree_rows(tree_rng, weight, labels, drawing, group_rng)
    return shipped.get().fit(data.with_weight(weight), tree_rng, honest)


def generators_of(seeds) -> tuple:
    """(the tree's generator, its little bag's or None) from (tree seed, group seed or
    None): the group's stream is its first tree's seed spawned apart from that tree's."""
    tree_seed, group_seed = seeds
    group = None if group_seed is None else np.random.default_rng((int(group_seed), 1))
    return np.random.default_rng(int(tree_seed)), group


class ShippedComposition:
    """A composition on its way to other processes (a forest's workers under loky, Dask or
    Ray). It travels as component names and parameters and is re-created inside the task
    that uses it, so a component a worker cannot resolve raises in that task, and so in the
    caller, instead of failing while the worker deserialises the task (which Dask only logs,
    waiting forever). In the process that made it, :meth:`get` is the composition itself."""

    def __init__(self, composition=None, spec=None):
        self._composition, self._spec = composition, spec

    def get(self) -> Composition:
        if self._composition is None:
            components = {
                kind: recreate_component(kind, *value) if isinstance(value, tuple) else value
                for kind, value in self._spec["components"].items()
            }
            self._composition = Composition(
                **self._spec["rest"], **components, registry=get_registry()
            )
        return self._composition

    def __reduce__(self):
        composition = self.get()
        components = {
            kind: (c.name, c.get_params()) if is_registered(c) else c
            for kind, c in composition.components.items()
        }
        return ShippedComposition, (
            None,
            {"components": components, "rest": composition.settings()},
        )


class EnsembleEstimator(ComposedEstimator):
    """Trees grown on bootstraps (``estimators_``), their node values averaged: the
    forests' growth, warm start, out-of-bag rows, model file and the tree API of
    scikit-learn's forests (``apply``, ``decision_path``, ``feature_importances_``)."""

    def _trees(self) -> list:
        """The fitted trees."""
        return list(self.estimators_)

    def _check_params(self) -> None:
        super()._check_params()
        if not (isinstance(self.n_estimators, numbers.Integral) and self.n_estimators >= 1):
            raise ValueError(f"n_estimators must be an int >= 1, got {self.n_estimators!r}")

    def _drawing(self, n_strata: int, draws: int) -> tuple:
        """How every tree draws its rows, as :func:`draw_tree_rows` reads it: whether it
        draws, balanced by stratum, how many, over how many strata, with replacement, and
        (honest_fraction, honest_prune_leaves) for an honest forest (else None)."""
        honest, fraction, prune_leaves = self._honesty_params()
        return (
            self._draws_rows(),
            self._balanced_bootstrap(),
            draws,
            n_strata,
            self._draws_with_replacement(),
            (float(fraction), bool(prune_leaves)) if honest else None,
            self._little_bag_size() > 1,
        )

    def _little_bag_size(self) -> int:
        """How many trees share one half-sample of the rows, each subsampling it without
        replacement (grf's ``ci.group.size``: the little bags whose spread estimates the
        forest's variance); 1 (here): every tree draws from all rows."""
        return 1

    def _draw_seeds(self, seeds) -> list:
        """(tree seed, its little bag's seed or None) of every tree: a bag's seed is its
        first tree's (:meth:`_little_bag_size` consecutive trees per bag)."""
        size = self._little_bag_size()
        if size <= 1:
            return [(int(seed), None) for seed in seeds]
        return [(int(seed), int(seeds[t - t % size])) for t, seed in enumerate(seeds)]

    def _balanced_bootstrap(self) -> bool:
        """Whether every bootstrap draws each stratum of the target equally often (the
        classifier's ``balanced_bootstrap``); here, no."""
        return False

    def _draws_rows(self) -> bool:
        """Whether every tree draws its rows: ``bootstrap`` (with replacement), or
        ``max_samples`` without a bootstrap (a subsample without replacement: partykit's
        ``cforest``, scikit-learn's ``BaggingClassifier(bootstrap=False)``; an isolation
        forest's own). Called by fit and by the growth's re-draws (:meth:`_tree_weights`,
        out-of-bag rows)."""
        return bool(self.bootstrap) or self.max_samples is not None

    def _draws_with_replacement(self) -> bool:
        """Whether the rows are drawn with replacement: the bootstrap's; without it,
        ``max_samples`` distinct rows."""
        return bool(self.bootstrap)

    def _threads_help(self, composition, data, draws: int) -> bool:
        """Whether growing trees on joblib's threads is faster than on one: not for
        node-by-node growth, which is Python, so threads running it only contend for the
        GIL (measured: twice the wall and CPU time of one thread, benchmarks/README.md).
        Called by fit when ``n_jobs`` asks for several threads (``draws``: the rows per
        tree)."""
        return composition.grows_in_one_call(data)

    def _rows_per_tree(self, n_samples: int) -> int:
        """How many rows a tree draws (``max_samples``)."""
        return resolve_max_samples(self.max_samples, n_samples)

    def _node_max_features(self):
        """The features a node may test (``max_features``; an isolation forest: one)."""
        return self.max_features

    def _kept_trees(self, data, classes) -> tuple:
        """What a fit gives ``_fit_validated`` besides the data: the trees ``warm_start``
        keeps."""
        return (self._warm_start_trees(data, classes),)

    def _warm_start_trees(self, data, classes) -> list:
        """The fitted trees ``warm_start`` keeps (none without it, or before a first fit)."""
        if not self.warm_start or not hasattr(self, "estimators_"):
            return []
        if not hasattr(self, "_tree_seeds"):
            raise ValueError(
                "warm_start=True needs the seeds of the fitted trees, which a forest read from "
                "a JSON model file does not hold; fit it again without warm_start"
            )
        if self.n_estimators < len(self.estimators_):
            raise ValueError(
                f"n_estimators={self.n_estimators} must be >= the {len(self.estimators_)} "
                "fitted trees when warm_start=True"
            )
        same_classes = (classes is None) == (getattr(self, "classes_", None) is None) and (
            classes is None or np.array_equal(classes, self.classes_)
        )
        if data.n_features != self.n_features_in_ or not same_classes:
            raise ValueError(
                "warm_start=True adds trees fitted on data with the fitted forest's features "
                f"({self.n_features_in_}) and classes; got {data.n_features} features and "
                "other classes"
                if not same_classes
                else f"{data.n_features} features"
            )
        if self.n_estimators == len(self.estimators_):
            import warnings

            warnings.warn(
                "warm_start=True without increasing n_estimators does not fit new trees",
                UserWarning,
                stacklevel=3,
            )
        return list(self.estimators_)

    def _fit_validated(self, data, classes, composition=None, rule=None, kept=()):
        """Grow the trees on checked training data (also what CV rejection refits)."""
        from treekit_core.kernels.usable_cpus import joblib_parallel

        Parallel, delayed = joblib_parallel().Parallel, joblib_parallel().delayed
        if composition is None:  # a refit: the composition for the data's labels and rows
            composition = self._composition_for(classes, data.evidence[:1])
        composition.check(data)
        self._check_target(composition)
        k = resolve_max_features(self._node_max_features(), data.n_features)
        composition.feature_sampler = (
            AllFeatures() if k == data.n_features else RandomFeatureSubset(k)
        )
        labels = composition.target.strata(data.evidence, composition.labeler)
        weight = self._growth_data(data, composition).weight
        # a bootstrap draws a row up to n times
        refuse_heavy_rows(weight, data.n_samples, "sample_weight")
        if not self._draws_rows() and self.oob_score:
            raise ValueError(
                "oob_score needs bootstrap=True or max_samples (a subsample): without either "
                "every tree sees every row"
            )
        if self._balanced_bootstrap() and self.max_samples is not None:
            raise ValueError(
                "max_samples cannot be combined with balanced_bootstrap=True, whose "
                "bootstrap draws the smallest class's size from every class"
            )
        draws = self._rows_per_tree(data.n_samples)
        rng = _rng(self.random_state)
        # the seeds of all n_estimators trees, of which warm start grows the ones it adds
        seeds = rng.integers(0, 2**63 - 1, size=self.n_estimators)
        if kept:
            seeds[: len(kept)] = self._tree_seeds
        n_jobs = 1 if self.n_jobs is None else self.n_jobs
        if n_jobs != 1 and _threads_backend() and not self._threads_help(composition, data, draws):
            n_jobs = 1
        composition.parallel_kernels = n_jobs == 1
        # what the trees share, on the threads they will grow on (one tree's kernels' or
        # the forest's jobs': every CPU for a negative n_jobs)
        if composition.parallel_kernels:
            share_threads = composition.fit_threads()
        else:
            from treekit_core.kernels.usable_cpus import fit_threads

            share_threads = fit_threads(max(n_jobs, -1))
        composition.splitter.share_across_trees(data, n_threads=share_threads)

        n_strata = int(labels.max()) + 1
        shipped = ShippedComposition(composition)
        settings = (
            self._drawing(n_strata, draws),
            attrs.evolve(data, X=_NO_ROWS, evidence=_NO_ROWS, weight=_NO_WEIGHT, cache={}),
            tuple(data.cache),
        )
        # the arrays travel as arguments, not in a closure: joblib's Dask backend then
        # scatters each to the cluster once per fit instead of pickling it into every task
        draw_seeds = self._draw_seeds(seeds)
        added = Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(_grow_one)(
                seed,
                shipped,
                settings,
                data.X,
                data.evidence,
                weight,
                labels,
                *data.cache.values(),
            )
            for seed in draw_seeds[len(kept) :]
        )
        self.estimators_ = [*kept, *added]
        self._tree_seeds = seeds
        self.composition_ = composition
        self._set_fitted(data, classes)
        self._fit_oob_score(data, labels, n_strata, draws)
        self._after_growth(data, rule)
        return self

    def _tree_weights(self, data) -> list:
        """Each tree's training weights as its leaves were estimated: its bootstrap drawn
        again from its seed, stratified by the target's strata as :meth:`_fit_validated`
        drew it (an honest tree's: of its estimation rows, drawn next)."""
        composition = self.composition_
        strata = composition.target.strata(data.evidence, composition.labeler)
        n_strata = int(strata.max()) + 1
        drawing = self._drawing(n_strata, self._rows_per_tree(data.n_samples))
        weights = []
        for seeds in self._draw_seeds(self._tree_seeds):
            tree_rng, group_rng = generators_of(seeds)
            weight, honest = draw_tree_rows(tree_rng, data.weight, strata, drawing, group_rng)
            weights.append(
                weight if honest is None else np.where(honest.structure_rows, 0.0, weight)
            )
        return weights

    def _drawn_counts(self, seeds, labels, n_strata, draws) -> np.ndarray:
        """How often the tree of ``seeds`` (:meth:`_draw_seeds`) drew each row (its first use
        of its generators)."""
        drawing = self._drawing(n_strata, draws)
        drawing = (*drawing[:5], None, *drawing[6:])  # the rows drawn; no honest split
        tree_rng, group_rng = generators_of(seeds)
        return draw_tree_rows(tree_rng, np.ones(labels.shape[0]), labels, drawing, group_rng)[0]

    def _fit_oob_score(self, data, labels, n_strata, draws) -> None:
        """The out-of-bag attributes (none without ``oob_score``): every row's node values
        averaged over the trees that did not draw it (NaN for a row every tree drew, with a
        warning), scored as the family scores them (:meth:`_score_oob`)."""
        for name in ("oob_score_", "oob_decision_function_", "oob_prediction_", "_oob_residuals"):
            if hasattr(self, name):
                delattr(self, name)
        if not self.oob_score:
            return
        averaged = self._oob_values(data, labels, n_strata, draws)
        rows = np.flatnonzero(~np.isnan(averaged).any(axis=1))
        self._score_oob(data, labels, averaged, rows)

    def _score_oob(self, data, labels, averaged, rows) -> None:
        """Set the out-of-bag attributes from ``averaged`` (every row's node values over
        the trees that did not draw it; only ``rows`` have any), as the family scores.
        Called by :meth:`_fit_oob_score` when ``oob_score`` is asked."""
        raise NotImplementedError(f"{type(self).__name__} scores no out-of-bag rows")

    def _out_of_bag_sums(self, data, labels, n_strata, draws) -> tuple:
        """(every row's node values summed over the trees that did not draw it, how many
        such trees): what the out-of-bag attributes and a causal forest's out-of-bag
        effects average."""
        composition = self.composition_
        width = self.estimators_[0].value.shape[1]
        total = np.zeros((data.n_samples, width))
        n_trees = np.zeros(data.n_samples)
        for tree, seeds in zip(self.estimators_, self._draw_seeds(self._tree_seeds), strict=True):
            unseen = np.flatnonzero(self._drawn_counts(seeds, labels, n_strata, draws) == 0)
            if unseen.size:
                total[unseen] += composition.evaluator.predict_distribution(tree, data.X[unseen])
                n_trees[unseen] += 1
        return total, n_trees

    def _oob_values(self, data, labels, n_strata, draws) -> np.ndarray:
        """Every row's node values averaged over the trees that did not draw it (NaN for
        a row every tree drew, with a warning)."""
        total, n_trees = self._out_of_bag_sums(data, labels, n_strata, draws)
        scored = n_trees > 0
        if not scored.all():
            import warnings

            warnings.warn(
                f"{int((~scored).sum())} of {data.n_samples} rows were drawn by every tree and "
                "have no out-of-bag prediction (NaN in the out-of-bag attributes; oob_score_ "
                "scores the others); grow more trees",
                UserWarning,
                stacklevel=6,
            )
        with np.errstate(invalid="ignore", divide="ignore"):
            return total / n_trees[:, None]

    def _node_values(self, X) -> np.ndarray:
        """The values the evaluator mixes for every sample of X (checked), averaged over
        the trees."""
        return self.composition_.evaluator.average_distribution(self.estimators_, X)

    # -- the model file: the trees as a list ----------------------------------------
    def _trees_payload(self) -> dict:
        return {"trees": [model_file.tree_to_dict(tree) for tree in self.estimators_]}

    def _read_trees(self, payload, composition, labels) -> list:
        trees = model_file.field(payload, "trees", list)
        if not 1 <= len(trees) <= model_file.MAX_TREES:
            raise model_file.ModelFileError(
                f"model file: 'trees' must hold 1 to {model_file.MAX_TREES} trees"
            )
        self.estimators_ = [
            model_file.read_tree({"tree": tree}, composition, labels, f"model file: trees[{i}]")
            for i, tree in enumerate(trees)
        ]
        n_features = {tree.n_features for tree in self.estimators_}
        if len(n_features) != 1:
            raise model_file.ModelFileError("model file: the trees disagree on n_features")
        k = resolve_max_features(self.max_features, n_features.pop())
        composition.feature_sampler = (
            AllFeatures() if k == self.estimators_[0].n_features else RandomFeatureSubset(k)
        )
        return self.estimators_

    @property
    def feature_importances_(self) -> np.ndarray:
        """The mean of the trees' normalised impurity-decrease importances, normalised
        (scikit-learn's forests; :mod:`treekit_core.engine.importances`)."""

        self._check_fitted()
        return forest_importances(
            self.estimators_, self.n_features_in_, self.composition_.criterion
        )

    def apply(self, X) -> np.ndarray:
        """Leaf id of every sample in every tree, n_samples x n_estimators."""

        with self._checked_for_predict(X) as checked:
            return np.column_stack([apply_tree(tree, checked) for tree in self.estimators_])

    def decision_path(self, X):
        """(indicator, n_nodes_ptr) as scikit-learn's forests: the trees' node indicators
        side by side, tree i's columns ``n_nodes_ptr[i]:n_nodes_ptr[i + 1]``."""
        from scipy.sparse import hstack

        leaves = self.apply(X)
        blocks = [node_indicator(t, leaves[:, i]) for i, t in enumerate(self.estimators_)]
        ptr = np.concatenate([[0], np.cumsum([t.n_nodes for t in self.estimators_])])
        return hstack(blocks).tocsr(), ptr

    @property
    def feature_subset_size_(self) -> int:
        self._check_fitted()
        return self.composition_.feature_sampler.subset_size(self.n_features_in_)

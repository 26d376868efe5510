"""Conformance checks for components (as scikit-learn's ``check_estimator``).

A third party runs them on its component::

    from treekit_core.testing import check_component
    check_component(MyCriterion)            # raises ConformanceError saying what is wrong

or enables the kit's fixtures in its ``conftest.py`` with one line::

    from treekit_core.testing.pytest_plugin import treekit_check, treekit_registry  # noqa: F401

(``pytest_plugins = ["treekit_core.testing.pytest_plugin"]`` works too in a top-level
conftest) and uses the ``treekit_check`` fixture. Nothing is loaded behind anyone's back: the
checks register the component in a registry of their own, next to the core's built-ins.
"""

from __future__ import annotations

import numpy as np

from treekit_core import (
    CausalTree,
    PluginError,
    SurvivalTree,
    TrainingData,
    TreeClassifier,
    TreeRegressor,
)
from treekit_core.components import ABSTAIN, MISSING_BRANCH, QuestionTextContext
from treekit_core.datasets import load_dataset, survival_array
from treekit_core.engine.constraints import features_above
from treekit_core.registry import get_registry
from treekit_core.testing.common import ConformanceError, _fail, _instance, _registered


def small_data(n_classes: int = 2, seed: int = 0):
    """A small real data set (haberman, or satimage's first classes for K > 2)."""

    if n_classes == 2:
        data = load_dataset("haberman")
        return data.X, data.y
    data = load_dataset("satimage")
    keep = np.isin(data.y, np.unique(data.y)[:n_classes])
    return data.X[keep][::4], data.y[keep][::4]


def check_criterion(criterion, params=None, n_classes=3, y=None, splitters=None):
    """Zero on pure nodes, finite, non-negative, compiles under numba, symmetric in the
    classes when it declares ``symmetric = True``, concave (weighted by the node's weight,
    on random segments of class sums) when it declares ``concave = True``, and grows a
    tree with every installed splitter it is compatible with. ``y``: what its default
    target reads for the rows of :func:`small_data` (default: small_data's class labels);
    then the impurity is probed on sums of that target's rows (their width, not a number
    of classes: a criterion reads only the statistics its target writes), finite and >= 0,
    before the trees are grown.

    The trees grow with the kernels that take the impurity as a function value, shared
    by every criterion and compiled once per machine (the same trees as the kernels
    specialised to a criterion, which a fit compiles per criterion and per edit of its
    file). Plugins' splitters still compile kernels specialised to the criterion (the
    histogram and UDT searches: a few seconds each, once per edit of the criterion's
    file); ``splitters`` (names) limits the trees to those splitters.

    Measured (benchmarks/README.md, issue 37): an edited criterion 6.3 s with every plugin
    installed (8.6 s before the core's grower took the function value here), 0.8 s when
    nothing changed."""
    from treekit_core.kernels.specialised import function_value_kernels

    with function_value_kernels():
        _check_criterion(criterion, params, n_classes, y, splitters)


def _check_criterion(criterion, params, n_classes, y, splitters):
    instance = _instance(criterion, params)
    try:
        compiled = instance.compiled_impurity()
    except Exception as exc:  # numba typing errors are diverse
        _fail(instance, f"its impurity does not compile under numba: {exc}")
    if y is None and instance.evidence != "one_hot":
        # rows that are not one-hot class counts: probed as the criterion's target writes
        # them, for small_data's labels as the numbers 0 and 1 (or as censored follow-up)
        y = example_response(get_registry().get_class("target", instance.default_target))
    if y is None:
        widths = sorted({2, n_classes})
    else:
        target = get_registry().create("target", instance.default_target)
        arguments = example_arguments(type(target))
        widths = [np.asarray(target.encode(y, len(y), **arguments).rows).shape[1]]
    _check_plain_impurity(instance, widths)
    _check_drop_free_statistics(instance, compiled, y)
    _check_drop_bound(instance, compiled, y)
    _check_fixed_statistics(instance, y)
    if y is not None:
        _check_impurity_on_target_rows(instance, compiled, y)
        _grow_with_every_splitter(instance, y, splitters)
        return
    try:
        p = instance.impurity_params(n_classes)
    except ValueError:  # a two-class criterion (or parametrisation): probe with two classes
        n_classes = 2
        p = instance.impurity_params(n_classes)
    rng = np.random.default_rng(0)
    for _ in range(50):
        sums = rng.uniform(0, 10, size=n_classes)
        value = compiled(np.ascontiguousarray(sums), float(sums.sum()), p)
        if not np.isfinite(value):
            _fail(instance, f"impurity is not finite for class sums {sums.round(3)}")
        if value < -1e-12:
            _fail(instance, f"impurity is negative ({value:g}) for class sums {sums.round(3)}")
        if instance.symmetric:
            permuted = compiled(np.ascontiguousarray(sums[::-1]), float(sums.sum()), p)
            if abs(permuted - value) > 1e-9:
                _fail(instance, "declares symmetric = True but changes when classes are reordered")
        if instance.concave:
            other = rng.uniform(0, 10, size=n_classes)
            middle = (sums + other) / 2

            def weighted(v):
                v = np.ascontiguousarray(v)
                return float(v.sum()) * compiled(v, float(v.sum()), p)

            if weighted(middle) < (weighted(sums) + weighted(other)) / 2 - 1e-9:
                _fail(
                    instance,
                    "declares concave = True but its weighted impurity W * i(v) is not "
                    f"concave between class sums {sums.round(3)} and {other.round(3)}",
                )
    if type(instance).split_score is not None:
        _check_split_score(instance, compiled, p, n_classes)
    if instance.evidence == "one_hot":
        for k in range(n_classes):
            pure = np.zeros(n_classes)
            pure[k] = 7.0
            value = compiled(pure, 7.0, p)
            if abs(value) > 1e-9:
                _fail(
                    instance,
                    f"impurity of a pure node (all weight in class {k}) is {value:g}, not 0",
                )
    _grow_with_every_splitter(instance, small_data(2)[1], splitters)


def _check_plain_impurity(instance, widths) -> None:
    """The impurity run as plain Python, where numpy checks every index (numba does not:
    compiled, an impurity reading ``params[5]`` of a one-element array reads whatever
    memory follows it), on statistics of each of ``widths`` (the numbers of classes, or
    the width of the rows its target writes) with the parameters
    :meth:`Criterion.impurity_params` gives for that width."""
    function = type(instance).impurity
    rng = np.random.default_rng(1)
    for width in widths:
        try:
            p = np.asarray(instance.impurity_params(width), dtype=np.float64)
        except ValueError:  # a width this criterion refuses (a two-class one, say)
            continue
        sums = rng.uniform(0, 5, size=width)
        try:
            function(sums, float(sums.sum()), p)
        except IndexError as exc:
            _fail(
                instance,
                f"its impurity reads outside its arrays as plain Python (class sums of "
                f"width {width}, params of length {p.size}): {exc}; compiled, numba reads "
                "that memory unchecked (run under NUMBA_DISABLE_JIT=1 to find the line)",
            )
        except Exception:  # noqa: BLE001 - whatever else plain Python says, numba decides
            pass


def example_response(target_class):
    """A ``y`` for :func:`small_data`'s rows that a target of this class reads: its labels
    as the numbers 0 and 1, or, for a target of censored follow-up (``survival_curves``),
    those labels as the event and a positive time per row."""
    labels = np.unique(small_data(2)[1], return_inverse=True)[1]
    if "survival_curves" in target_class.provides:
        time = 1.0 + (np.arange(labels.size) * 7919 % 97) / 10.0
        return survival_array(labels == 1, time)
    return labels.astype(np.float64)


def example_arguments(target_class) -> dict:
    """The fit arguments besides ``y`` that a target of this class needs, for
    :func:`small_data`'s rows: a treatment (every other row treated) for a target that
    reads one; else none."""
    if "treatment" not in target_class.fit_arguments:
        return {}
    return {"treatment": (np.arange(small_data(2)[1].size) % 2).astype(np.float64)}


def _tree_fitting(criterion, **settings):
    """A function fitting a shallow tree of ``criterion`` on (X, y): a classifier with the
    criterion's labeler, or a causal tree (and its treatment) where its target reads one."""
    target = get_registry().get_class("target", criterion.default_target)
    extra = example_arguments(target)
    if extra:
        model = CausalTree(criterion=criterion, max_depth=3, honest=False, **settings)
        return lambda X, y: model.fit(X, y, **extra)
    model = TreeClassifier(
        criterion=criterion, max_depth=3, labeler=_matching_labeler(criterion), **settings
    )
    return model.fit


def _target_example(target):
    """The kit's default ``y`` for a target: class labels, or follow-up for a survival one."""
    return example_response(type(target)) if "survival_curves" in target.provides else None


def _target_rows(instance, response):
    """(the criterion's default target, the rows it writes for ``response`` on
    :func:`small_data`'s rows, float64 and C-ordered); ``response`` None: small_data's
    labels."""
    X, labels = small_data(2)
    target = get_registry().create("target", instance.default_target)
    encoded = target.encode(
        labels if response is None else response,
        X.shape[0],
        **example_arguments(type(target)),
    )
    return target, np.ascontiguousarray(encoded.rows, dtype=np.float64)


def _check_impurity_on_target_rows(instance, compiled, y) -> None:
    """The impurity of sums of random subsets of the rows the criterion's default target
    writes for ``y``: finite and >= 0."""
    target, rows = _target_rows(instance, y)
    p = instance.impurity_params(rows.shape[1])
    rng = np.random.default_rng(0)
    for _ in range(50):
        chosen = rng.random(rows.shape[0]) < rng.uniform(0.05, 1.0)
        if not chosen.any():
            continue
        sums = np.ascontiguousarray(target.node_statistics(rows[chosen], np.ones(chosen.sum())))
        value = compiled(sums, float(chosen.sum()), p)
        if instance.infinite_impurity and value == np.inf:
            continue  # statistics no node may have (the criterion declares it)
        if not np.isfinite(value) or value < -1e-12:
            _fail(instance, f"impurity is {value:g} for the sums {sums.round(3)} of target rows")


def _check_drop_free_statistics(instance, compiled, y) -> None:
    """What :meth:`Criterion.drop_free_statistics` declares: valid indices, and the drops
    of random cuts of random sets of the rows its default target writes for ``y`` (None:
    :func:`small_data`'s labels) the same (to rounding) with those sums at 0 in the
    parent and on both sides, as a histogram scores them."""
    target, rows = _target_rows(instance, y)
    n = rows.shape[1]
    p = instance.impurity_params(n)
    free = tuple(instance.drop_free_statistics(n))
    if not free:
        return
    if any(not isinstance(k, (int, np.integer)) or not 0 <= k < n for k in free) or len(
        set(free)
    ) != len(free):
        _fail(instance, f"drop_free_statistics({n}) is {free!r}: not distinct indices below {n}")
    kept = np.ones(n, dtype=bool)
    kept[list(free)] = False

    def drop(parent, weight, left, left_weight):
        return _computed_drop(compiled, p, parent, weight, left, left_weight)

    rng = np.random.default_rng(2)
    for _ in range(50):
        parent_rows = np.flatnonzero(rng.random(rows.shape[0]) < rng.uniform(0.1, 1.0))
        left_rows = parent_rows[rng.random(parent_rows.size) < rng.uniform(0.05, 0.95)]
        if not 0 < left_rows.size < parent_rows.size:
            continue
        parent = np.ascontiguousarray(
            target.node_statistics(rows[parent_rows], np.ones(parent_rows.size))
        )
        left = np.asarray(target.node_statistics(rows[left_rows], np.ones(left_rows.size)))
        weight, left_weight = float(parent_rows.size), float(left_rows.size)
        exact = drop(parent, weight, left, left_weight)
        scored = drop(np.where(kept, parent, 0.0), weight, np.where(kept, left, 0.0), left_weight)
        scale = 1.0 + np.abs(parent).sum() / weight
        if not (exact == scored or abs(exact - scored) <= 1e-9 * scale):
            _fail(
                instance,
                f"declares drop_free_statistics({n}) = {free!r}, but a cut's drop is "
                f"{exact:.12g} with those sums and {scored:.12g} without them",
            )


def _computed_drop(compiled, params, parent, weight, left, left_weight) -> float:
    """A binary cut's drop as the threshold searches compute it
    (:func:`treekit_core.kernels.split_drop`'s expression, in its order), from the compiled
    impurity, the parent's statistics and weight and the left side's."""
    right = np.ascontiguousarray(parent - left)
    children = left_weight * compiled(np.ascontiguousarray(left), left_weight, params)
    children += (weight - left_weight) * compiled(right, weight - left_weight, params)
    return compiled(parent, weight, params) - children / weight


def _check_drop_bound(instance, compiled, y) -> None:
    """What :attr:`Criterion.drop_bound` promises: above w_t times the drop a threshold
    search computes (:func:`treekit_core.kernels.split_drop`'s expression), by more than
    that product's rounding, for random cuts of random sets of the rows its default target
    writes for ``y`` (None: :func:`small_data`'s labels), with fractional weights, and of
    the same rows shifted far from 0 (a response of 10^6 plus noise: the drop is then a
    small difference of large sums)."""
    import numba

    function = instance.drop_bound_function()
    if function is None:
        return
    try:
        bound = numba.njit(function)
    except Exception as exc:  # numba typing errors are diverse
        _fail(instance, f"its drop bound does not compile under numba: {exc}")
    responses = [y]
    if y is not None and np.asarray(y).dtype.kind == "f" and np.asarray(y).ndim == 1:
        responses.append(np.asarray(y) + 1e6)
    rng = np.random.default_rng(3)
    for response in responses:
        target, rows = _target_rows(instance, response)
        p = instance.impurity_params(rows.shape[1])
        for _ in range(100):
            parent_rows = np.flatnonzero(rng.random(rows.shape[0]) < rng.uniform(0.1, 1.0))
            left_rows = parent_rows[rng.random(parent_rows.size) < rng.uniform(0.02, 0.98)]
            if not 0 < left_rows.size < parent_rows.size:
                continue
            weights = rng.uniform(0.1, 3.0, rows.shape[0])
            parent = np.ascontiguousarray(
                target.node_statistics(rows[parent_rows], weights[parent_rows])
            )
            left = np.ascontiguousarray(target.node_statistics(rows[left_rows], weights[left_rows]))
            weight, left_weight = weights[parent_rows].sum(), weights[left_rows].sum()
            weighted_drop = _computed_drop(compiled, p, parent, weight, left, left_weight) * weight
            value = bound(left, left_weight, parent, weight, compiled(parent, weight, p), p)
            if not value > weighted_drop + 4 * np.finfo(float).eps * abs(weighted_drop):
                _fail(
                    instance,
                    f"its drop bound {value:.17g} is not above w_t times the drop "
                    f"({weighted_drop:.17g}) of a cut of {left_rows.size} of "
                    f"{parent_rows.size} rows",
                )


def _check_fixed_statistics(instance, y) -> None:
    """What :attr:`Criterion.fixed_statistics` declares: a positive whole number, the width
    of the rows the criterion's default target writes for ``y`` (None: :func:`small_data`'s
    labels), so that a fit with that target takes the kernels holding it as a constant."""
    declared = instance.fixed_statistics_count()
    if declared is None:
        return
    if isinstance(declared, bool) or not isinstance(declared, (int, np.integer)) or declared < 1:
        _fail(instance, f"declares fixed_statistics = {declared!r}: not a positive whole number")
    width = _target_rows(instance, y)[1].shape[1]
    if width != declared:
        _fail(
            instance,
            f"declares fixed_statistics = {declared}, but its default target "
            f"{instance.default_target!r} writes {width} statistics a row",
        )


def _grow_with_every_splitter(instance, y, splitters=None) -> None:
    X, _ = small_data(2)
    with _registered(instance):
        installed = get_registry().components("splitter")
        for name in installed if splitters is None else splitters:
            try:
                _tree_fitting(instance, splitter=name)(X, y)
            except (ValueError, TypeError) as exc:
                if "cannot be combined" in str(exc) or "handles numeric features only" in str(exc):
                    continue
                _fail(instance, f"growing a tree with splitter {name!r} failed: {exc}")


def _check_split_score(instance, impurity, params, n_classes):
    """A split score is finite, does not depend on which child is called left, and (when
    the criterion declares ``symmetric``) not on the order of the classes."""
    import numba

    try:
        score = numba.njit(type(instance).split_score)
    except Exception as exc:  # numba typing errors are diverse
        _fail(instance, f"its split score does not compile under numba: {exc}")
    rng = np.random.default_rng(1)
    for _ in range(50):
        left, right = rng.uniform(0.1, 10, size=(2, n_classes))
        parent = left + right

        def scored(a, b, c, order=slice(None)):
            a, b, c = (np.ascontiguousarray(v[order]) for v in (a, b, c))
            return score(a, a.sum(), b, b.sum(), c, c.sum(), impurity(c, c.sum(), params), params)

        value = scored(left, right, parent)
        if not np.isfinite(value):
            _fail(
                instance,
                f"split score is not finite for children {left.round(3)}, {right.round(3)}",
            )
        if abs(scored(right, left, parent) - value) > 1e-9 * max(1.0, abs(value)):
            _fail(instance, "split score changes when the two children swap sides")
        if instance.symmetric and abs(
            scored(left, right, parent, slice(None, None, -1)) - value
        ) > 1e-9 * max(1.0, abs(value)):
            _fail(
                instance,
                "declares symmetric = True but its split score changes when classes are reordered",
            )


def _matching_labeler(criterion):
    if criterion.evidence == "one_hot":
        return "majority"
    target = get_registry().components("target").get(criterion.default_target)
    if target is not None and not target.cls.decides_with_labeler:
        return "majority"  # not asked: the target decides without a labeler

    for name, info in get_registry().components("labeler").items():
        if info.cls.evidence == criterion.evidence:
            return name
    raise ConformanceError(f"no installed labeler reads {criterion.evidence} evidence")


def check_splitter(splitter, params=None, min_samples_leaf=7, questions=()):
    """Valid splits (features in range, children non-empty), min_samples_leaf honoured, and
    rows separated at all (on small_data a root split that separates them exists).
    ``questions``: the question kinds (classes) the splitter asks beyond the core's,
    registered with it for the check (a kind it asks that is not registered is refused,
    naming it, instead of failing later in whichever test runs first)."""
    instance = _instance(splitter, params)
    X, y = small_data(2)
    companions = instance.companions()  # e.g. UDT's own propagation, with the same pdfs
    with _registered(instance, *questions):
        try:
            model = TreeClassifier(
                splitter=instance, min_samples_leaf=min_samples_leaf, **companions
            ).fit(X, y)
        except PluginError as exc:
            if "unknown question" not in str(exc):
                raise
            _fail(
                instance,
                f"asks a question kind that is not registered ({exc}); pass its class: "
                "check_splitter(..., questions=[TheQuestion])",
            )
    tree = model.tree_
    internal = ~tree.is_leaf
    if ((tree.feature[internal] < 0) | (tree.feature[internal] >= X.shape[1])).any():
        _fail(instance, "returned a split on a feature index out of range")
    leaves = tree.is_leaf
    fractional = model.composition_.propagator.produces_fractional_weights
    size = (
        tree.weight[leaves] if fractional else tree.n_samples[leaves]
    )  # unit weights: weight = samples
    if (size < min_samples_leaf - 1e-9).any():
        worst = float(size.min())
        _fail(
            instance, f"ignores min_samples_leaf={min_samples_leaf}: a leaf holds {worst:g} samples"
        )
    if (tree.weight[leaves] <= 0).any():
        _fail(instance, "created an empty child")
    if tree.n_nodes == 1:
        _fail(
            instance,
            "never separated the rows: the tree is its root alone, although a split of "
            "the kit's data exists (a split must send rows down more than one branch)",
        )
    _check_splitter_constraints(instance, X, y, companions)


def _check_splitter_constraints(instance, X, y, companions) -> None:
    """A splitter that provides ``monotonic_constraints`` grows trees that keep them; one
    that provides ``interaction_constraints`` asks, on every path, features of one group."""
    monotonic = [1, -1, 0][: X.shape[1]]
    with _registered(instance):
        if "monotonic_constraints" in instance.provides:
            model = TreeClassifier(splitter=instance, monotonic_cst=monotonic, **companions)
            model.fit(X, y)
            worst = monotonic_violation(
                lambda Z: model.predict_proba(Z)[:, 1], monotonic, X.shape[1], X=X
            )
            if worst > 1e-12:
                _fail(
                    instance,
                    f"provides monotonic_constraints but grew a tree that breaks "
                    f"monotonic_cst={monotonic} by {worst:.3g}",
                )
        if "interaction_constraints" in instance.provides:
            groups = [[0], list(range(1, X.shape[1]))]
            model = TreeClassifier(splitter=instance, interaction_cst=groups, **companions)
            model.fit(X, y)
            for path in tree_paths(model.tree_):
                if not any(path <= set(group) for group in groups):
                    _fail(
                        instance,
                        f"provides interaction_constraints but a path asks features "
                        f"{sorted(path)} across interaction_cst={groups}",
                    )


def monotonic_violation(predict, monotonic_cst, n_features, X=None, missing=False, seed=0):
    """The largest amount by which ``predict`` (an array of rows -> one number per row)
    breaks ``monotonic_cst`` (1: must not fall, -1: must not rise as the feature grows) on
    random pairs of rows that differ only in one constrained feature; 0 when it never
    does. The rows are drawn around ``X``'s rows (default: standard normal); with
    ``missing``, a third of the other features' entries are missing."""
    rng = np.random.default_rng(seed)
    worst = 0.0
    for feature, sign in enumerate(monotonic_cst):
        if sign == 0:
            continue
        if X is None:
            base = rng.normal(scale=1.5, size=(300, n_features))
        else:
            base = np.asarray(X, dtype=np.float64)[rng.integers(0, len(X), 300)]
        scale = 1.5 if X is None else float(np.nanstd(base[:, feature])) or 1.0
        if missing:
            holes = rng.random(base.shape) < 0.3
            holes[:, feature] = False
            base = np.where(holes, np.nan, base)
        low, high = base.copy(), base.copy()
        start = base[:, feature] + rng.normal(scale=scale, size=300)
        low[:, feature] = start
        high[:, feature] = start + np.abs(rng.normal(scale=scale, size=300))
        worst = max(worst, float(np.max((predict(low) - predict(high)) * sign)))
    return worst


def tree_paths(tree) -> list:
    """The set of features asked on every root-to-leaf path of ``tree`` (one per leaf)."""
    above = features_above(tree)
    return [above[leaf] for leaf in np.flatnonzero(tree.is_leaf)]


def check_labeler(labeler, params=None, n_classes=3):
    """A class index or an explicit abstention (-1) per row; abstains only if it says it can."""
    instance = _instance(labeler, params)

    for k in (n_classes, 2):  # a labeler parametrised for two classes says so in check_data
        probe = TrainingData(
            np.zeros((k, 1), order="F"), np.eye(k), np.ones(k), classes=np.arange(k)
        )
        try:
            instance.check_data(probe)
            n_classes = k
            break
        except ValueError:
            continue
    rng = np.random.default_rng(0)
    sums = rng.uniform(0, 10, size=(200, n_classes))
    sums[:20] = 0.0  # nodes without weight of some classes, and one without any
    sums[:10, 0] = 5.0
    weights = sums.sum(axis=1)
    distribution = np.asarray(instance.distribution(sums, np.where(weights > 0, weights, 1.0)))
    if distribution.shape != sums.shape:
        _fail(instance, f"distribution returned shape {distribution.shape} for {sums.shape}")
    if not np.isfinite(distribution).all() or (distribution < 0).any():
        _fail(instance, "distribution returned NaN, infinite or negative probabilities")
    if (np.abs(distribution.sum(axis=1) - 1.0) > 1e-9).any():
        _fail(instance, "distribution returned rows that do not sum to 1")
    proba = rng.dirichlet(np.ones(n_classes), size=200)
    decision = np.asarray(instance.decide(proba))
    if decision.shape != (200,):
        _fail(instance, f"decide returned shape {decision.shape} for 200 rows")
    if not np.issubdtype(decision.dtype, np.integer):
        _fail(instance, f"decide returned {decision.dtype}, not integer class indices")
    if ((decision < ABSTAIN) | (decision >= n_classes)).any():
        _fail(instance, "decide returned an index that is neither a class nor -1 (abstain)")
    if (decision == ABSTAIN).any() and not instance.can_abstain:
        _fail(instance, "abstains but its can_abstain is False: predict() would not know")


def check_confidence(confidence, params=None):
    """One score per sample, never NaN."""

    instance = _instance(confidence, params)
    X, y = small_data(2)
    with _registered(instance):
        model = TreeClassifier(confidence=instance, max_depth=3).fit(X, y)
        scores = model.decide(X).confidence
    if scores.shape != (X.shape[0],):
        _fail(instance, f"returned {scores.shape} scores for {X.shape[0]} samples")
    if np.isnan(scores).any():
        _fail(instance, "returned NaN scores")


def check_pruner(pruner, params=None):
    """Never enlarges a tree, and the result still predicts. A pruner that needs a
    criterion capability (split complexity: a standardised split statistic) is checked on
    a tree of a registered criterion that provides it, with the estimator and ``y`` of
    that criterion's target."""

    instance = _instance(pruner, params)
    X, y = small_data(2)
    estimator, settings, y = _estimator_meeting(instance, y)
    full = estimator(min_samples_leaf=3, **settings).fit(X, y)
    with _registered(instance):
        pruned = estimator(pruner=instance, min_samples_leaf=3, **settings).fit(X, y)
    if pruned.get_n_leaves() > full.get_n_leaves():
        _fail(
            instance,
            f"enlarged the tree from {full.get_n_leaves()} to {pruned.get_n_leaves()} leaves",
        )
    pruned.predict(X)


def _estimator_meeting(instance, y) -> tuple:
    """(estimator class, its settings, y) of a tree whose criterion provides what
    ``instance`` requires of the criterion (class labels and gini where that does)."""
    needed = frozenset(type(instance).requires.get("criterion", ()))
    registry = get_registry()
    if needed <= registry.get_class("criterion", "gini").provides:
        return TreeClassifier, {}, y
    for name, info in sorted(registry.components("criterion").items()):
        if needed <= info.cls.provides:
            target = registry.get_class("target", info.cls.default_target)
            if "survival_curves" in target.provides:
                return SurvivalTree, {"criterion": name}, example_response(target)
            if not target.decides_with_labeler:
                return TreeRegressor, {"criterion": name}, example_response(target)
            return TreeClassifier, {"criterion": name}, y
    _fail(instance, f"needs a criterion providing {sorted(needed)}, and none is registered")


def reference_leaf(tree, x, node: int = 0) -> int:
    """The leaf below ``node`` that the sample ``x`` reaches, walked in plain Python from
    each question's ``answer`` (a question it cannot answer sends it down the branch that
    took the most training weight): the oracle for the compiled routing kernels."""
    while tree.children(node).size:
        kids = tree.children(node)
        b = tree.question_of(node).answer(
            x, tree.feature[node], tree.threshold[node], tree.question_params(node), kids.size
        )
        node = int(kids[b if 0 <= b < kids.size else int(np.argmax(tree.shares(node)))])
    return node


def reference_reaching(tree, x) -> list[int]:
    """Every node the sample ``x`` reaches when a question it cannot answer sends it down
    every branch (as training samples are counted), sorted; plain Python."""
    reached, pending = [], [0]
    while pending:
        node = pending.pop()
        reached.append(node)
        kids = tree.children(node)
        if kids.size:
            b = tree.question_of(node).answer(
                x, tree.feature[node], tree.threshold[node], tree.question_params(node), kids.size
            )
            pending.extend([int(kids[b])] if 0 <= b < kids.size else [int(k) for k in kids])
    return sorted(reached)


def assert_same_tree(a, b, rtol: float = 1e-12, atol: float = 1e-12) -> None:
    """Two trees are the same: equal structure, questions, features, thresholds and row
    counts; class sums, weights, impurities, branch shares and the internal nodes'
    improvements equal within ``rtol`` / ``atol`` (two searches that agree on the split may
    add in another order). Raises AssertionError naming the first field that differs."""
    for field in ("child_start", "child_ids", "question", "feature", "threshold", "n_samples"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
    for field in ("statistics", "weight", "impurity", "child_shares"):
        np.testing.assert_allclose(
            getattr(a, field), getattr(b, field), rtol=rtol, atol=atol, err_msg=field
        )
    internal = ~a.is_leaf
    np.testing.assert_allclose(
        a.node_fields["improvement"][internal],
        b.node_fields["improvement"][internal],
        rtol=rtol,
        atol=atol,
        err_msg="improvement",
    )


def assert_same_quantiles(a, b, X, q=(0.1, 0.5, 0.9)) -> None:
    """Two fitted regressors keep the same training rows in every leaf (rows, their
    grouping by node, whether shares are kept) and so predict the same quantiles ``q`` of
    X, bit for bit: a splitter's ``training_leaves`` against the walk of X."""
    for kept, other in zip(a._leaf_responses, b._leaf_responses, strict=True):
        np.testing.assert_array_equal(kept.rows, other.rows)
        np.testing.assert_array_equal(kept.starts, other.starts)
        assert (kept.shares is None) == (other.shares is None)
    q = list(q)
    np.testing.assert_array_equal(a.predict(X, quantiles=q), b.predict(X, quantiles=q))


def _matching_criterion(target):
    if target.evidence == "one_hot":
        return "gini"
    for name, info in get_registry().components("criterion").items():
        if info.cls.evidence == target.evidence:
            return name
    raise ConformanceError(f"no installed criterion reads {target.evidence} rows")


def check_target(target, params=None, y=None, criterion=None, labeler=None):
    """A target kind, on :func:`small_data`'s rows with ``y`` (default: its class labels)
    and ``criterion`` (default: an installed one reading the target's rows): ``encode``
    writes one finite row per sample, the statistics of a node holding that row alone
    (``node_statistics``); ``node_values`` gives a row of finite values and a
    decision per node; the risk is finite, >= 0 and never grows by splitting a node (what
    cost-complexity pruning relies on: R(t) >= R(left) + R(right) on random partitions);
    sample losses are finite and >= 0, strata are integers >= 0; a tree fits, prunes by
    cross-validation (when the target provides ``node_risk``), predicts, and predicts the
    same after a JSON and a pickle round trip; ``check_tree`` accepts the fitted trees.
    ``labeler``: the labeler (name or instance) node values are made with (default: one
    reading the criterion's rows). A target that predicts labels
    (:meth:`Target.predicts_labels`) must name them in ``encode``, decide among them, and
    ``predict`` returns them; one whose ``encode`` names labels must say how it decides
    among them (the labeler, or ``decides_among_labels = True`` and its own rule)."""
    import pickle

    instance = _instance(target, params)
    X, labels = small_data(2)
    y = labels if y is None else y
    n = X.shape[0]
    arguments = example_arguments(type(instance))
    with _registered(instance):
        encoded = instance.encode(y, n, **arguments)
        rows = np.asarray(encoded.rows)
        if rows.ndim != 2 or rows.shape[0] != n or not np.isfinite(rows).all():
            _fail(instance, f"encode returned rows of shape {rows.shape}; {n} finite rows expected")
        given_labeler = labeler
        if isinstance(labeler, str) or labeler is None:
            labeler = get_registry().create("labeler", labeler or "majority")
        _check_label_declaration(instance, encoded.labels)
        rng = np.random.default_rng(0)
        for _ in range(20):
            parent = rng.random(n) < 0.6
            left = parent & (rng.random(n) < 0.5)
            right = parent & ~left
            sums = np.stack(
                [instance.node_statistics(rows[m], np.ones(m.sum())) for m in (parent, left, right)]
            )
            weights = np.array([m.sum() for m in (parent, left, right)], dtype=np.float64)
            values, decisions = instance.node_values(sums, weights, labeler)
            if np.shape(values)[0] != 3 or not np.isfinite(values).all():
                _fail(instance, "node_values must give a row of finite values per node")
            if np.shape(decisions) != (3,):
                _fail(instance, "node_values must give one decision per node")
            if "node_risk" not in instance.provides:
                continue  # no risk to check (cost-complexity pruning refuses the target)
            risk = np.asarray(instance.node_risk(sums, weights, labeler), dtype=np.float64)
            if risk.shape != (3,) or not np.isfinite(risk).all() or (risk < -1e-9).any():
                _fail(instance, f"node_risk must be finite and >= 0, got {risk}")
            if risk[0] < risk[1] + risk[2] - 1e-9 * max(1.0, abs(risk[0])):
                _fail(
                    instance,
                    f"splitting a node raised its risk ({risk[0]:g} < {risk[1]:g} + {risk[2]:g}); "
                    "cost-complexity pruning needs R(t) >= R(left) + R(right)",
                )
        # a row is the statistics of a node holding it alone (per-sample values and losses
        # read rows as such nodes)
        own = np.stack([instance.node_statistics(rows[i : i + 1], np.ones(1)) for i in range(n)])
        if not np.allclose(own, rows, rtol=1e-12, atol=1e-12):
            _fail(instance, "the node statistics of a single row with weight 1 are not the row")
        values, decisions = instance.node_values(rows, np.ones(n), labeler)
        loss = np.asarray(instance.sample_loss(rows, values, decisions, labeler))
        if loss.shape != (n,) or not np.isfinite(loss).all() or (loss < 0).any():
            _fail(instance, "sample_loss must give a finite loss >= 0 per sample")
        strata = np.asarray(instance.strata(rows, labeler))
        if strata.shape != (n,) or strata.dtype.kind not in "iu" or (strata < 0).any():
            _fail(instance, "strata must give an integer >= 0 per row")
        _check_category_order_column(instance, rows, rng)
        criterion = _matching_criterion(instance) if criterion is None else criterion
        if isinstance(criterion, str):
            criterion = get_registry().create("criterion", criterion)
        pruned = "node_risk" in instance.provides
        if arguments:  # a treatment's effect: a causal tree
            model = CausalTree(target=instance, criterion=criterion, max_depth=4, honest=False)
            model.fit(X, y, **arguments)
        else:
            model = TreeClassifier(
                target=instance,
                criterion=criterion,
                labeler=given_labeler
                if given_labeler is not None
                else _matching_labeler(criterion),
                pruner="cost_complexity" if pruned else "none",
                pruner_params={"cv": 2, "seed": 0} if pruned else None,
                max_depth=4,
            ).fit(X, y)
        predicted = model.predict(X)
        if instance.predicts_labels() and not np.isin(predicted, encoded.labels).all():
            _fail(instance, "predict returns values that are not among the labels encode names")
        for copy in (type(model).from_json(model.to_json()), pickle.loads(pickle.dumps(model))):
            if not same_predictions(copy.predict(X), predicted):
                _fail(instance, "a model predicts differently after a JSON or pickle round trip")


def _check_label_declaration(instance, labels) -> None:
    """Labels named by ``encode`` and the decision rule that reads them must agree: a
    target predicting labels names them; one naming labels decides among them by the
    labeler or declares its own rule (else ``predict`` has nothing to take them from)."""
    if instance.predicts_labels() and labels is None:
        _fail(instance, "predicts labels (decides_among_labels) but encode names none")
    if labels is not None and not instance.predicts_labels():
        _fail(
            instance,
            "encode names labels, but the target neither decides with the labeler nor "
            "declares decides_among_labels = True: predict could not return them (a target "
            "deciding by its own rule sets decides_among_labels = True)",
        )


def _check_category_order_column(instance, rows, rng) -> None:
    """A declared ``category_order_column`` j must give :meth:`category_order`'s order:
    the subset search computes ``sums[:, j] / weights`` in its kernel instead of calling it;
    a declared -1 (no order) must be a ``category_order`` that returns None."""
    column = instance.category_order_column(rows.shape[1])
    if column is None:
        return
    if not (isinstance(column, (int, np.integer)) and -1 <= column < rows.shape[1]):
        _fail(
            instance,
            f"category_order_column gave {column!r}; a statistic column, -1 or None expected",
        )
    groups = rng.integers(0, 5, rows.shape[0])
    present = np.unique(groups)
    weights = rng.uniform(0.5, 2.0, rows.shape[0])
    sums = np.stack(
        [instance.node_statistics(rows[groups == g], weights[groups == g]) for g in present]
    )
    totals = np.array([weights[groups == g].sum() for g in present])
    given = instance.category_order(sums, totals)
    if column == -1:
        if given is not None:
            _fail(
                instance,
                "category_order_column says -1 (no order), but category_order orders the "
                "categories",
            )
        return
    declared = sums[:, column] / totals
    if given is None or not np.array_equal(np.asarray(given, dtype=np.float64), declared):
        _fail(
            instance,
            f"category_order_column says column {column}, but category_order does not order "
            "the categories by that column's share of their weight",
        )


def check_evaluator(evaluator, params=None):
    """An evaluator mixes node values, whatever their width: on a fitted tree whose nodes
    hold more values than statistics (a regression tree holds fewer), ``predict_distribution``
    returns one column per value, finite, each row a mixture of the leaves' rows (between
    their smallest and largest). An evaluator whose kernels sized their output by the
    statistics wrote past it (numba does not check bounds); this shape check finds that."""
    import attrs

    instance = _instance(evaluator, params)
    X, y = small_data(2)
    with _registered(instance):
        try:
            model = TreeClassifier(max_depth=3, evaluator=instance).fit(X, y)
        except ValueError as exc:
            if "cannot be combined" in str(exc) or "needs" in str(exc):
                return
            raise
    tree = model.tree_
    width = tree.n_statistics + 3
    values = np.random.default_rng(0).uniform(0, 1, size=(tree.n_nodes, width))
    wide = attrs.evolve(tree, value=values)
    mixed = np.asarray(instance.predict_distribution(wide, X))
    if mixed.shape != (X.shape[0], width):
        _fail(
            instance,
            f"predict_distribution returned shape {mixed.shape} for a tree whose nodes hold "
            f"{width} values; one column per node value is expected",
        )
    leaves = values[tree.is_leaf]
    if (
        not np.isfinite(mixed).all()
        or (mixed < leaves.min(axis=0) - 1e-9).any()
        or (mixed > leaves.max(axis=0) + 1e-9).any()
    ):
        _fail(instance, "predict_distribution is not a mixture of the leaves' values")


def same_predictions(a, b) -> bool:
    """Whether two models' predictions are equal, NaN equal to NaN among numbers (a
    treatment effect where a leaf defines none); labels compared as they are."""
    a, b = np.asarray(a), np.asarray(b)
    numbers = a.dtype.kind == "f" and b.dtype.kind == "f"
    return bool(np.array_equal(a, b, equal_nan=numbers))


def check_json_round_trip(model, X):
    loaded = type(model).from_json(model.to_json())
    labels = model.composition_.target.predicts_labels()
    predict = (lambda m: m.predict_proba(X)) if labels else (lambda m: m.predict(X))
    if not same_predictions(predict(loaded), predict(model)):
        raise ConformanceError("the model's JSON round trip changes its predictions")


def check_question(
    question,
    n_branches: int = 2,
    n_features: int = 4,
    seed: int = 0,
    threshold: float = 0.5,
    params=None,
):
    """A question kind's contract: ``answer`` compiles with numba and gives, on random rows
    (negative, fractional and missing values included), a branch in ``[0, n_branches)`` or
    ``MISSING_BRANCH``, the same compiled and as plain Python; a missing tested value gives
    ``MISSING_BRANCH``; ``branch_texts`` words every branch; ``check_node`` accepts a well
    formed node (``threshold`` and ``params``, default 0.5 and 1, 2, ...). ``n_branches``
    is what the kind asks (2 for binary kinds). A kind declaring range candidates: they
    come in pairs, compile, give runs inside the values, and ``range_parameters`` makes a
    node ``check_node`` accepts."""
    from treekit_core.kernels.question_routing import routing_kernels

    instance = _instance(question)
    cls = type(instance)
    if not callable(cls.answer):
        _fail(instance, "has no `answer` function")
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(0, 4, size=(200, n_features)), 1)
    X[rng.random(X.shape) < 0.1] = np.nan
    X[:5, 0] = np.nan  # the tested feature missing
    if params is None and threshold == 0.5 and callable(cls.range_count):
        # a kind with range candidates makes its own well formed node
        threshold, params = _range_node(instance, np.arange(0.0, 7.0))
    params = np.arange(1.0, n_features + 1.0) if params is None else np.asarray(params, float)
    feature = 0
    try:
        kernels = routing_kernels((cls,))
        compiled = [
            int(kernels.dispatch(0, X[i], feature, threshold, params, n_branches))
            for i in range(X.shape[0])
        ]
    except Exception as exc:  # numba's typing errors are many classes
        _fail(instance, f"`answer` does not compile in numba's nopython mode: {exc}")
    plain = [int(cls.answer(X[i], feature, threshold, params, n_branches)) for i in range(200)]
    if compiled != plain:
        _fail(instance, "`answer` gives different branches compiled and as plain Python")
    bad = [b for b in compiled if not (b == MISSING_BRANCH or 0 <= b < n_branches)]
    if bad:
        _fail(instance, f"`answer` returned {bad[0]}, outside [0, {n_branches}) and not -1")
    if any(b != MISSING_BRANCH for b in compiled[:5]):
        _fail(instance, "`answer` gives a branch when the tested feature is missing")
    context = QuestionTextContext([f"x{j}" for j in range(n_features)], {}, 4)
    texts = instance.branch_texts(feature, threshold, params, n_branches, context)
    if len(texts) != n_branches or not all(isinstance(t, str) and t for t in texts):
        _fail(instance, f"`branch_texts` must give {n_branches} non-empty strings, got {texts!r}")
    problem = instance.check_node(feature, threshold, params, n_branches, n_features)
    if problem is not None:
        _fail(instance, f"`check_node` refuses a well formed node: {problem}")
    _check_hostile_nodes(instance, X, feature, threshold, params, n_branches, n_features)
    if cls.range_count is not None or cls.range_candidate is not None:
        _check_range_candidates(instance, n_features)


#: Values a crafted model file may put in a node's fields: indices past the row or
#: negative, huge, fractional, not finite.
HOSTILE_VALUES = (-1.0, -7.0, 1e9, -1e9, 0.5, 1e300, np.inf, np.nan)


def _check_hostile_nodes(instance, X, feature, threshold, params, n_branches, n_features):
    """``check_node`` is what stands between a model file and the compiled ``answer``,
    which numba runs without bounds checks: every node it accepts must be one ``answer``
    can run as plain Python (numpy checks the indices) on rows of ``n_features`` values,
    giving a branch or ``MISSING_BRANCH``. Probed with each parameter, the feature and the
    threshold replaced in turn by :data:`HOSTILE_VALUES` (and the feature by
    ``n_features``)."""
    cls = type(instance)
    rows = [np.nan_to_num(row, nan=0.5) for row in X[5:25]]  # tested values present
    nodes = [(f, threshold, params) for f in (n_features, -1, n_features + 3)]
    nodes += [(feature, t, params) for t in HOSTILE_VALUES]
    for i in range(params.size):
        for value in HOSTILE_VALUES + (float(n_features), float(params.size)):
            edited = params.copy()
            edited[i] = value
            nodes.append((feature, threshold, edited))
    for node_feature, node_threshold, node_params in nodes:
        what = (
            f"feature={node_feature}, threshold={node_threshold!r}, "
            f"params={np.array2string(node_params, precision=3)}"
        )
        try:
            problem = instance.check_node(
                node_feature, node_threshold, node_params, n_branches, n_features
            )
        except Exception as exc:  # noqa: BLE001 - what it raises is the finding
            _fail(
                instance,
                f"`check_node` raises {type(exc).__name__} on a node ({what}) instead of "
                "returning what is wrong with it",
            )
        if problem:
            continue  # refused: what a model file's reader does with it
        for row in rows:
            try:
                branch = int(cls.answer(row, node_feature, node_threshold, node_params, n_branches))
            except (IndexError, ValueError, OverflowError) as exc:
                _fail(
                    instance,
                    f"`check_node` accepts a node ({what}) on which `answer` fails as plain "
                    f"Python ({type(exc).__name__}: {exc}); compiled, numba would read outside "
                    "the row: refuse such fields in check_node",
                )
            if not (branch == MISSING_BRANCH or 0 <= branch < n_branches):
                _fail(
                    instance,
                    f"`check_node` accepts a node ({what}) on which `answer` gives branch "
                    f"{branch}, outside [0, {n_branches})",
                )


def _check_range_candidates(instance, n_features: int) -> None:
    """The range enumeration of a question kind (see :class:`treekit_core.Question`)."""
    import numba

    cls = type(instance)
    if not (callable(cls.range_count) and callable(cls.range_candidate)):
        _fail(instance, "declares one of range_count and range_candidate without the other")
    try:
        count, candidate = numba.njit(cls.range_count), numba.njit(cls.range_candidate)
        count(7)
        candidate(np.arange(7.0), 7, 0)
    except Exception as exc:  # numba's typing errors are many classes
        _fail(instance, f"range_count / range_candidate do not compile in nopython mode: {exc}")
    chosen = None
    for m in (2, 3, 7, 40, 300):
        values = np.arange(float(m))
        n = int(cls.range_count(m))
        if n < 0 or int(count(m)) != n:
            _fail(instance, f"range_count({m}) is {n}: negative, or not the same compiled")
        for index in range(min(n, 2000)):
            run = tuple(int(v) for v in cls.range_candidate(values, m, index))
            if run != tuple(int(v) for v in candidate(values, m, index)):
                _fail(instance, f"range_candidate({m} values, {index}) differs compiled")
            start, end = run
            if not (0 <= start < end <= m) or (start, end) == (0, m):
                _fail(
                    instance,
                    f"range_candidate({m} values, {index}) gave the run {run}: not inside "
                    f"[0, {m}] or holding every value",
                )
            chosen = chosen or (values,)
    if chosen is None:
        return
    threshold, params = _range_node(instance, chosen[0])
    problem = instance.check_node(0, threshold, params, 2, n_features)
    if problem is not None:
        _fail(instance, f"`range_parameters` makes a node check_node refuses: {problem}")


def _range_node(instance, values):
    """(threshold, params) of the node ``range_parameters`` makes for the first candidate
    run of ``values`` (None params when the kind has no candidate there)."""
    cls, m = type(instance), values.shape[0]
    if int(cls.range_count(m)) <= 0:
        return 0.5, None
    start, end = (int(v) for v in cls.range_candidate(values, m, 0))
    if not (0 <= start < end <= m):
        return 0.5, None  # reported by the range checks
    before = values[start - 1] if start > 0 else -np.inf
    after = values[end] if end < m else np.inf
    threshold, fields = instance.range_parameters(before, values[start], values[end - 1], after)
    params = instance.parameters(fields) if cls.parameter_field else np.zeros(1)
    return float(threshold), params


_CORRUPTION_RUNNER = """
import json, sys
import numpy as np
from treekit_core import ForestClassifier, TreeClassifier
cases = json.load(open(sys.argv[1]))
X = np.array(json.load(open(sys.argv[2])), dtype=float)
estimators = {"TreeClassifier": TreeClassifier, "ForestClassifier": ForestClassifier}
for name, expected, payload in cases:
    print("CASE", name, flush=True)
    try:
        kind = estimators.get(payload.get("estimator"), TreeClassifier)
        model = kind.from_json(json.dumps(payload))
        model.decide(X)
        print("LOADED", name, flush=True)
    except Exception as exc:
        print("REFUSED", json.dumps([name, expected, type(exc).__name__, str(exc)]), flush=True)
print("DONE", flush=True)
"""


def check_corrupted_model_files(cases, X, jit: bool = True, plugins=None) -> None:
    """Every corrupted model file in ``cases`` (a list of (name, text the error must
    contain, model payload as a dict)) is refused with an error naming the field: loaded
    and used (``decide(X)``) in one separate process, so a crash shows as its return code
    together with the case that caused it. ``jit=False`` runs without numba's compiler
    (``NUMBA_DISABLE_JIT=1``), where an out-of-bounds access raises IndexError instead of
    corrupting memory. ``plugins``: the value of TREEKIT_LOAD_PLUGINS for that process."""
    import json
    import os
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        cases_path = os.path.join(folder, "cases.json")
        X_path = os.path.join(folder, "X.json")
        with open(cases_path, "w", encoding="utf-8") as handle:
            json.dump(cases, handle)
        with open(X_path, "w", encoding="utf-8") as handle:
            X = np.asarray(X, dtype=np.float64)
            json.dump(np.where(np.isnan(X), None, X).tolist(), handle)
        env = dict(os.environ)
        env.pop("NUMBA_DISABLE_JIT", None)
        if not jit:
            env["NUMBA_DISABLE_JIT"] = "1"
        if plugins is not None:
            env["TREEKIT_LOAD_PLUGINS"] = plugins
        done = subprocess.run(
            [sys.executable, "-c", _CORRUPTION_RUNNER, cases_path, X_path],
            capture_output=True,
            text=True,
            env=env,
            timeout=900,
        )
    lines = done.stdout.splitlines()
    last = next((line for line in reversed(lines) if line.startswith("CASE")), None)
    if done.returncode != 0 or not lines or lines[-1] != "DONE":
        raise ConformanceError(
            f"the process died (return code {done.returncode}) at {last}:\n{done.stderr[-2000:]}"
        )
    loaded = [line[len("LOADED ") :] for line in lines if line.startswith("LOADED")]
    if loaded:
        raise ConformanceError("corrupted model files were accepted: " + ", ".join(loaded))
    vague = [
        f"{name}: {kind}: {message}"
        for name, expected, kind, message in (
            json.loads(line[len("REFUSED ") :]) for line in lines if line.startswith("REFUSED")
        )
        if expected not in message or kind in ("IndexError", "KeyError", "RecursionError")
    ]
    if vague:
        raise ConformanceError("errors that do not name the field:\n" + "\n".join(vague))


def check_component(component, params=None, y=None):
    """Run the checks for the component's kind. ``y``: for a target, or a criterion of a
    target other than class labels, what the target reads for :func:`small_data`'s rows."""
    instance = _instance(component, params)
    if instance.kind == "question":  # not part of a composition: its own checks only
        check_question(instance)
        return
    if instance.kind == "target":  # it fits with a criterion of its own rows
        check_target(instance, y=y if y is not None else _target_example(instance))
        return
    if y is not None and instance.kind == "criterion":
        check_criterion(instance, y=y)
        return
    if instance.kind == "loss":  # boosting's, not a composition's
        check_loss(instance)
        return
    checks = {
        "criterion": check_criterion,
        "splitter": check_splitter,
        "labeler": check_labeler,
        "confidence": check_confidence,
        "pruner": check_pruner,
        "evaluator": check_evaluator,
    }
    if instance.kind in checks:
        checks[instance.kind](instance)

    X, y = small_data(2)
    fitting = TreeClassifier(max_depth=3, **{instance.kind: instance}).fit
    if instance.kind == "criterion":
        fitting = _tree_fitting(instance)
        if instance.evidence != "one_hot":  # labels as numbers, or as follow-up
            y = example_response(get_registry().get_class("target", instance.default_target))
    with _registered(instance):
        try:
            model = fitting(X, y)
        except ValueError as exc:
            if "cannot be combined" in str(exc) or "needs" in str(exc):
                return
            raise
        check_json_round_trip(model, X)


from treekit_core.testing.losses import check_loss  # noqa: E402 - after the helpers it uses

__all__ = [
    "check_loss",
    "assert_same_tree",
    "ConformanceError",
    "check_component",
    "check_confidence",
    "check_corrupted_model_files",
    "check_criterion",
    "check_evaluator",
    "check_json_round_trip",
    "check_labeler",
    "check_pruner",
    "check_question",
    "check_target",
    "check_splitter",
    "monotonic_violation",
    "reference_leaf",
    "reference_reaching",
    "small_data",
    "tree_paths",
]

"""The composed-estimator base: what every estimator shares, whatever it predicts and
however many trees it holds (the composition from the parameters, input checks, the model
file, the leaves a row reaches).

The estimator layer is three axes put together by the public classes
(``docs/architecture.md``, the estimator layer):

* this base, :class:`ComposedEstimator`;
* a structure: one tree (:class:`~treekit_core.estimators.single_tree.SingleTreeEstimator`)
  or an ensemble grown on bootstraps
  (:class:`~treekit_core.estimators.ensemble.EnsembleEstimator`): how trees are grown,
  stored, walked and averaged;
* a family, by what is predicted: classes
  (:class:`~treekit_core.estimators.decisions.ClassifierFamily`), numbers
  (:class:`~treekit_core.estimators.regression.RegressorFamily`) or censored follow-up
  (:class:`~treekit_core.estimators.survival.SurvivalFamily`): what ``fit`` takes, what
  ``predict`` returns, ``score`` and scikit-learn's tags.

A public estimator is ``class TreeRegressor(RegressorFamily, SingleTreeEstimator)`` with its
parameters; no public estimator subclasses another. The structure calls the family's hooks
below (each says when); the family calls the structure's (:meth:`_trees`,
:meth:`_node_values`, :meth:`_tree_weights`, :meth:`_fit_validated`)."""

from __future__ import annotations

import attrs
import numpy as np

from treekit_core.components import KINDS
from treekit_core.engine.composition import Composition
from treekit_core.engine.constraints import resolve_constraints
from treekit_core.engine.stopping import StoppingRules
from treekit_core.engine.validation import check_n_threads
from treekit_core.estimators.inputs import InputChecks, composition_for_labels, open_unit_share
from treekit_core.estimators.memberships import leaf_mixtures
from treekit_core.estimators.model_file import ModelFile
from treekit_core.estimators.params import ParamsMixin
from treekit_core.registry import get_registry

STOPPING_PARAMS = (
    "max_depth",
    "min_samples_split",
    "min_samples_leaf",
    "min_weight_fraction_leaf",
    "min_impurity_decrease",
    "min_gain",
)


def node_indicator(tree, leaves: np.ndarray):
    """CSR matrix n_samples x n_nodes with the nodes from the root to each sample's leaf."""
    from scipy.sparse import csr_matrix

    parent = tree.parents()
    leaves = np.asarray(leaves, dtype=np.int64)
    paths = {}
    for leaf in np.unique(leaves).tolist():  # the paths of the leaves reached, once each
        path, node = [], leaf
        while node >= 0:
            path.append(node)
            node = parent[node]
        paths[leaf] = path[::-1]
    rows = [paths[leaf] for leaf in leaves.tolist()]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
    indices = np.concatenate(rows).astype(np.int64) if rows else np.zeros(0, dtype=np.int64)
    data = np.ones(indices.shape[0], dtype=np.int64)
    return csr_matrix((data, indices, indptr), shape=(len(rows), tree.n_nodes))


class ComposedEstimator(InputChecks, ModelFile, ParamsMixin):
    """What every composed estimator shares: the composition made from its parameters, the
    input checks, the model file, and the leaves a row reaches. The hooks a family
    overrides do nothing here."""

    #: The kinds of component a family has no parameter for, and the component it composes
    #: in their place (a regressor decides among no classes, so it names no labeler): not
    #: parameters, so get_params, clone and grids never see them.
    fixed_components: dict = {}

    # -- the hooks a family overrides (here: what a family without them needs) ----------
    def _check_params(self) -> None:
        """Check the parameters that are not components before anything is fitted (``fit``
        and the model-file reader call it first). Overrides call ``super()``."""
        check_honesty_params(*self._honesty_params())

    def _honesty_params(self) -> tuple:
        """(honest, honest_fraction, honest_prune_leaves) (``estimators/honesty.py``); an
        estimator without them (boosting, a plugin's) is not honest."""
        return (
            getattr(self, "honest", False),
            getattr(self, "honest_fraction", 0.5),
            getattr(self, "honest_prune_leaves", True),
        )

    def _check_target(self, composition) -> None:
        """Refuse a composition whose target this estimator cannot predict from, naming
        the criterion and the target. Called by ``fit``, ``fit_grown_tree`` and the model-
        file reader once the composition is made."""

    def _check_classes(self, classes) -> None:
        """Check the labels fit found (None for a target deciding among none). Called by
        the training-input checks once y is encoded."""

    def _growth_data(self, data, composition):
        """The training data the trees are grown on (the classifier weighs classes).
        Called by ``_fit_validated`` before growth."""
        return data

    def _after_growth(self, data, rule) -> None:
        """Fit what the family fits after the trees (the classifier's rejection and
        calibration, with ``rule``). Called last by ``_fit_validated``."""

    def _fitted_without_rows(self) -> None:
        """Forget what needs the training rows after growth, for a tree grown elsewhere.
        Called last by ``fit_grown_tree``."""

    def _fit_checked(self, X, y, sample_weight, rule=None, **target_arguments):
        """The fit every family runs: the parameters and the composition checked, the
        training inputs checked and encoded, then the structure's growth (with the trees
        ``warm_start`` keeps); returns the training data."""
        self._check_params()
        composition = self._make_composition()
        self._check_target(composition)
        data, classes = self._validate_training(
            X, y, sample_weight, composition, **target_arguments
        )
        self._fit_validated(data, classes, composition, rule, *self._kept_trees(data, classes))
        return data

    @property
    def can_abstain_(self) -> bool:
        """Whether ``predict`` may abstain: never, for a family that decides among no
        classes (the classifier family says when it may)."""
        self._check_fitted()
        return False

    def _mixtures(self, tree, X, training: bool = False):
        """(rows, nodes, shares), sorted by row: the leaves each sample reaches and with
        what share. An evaluator that sends a sample to one node gives it share 1 there;
        hard routing gives a sample with a missing tested value C4.5's shares; an
        evaluator that mixes leaves (soft evaluation) is asked to mix the leaves' indicator
        vectors, so its shares come out exactly as it weighs the leaves' values. With
        ``training``, the rows are counted in the leaves as they were grown: by hard
        routing, whatever the evaluator mixes."""
        return leaf_mixtures(self.composition_.evaluator, tree, X, training)

    def make_composition(self, n_features=None, feature_names=None) -> Composition:
        """The composition the parameters name (components made from the registry), as
        ``fit`` makes it before growing; given ``n_features`` (and the columns' names), with
        ``monotonic_cst`` and ``interaction_cst`` resolved against them as ``fit`` resolves
        them. Called by growers outside the core that grow its trees elsewhere (the Dask
        estimators)."""
        composition = self._make_composition()
        if n_features is not None:
            composition.constraints = resolve_constraints(
                getattr(self, "monotonic_cst", None),
                getattr(self, "interaction_cst", None),
                n_features,
                feature_names,
            )
        return composition

    def _composition_for(self, labels, rows=None) -> Composition:
        """The composition the parameters name, its target the one for these ``labels``
        (``Target.with_labels``) and, where they or the target's ``rows`` (some of them, or
        a tree's statistics) hold several outputs, its criterion's ``for_outputs``: what a
        refit of fitted parameters grows with (cross-validation copies, ``prune``) and what
        a model file's labels read with."""
        return composition_for_labels(self._make_composition(), labels, rows)

    def _make_composition(self) -> Composition:
        registry = get_registry()
        components = {
            kind: registry.create(kind, *self._component_choice(kind))
            for kind in KINDS
            if kind != "target"
        }
        components["target"] = registry.create(
            "target",
            self._target_name(components["criterion"]),
            getattr(self, "target_params", None),
        )
        stopping = StoppingRules(
            **{name: getattr(self, name) for name in STOPPING_PARAMS},
            # an estimator without the parameter grows depth first
            max_leaf_nodes=getattr(self, "max_leaf_nodes", None),
        )
        return Composition(
            **components,
            stopping=stopping,
            registry=registry,
            n_threads=check_n_threads(getattr(self, "n_threads", None)),
        )

    def _component_choice(self, kind: str) -> tuple:
        """(name or instance, parameters) of the component of ``kind``: the estimator's
        parameters, or the family's fixed choice for a kind it has none for."""
        if kind in self.fixed_components:
            return self.fixed_components[kind], None
        return getattr(self, kind), getattr(self, f"{kind}_params")

    def get_params(self, deep: bool = True) -> dict:
        """The constructor's parameters; with ``deep`` (scikit-learn's default) also every
        component's parameters under scikit-learn's nested names (``pruner__rule``), as the
        component would be made: its defaults, updated by ``<kind>_params``."""
        params = super().get_params(deep)
        if deep:
            for kind in (kind for kind in KINDS if kind in params):
                for name, value in self._component_params(kind).items():
                    params[f"{kind}__{name}"] = value
        return params

    def set_params(self, **params):
        """Constructor parameters, and one parameter of a component by scikit-learn's
        nested name, ``pruner__rule`` or ``pruner_params__rule`` (written into
        ``pruner_params``; a component given as an instance is copied with it). Naming a
        different component without its ``<kind>_params`` in the same call drops the old
        component's parameters, so a grid may mix components whose parameters differ."""
        plain = {key: value for key, value in params.items() if "__" not in key}
        for kind in KINDS:
            if (
                kind in plain
                and f"{kind}_params" not in plain
                and not _same(plain[kind], getattr(self, kind, None))
            ):
                plain[f"{kind}_params"] = None
        super().set_params(**plain)
        for key, value in params.items():
            if "__" in key:
                self._set_component_param(key, value)
        return self

    def _set_component_param(self, key: str, value) -> None:
        head, name = key.split("__", 1)
        kind = head[: -len("_params")] if head.endswith("_params") else head
        if kind not in KINDS or "__" in name:
            raise ValueError(
                f"invalid parameter {key!r} for {type(self).__name__}: nested names are "
                f"<kind>__<parameter> or <kind>_params__<parameter>, kinds {', '.join(KINDS)}"
            )
        current = self._component_params(kind)
        if name in current and _same(current[name], value):
            return  # unchanged: <kind>_params stays as given (None stays None)
        spec = getattr(self, kind)
        if spec is not None and not isinstance(spec, str):  # a ready instance
            setattr(self, kind, attrs.evolve(spec, **{name: value}))
        else:
            given = getattr(self, f"{kind}_params") or {}
            setattr(self, f"{kind}_params", {**given, name: value})

    def _component_params(self, kind: str) -> dict:
        """The parameters the component of ``kind`` would be made with (empty when it cannot
        be told: an unknown name, or a target that follows from the criterion)."""
        spec = getattr(self, kind, None)
        if spec is not None and not isinstance(spec, str):  # a ready instance
            return spec.get_params()
        given = dict(getattr(self, f"{kind}_params", None) or {})
        if not isinstance(spec, str):
            return given
        try:
            cls = get_registry().get_class(kind, spec)
        except Exception:  # an unknown name: fit says so; here, what was given
            return given
        defaults = {}
        for field in attrs.fields(cls) if attrs.has(cls) else ():
            if isinstance(field.default, attrs.Factory):
                defaults[field.name] = field.default.factory()
            elif field.default is not attrs.NOTHING:
                defaults[field.name] = field.default
        return {**defaults, **given}

    def _target_name(self, criterion):
        """The ``target`` parameter, or when it is None the target the criterion reads
        (:attr:`~treekit_core.components.Criterion.default_target`)."""
        target = getattr(self, "target", None)
        return criterion.default_target if target is None else target

    def __setstate__(self, state) -> None:
        """Unpickled: the composition gets this process's registry (a composition travels
        without one, and the engine never fetches one); an estimator pickled by an older
        treekit gets the defaults of the parameters added since (its target: the one its
        criterion reads)."""
        for name, default in self._param_defaults().items():  # parameters added since
            state.setdefault(name, default)
        self.__dict__.update(state)
        composition = state.get("composition_")
        if composition is not None and composition.registry is None:
            composition.registry = get_registry()
        if composition is not None and composition.target is None:
            composition.target = composition.registry.create(
                "target", self._target_name(composition.criterion)
            )

    def _input_tags(self) -> dict:
        """Sparse X is densified, nominal columns are accepted, and NaN is when every
        component of the composition that reads X handles missing values."""
        try:
            components = self._make_composition().components.values()
        except Exception:  # invalid parameters: fit will say which; claim nothing here
            return {"allow_nan": False, "sparse": True, "categorical": True}
        allow_nan = all(c.handles_missing for c in components if c.sees_features)
        return {"allow_nan": allow_nan, "sparse": True, "categorical": True}


def check_honesty_params(honest, honest_fraction, honest_prune_leaves) -> None:
    """Refuse honesty parameters of the wrong kind, naming them (``fit`` calls it)."""
    if not isinstance(honest, bool | np.bool_):
        raise ValueError(f"honest must be True or False, got {honest!r}")
    if not isinstance(honest_prune_leaves, bool | np.bool_):
        raise ValueError(f"honest_prune_leaves must be True or False, got {honest_prune_leaves!r}")
    open_unit_share(
        honest_fraction,
        "honest_fraction (the share of the rows that grows the structure) must be a number "
        "in (0, 1)",
    )


def _same(a, b) -> bool:
    """Whether two parameter values are equal (arrays compared by value)."""
    if a is b:
        return True
    try:
        return bool(np.array_equal(a, b)) if isinstance(a, np.ndarray) else bool(a == b)
    except (TypeError, ValueError):
        return False

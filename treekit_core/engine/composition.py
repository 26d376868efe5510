"""A composition: one component of every kind plus the stopping rules.

The estimator, the cross-validating pruners and the forest all grow trees through a
:class:`Composition`, so a plugin composition is pruned and bagged exactly like the
classic one.
"""

from __future__ import annotations

import attrs
import numpy as np

from treekit_core.compile_errors import KernelCompileError
from treekit_core.components import CAPABILITIES, KINDS
from treekit_core.components.errors import CompositionError
from treekit_core.engine.constraints import Constraints
from treekit_core.engine.feature_sampling import AllFeatures
from treekit_core.engine.grow import grow_tree
from treekit_core.engine.stopping import StoppingRules
from treekit_core.engine.tree import Tree
from treekit_core.hookspecs import fit_started_arguments


def capability_meaning(capability: str, components) -> str | None:
    """What ``capability`` means: the core's description
    (:data:`~treekit_core.components.CAPABILITIES`), else one a component of the
    composition gives (``capability_descriptions``), else None."""
    if capability in CAPABILITIES:
        return CAPABILITIES[capability]
    for component in components:
        if capability in component.capability_descriptions:
            return component.capability_descriptions[capability]
    return None


@attrs.define(eq=False)
class Composition:
    criterion: object
    splitter: object
    propagator: object
    pruner: object
    labeler: object
    evaluator: object
    confidence: object
    #: What the tree predicts (None only in a composition unpickled from treekit 0.3, until
    #: its estimator hands it the target its criterion implies).
    target: object = None
    stopping: StoppingRules = attrs.field(factory=StoppingRules)
    registry: object = None
    feature_sampler: object = attrs.field(factory=AllFeatures)
    #: False when trees are grown in several threads at once (a forest's n_jobs): each
    #: fit then runs on one thread.
    parallel_kernels: bool = True
    #: The estimator's ``n_threads``: the most threads one fit may run (None: all usable).
    n_threads: object = None
    #: Monotonic and interaction constraints every tree respects (engine/constraints.py).
    constraints: Constraints = attrs.field(factory=Constraints)

    def __reduce__(self):
        """Pickled without the registry (it holds plugin modules): whoever unpickles it
        hands it the registry of its process (an estimator does so in ``__setstate__``);
        the engine never fetches one itself."""
        return _composition_without_registry, ({**self.components, **self.settings()},)

    def settings(self) -> dict:
        """What the composition holds besides its components and registry."""
        return {
            "stopping": self.stopping,
            "feature_sampler": self.feature_sampler,
            "parallel_kernels": self.parallel_kernels,
            "n_threads": self.n_threads,
            "constraints": self.constraints,
        }

    def offers_fused_growth(self) -> bool:
        """Whether the splitter may grow whole trees (it provides a fused builder) and the
        propagator sends every row wholly down one branch, which such a builder assumes:
        the grow loop then asks the splitter's ``build_tree`` first (which declines what it
        cannot keep: monotonic constraints, unless it says otherwise). Interaction
        constraints are kept by the node-by-node loop only (it holds each node's path). A
        builder grows best first under ``stopping.max_leaf_nodes`` or declines."""
        return (
            "fused_builder" in self.splitter.provides
            and "hard_partition" in self.propagator.provides
            and not self.constraints.has_interaction
        )

    def grows_in_one_call(self, data) -> bool:
        """Whether trees of this composition grow on ``data`` in one compiled call (fused
        growth that takes this data): forests run node-by-node growth, Python that
        threads only contend for, in one thread."""
        return self.offers_fused_growth() and self.splitter.grows_in_one_call(self, data)

    def fit_threads(self) -> int:
        """Threads one tree's fit may run (:func:`treekit_core.kernels.usable_cpus.fit_threads`);
        called by components that run kernels in parallel."""
        if not self.parallel_kernels:
            return 1
        from treekit_core.kernels.usable_cpus import fit_threads

        return fit_threads(self.n_threads)

    @property
    def components(self) -> dict:
        return {kind: getattr(self, kind) for kind in KINDS}

    def describe(self) -> dict:
        return {
            kind: {"name": c.name, "params": c.get_params()} for kind, c in self.components.items()
        }

    def check_evidence(self) -> None:
        """Refuse a criterion (and, when the target decides with it, a labeler) that reads
        other rows than the target writes, naming both components. Called by ``fit``
        before the target encodes anything, and by :meth:`check`."""
        target, criterion, labeler = self.target, self.criterion, self.labeler
        if criterion.evidence != target.evidence:
            with_labeler = target.decides_with_labeler
            raise CompositionError(
                f"target {target.name!r} cannot be combined with criterion {criterion.name!r}"
                + (f" and labeler {labeler.name!r}" if with_labeler else "")
                + f": the target writes {target.evidence} rows, the criterion reads "
                f"{criterion.evidence} rows"
                + (f", the labeler {labeler.evidence} rows" if with_labeler else "")
            )
        if target.decides_with_labeler and labeler.evidence != target.evidence:
            raise CompositionError(
                f"criterion {criterion.name!r} cannot be combined with labeler {labeler.name!r}: "
                f"target {target.name!r} writes {target.evidence} rows, which the criterion "
                f"reads and the labeler does not (it reads {labeler.evidence} rows)"
            )

    def check(self, data=None) -> None:
        """Refuse impossible compositions (naming both components) and unsupported data."""
        self.check_evidence()
        components = self.components
        for kind, component in components.items():
            for other_kind, needed in component.requirements().items():
                other = components[other_kind]
                if (kind, other_kind) == ("criterion", "splitter") and (
                    "own_split_statistic" in other.provides
                ):
                    continue  # the splitter searches by its own statistic, not the criterion's
                missing = set(needed) - set(other.provides)
                if missing:
                    capability = sorted(missing)[0]
                    meaning = capability_meaning(capability, components.values())
                    raise CompositionError(
                        f"{kind} {component.name!r} cannot be combined with {other_kind} "
                        f"{other.name!r}: {component.name!r} needs {capability}"
                        f"{f' ({meaning})' if meaning else ''}, which "
                        f"{other.name!r} does not provide"
                    )
        for component in components.values():
            component.check_composition(self)
        if data is not None:
            for component in components.values():
                component.check_data(data)
            self.check_constraints(data)

    def check_constraints(self, data) -> None:
        """Refuse constraints the composition cannot keep on ``data``, naming the component
        (or the feature) and why. Called by :meth:`check` with the training data."""
        constraints = self.constraints
        if constraints.has_interaction and "interaction_constraints" not in self.splitter.provides:
            raise CompositionError(
                f"splitter {self.splitter.name!r} cannot keep interaction_cst: "
                f"{CAPABILITIES['interaction_constraints']}, which it does not provide"
            )
        if not constraints.has_monotonic:
            return
        if "monotonic_constraints" not in self.splitter.provides:
            raise CompositionError(
                f"splitter {self.splitter.name!r} cannot keep monotonic_cst: it needs "
                f"monotonic_constraints ({CAPABILITIES['monotonic_constraints']}), which "
                f"{self.splitter.name!r} does not provide"
            )
        if "monotone_routing" not in self.evaluator.provides:
            raise CompositionError(
                f"evaluator {self.evaluator.name!r} cannot keep monotonic_cst: it needs "
                f"monotone_routing ({CAPABILITIES['monotone_routing']}), which "
                f"{self.evaluator.name!r} does not provide"
            )
        try:
            value = self.target.monotone_value(data.n_statistics)
        except ValueError as error:
            raise CompositionError(
                f"target {self.target.name!r} cannot keep monotonic_cst: {error}"
            ) from None
        if value is None:
            raise CompositionError(
                f"target {self.target.name!r} (criterion {self.criterion.name!r}) cannot keep "
                "monotonic_cst: it declares no node value to order (Target.monotone_value)"
            )
        constrained = np.flatnonzero(np.asarray(constraints.monotonic) != 0)
        if len(constraints.monotonic) != data.n_features:
            raise CompositionError(
                f"monotonic_cst has {len(constraints.monotonic)} entries but the data has "
                f"{data.n_features} features"
            )
        nominal = np.intersect1d(constrained, data.nominal_features)
        if nominal.size:
            raise CompositionError(
                f"monotonic_cst constrains feature {int(nominal[0])}, which is nominal: a "
                "constraint orders the values of a numeric feature (categories have no "
                "order); encode it as numbers, or leave it 0"
            )

    # -- fitting --------------------------------------------------------------------
    def grow(self, data, rng: np.random.Generator) -> Tree:
        """Grow and label a tree (no pruning). A component's function that numba cannot
        compile is one error naming the component (:class:`KernelCompileError`)."""
        try:
            tree = grow_tree(self, data, rng)
        except KernelCompileError as exc:
            raise exc.naming(self._owner_of(exc.function)) from None
        tree.relabel(self.target, self.labeler)
        return tree

    def _owner_of(self, function) -> str | None:
        """``criterion 'name'`` when ``function`` is the criterion's impurity or split
        score (the plain-Python functions a composition's kernels inline), else None."""
        criterion = self.criterion
        if function in (type(criterion).impurity, type(criterion).split_score):
            return f"criterion {criterion.name!r}"
        return None

    def fit(self, data, rng: np.random.Generator, honest=None) -> Tree:
        """Grow, label, prune, and let the evaluator and confidence learn their state."""
        return self.fit_keeping_grown(data, rng, honest)[1]

    def fit_keeping_grown(self, data, rng: np.random.Generator, honest=None) -> tuple[Tree, Tree]:
        """(the grown tree before pruning, the final tree) of :meth:`fit`; the same object
        twice when the pruner changed nothing. ``honest`` (an honest split of the rows,
        ``treekit_core.estimators.honesty.HonestSplit``): the tree grows on
        ``honest.structure(data)``, then ``honest.estimate(self, grown, data)`` gives the
        tree estimated from the other rows and the data the rest of the fit reads."""
        hook = self.registry.plugin_manager.hook if self.registry is not None else None
        if hook is not None and self.registry.hook_has_listeners("treekit_fit_started"):
            hook.treekit_fit_started(
                **fit_started_arguments(self, data.n_samples, data.n_features, data.n_statistics)
            )
        if honest is None:
            grown = self.grow(data, rng)
        else:
            grown = self.grow(honest.structure(data), rng)
            grown, data = honest.estimate(self, grown, data)
        tree = self.finish(grown, data, rng)
        if hook is not None and self.registry.hook_has_listeners("treekit_fit_finished"):
            hook.treekit_fit_finished(composition=self, tree=tree)
        return grown, tree

    def check_finish_without_rows(self) -> None:
        """Refuse, naming it, an evaluator or confidence that learns its state from the
        training rows (``reads_training_rows``): a tree grown elsewhere is finished
        without them. Called by ``fit_grown_tree`` when its data hold no rows, and by
        growers that see the data in parts before they grow (treekit-dask)."""
        for component in (self.evaluator, self.confidence):
            if component is not None and component.reads_training_rows:
                raise CompositionError(
                    f"{component.kind} {component.name!r} learns its state from the training "
                    "rows, which a tree grown elsewhere does not bring to it: choose a "
                    f"{component.kind} that needs none, or parameters that give it what it "
                    "would learn from them"
                )

    def finish(self, grown: Tree, data, rng: np.random.Generator, cross_validation=None) -> Tree:
        """Prune a labelled grown tree and let the evaluator and confidence learn their
        state: the rest of a fit after growth (also for a tree grown elsewhere, a
        distributed grower's, with ``data`` describing the training data and
        ``cross_validation`` the errors it measured: :class:`PruningContext`)."""
        context = PruningContext(self, data, rng, cross_validation)
        tree = self.pruner.prune(grown, context)
        tree.component_state["evaluator"] = self.evaluator.fit(tree, data, self.labeler)
        tree.component_state["confidence"] = self.confidence.fit(tree, data, self.labeler)
        return tree

    # -- using ----------------------------------------------------------------------
    def decide(self, tree: Tree, X: np.ndarray, with_confidence: bool = True):
        """(values: for class targets the class distribution; decision index with -1 =
        abstain; confidence or None)."""
        proba = self.evaluator.predict_distribution(tree, X)
        decision = self.target.decide(proba, self.labeler)
        if not with_confidence:
            return proba, decision, None
        confidence = np.asarray(self.confidence.score(tree, X, proba, decision), dtype=np.float64)
        return proba, decision, confidence


def _composition_without_registry(state: dict) -> Composition:
    return Composition(**state)


#: The name pickles written by treekit 0.3.0 unpickle a composition with (its registry is
#: then handed back by the estimator, as for any composition).
_recreate_composition = _composition_without_registry


@attrs.define(eq=False)
class PruningContext:
    """What a pruner may use: the composition, the training data and a random generator."""

    composition: Composition
    data: object
    rng: np.random.Generator
    #: (cv_error, cv_std_error) per subtree level of the tree being pruned, when its
    #: cross-validation folds were grown elsewhere (a distributed grower); None: a pruner
    #: that cross-validates does so on ``data``.
    cross_validation: tuple | None = None

    @property
    def labeler(self):
        return self.composition.labeler

    @property
    def target(self):
        return self.composition.target

    @property
    def criterion(self):
        return self.composition.criterion

    def grow_on(self, rows: np.ndarray) -> Tree:
        """Grow and label an unpruned tree on a subset of the training rows."""
        return self.composition.grow(self.data.subset(rows), self.rng)

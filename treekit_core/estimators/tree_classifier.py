"""TreeClassifier: a composition of components with scikit-learn's conventions."""

from __future__ import annotations

import numpy as np

from treekit_core.builtins.evaluators import apply_tree
from treekit_core.components import ABSTAIN
from treekit_core.engine.importances import tree_importances
from treekit_core.engine.rejection import RejectRule
from treekit_core.engine.tree_text import export_text
from treekit_core.estimators import model_file
from treekit_core.estimators.base import ComposedEstimatorMixin, node_indicator
from treekit_core.estimators.inputs import _rng
from treekit_core.estimators.parameter_docs import document_parameters
from treekit_core.estimators.pruning_paths import PruningPaths


@document_parameters
class TreeClassifier(PruningPaths, ComposedEstimatorMixin):
    """A decision tree composed from registered components by name.

    Each component argument takes a registered name (see ``treekit plugins``) or a ready
    component instance; ``<kind>_params`` holds the parameters of a named component.
    ``target`` says what the tree predicts (None: the target the criterion reads, class
    labels for the built-in criteria; ``fit(X, counterexamples=...)`` needs one that reads
    counterexamples). With a target that does not decide among labels, ``predict`` returns
    the target's predictions and ``predict_proba`` refuses.

    The defaults are scikit-learn's: ``TreeClassifier()`` grows the full, unpruned tree
    (as ``DecisionTreeClassifier()`` does). rpart and J48 prune by default; for that,
    ``pruner="cost_complexity"`` (``pruner_params={"rule": "one_se"}`` is rpart's advice)
    or ``splitter="c45", pruner="pessimistic"``. The command line prunes by default.

    ``class_weight`` (None, a dict class -> weight, or "balanced") multiplies every row's
    weight by its class's, as scikit-learn's: splits, stopping rules and leaf proportions
    (``predict_proba``) are class-weighted.

    Stopping rules have scikit-learn's meaning; ``min_gain`` is the handout's threshold
    beta (a node becomes a leaf when the unweighted impurity drop of its best split is
    <= beta; None disables it).

    ``monotonic_cst`` (scikit-learn's: -1, 0 or 1 per feature, or a dict of feature names
    when X is a DataFrame) makes the prediction never fall (1) or never rise (-1) as a
    feature grows, the others fixed; for a classifier it constrains P(``classes_[1]``) (two
    classes only). Every splitter that chooses features keeps it (exhaustive, C4.5,
    histogram), as do every pruner and C4.5's missing-value shares (``docs/algorithms.md``,
    monotonic constraints). ``interaction_cst`` (LightGBM's meaning: groups of features
    that may appear together on one path from the root; features in no group form one
    more group). Numeric features only; a composition that cannot keep them is refused.

    ``n_threads`` caps the threads one fit runs (None or -1: the CPUs this process may use,
    itself capped by ``NUMBA_NUM_THREADS``); inside a joblib worker thread a fit runs on
    one. Large trees of the exhaustive splitter grow in parallel; the tree is the same for
    any thread count.
    """

    def __init__(
        self,
        criterion="gini",
        splitter="exhaustive",
        propagator="hard",
        pruner="none",
        labeler="majority",
        evaluator="hard",
        confidence="probability",
        *,
        target=None,
        target_params=None,
        criterion_params=None,
        splitter_params=None,
        propagator_params=None,
        pruner_params=None,
        labeler_params=None,
        evaluator_params=None,
        confidence_params=None,
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0,
        min_gain=None,
        categorical_features=None,
        reject=None,
        calibration=None,
        abstain_value=None,
        class_weight=None,
        monotonic_cst=None,
        interaction_cst=None,
        random_state=None,
        n_threads=None,
    ):
        self._store_params(locals())

    def fit(self, X, y=None, sample_weight=None, *, counterexamples=None, classes=None):
        """Fit on class labels ``y``, or on ``counterexamples`` (an n x K 0/1 matrix, 1 = the
        sample is known not to be that class; ``classes`` names the columns)."""
        rule = RejectRule.from_param(self.reject)
        composition = self._make_composition()
        data, classes = self._validate_training(
            X, y, sample_weight, composition, counterexamples, classes
        )
        return self._fit_validated(data, classes, composition, rule)

    def _kept_trees(self, data) -> tuple:
        """What a fit gives ``_fit_validated`` besides the data (a forest: the trees
        ``warm_start`` keeps); a single tree, nothing."""
        return ()

    def _fit_validated(self, data, classes, composition=None, rule=None):
        """Fit on checked training data (also what cross-validated rejection refits)."""
        composition = composition if composition is not None else self._make_composition()
        composition.check(data)
        from treekit_core.kernels.usable_cpus import numba_threads_capped

        with numba_threads_capped(composition.fit_threads()):
            grown, self.tree_ = composition.fit_keeping_grown(
                self._with_class_weight(data, composition), _rng(self.random_state)
            )
            # kept so prune(alpha) can go below the fitted alpha without regrowing
            self._grown_tree = None if grown is self.tree_ else grown
            self.composition_ = composition
            self._set_fitted(data, classes)
            self._fit_rejection_and_calibration(data, rule)
        return self

    def fit_grown_tree(self, tree, data, categories=None, cross_validation=None):
        """Finish a fit whose tree was grown elsewhere (the Dask estimators grow one over a
        cluster's partitions) and return self: label it, prune it, let the evaluator and
        confidence learn their state and set the fitted attributes, as ``fit`` does after
        growth. ``tree`` is an unlabelled grown tree (``tree_from_table``); ``data`` a
        ``TrainingData`` describing the training data, which may hold no rows (X of shape
        (0, d) and target rows of shape (0, S), with ``classes``, ``n_categories`` and
        ``feature_names``): then the composition must need none after growth (no
        cross-validated pruning, rejection or calibration, no evaluator or confidence that
        ``reads_training_rows``), or it is refused; rejection and calibration may be fitted
        afterwards from scores (:meth:`fit_decision_rules`).
        ``categories`` (feature index -> category labels) encodes a DataFrame's category
        columns at predict, as ``fit`` learns it. ``cross_validation``: (cv_error,
        cv_std_error) per subtree level when the grower measured them on folds grown
        elsewhere (the pruner then chooses from them, :class:`PruningContext`)."""
        if data.n_samples == 0 and (self.reject is not None or self.calibration is not None):
            raise ValueError(
                "reject and calibration choose on the training rows, which a tree grown "
                "elsewhere does not bring: fit them on a local model (to_local())"
            )
        composition = self.make_composition(data.n_features, data.feature_names)
        composition.check(data)
        if data.n_samples == 0:
            composition.check_finish_without_rows()
        tree.relabel(composition.target, composition.labeler)
        self.tree_ = composition.finish(tree, data, _rng(self.random_state), cross_validation)
        self._grown_tree = None if tree is self.tree_ else tree
        self.composition_ = composition
        self.categories_ = dict(categories or {})
        self._column_keys = None
        self._set_fitted(data, data.classes)
        self.reject_threshold_, self.calibration_ = None, None
        return self

    def _decide_arrays(self, X, with_confidence=True, reject=True):
        threshold = getattr(self, "reject_threshold_", None) if reject else None
        proba, decision, confidence = self.composition_.decide(
            self.tree_, X, with_confidence or threshold is not None
        )
        if threshold is not None:
            decision = np.where(confidence >= threshold, decision, ABSTAIN)
        return proba, decision, confidence

    def apply(self, X) -> np.ndarray:
        """Leaf id of every sample: where the evaluator sends each sample to one node
        (rpart's surrogates, as rpart's ``where``), that node; else by hard routing, where
        a sample with a missing tested value reaches several leaves and is refused (use
        predict_proba)."""

        with self._checked_for_predict(X) as checked:
            nodes = self.composition_.evaluator.stopping_nodes(self.tree_, checked)
            return apply_tree(self.tree_, checked) if nodes is None else np.asarray(nodes)

    def decision_path(self, X):
        """A scipy.sparse CSR indicator, n_samples x n_nodes: entry (i, j) is 1 when sample
        i passes node j on its way to the leaf :meth:`apply` gives (scikit-learn's
        ``decision_path``)."""
        return node_indicator(self.tree_, self.apply(X))

    @property
    def feature_importances_(self) -> np.ndarray:
        """Mean decrease in impurity per feature, normalised to sum 1 (scikit-learn's
        definition; :mod:`treekit_core.engine.importances`)."""

        self._check_fitted()
        return tree_importances(self.tree_, self.composition_.criterion)

    def get_depth(self) -> int:
        self._check_fitted()
        return self.tree_.max_depth

    def get_n_leaves(self) -> int:
        self._check_fitted()
        return self.tree_.n_leaves

    def export_text(
        self, decimals: int = 4, show_distribution: bool = True, style: str = "sklearn"
    ) -> str:
        """The tree as text: ``style="sklearn"`` (scikit-learn's export_text) or ``"j48"``
        (Weka's J48 output, line for line)."""
        self._check_fitted()
        names = list(self.feature_names_in_) if hasattr(self, "feature_names_in_") else None
        tree = self.tree_
        return export_text(
            tree,
            names,
            getattr(self, "classes_", None),
            decimals,
            show_distribution,
            getattr(self, "categories_", {}),
            style,
            notes=lambda node, context: self.composition_.propagator.node_notes(
                tree, node, context
            ),
            leaf_text=self._leaf_text(decimals),
        )

    def _leaf_text(self, decimals: int):
        """What a leaf of :attr:`tree_` says in :meth:`export_text` and ``export_dot``: a
        function of the node id, or None for the class decision and distribution. A tree
        predicting values prints them, as scikit-learn prints a regressor's."""
        if self.composition_.target.predicts_labels():
            return None
        tree = self.tree_
        return lambda node: f"value: [{', '.join(f'{v:.{decimals}f}' for v in tree.value[node])}]"

    def _trees_payload(self) -> dict:
        grown = getattr(self, "_grown_tree", None)
        return {
            "tree": model_file.tree_to_dict(self.tree_),
            **({"grown_tree": model_file.tree_to_dict(grown)} if grown is not None else {}),
        }

    def _read_trees(self, payload, composition, labels) -> list:
        self.tree_ = model_file.read_tree(payload, composition, labels)
        self._grown_tree = None
        if "grown_tree" in payload:
            self._grown_tree = model_file.read_tree(
                {"tree": payload["grown_tree"]},
                composition,
                labels,
                "model file: grown_tree",
                stateful=(),
            )
            if self._grown_tree.n_features != self.tree_.n_features:
                raise model_file.ModelFileError(
                    "model file: grown_tree and tree disagree on n_features"
                )
        return [self.tree_]

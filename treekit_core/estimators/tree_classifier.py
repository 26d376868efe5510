"""TreeClassifier: one composed tree that decides among classes, with scikit-learn's
conventions (the classifier family on the single-tree structure)."""

from __future__ import annotations

from treekit_core.estimators.decisions import ClassifierFamily
from treekit_core.estimators.parameter_docs import document_parameters
from treekit_core.estimators.single_tree import SingleTreeEstimator


@document_parameters
class TreeClassifier(ClassifierFamily, SingleTreeEstimator):
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
        max_leaf_nodes=None,
        min_gain=None,
        categorical_features=None,
        reject=None,
        calibration=None,
        abstain_value=None,
        class_weight=None,
        monotonic_cst=None,
        interaction_cst=None,
        random_state=None,
        honest=False,
        honest_fraction=0.5,
        honest_prune_leaves=True,
        conformal_fraction=None,
        n_threads=None,
    ):
        self._store_params(locals())

    def _unrejected_decisions(self, X, with_confidence: bool):
        """The composition's decisions on the tree (its confidence may read the tree's
        regions)."""
        return self.composition_.decide(self.tree_, X, with_confidence)

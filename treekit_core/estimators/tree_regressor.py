"""TreeRegressor: a composed tree that predicts a number, with scikit-learn's regressor
conventions (``score`` is R^2; the tree API of ``DecisionTreeRegressor``): the regressor
family on the single-tree structure."""

from __future__ import annotations

from treekit_core.estimators.parameter_docs import document_parameters
from treekit_core.estimators.regression import RegressorFamily
from treekit_core.estimators.single_tree import SingleTreeEstimator


@document_parameters
class TreeRegressor(RegressorFamily, SingleTreeEstimator):
    """A regression tree composed from registered components by name.

    ``criterion`` names a criterion that reads a numeric response (``squared_error``:
    CART's least squares, rpart's ``anova``, scikit-learn's default); ``target`` (None: the
    criterion's) says what a leaf predicts (``mean``). Every splitter, question kind,
    missing-value rule (``propagator``, ``evaluator``: C4.5's fractional routing by default,
    rpart's surrogates) and pruner that does not need classes composes with it; the
    defaults are scikit-learn's (``pruner="none"``, grown out).

    ``predict`` returns the prediction of the leaf a sample reaches (with fractional routing
    or soft evaluation, the weighted mixture of the leaves it reaches); ``score`` is the
    coefficient of determination R^2 (scikit-learn's ``r2_score``, ``sample_weight``
    weighting both sums). The tree API is every single tree's: ``apply``, ``decision_path``,
    ``feature_importances_``, ``get_n_leaves``, ``get_depth``,
    ``cost_complexity_pruning_path``, ``pruning_path_``, ``printcp``, ``prune``, ``xpred``,
    ``export_text``, ``to_json`` / ``from_json``.

    ``monotonic_cst`` (scikit-learn's: -1, 0 or 1 per feature, or a dict of feature names
    when X is a DataFrame) makes the prediction never fall (1) or never rise (-1) as a
    feature grows, the others fixed. Every splitter that chooses features keeps it
    (exhaustive, histogram), as do every pruner and C4.5's missing-value shares
    (``docs/algorithms.md``, monotonic constraints). ``interaction_cst`` (LightGBM's
    meaning: groups of features that may appear together on one path from the root;
    features in no group form one more group). Numeric features only; a composition that
    cannot keep them is refused.
    """

    def __init__(
        self,
        criterion="squared_error",
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
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0,
        max_leaf_nodes=None,
        min_gain=None,
        categorical_features=None,
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

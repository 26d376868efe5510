"""TreeRegressor: a composed tree that predicts a number, with scikit-learn's regressor
conventions (``score`` is R^2; the tree API of ``DecisionTreeRegressor``)."""

from __future__ import annotations

import numpy as np

from treekit_core.estimators.tree_classifier import TreeClassifier


def _not_for_regression(name: str):
    """A method a regressor does not have (``hasattr`` is False), as scikit-learn's
    regressors have no ``predict_proba``."""

    def refuse(self):
        raise AttributeError(
            f"{type(self).__name__} has no {name}: it predicts a number, not a class"
        )

    return property(refuse)


class TreeRegressor(TreeClassifier):
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
    weighting both sums). The tree API is the classifier's: ``apply``, ``decision_path``,
    ``feature_importances_``, ``get_n_leaves``, ``get_depth``,
    ``cost_complexity_pruning_path``, ``pruning_path_``, ``printcp``, ``prune``, ``xpred``,
    ``export_text``, ``to_json`` / ``from_json``.
    """

    # What a regressor does not choose: there are no classes to label, to reject or to
    # calibrate. The composition still names every kind, so these are fixed here (they are
    # not parameters: get_params, clone and grids never see them).
    labeler = "majority"
    labeler_params = None
    confidence = "probability"
    confidence_params = None
    reject = None
    calibration = None
    abstain_value = None
    class_weight = None

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
        min_gain=None,
        categorical_features=None,
        random_state=None,
        n_threads=None,
    ):
        self._store_params(locals())

    def fit(self, X, y, sample_weight=None):
        """Fit on a numeric response ``y`` (one number per row of X)."""
        composition = self._make_composition()
        if composition.target.decides_with_labeler:
            raise ValueError(
                f"TreeRegressor predicts a number, but criterion {composition.criterion.name!r} "
                f"reads class labels (its target is {composition.target.name!r}); use a "
                "regression criterion such as 'squared_error', or TreeClassifier"
            )
        data, _ = self._validate_training(X, y, sample_weight, composition, None, None)
        return self._fit_validated(data, None, composition, None)

    def predict(self, X) -> np.ndarray:
        """The prediction for every sample: its leaf's (the mixture of the leaves it
        reaches, where routing splits it)."""
        self._check_fitted()
        return self._target_predictions(X)

    def score(self, X, y, sample_weight=None) -> float:
        """The coefficient of determination R^2 of ``predict(X)`` (scikit-learn's
        ``r2_score``: 1 - SSE / SST, both weighted; 1.0 for a perfect prediction of a
        constant ``y``, else 0.0 when ``y`` is constant)."""
        predicted = self.predict(X)
        truth = np.asarray(y, dtype=np.float64).reshape(predicted.shape)
        weight = np.ones_like(truth) if sample_weight is None else np.asarray(sample_weight, float)
        residual = float(np.sum(weight * (truth - predicted) ** 2))
        centre = float(np.average(truth, weights=weight))
        total = float(np.sum(weight * (truth - centre) ** 2))
        if total == 0.0:
            return 1.0 if residual == 0.0 else 0.0
        return 1.0 - residual / total

    # the classifier's decisions among classes: a regressor has none of them
    predict_proba = _not_for_regression("predict_proba")
    predict_log_proba = _not_for_regression("predict_log_proba")
    decide = _not_for_regression("decide")
    risk_coverage = _not_for_regression("risk_coverage")

    def __sklearn_tags__(self):
        from sklearn.utils import RegressorTags

        tags = super().__sklearn_tags__()
        tags.estimator_type = "regressor"
        tags.classifier_tags = None
        tags.regressor_tags = RegressorTags()
        try:
            target = self._make_composition().target
        except Exception:  # an unknown component: fit will say so
            return tags
        tags.target_tags.positive_only = target.nonnegative_response
        return tags

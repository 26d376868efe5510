"""ForestClassifier and ForestRegressor: random forests of composed trees (the classifier
and regressor families on the ensemble structure, ``ensemble.py``).

Rejection works as for a tree (``reject=``: a threshold, or keep-correct / coverage /
max-error chosen on training data or by CV), on the confidence ``forest_confidence`` says.

Breiman's random forest over *any* composition: every tree is grown by the same components
on a bootstrap sample, and at every node only ``max_features`` randomly drawn features are
candidates. The classifier averages the trees' class distributions and then lets its
labeler decide, so a forest of asymmetric trees abstains the same way a single asymmetric
tree does.

Baselines of Marcellin et al.: ``balanced_bootstrap=True`` draws every class equally often
in each bootstrap (BRF, Chen et al.); ``class_weight="balanced"`` weights classes inversely
to their frequency (WRF).

``monotonic_cst`` and ``interaction_cst`` are kept by every tree (see ``TreeClassifier``),
so the forest's average keeps a monotonic constraint too.
"""

from __future__ import annotations

import numpy as np

from treekit_core.estimators.conformal import lower_conformal_quantile, upper_conformal_quantile
from treekit_core.estimators.decisions import ClassifierFamily, output_shares
from treekit_core.estimators.ensemble import EnsembleEstimator, resolve_max_samples
from treekit_core.estimators.parameter_docs import document_parameters
from treekit_core.estimators.regression import RegressorFamily, r2_score

#: How a forest scores its decisions for rejection: the composition's confidence on the
#: averaged distribution (by default its largest probability), or the vote margin (share of
#: trees voting for the decided class minus the runner-up's).
FOREST_CONFIDENCES = ("averaged", "vote_margin")


@document_parameters
class ForestClassifier(ClassifierFamily, EnsembleEstimator):
    """A random forest of composed trees (see the module docstring)."""

    def __init__(
        self,
        n_estimators=100,
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
        max_features="sqrt",
        bootstrap=True,
        balanced_bootstrap=False,
        max_samples=None,
        oob_score=False,
        warm_start=False,
        class_weight=None,
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0,
        min_gain=None,
        categorical_features=None,
        reject=None,
        calibration=None,
        forest_confidence="averaged",
        abstain_value=None,
        n_jobs=None,
        monotonic_cst=None,
        interaction_cst=None,
        random_state=None,
        honest=False,
        honest_fraction=0.5,
        honest_prune_leaves=True,
        conformal_fraction=None,
    ):
        self._store_params(locals())

    def _check_params(self) -> None:
        super()._check_params()
        if self.forest_confidence not in FOREST_CONFIDENCES:
            raise ValueError(
                f"forest_confidence must be one of {FOREST_CONFIDENCES}, got "
                f"{self.forest_confidence!r}"
            )

    def _check_target(self, composition) -> None:
        """The classifier's forest averages class distributions and votes, scored by a
        confidence that needs no single tree."""
        super()._check_target(composition)
        self._refuse_without_labels("ForestClassifier", composition)
        if composition.confidence.needs_single_tree:
            raise ValueError(
                f"confidence {composition.confidence.name!r} cannot score a forest: it needs "
                "the regions of one tree, and a forest's decision regions are not one tree's "
                "leaves; use a TreeClassifier, or confidence='probability'"
            )

    def _refuse_for_several_outputs(self, n_outputs: int) -> None:
        super()._refuse_for_several_outputs(n_outputs)
        if self.forest_confidence != "averaged" or self.balanced_bootstrap:
            name, value = (
                ("balanced_bootstrap", True)
                if self.balanced_bootstrap
                else ("forest_confidence", self.forest_confidence)
            )
            raise ValueError(
                f"{name}={value!r} cannot be used with y of {n_outputs} columns (several "
                "outputs): it weighs the classes of one output"
            )

    def _balanced_bootstrap(self) -> bool:
        return bool(self.balanced_bootstrap)

    def _score_oob(self, data, labels, averaged, rows) -> None:
        composition = self.composition_
        self.oob_decision_function_ = averaged
        if rows.size == 0:
            self.oob_score_ = float("nan")
            return
        values = self.oob_decision_function_[rows]
        decision = composition.target.decide(values, composition.labeler)
        if self.n_outputs_ > 1:  # each output's accuracy, their mean (scikit-learn's)
            target = composition.target
            truth = target.predictions(data.evidence[rows], decision, self.classes_)
            predicted = target.predictions(values, decision, self.classes_)
            self.oob_decision_function_ = output_shares(averaged, self.classes_)
            if callable(self.oob_score):
                self.oob_score_ = float(self.oob_score(truth, predicted))
            else:
                self.oob_score_ = float(np.mean(truth == predicted))
            return
        if callable(self.oob_score):
            truth = self.classes_[labels[rows]]  # the target's strata: for labels, y
            predicted = self._labels_from(decision)
            self.oob_score_ = float(self.oob_score(truth, predicted))
            return
        loss = composition.target.sample_loss(
            data.evidence[rows], values, decision, composition.labeler
        )
        self.oob_score_ = float(np.mean(loss < 0.5))

    def _unrejected_decisions(self, X, with_confidence: bool):
        """The trees' distributions averaged, the labeler's decision on the average, and
        its confidence: the composition's on the average, or the vote margin."""
        composition = self.composition_
        margin = self.forest_confidence == "vote_margin"
        if margin:  # every tree's decision too: tree by tree
            proba = np.zeros((X.shape[0], self.n_classes_))
            votes = np.zeros((X.shape[0], self.n_classes_))
            for tree in self.estimators_:
                distribution = composition.evaluator.predict_distribution(tree, X)
                proba += distribution
                voted = composition.target.decide(distribution, composition.labeler)
                decided = voted >= 0
                votes[np.flatnonzero(decided), voted[decided]] += 1.0
            proba /= len(self.estimators_)
        else:
            proba = self._node_values(X)
        decision = composition.target.decide(proba, composition.labeler)
        if not with_confidence:
            return proba, decision, None
        if margin:
            # the share of trees voting for the top class minus the runner-up's share
            ranked = np.sort(votes, axis=1)
            confidence = (ranked[:, -1] - ranked[:, -2]) / len(self.estimators_)
        else:
            confidence = np.asarray(
                composition.confidence.score(None, X, proba, decision), dtype=np.float64
            )
        return proba, decision, confidence


@document_parameters
class ForestRegressor(RegressorFamily, EnsembleEstimator):
    """A random forest of composed regression trees (the module docstring's forest, for
    a numeric response): every tree is grown by the same components on a bootstrap
    sample with ``max_features`` features drawn at every node, and the forest predicts
    the average of its trees' leaf values (scikit-learn's RandomForestRegressor when the
    composition is ``squared_error`` grown out). ``oob_score=True`` gives
    ``oob_prediction_`` and ``oob_score_`` as R^2 (or ``oob_score(y_true, y_pred)``);
    ``max_samples``, ``warm_start``, ``n_jobs`` and the joblib backends as the classifier's
    forest. TreeRegressor's parameters."""

    def __init__(
        self,
        n_estimators=100,
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
        max_features=1.0,
        bootstrap=True,
        max_samples=None,
        oob_score=False,
        warm_start=False,
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0,
        min_gain=None,
        categorical_features=None,
        n_jobs=None,
        monotonic_cst=None,
        interaction_cst=None,
        random_state=None,
        honest=False,
        honest_fraction=0.5,
        honest_prune_leaves=True,
        conformal_fraction=None,
    ):
        self._store_params(locals())

    def _jackknife_plus_interval(self, X, alpha: float) -> np.ndarray:
        """The jackknife+-after-bootstrap interval (Kim, Xu & Barber 2020;
        ``treekit_core.estimators.conformal``) from the out-of-bag rows of the fit: per
        training row i with an out-of-bag prediction, the trees that did not draw it
        predict each row of X (mu_-i), widened by i's out-of-bag residual."""
        residuals = self._oob_residuals
        scored = np.flatnonzero(~np.isnan(residuals))
        n = residuals.shape[0]
        draws = resolve_max_samples(self.max_samples, n)
        strata = np.zeros(n, dtype=np.int64)  # a regressor's bootstrap has one stratum
        unseen = np.stack(
            [
                self._drawn_counts(seeds, strata, 1, draws)[scored] == 0
                for seeds in self._draw_seeds(self._tree_seeds)
            ]
        ).astype(np.float64)  # trees x rows
        composition = self.composition_
        with self._checked_for_predict(X) as checked:
            values = np.stack(
                [
                    composition.evaluator.predict_distribution(tree, checked)
                    for tree in self.estimators_
                ],
                axis=1,
            )  # rows of X x trees x value width
        if values.shape[2] != 1:
            raise ValueError(
                "the jackknife+ interval needs one value per leaf; give conformal rows"
            )
        values = values[:, :, 0]
        lower, upper = np.empty(values.shape[0]), np.empty(values.shape[0])
        counts = unseen.sum(axis=0)
        chunk = max(1, 2**22 // max(scored.size, 1))
        for start in range(0, values.shape[0], chunk):
            block = values[start : start + chunk] @ unseen / counts  # mu_-i(x), x by i
            shape = block.shape
            mu = composition.target.predictions(block.reshape(-1, 1), None, None).reshape(shape)
            lower[start : start + chunk] = lower_conformal_quantile(mu - residuals[scored], alpha)
            upper[start : start + chunk] = upper_conformal_quantile(mu + residuals[scored], alpha)
        return np.column_stack([lower, upper])

    def _score_oob(self, data, labels, averaged, rows) -> None:
        """``oob_prediction_`` (NaN where every tree drew the row) and ``oob_score_``: R^2
        of the out-of-bag predictions of the response the target's rows start with (y)."""
        target = self.composition_.target
        observed = target.observed(data.evidence)
        observed = data.evidence[:, 0] if observed is None else observed
        prediction = np.full(observed.shape, np.nan)
        if rows.size:
            prediction[rows] = target.predictions(averaged[rows], None, None)
        self.oob_prediction_ = prediction
        # the jackknife+-after-bootstrap's residuals (predict_interval without conformal
        # rows), of a single output
        if observed.ndim == 1:
            self._oob_residuals = np.abs(observed - prediction)
        if rows.size == 0:
            self.oob_score_ = float("nan")
            return
        truth = observed[rows]
        if callable(self.oob_score):
            self.oob_score_ = float(self.oob_score(truth, prediction[rows]))
            return
        self.oob_score_ = r2_score(truth, prediction[rows])

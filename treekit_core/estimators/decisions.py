"""The classifier family: what an estimator deciding among classes adds to its structure
(``base.py``): class weights, rejection (the reject threshold, chosen on training or
out-of-fold scores) and calibration fitted after the trees, and what ``decide``,
``predict``, ``predict_proba`` and ``score`` return."""

from __future__ import annotations

import functools
import numbers
import warnings

import attrs
import numpy as np

from treekit_core.builtins.label_sets import output_argmax, output_blocks
from treekit_core.components import ABSTAIN
from treekit_core.engine.calibration import Calibration, CalibrationRule, isotonic_points
from treekit_core.engine.folds import stratified_folds
from treekit_core.engine.rejection import (
    RejectRule,
    RiskCoverage,
    accepted_fraction,
    nearest_step,
    risk_coverage,
    score_steps,
)
from treekit_core.engine.validation import y_columns
from treekit_core.estimators import model_file
from treekit_core.estimators.conformal import ConformalSets
from treekit_core.estimators.errors import AbstentionError
from treekit_core.estimators.inputs import (
    adopt_outputs,
    class_weights,
    encode_target_rows,
    refuse_heavy_rows,
)


def output_shares(values, classes: list) -> list:
    """Each output's columns of values of several outputs (``classes``: one array per
    output), a copy each: what ``predict_proba`` returns."""
    sizes = [len(c) for c in classes]
    return [values[:, block].copy() for block in output_blocks(sizes)]


@attrs.frozen
class Decision:
    """Everything ``decide`` knows about each sample.

    ``labels`` holds the decided class, or ``abstain_value`` (None when unset) where the
    estimator abstains; ``abstained`` says which, so an abstention is never mistaken for a
    class; ``class_index`` is the class index or -1; ``p_correct`` the calibrated
    probability that the decision (the class the model would give) is correct.
    """

    labels: np.ndarray
    abstained: np.ndarray
    proba: np.ndarray
    confidence: np.ndarray
    class_index: np.ndarray
    #: P(the decision is correct) from the fitted calibration; None without ``calibration=``
    p_correct: np.ndarray | None = None


@attrs.frozen
class OutOfFold:
    """What cross-validation learns about the scores of rows a model has not seen. The
    rules read masses only: a grower that sees the data in parts may give each distinct
    (score, correct) pair once, with the summed weight of its rows."""

    scores: np.ndarray  #: every training row's score by the copy fitted without its fold
    correct: np.ndarray  #: whether that copy's decision for the row is correct
    weight: np.ndarray  #: the rows' weights
    #: per fold: (its copy's scores of its own training rows, their weights, the indices
    #: of the fold's held-out rows in ``scores``)
    folds: tuple

    def held_out_coverage(self, training_coverage) -> np.ndarray:
        """The coverage of unseen rows that a threshold covering ``training_coverage`` of a
        model's own training rows gives. A tree is more confident on its training rows than
        on new ones (its splits were chosen on them), so a threshold giving 80% of the
        training rows gives fewer new ones; each fold's copy shows by how much: at each of
        its scores, the share of its training rows and the share of its held-out rows at or
        above it. Those pairs, pooled over the folds with (0, 0) and (1, 1), give a
        non-decreasing map from the first share to the second: their isotonic
        least-squares fit (pool-adjacent-violators), linear between its blocks. (An upper
        envelope of the pairs, the running maximum, overstated the held-out share: on 192
        random halves of eight bundled sets a CV-pruned tree's coverage landed on the
        reachable step nearest the target 133 times against 156 for the fit, and a
        forest's missed it by 0.11 on average against 0.03:
        ``benchmarks/eval_reject_coverage.py``.)"""
        own_shares, held_out_shares = [np.array([0.0, 1.0])], [np.array([0.0, 1.0])]
        for own, own_weight, test in self.folds:
            values = np.unique(own)
            own_shares.append(accepted_fraction(own, values, own_weight))
            held_out_shares.append(accepted_fraction(self.scores[test], values, self.weight[test]))
        x, y = np.concatenate(own_shares), np.concatenate(held_out_shares)
        points_x, points_y = isotonic_points(x, y, np.ones(x.size))
        return np.interp(training_coverage, points_x, points_y)


class ClassifierFamily(ConformalSets):
    """The family of estimators that decide among classes (placed before the structure:
    ``class TreeClassifier(ClassifierFamily, SingleTreeEstimator)``): ``fit`` on labels or
    counterexamples, ``class_weight``, the reject threshold and calibration fitted after
    the trees, ``decide``, ``predict``, ``predict_proba``, ``score`` (accuracy), and
    scikit-learn's classifier tags. A composition whose target predicts values is accepted:
    then ``predict`` returns the target's predictions and the class methods refuse.

    A public classifier gives :meth:`_unrejected_decisions` (its trees' values, decisions
    and confidence); the family applies the reject threshold."""

    estimator_type = "classifier"

    def fit(
        self,
        X,
        y=None,
        sample_weight=None,
        *,
        counterexamples=None,
        classes=None,
        conformal_rows=None,
    ):
        """Fit on class labels ``y``, or on ``counterexamples`` (an n x K 0/1 matrix, 1 = the
        sample is known not to be that class; ``classes`` names the columns).
        ``conformal_rows``: (X_c, y_c), labelled rows the model does not train on that
        calibrate :meth:`predict_set` (or the constructor's ``conformal_fraction``)."""
        rule = RejectRule.from_param(self.reject)  # _fit_checked checks the other parameters
        if conformal_rows is not None and y_columns(y) > 1:
            raise ValueError(
                "conformal_rows calibrate prediction sets of one class label; y has "
                f"{y_columns(y)} columns (several outputs): fit without them"
            )
        if counterexamples is not None and getattr(self, "conformal_fraction", None) is not None:
            raise ValueError(
                "conformal_fraction holds out labelled rows; counterexamples have none"
            )
        X, y, sample_weight, held = self._hold_out_conformal_rows(
            X, y, sample_weight, conformal_rows
        )
        self._fit_checked(
            X, y, sample_weight, rule, counterexamples=counterexamples, classes=classes
        )
        self._keep_conformal_rows(held)
        return self

    def _check_params(self) -> None:
        super()._check_params()
        RejectRule.from_param(self.reject)
        CalibrationRule.from_param(self.calibration)

    def _check_classes(self, classes) -> None:
        if isinstance(classes, list):
            self._refuse_for_several_outputs(len(classes))
        elif classes is not None:
            self._check_abstain_value(classes)

    def _refuse_for_several_outputs(self, n_outputs: int) -> None:
        """What decides otherwise than each output's majority, or scores one decision per
        row, is refused for labels of several outputs, naming the parameter (a forest adds
        its own)."""
        why = "each output's class is its majority in the leaf"
        refused = {
            "reject": "rejection scores one decision per row",
            "calibration": "calibration scores one decision per row",
            "abstain_value": f"no output abstains: {why}",
            "conformal_fraction": "conformal sets are sets of one output's classes",
            "monotonic_cst": "a constraint orders one class's probability",
        }
        for name, reason in refused.items():
            if getattr(self, name, None) is not None:
                raise ValueError(
                    f"{name}={getattr(self, name)!r} cannot be used with y of {n_outputs} "
                    f"columns (several outputs): {reason}"
                )
        default = type(self)().labeler  # the labeler a 2-D y leaves unused: the default only
        if self.labeler != default or self.labeler_params:
            raise ValueError(
                f"labeler={self.labeler!r} (labeler_params={self.labeler_params!r}) cannot be "
                f"used with y of {n_outputs} columns (several outputs): {why} "
                f"(labeler={default!r})"
            )

    def _growth_data(self, data, composition):
        return self._with_class_weight(data, composition)

    def _after_growth(self, data, rule) -> None:
        self._fit_rejection_and_calibration(data, rule)

    def _check_finish_elsewhere(self, data) -> None:
        if data.n_samples == 0 and (self.reject is not None or self.calibration is not None):
            raise ValueError(
                "reject and calibration choose on the training rows, which a tree grown "
                "elsewhere does not bring: fit them on a local model (to_local())"
            )

    def _fitted_without_rows(self) -> None:
        # chosen afterwards from scores, when asked (fit_decision_rules)
        self.reject_threshold_, self.calibration_ = None, None

    def _read_decision_rules(self, payload) -> None:
        """The reject threshold and calibration of a model file (checked)."""
        if "reject_threshold" in payload:
            self.reject_threshold_ = model_file.read_threshold(payload["reject_threshold"])
        self.calibration_ = None
        if "calibration" in payload:
            try:
                self.calibration_ = Calibration.from_dict(payload["calibration"])
            except ValueError as exc:
                raise model_file.ModelFileError(str(exc)) from None

    def _decide_arrays(self, X, with_confidence=True, reject=True):
        """(values, decisions, confidence) of X (checked), the reject threshold applied
        unless ``reject`` is False; no confidence when neither ``with_confidence`` nor the
        threshold needs it."""
        threshold = getattr(self, "reject_threshold_", None) if reject else None
        values, decision, confidence = self._unrejected_decisions(
            X, with_confidence or threshold is not None
        )
        if threshold is not None:
            decision = np.where(confidence >= threshold, decision, ABSTAIN)
        return values, decision, confidence

    def _unrejected_decisions(self, X, with_confidence: bool):  # pragma: no cover - abstract
        """(values, decision per sample, confidence or None) of X (checked), before
        rejection: what each public classifier computes from its trees."""
        raise NotImplementedError

    def _with_class_weight(self, data, composition):
        """The training data with every row's weight multiplied by its class's weight
        (``class_weight``, scikit-learn's meaning: leaf proportions are class-weighted).
        What the trees are grown on; rejection and calibration count rows by the weights
        given to fit, as scikit-learn's class_weight changes fitting only."""
        class_weight = self.class_weight
        if class_weight is None:
            return data
        if data.classes is None:
            raise ValueError(
                f"class_weight weighs classes, and target {composition.target.name!r} decides "
                "among none; weight the rows with sample_weight"
            )
        if isinstance(data.classes, list):  # several outputs: the outputs' weights multiply
            weight = data.weight * self._output_class_weights(data, composition)
        else:
            labels = composition.target.strata(data.evidence, composition.labeler)
            weights = class_weights(class_weight, labels, len(data.classes), data.classes)
            weight = data.weight * weights[labels]
        refuse_heavy_rows(weight, data.n_samples, f"class_weight {class_weight!r}")
        if not (weight > 0).any():
            raise ValueError(f"class_weight {class_weight!r} gives every row weight 0")
        return data.with_weight(weight)

    def _output_class_weights(self, data, composition) -> np.ndarray:
        """Each row's weight from ``class_weight`` for several outputs, as scikit-learn's
        ``compute_sample_weight``: "balanced" per output, or a list of one dict per output;
        the product over the outputs."""
        class_weight = self.class_weight
        n_outputs = len(data.classes)
        if class_weight != "balanced" and (
            not isinstance(class_weight, (list, tuple)) or len(class_weight) != n_outputs
        ):
            raise ValueError(
                f"class_weight for y of {n_outputs} columns must be 'balanced' or a list of "
                f"{n_outputs} dicts (class -> weight, one per output), got {class_weight!r}"
            )
        codes = output_argmax(data.evidence, [len(c) for c in data.classes])
        product = np.ones(data.n_samples)
        for j, classes in enumerate(data.classes):
            given = class_weight if class_weight == "balanced" else class_weight[j]
            weights = class_weights(given, codes[:, j], len(classes), classes)
            product *= weights[codes[:, j]]
        return product

    def _check_abstain_value(self, classes) -> None:
        value = self.abstain_value
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, (str, numbers.Number, np.generic))
        ):
            raise ValueError(
                f"abstain_value must be None or one label (a string or a number), got {value!r}"
            )
        if (
            self.abstain_value is not None
            and np.isin(
                np.asarray([self.abstain_value], dtype=object), classes.astype(object)
            ).any()
        ):
            raise ValueError(
                f"abstain_value={self.abstain_value!r} is one of the classes {list(classes)}; "
                f"choose a value that is not a class so an abstention cannot be mistaken for one"
            )

    @property
    def can_abstain_(self) -> bool:
        self._check_fitted()
        return (
            bool(self.composition_.labeler.can_abstain)
            or getattr(self, "reject_threshold_", None) is not None
        )

    def _fit_rejection_and_calibration(self, data, rule) -> None:
        """``reject_threshold_`` and ``calibration_`` after the model itself is fitted; the
        out-of-fold refits are made once for both when they use the same folds."""

        def training_scores():
            return (*self._scores_and_correctness(data.X, data.evidence), data.weight)

        self.fit_decision_rules(
            training_scores, lambda n_folds, seed: self._out_of_fold(data, n_folds, seed), rule
        )

    def fit_decision_rules(self, training_scores, out_of_fold, rule=None) -> None:
        """Set ``reject_threshold_`` (by ``rule``, default: the ``reject`` parameter's) and
        ``calibration_`` of a fitted model from its scores. ``training_scores()`` gives
        (scores, correct, weights) of the training rows by this model; ``out_of_fold(cv,
        seed)`` an :class:`OutOfFold` of copies fitted without each fold. Each is asked
        only when a rule needs it, and may give every distinct (score, correct) pair once
        with the summed weight of its rows (the rules read masses only). Called by ``fit``
        after the model is fitted, and by growers that see the data in parts (treekit-dask
        sums the pairs over its partitions) after ``fit_grown_tree``."""
        if rule is None:
            rule = RejectRule.from_param(self.reject)
        # asked once per (cv, seed) when rejection and calibration share their folds
        out_of_fold = functools.cache(out_of_fold)
        self.reject_threshold_ = None
        if rule is not None:
            self.reject_threshold_ = self._choose_reject_threshold(
                rule, functools.cache(training_scores), out_of_fold
            )
        self._fit_calibration(out_of_fold)

    def _choose_reject_threshold(self, rule, training_scores, out_of_fold) -> float:
        """The threshold on this model's scores: the rule applied to its training scores,
        or, with ``rule.cv`` (keep_correct, max_error), applied to out-of-fold scores and
        carried over as the coverage it reaches there (:mod:`treekit_core.engine.rejection`);
        a rule that abstains on every training row warns."""
        if rule.threshold is not None:
            return float(rule.threshold)
        scores, correct, weight = training_scores()
        if rule.cv is None:
            threshold = rule.choose(scores, correct, weight)
        else:
            folds = out_of_fold(rule.cv, rule.seed)
            wanted = rule.coverage
            if wanted is None:  # the coverage the rule reaches on out-of-fold scores
                chosen = rule.choose(folds.scores, folds.correct, folds.weight)
                wanted = accepted_fraction(folds.scores, chosen, folds.weight)
            # this model's steps, each at the coverage of unseen rows it is expected to give
            steps, own = score_steps(scores, weight)
            expected = folds.held_out_coverage(own)
            threshold = steps[nearest_step(expected, wanted, larger=own)]
        if not (scores >= threshold).any():
            warnings.warn(
                f"the reject rule {rule.describe()} abstains on every row: no training row "
                "reaches its "
                f"threshold {threshold:g}; predict will abstain on every sample",
                UserWarning,
                stacklevel=4,
            )
        return float(threshold)

    def decision_scores(self, X, y, sample_weight=None) -> tuple:
        """(scores, correct, weights) of the rows of (X, y) as the reject rules and
        calibration read them: the confidence of each decision (rejection off), whether the
        decision is correct (the target's loss below one half) and the row's weight
        (``sample_weight``, default 1). Called by growers that see the data in parts, on
        each part, with the model and with its cross-validation copies (treekit-dask);
        ``fit`` reads the same from its training rows."""
        self._check_fitted()
        self._refuse_several_outputs("decision_scores")
        target = self.composition_.target
        y = np.asarray(y)
        n = y.shape[0]
        classes = self.classes_ if target.predicts_labels() else None
        evidence = encode_target_rows(target, y, classes, "the fitted classes_")
        with self._checked_for_predict(X) as checked:
            if checked.shape[0] != n:
                raise ValueError(f"X has {checked.shape[0]} rows and y {n}; they must match")
            scores, correct = self._scores_and_correctness(checked, evidence)
        weight = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
        return scores, correct, weight

    def _scores_and_correctness(self, X, evidence):
        """Confidence of every decision (rejection off) and whether it is correct: the
        target counts a loss below one half (for class labels, the labeler counts no error;
        for counterexample rows: it is not a class the sample is known not to be)."""
        values, decision, scores = self._decide_arrays(X, reject=False)
        composition = self.composition_
        loss = composition.target.sample_loss(evidence, values, decision, composition.labeler)
        return scores, loss < 0.5

    def _out_of_fold(self, data, n_folds: int, seed: int) -> "OutOfFold":
        """Scores and correctness of every training row from a copy of this estimator
        fitted on the other folds (stratified K-fold; no rejection or calibration in the
        copies), and each copy's scores of its own training rows."""

        labels = self.composition_.target.strata(data.evidence, self.composition_.labeler)
        fold = stratified_folds(labels, n_folds, np.random.default_rng(seed))
        scores = np.full(data.n_samples, -np.inf)
        correct = np.zeros(data.n_samples, dtype=bool)
        params = {**self.get_params(deep=False), "reject": None, "calibration": None}
        folds = []
        for k in range(n_folds):
            test = np.flatnonzero(fold == k)
            train = np.flatnonzero(fold != k)
            if test.size == 0 or train.size == 0:
                continue
            # (a target deciding among no labels, a value target's, has no classes_)
            classes = getattr(self, "classes_", None)
            model = type(self)(**params)._fit_validated(data.subset(train), classes)
            scores[test], correct[test] = model._scores_and_correctness(
                data.X[test], data.evidence[test]
            )
            own, _ = model._scores_and_correctness(data.X[train], data.evidence[train])
            folds.append((own, data.weight[train], test))
        return OutOfFold(scores, correct, data.weight, tuple(folds))

    def _fit_calibration(self, out_of_fold) -> None:
        rule = CalibrationRule.from_param(self.calibration)
        self.calibration_ = None
        if rule is not None:
            folds = out_of_fold(rule.cv, rule.seed)
            self.calibration_ = Calibration.fit(
                rule.method, folds.scores, folds.correct, folds.weight
            )

    def risk_coverage(self, X, y) -> "RiskCoverage":
        """Risk (error on accepted) against coverage as the reject threshold sweeps the
        confidence scores of X; ``.area`` is the area under the curve."""
        self._check_fitted()
        self._refuse_several_outputs("risk_coverage")
        with self._checked_for_predict(X) as checked:
            proba, decision, scores = self._decide_arrays(checked, reject=False)
        correct = (decision >= 0) & (self.classes_[np.maximum(decision, 0)] == np.asarray(y))
        return risk_coverage(scores, correct)

    @property
    def labels_dtype_(self) -> np.dtype:
        """The dtype of the labels ``predict`` returns: the classes', or where the model can
        abstain and ``abstain_value`` is set, one that holds both. Read by wrappers that
        declare it before predicting (treekit-dask's lazy ``predict``)."""
        self._check_fitted()
        marks = self.can_abstain_ and self.abstain_value is not None
        return self._labels_from(np.array([ABSTAIN if marks else 0])).dtype

    def _labels_from(self, class_index: np.ndarray) -> np.ndarray:
        abstained = class_index == ABSTAIN
        if not abstained.any():
            return self.classes_.take(class_index)
        fill = self.abstain_value
        numeric = (
            isinstance(fill, (int, float, np.number))
            and not isinstance(fill, bool)
            and self.classes_.dtype.kind in "iuf"
        )
        labels = self.classes_[np.maximum(class_index, 0)]
        labels = (
            labels.astype(np.result_type(labels, np.asarray(fill)))
            if numeric
            else labels.astype(object)
        )
        labels[abstained] = fill
        return labels

    def decide(self, X) -> Decision:
        """Labels, abstention mask, class probabilities and confidence, together."""
        self._check_fitted()
        self._refuse_without_labels("decide")
        self._refuse_several_outputs("decide")
        with self._checked_for_predict(X) as checked:
            proba, class_index, confidence = self._decide_arrays(checked)
        calibration = getattr(self, "calibration_", None)
        return Decision(
            self._labels_from(class_index),
            class_index == ABSTAIN,
            proba,
            confidence,
            class_index,
            None if calibration is None else calibration.p_correct(confidence),
        )

    def _values_and_decisions(self, X):
        """(values the evaluator mixes, the decisions, rejection applied) for X, checked;
        no confidence beyond what rejection needs."""
        with self._checked_for_predict(X) as checked:
            values, decision, _ = self._decide_arrays(checked, with_confidence=False)
        return values, decision

    def _target_predictions(self, X) -> np.ndarray:
        """``predict`` for a target that does not decide among labels: the target's
        predictions from the values the evaluator mixes (the means of a leaf, say)."""
        values, decision = self._values_and_decisions(X)
        return self.composition_.target.predictions(values, decision, None)

    def _refuse_without_labels(self, method: str, composition=None) -> None:
        """Refuse ``method``, which needs labels to decide among, for a target that
        predicts values, naming the target."""
        target = (composition or self.composition_).target
        if not target.predicts_labels():
            raise ValueError(
                f"{method} needs a target that decides among labels; target {target.name!r} "
                "predicts values: use predict"
            )

    @property
    def n_outputs_(self) -> int:
        """How many labels ``predict`` returns per row (scikit-learn's ``n_outputs_``): k
        for a y of k columns (then ``classes_`` and ``n_classes_`` are lists, one entry
        per output), else 1."""
        self._check_fitted()
        classes = getattr(self, "classes_", None)
        return len(classes) if isinstance(classes, list) else 1

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = self._takes_several_outputs()
        return tags

    def _takes_several_outputs(self) -> bool:
        """Whether fit takes a y of several columns with these parameters: the target
        and criterion take several outputs, the composition for two outputs' labels is
        accepted, and no parameter is refused with them."""
        try:
            composition = self._make_composition()
            if not composition.target.several_outputs:
                return False
            labels = [np.arange(2), np.arange(2)]
            composition.target = composition.target.with_labels(labels)
            adopt_outputs(composition, labels)  # refuses a criterion of one output
            composition.check()
            self._refuse_for_several_outputs(2)
        except Exception:  # noqa: BLE001 - whatever refuses them, fit says why
            return False
        return True

    def _refuse_several_outputs(self, method: str) -> None:
        """Refuse ``method``, which decides one label per row, for several outputs."""
        if self.n_outputs_ > 1:
            raise ValueError(
                f"{method} scores one decision per row; this model predicts "
                f"{self.n_outputs_} outputs: use predict or predict_proba"
            )

    def predict(self, X) -> np.ndarray:
        """Class labels; where the composition abstains, ``abstain_value``. With a target
        that does not decide among labels, the target's predictions. For several outputs
        an n x k array: each output's most probable class."""
        self._check_fitted()
        if not self.composition_.target.predicts_labels():
            return self._target_predictions(X)
        if self.n_outputs_ > 1:
            values, decision = self._values_and_decisions(X)
            return self.composition_.target.predictions(values, decision, self.classes_)
        if self.can_abstain_ and self.abstain_value is None:
            raise AbstentionError(
                f"this composition can abstain (labeler {self.composition_.labeler.name!r}"
                f"{', reject rule' if getattr(self, 'reject_threshold_', None) is not None else ''}"
                "), so predict() needs "
                f"abstain_value (a value that is not a class) to mark abstentions; or call "
                f"decide(X), which returns labels together with an abstention mask"
            )
        return self._labels_from(self._values_and_decisions(X)[1])

    def predict_proba(self, X) -> np.ndarray:
        """Class distribution per sample (columns ordered as ``classes_``); for several
        outputs a list of one such array per output, as scikit-learn's."""
        self._check_fitted()
        self._refuse_without_labels("predict_proba")
        values = self._values_and_decisions(X)[0]
        if self.n_outputs_ > 1:
            return output_shares(values, self.classes_)
        if values.ndim != 2 or values.shape[1] != self.n_classes_:
            target = self.composition_.target
            raise ValueError(
                f"predict_proba needs node values that are a distribution over the "
                f"{self.n_classes_} classes_; target {target.name!r} stores "
                f"{values.shape[1] if values.ndim == 2 else 1} value(s) per node: use predict"
            )
        return values

    def predict_log_proba(self, X) -> np.ndarray:
        """log of :meth:`predict_proba` (-inf where a class has probability 0)."""
        proba = self.predict_proba(X)
        with np.errstate(divide="ignore"):
            return [np.log(p) for p in proba] if isinstance(proba, list) else np.log(proba)

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy of ``predict``; an abstention counts as an error. With a target that
        does not decide among labels: minus the weighted mean of the target's sample loss
        (higher is better, as scikit-learn's model selection expects)."""
        self._check_fitted()
        composition = self.composition_
        target = composition.target
        if not target.predicts_labels():
            values, decision = self._values_and_decisions(X)
            rows = target.encode(y, values.shape[0]).rows
            loss = target.sample_loss(rows, values, decision, composition.labeler)
            return -float(np.average(loss, weights=sample_weight))
        predicted = self.predict(X)
        y = np.asarray(y)
        if self.n_outputs_ > 1:  # subset accuracy: every output right, as scikit-learn's
            if y.shape != predicted.shape:
                raise ValueError(
                    f"y has shape {y.shape}; this model predicts {predicted.shape} (a label "
                    "per row and output)"
                )
            correct = (predicted == y).all(axis=1).astype(np.float64)
            return float(np.average(correct, weights=sample_weight))
        correct = (predicted == y).astype(np.float64)
        return float(np.average(correct, weights=sample_weight))

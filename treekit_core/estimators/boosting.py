"""Gradient boosting (issue 60): the boosting structure and its regressor and classifier.

Each round computes the loss's gradient and hessian at the current raw prediction, grows
one tree per raw column on the negative gradient (a squared-error regression tree: any
splitter, question kind, missing-value rule and constraint the composition names), values
its leaves as the loss says (:meth:`treekit_core.components.Loss.leaf_values`) and adds
``learning_rate`` times them to the raw prediction (Friedman's gradient boosting, as
scikit-learn's ``GradientBoosting*``). A boosted tree is an ordinary :class:`Tree` whose
``value`` is what its leaves add, so every evaluator walks it (a row with a missing value
mixes its leaves' values by C4.5's shares, as the tree's evaluator mixes any values).
"""

from __future__ import annotations

import math
import numbers

import attrs
import numpy as np

from treekit_core.engine.constraints import VALUE_LOWER, VALUE_UPPER
from treekit_core.engine.feature_sampling import RandomFeatureSubset
from treekit_core.engine.importances import impurity_decrease
from treekit_core.engine.tree_text import export_text
from treekit_core.engine.validation import check_sample_weight, check_survival_y, check_y
from treekit_core.estimators import boosting_file
from treekit_core.estimators.base import ComposedEstimator, leaf_mixtures
from treekit_core.estimators.decisions import Decision
from treekit_core.estimators.ensemble import resolve_max_features
from treekit_core.estimators.inputs import _rng
from treekit_core.estimators.parameter_docs import document_parameters
from treekit_core.estimators.regression import RegressorFamily
from treekit_core.estimators.survival import StepFunction, concordance_index, warn_past_follow_up
from treekit_core.registry import get_registry


def _check_number(name, value, low, high, low_open=False, integral=False):
    """``value`` a real (an int with ``integral``) in [low, high] ((low, high] with
    ``low_open``), or a ValueError naming the parameter."""
    kind = numbers.Integral if integral else numbers.Real
    ok = isinstance(value, kind) and not isinstance(value, bool) and math.isfinite(value)
    ok = ok and (value > low if low_open else value >= low) and value <= high
    if not ok:
        bracket = "(" if low_open else "["
        what = "an integer" if integral else "a number"
        raise ValueError(f"{name} must be {what} in {bracket}{low}, {high}], got {value!r}")


class BoostingEstimator(ComposedEstimator):
    """The boosting structure: rounds of trees on the loss's negative gradient. The trees
    are squared-error regression trees (fixed, as in scikit-learn's gradient boosting);
    the splitter, propagator and evaluator are the user's."""

    fixed_components = {
        "criterion": "squared_error",
        "pruner": "none",
        "labeler": "majority",
        "confidence": "probability",
    }

    # -- parameters ------------------------------------------------------------------
    def _check_params(self) -> None:
        super()._check_params()
        _check_number("learning_rate", self.learning_rate, 0, math.inf, low_open=True)
        _check_number("subsample", self.subsample, 0, 1, low_open=True)
        _check_number("l2_regularization", self.l2_regularization, 0, math.inf)
        _check_number("validation_fraction", self.validation_fraction, 0, 1, low_open=True)
        _check_number("n_iter_no_change", self.n_iter_no_change, 1, math.inf, integral=True)
        _check_number("tol", self.tol, 0, math.inf)
        if not isinstance(self.early_stopping, (bool, np.bool_)):
            raise ValueError(f"early_stopping must be True or False, got {self.early_stopping!r}")
        self._rounds()

    def _rounds(self) -> int:
        """``max_iter`` (HistGradientBoosting's and LightGBM's name) when given, else
        ``n_estimators``."""
        if self.max_iter is not None:
            _check_number("max_iter", self.max_iter, 1, math.inf, integral=True)
            return int(self.max_iter)
        _check_number("n_estimators", self.n_estimators, 1, math.inf, integral=True)
        return int(self.n_estimators)

    #: What this estimator's y holds, as :attr:`treekit_core.Loss.reads` names it.
    takes = "numbers"

    def _make_loss(self):
        loss = get_registry().create("loss", self.loss, self._loss_params())
        if loss.reads != self.takes:
            raise ValueError(
                f"loss {loss.name!r} reads {loss.reads}; {type(self).__name__} takes "
                f"{self.takes}: name a loss that reads them"
            )
        return loss

    def _loss_params(self) -> dict | None:
        return self.loss_params

    # -- fitting ---------------------------------------------------------------------
    def _boost(self, X, y_numbers, sample_weight, n_classes: int, events=None):
        """Fit: check the inputs (y as numbers: the regressor's response, the classifier's
        class codes, the survival model's times with ``events`` beside them), then boost;
        returns the training data."""
        self._check_params()
        self._unweighted = sample_weight is None
        loss = self._make_loss()
        composition = self._make_composition()
        self._check_target(composition)
        data, _ = self._validate_training(X, y_numbers, sample_weight, composition)
        k = resolve_max_features(self.max_features, data.n_features)
        if k < data.n_features:  # features drawn at every node, as a forest draws them
            composition.feature_sampler = RandomFeatureSubset(k)
        composition.check(data)
        y = np.ascontiguousarray(data.evidence[:, 0])  # the kept rows' (weight > 0)
        if events is not None:  # (time, event) rows, of the rows fit kept
            kept = np.ones(events.size, dtype=bool)
            if sample_weight is not None:
                kept = check_sample_weight(sample_weight, events.size) > 0
            y = np.column_stack([y, events[kept].astype(np.float64)])
        loss.check_y(y)
        rng = _rng(self.random_state)
        train, held_out = self._split_for_early_stopping(data, y, rng, n_classes)
        n_raw = loss.n_raw(n_classes)
        from treekit_core.kernels.usable_cpus import numba_threads_capped

        self.composition_ = composition  # the rounds walk the held-out rows with its evaluator
        with numba_threads_capped(composition.fit_threads()):
            self._fit_rounds(loss, composition, train, held_out, y, n_classes, n_raw, rng)
        self.loss_ = loss
        self._set_fitted(data, None)
        return data, y

    def _split_for_early_stopping(self, data, y, rng, n_classes):
        """(training rows, held-out rows or None): with ``early_stopping``, a
        ``validation_fraction`` of the rows drawn at random (within each class for a
        classifier) is held out."""
        n = data.n_samples
        if not self.early_stopping:
            return np.arange(n), None
        held = np.zeros(n, dtype=bool)
        groups = [np.flatnonzero(y == k) for k in range(n_classes)] if n_classes else [np.arange(n)]
        for rows in groups:
            count = int(math.ceil(self.validation_fraction * rows.size))
            held[rng.choice(rows, size=min(count, rows.size - 1), replace=False)] = True
        if held.all() or not held.any():
            raise ValueError(
                f"validation_fraction={self.validation_fraction!r} leaves no rows to train on "
                f"or to validate with among {n} rows"
            )
        return np.flatnonzero(~held), np.flatnonzero(held)

    def _fit_rounds(self, loss, composition, train, held_out, y_all, n_classes, n_raw, rng):
        data_all = self._training_data_
        data = data_all if train.size == data_all.n_samples else _rows_of(data_all, train)
        y, weight = y_all[train], data.weight
        n, rounds = data.n_samples, self._rounds()
        kept = self._warm_rounds(n_raw, data.n_features, rounds)
        if not kept:
            self._init_raw = loss.initial_raw(y, None if self._unweighted else weight, n_classes)
        raw = self._raw_predict_checked(data.X, kept)
        valid_raw = None
        if held_out is not None:
            X_valid = np.ascontiguousarray(data_all.X[held_out])
            y_valid, w_valid = y_all[held_out], data_all.weight[held_out]
            valid_raw = self._raw_predict_checked(X_valid, kept)
        composition.splitter.share_across_trees(data)
        self.estimators_ = list(kept)
        train_score = list(self.train_score_) if kept else []
        valid_score = list(self.validation_score_) if kept and valid_raw is not None else []
        best, since_best = min(valid_score, default=math.inf), 0
        n_inbag = max(1, int(self.subsample * n))
        for _ in range(len(kept), rounds):
            round_weight = weight
            if self.subsample < 1.0:
                mask = np.zeros(n)
                mask[rng.choice(n, size=n_inbag, replace=False)] = 1.0
                round_weight = weight * mask
            state = loss.round_state(y, raw, weight)
            gradient, hessian = loss.gradient_hessian(y, raw, state)
            trees = []
            for k in range(n_raw):
                tree, rows, added = self._grow_one(
                    loss, composition, data, rng, y, raw, gradient, hessian, round_weight, k, state
                )
                trees.append(tree)
                raw[:, k] += self.learning_rate * np.bincount(rows, weights=added, minlength=n)
                if valid_raw is not None:
                    valid_raw[:, k] += self.learning_rate * self._tree_values(tree, X_valid)
            self.estimators_.append(trees)
            train_score.append(loss.loss(y, raw, round_weight, state))
            if valid_raw is not None:
                valid_score.append(loss.loss(y_valid, valid_raw, w_valid, state))
                if valid_score[-1] < best - self.tol:
                    best, since_best = valid_score[-1], 0
                else:
                    since_best += 1
                    if since_best >= self.n_iter_no_change:
                        break
        self.train_score_ = np.array(train_score)
        self.validation_score_ = np.array(valid_score)
        self.n_iter_ = len(self.estimators_)
        self.n_estimators_ = self.n_iter_

    def _grow_one(self, loss, composition, data, rng, y, raw, gradient, hessian, weight, k, state):
        """One tree on column ``k``'s negative gradient, its leaves valued by the loss (kept
        in the constrained tree's intervals): (the tree, the training rows it reaches,
        what it adds to each of them before the learning rate)."""
        residual = -gradient[:, k]
        grown = composition.grow(
            attrs.evolve(
                data, evidence=np.column_stack([residual, residual * residual]), weight=weight
            ),
            rng,
        )
        rows, nodes, shares = leaf_mixtures(composition.evaluator, grown, data.X, training=True)
        values = loss.leaf_values(
            y[rows],
            raw[rows],
            gradient[rows],
            hessian[rows],
            weight[rows] * shares,
            nodes,
            grown.n_nodes,
            k,
            self.l2_regularization,
            state,
        )
        if VALUE_LOWER in grown.node_fields:  # grown under monotonic constraints
            # the loss's values kept in the intervals the tree keeps its means in: ordered
            # intervals, so the tree (and the sum of trees) stays monotone
            values = np.clip(values, grown.node_fields[VALUE_LOWER], grown.node_fields[VALUE_UPPER])
        return attrs.evolve(grown, value=values[:, None]), rows, values[nodes] * shares

    def _warm_rounds(self, n_raw: int, n_features: int, rounds: int) -> list:
        """The fitted rounds ``warm_start`` keeps (none without it or before a fit); more
        rounds asked than fitted, the same raw columns and features, or refused."""
        kept = getattr(self, "estimators_", None) if self.warm_start else None
        if not kept:
            return []
        if len(kept[0]) != n_raw or kept[0][0].n_features != n_features:
            raise ValueError(
                "warm_start: the data have other classes or features than the fitted rounds; "
                "fit with warm_start=False"
            )
        if rounds < len(kept):
            raise ValueError(
                f"warm_start: {rounds} rounds asked, but {len(kept)} are fitted; ask for at "
                "least as many"
            )
        return list(kept)

    def _validate_training(self, X, y, sample_weight, composition, *args):
        data, classes = super()._validate_training(X, y, sample_weight, composition, *args)
        self._training_data_ = data  # for _fit_rounds only; dropped after fit
        return data, classes

    def _set_fitted(self, data, classes):
        super()._set_fitted(data, classes)
        self.__dict__.pop("_training_data_", None)

    # -- prediction ------------------------------------------------------------------
    def _tree_values(self, tree, X) -> np.ndarray:
        """What ``tree``'s leaves add for each row of X (mixed by the evaluator where a row
        reaches several)."""
        return np.asarray(self.composition_.evaluator.predict_distribution(tree, X))[:, 0]

    def _staged_raw(self, X):
        """The raw prediction after each round, for checked X."""
        raw = np.tile(self._init_raw, (X.shape[0], 1))
        for trees in self.estimators_:
            self._add_round(raw, trees, X)
            yield raw

    def _raw_predict(self, X) -> np.ndarray:
        with self._checked_for_predict(X) as checked:
            return self._raw_predict_checked(checked)

    def _raw_predict_checked(self, checked, rounds=None) -> np.ndarray:
        """The raw prediction of checked X after ``rounds`` (default: the fitted ones)."""
        raw = np.tile(self._init_raw, (checked.shape[0], 1))
        for trees in self.estimators_ if rounds is None else rounds:
            self._add_round(raw, trees, checked)
        return raw

    def _add_round(self, raw, trees, checked) -> None:
        """raw += what one round's trees add (the learning rate times their values)."""
        for k, tree in enumerate(trees):
            raw[:, k] += self.learning_rate * self._tree_values(tree, checked)

    def _staged(self, X, transform):
        with self._checked_for_predict(X) as checked:
            for raw in self._staged_raw(checked):
                yield transform(raw.copy())

    def export_text(self, round: int = 0, column: int = 0, decimals: int = 4) -> str:
        """The tree of round ``round`` (for raw column ``column``: a class of a multinomial
        model) as text, scikit-learn's ``export_text`` wording; a leaf says what it adds to
        the raw prediction before the learning rate (``add: [value]``)."""
        self._check_fitted()
        if not (isinstance(round, numbers.Integral) and -self.n_iter_ <= round < self.n_iter_):
            raise ValueError(f"round must be an int in [0, {self.n_iter_}), got {round!r}")
        trees = self.estimators_[round]
        if not (isinstance(column, numbers.Integral) and 0 <= column < len(trees)):
            raise ValueError(f"column must be an int in [0, {len(trees)}), got {column!r}")
        tree = trees[column]
        names = list(self.feature_names_in_) if hasattr(self, "feature_names_in_") else None
        return export_text(
            tree,
            names,
            decimals=decimals,
            categories=self.categories_,
            leaf_text=lambda node: f"add: [{tree.value[node, 0]:.{decimals}f}]",
        )

    @property
    def feature_importances_(self) -> np.ndarray:
        """Mean decrease in impurity of the trees' squared error, averaged over the trees
        that split (unnormalised per tree) and normalised to sum 1: scikit-learn's
        gradient boosting's definition."""
        self._check_fitted()
        decreases = [
            impurity_decrease(tree, self.composition_.criterion)
            for trees in self.estimators_
            for tree in trees
            if tree.n_nodes > 1
        ]
        if not decreases:
            return np.zeros(self.n_features_in_)
        mean = np.mean(decreases, axis=0)
        return mean / mean.sum() if mean.sum() > 0 else mean

    def to_json(self, path=None, leaf_responses: bool = False) -> str:
        """The model file (written to ``path`` when given): the single tree's format with
        the boosting section and each tree's leaf values (``boosting_file.py``). A boosted
        model keeps no leaf responses (``leaf_responses=True`` is refused)."""
        if leaf_responses:
            raise ValueError("leaf_responses=True: a boosted model keeps no leaf responses")
        return boosting_file.write(self, path)

    @classmethod
    def from_json(cls, text_or_path):
        """A boosted model from :meth:`to_json`'s file, every field checked first."""
        return boosting_file.read(cls, text_or_path)

    def _json_params(self) -> dict:
        params = super()._json_params()
        if not isinstance(self.loss, str):  # a Loss instance: its name and parameters
            params["loss"] = self.loss.name
            params["loss_params"] = self.loss.get_params() or None
        return params


def _rows_of(data, rows):
    """``data`` restricted to ``rows`` (its own cache: presorted orders and bins are of X)."""
    return attrs.evolve(
        data,
        X=np.ascontiguousarray(data.X[rows]),
        evidence=np.ascontiguousarray(data.evidence[rows]),
        weight=data.weight[rows],
        cache={},
    )


_SHARED_DOC = """

    Parameters shared with scikit-learn's ``GradientBoosting*``: ``loss`` (a registered
    loss, :mod:`treekit_core.builtins.losses`; ``loss_params`` its parameters),
    ``learning_rate``, ``n_estimators`` (``max_iter``: its synonym), ``subsample`` (rows
    drawn without replacement per round), ``max_features`` (drawn at every node, as
    scikit-learn's), ``max_depth=3`` and the other stopping rules,
    ``random_state``; with HistGradientBoosting's ``l2_regularization`` (added to a leaf's
    summed hessian in the Newton step) and ``early_stopping`` (``validation_fraction`` of
    the rows held out, within classes for a classifier; the rounds stop once the held-out
    loss has not fallen by ``tol`` for ``n_iter_no_change`` rounds). The trees are
    squared-error regression trees on the negative gradient: ``splitter`` (None: the
    histogram splitter where the ``treekit-histogram`` plugin is installed, else
    ``exhaustive``), ``propagator`` and ``evaluator`` (missing values), ``monotonic_cst``,
    ``interaction_cst`` and ``categorical_features`` as for a single tree. ``warm_start``
    keeps the fitted rounds and adds rounds up to ``n_estimators`` (``max_iter``).

    Fitted: ``estimators_`` (per round, a list of trees whose ``value`` is what each leaf
    adds to the raw prediction before the learning rate), ``train_score_`` (the loss on the
    round's in-bag rows after each round), ``validation_score_`` (with early stopping),
    ``n_iter_``, ``feature_importances_``, ``loss_``."""


def _default_splitter(splitter):
    if splitter is not None:
        return splitter
    return "histogram" if "histogram" in get_registry().components("splitter") else "exhaustive"


@document_parameters
class BoostingRegressor(RegressorFamily, BoostingEstimator):
    __doc__ = (
        """Gradient-boosted regression trees: ``predict`` is the loss's link of the raw
    prediction (the number for ``squared_error``, ``absolute_error``, ``huber`` and
    ``quantile``; exp for ``poisson`` and ``gamma``); ``score`` is R^2."""
        + _SHARED_DOC
    )

    # the structure's (squared-error trees), not the family's: boosting fixes the criterion
    fixed_components = BoostingEstimator.fixed_components

    def __init__(
        self,
        loss="squared_error",
        learning_rate=0.1,
        n_estimators=100,
        *,
        max_iter=None,
        subsample=1.0,
        alpha=0.9,
        loss_params=None,
        l2_regularization=0.0,
        splitter=None,
        propagator="hard",
        evaluator="hard",
        splitter_params=None,
        propagator_params=None,
        evaluator_params=None,
        max_depth=3,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0,
        max_leaf_nodes=None,
        max_features=None,
        min_gain=None,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-4,
        categorical_features=None,
        monotonic_cst=None,
        interaction_cst=None,
        warm_start=False,
        random_state=None,
        n_threads=None,
    ):
        self._store_params(locals())

    def _component_choice(self, kind: str) -> tuple:
        if kind == "splitter":
            return _default_splitter(self.splitter), self.splitter_params
        return super()._component_choice(kind)

    def _loss_params(self) -> dict | None:
        """``alpha`` (scikit-learn's parameter of ``huber`` and ``quantile``) unless
        ``loss_params`` names it."""
        params = dict(self.loss_params or {})
        if self.loss in ("huber", "quantile"):
            params.setdefault("alpha", self.alpha)
        return params or None

    def fit(self, X, y, sample_weight=None):
        """Boost on a numeric response ``y``."""
        self._boost(X, y, sample_weight, 0)
        return self

    def predict(self, X) -> np.ndarray:
        """The loss's link of the raw prediction for every row."""
        self._check_fitted()
        return self.loss_.link(self._raw_predict(X)[:, :1])

    def staged_predict(self, X):
        """``predict`` after each round (a generator)."""
        self._check_fitted()
        yield from self._staged(X, self.loss_.link)


@document_parameters
class BoostingClassifier(BoostingEstimator):
    __doc__ = (
        """Gradient-boosted classification trees (``loss="log_loss"``: one tree per round
    for two classes, one per class and round for more): ``predict_proba`` is the link of
    the raw prediction, ``predict`` the most probable class (the first of equals),
    ``score`` the accuracy. ``class_weight`` (None, ``"balanced"`` or a dict class ->
    weight) multiplies the rows' weights."""
        + _SHARED_DOC
    )

    estimator_type = "classifier"
    takes = "class labels"

    def __init__(
        self,
        loss="log_loss",
        learning_rate=0.1,
        n_estimators=100,
        *,
        max_iter=None,
        subsample=1.0,
        loss_params=None,
        l2_regularization=0.0,
        splitter=None,
        propagator="hard",
        evaluator="hard",
        splitter_params=None,
        propagator_params=None,
        evaluator_params=None,
        max_depth=3,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0,
        max_leaf_nodes=None,
        max_features=None,
        min_gain=None,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-4,
        class_weight=None,
        categorical_features=None,
        monotonic_cst=None,
        interaction_cst=None,
        warm_start=False,
        random_state=None,
        n_threads=None,
    ):
        self._store_params(locals())

    def _component_choice(self, kind: str) -> tuple:
        if kind == "splitter":
            return _default_splitter(self.splitter), self.splitter_params
        return super()._component_choice(kind)

    def fit(self, X, y, sample_weight=None):
        """Boost on class labels ``y``."""
        n_rows = X.shape[0] if hasattr(X, "shape") else np.asarray(X).shape[0]
        classes, codes = check_y(y, n_rows)  # the trees' own checks of class labels
        if classes.size < 2:
            raise ValueError(f"y holds {classes.size} class; a classifier needs at least 2 classes")
        weight = None
        if sample_weight is not None or self.class_weight is not None:
            weight = check_sample_weight(sample_weight, codes.size)
            weight = weight * self._class_weights(classes, codes, weight)[codes]
        self._boost(X, codes.astype(np.float64), weight, classes.size)
        self.classes_, self.n_classes_ = classes, int(classes.size)
        return self

    def _class_weights(self, classes, codes, weight) -> np.ndarray:
        if self.class_weight is None:
            return np.ones(classes.size)
        if isinstance(self.class_weight, str) and self.class_weight == "balanced":
            counts = np.bincount(codes, minlength=classes.size).astype(float)
            return codes.size / (classes.size * np.maximum(counts, 1))
        if isinstance(self.class_weight, dict):
            unknown = set(self.class_weight) - set(classes.tolist())
            if unknown:
                raise ValueError(f"class_weight names classes not in y: {sorted(unknown)}")
            return np.array([float(self.class_weight.get(c, 1.0)) for c in classes.tolist()])
        raise ValueError(
            f"class_weight must be None, 'balanced' or a dict, got {self.class_weight!r}"
        )

    def decision_function(self, X) -> np.ndarray:
        """The raw prediction: the log-odds of ``classes_[1]`` (n) for two classes, the
        symmetric multinomial logits (n x K) for more."""
        self._check_fitted()
        raw = self._raw_predict(X)
        return raw[:, 0] if raw.shape[1] == 1 else raw

    def predict_proba(self, X) -> np.ndarray:
        """The class probabilities (n x K, columns in ``classes_`` order)."""
        self._check_fitted()
        return self.loss_.link(self._raw_predict(X))

    def predict(self, X) -> np.ndarray:
        """The most probable class of every row."""
        probabilities = self.predict_proba(X)
        return self.classes_[np.argmax(probabilities, axis=1)]

    def decide(self, X) -> Decision:
        """Every row's decision as the classifier family gives it (the command line reads
        it): the most probable class, never an abstention, the confidence its
        probability."""
        proba = self.predict_proba(X)
        index = np.argmax(proba, axis=1)
        return Decision(
            labels=self.classes_[index],
            abstained=np.zeros(index.size, dtype=bool),
            proba=proba,
            confidence=proba[np.arange(index.size), index],
            class_index=index.astype(np.int64),
        )

    def staged_predict_proba(self, X):
        """``predict_proba`` after each round (a generator)."""
        self._check_fitted()
        yield from self._staged(X, self.loss_.link)

    def staged_predict(self, X):
        """``predict`` after each round (a generator)."""
        for proba in self.staged_predict_proba(X):
            yield self.classes_[np.argmax(proba, axis=1)]

    def score(self, X, y, sample_weight=None) -> float:
        """The (weighted) accuracy."""
        correct = self.predict(X) == np.asarray(y)
        return float(np.average(correct, weights=sample_weight))


@document_parameters
class BoostingSurvival(BoostingEstimator):
    __doc__ = (
        """Gradient-boosted trees for censored follow-up (``loss="cox"``: Cox's partial
    likelihood with Breslow's ties, as scikit-survival's
    ``GradientBoostingSurvivalAnalysis(loss="coxph")``): ``fit(X, y)`` takes y as
    scikit-survival's ``Surv`` makes it (or two columns, time and event); ``predict`` is
    the log hazard ratio (higher: riskier); ``predict_cumulative_hazard_function`` and
    ``predict_survival_function`` use Breslow's baseline hazard of the training rows'
    predictions, on the grid of the distinct training times (``unique_times_``); ``score``
    is Harrell's concordance index."""
        + _SHARED_DOC
    )

    takes = "censored follow-up"
    # scikit-learn's regressor tags, as the survival family's (a score, higher is better)
    estimator_type = "regressor"

    def __init__(
        self,
        loss="cox",
        learning_rate=0.1,
        n_estimators=100,
        *,
        max_iter=None,
        subsample=1.0,
        loss_params=None,
        l2_regularization=0.0,
        splitter=None,
        propagator="hard",
        evaluator="hard",
        splitter_params=None,
        propagator_params=None,
        evaluator_params=None,
        max_depth=3,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0,
        max_leaf_nodes=None,
        max_features=None,
        min_gain=None,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-4,
        categorical_features=None,
        monotonic_cst=None,
        interaction_cst=None,
        warm_start=False,
        random_state=None,
        n_threads=None,
    ):
        self._store_params(locals())

    def _component_choice(self, kind: str) -> tuple:
        if kind == "splitter":
            return _default_splitter(self.splitter), self.splitter_params
        return super()._component_choice(kind)

    def fit(self, X, y, sample_weight=None):
        """Boost on censored follow-up ``y``, then fit Breslow's baseline hazard."""
        n_rows = X.shape[0] if hasattr(X, "shape") else np.asarray(X).shape[0]
        event, time = check_survival_y(y, n_rows)
        data, rows = self._boost(X, time, sample_weight, 0, events=event)
        with self._checked_for_predict(data.X) as checked:
            risk = self._raw_predict_checked(checked)[:, 0]
        self.unique_times_, self.cumulative_baseline_hazard_ = breslow_baseline(
            rows[:, 0], rows[:, 1] > 0, risk
        )
        return self

    def predict(self, X) -> np.ndarray:
        """The log hazard ratio of every row (the raw prediction)."""
        self._check_fitted()
        return self._raw_predict(X)[:, 0]

    def predict_cumulative_hazard_function(self, X, return_array=False):
        """Breslow's baseline cumulative hazard times exp(risk), per row: step functions,
        or with ``return_array`` an array (rows x ``unique_times_``)."""
        hazard = np.exp(self.predict(X))[:, None] * self.cumulative_baseline_hazard_[None, :]
        if return_array:
            return hazard
        return np.array([StepFunction(self.unique_times_, h) for h in hazard], dtype=object)

    def predict_survival_function(self, X, return_array=False):
        """exp(-cumulative hazard) per row (see :meth:`predict_cumulative_hazard_function`)."""
        survival = np.exp(-self.predict_cumulative_hazard_function(X, return_array=True))
        if return_array:
            return survival
        return np.array(
            [StepFunction(self.unique_times_, s, before=1.0) for s in survival], dtype=object
        )

    @property
    def is_event_time_(self) -> np.ndarray:
        """Which of ``unique_times_`` saw an event (where the baseline hazard steps)."""
        self._check_fitted()
        return np.diff(self.cumulative_baseline_hazard_, prepend=0.0) > 0

    def predict_survival_at(self, X, times) -> np.ndarray:
        """Every row's survival at ``times`` (n x len(times)): its curve at the last
        training time <= t, 1 before the first; a time past the last training time gets
        the last value, which no row observed (a :class:`FollowUpWarning` says so)."""
        times = np.asarray(times, dtype=np.float64).reshape(-1)
        if not np.isfinite(times).all():
            raise ValueError("times must be finite numbers (no NaN or infinity)")
        warn_past_follow_up(times, self.unique_times_)
        position = np.searchsorted(self.unique_times_, times, side="right") - 1
        hazard = np.where(
            position >= 0, self.cumulative_baseline_hazard_[np.maximum(position, 0)], 0.0
        )
        return np.exp(-np.exp(self.predict(X))[:, None] * hazard[None, :])

    def score(self, X, y, sample_weight=None) -> float:
        """Harrell's concordance index of :meth:`predict` on censored ``y``."""
        if sample_weight is not None:
            raise ValueError("Harrell's concordance index takes no sample_weight")
        event, time = check_survival_y(y, len(y))
        return concordance_index(event, time, self.predict(X))


def breslow_baseline(time, event, risk) -> tuple:
    """(the distinct times, Breslow's cumulative baseline hazard at each): the sum over
    event times t <= each of (events at t) / (sum of exp(risk) over the rows still at risk
    at t), scikit-survival's ``BreslowEstimator``."""
    order = np.argsort(time, kind="stable")
    t, d, r = time[order], event[order], np.exp(risk[order])
    times, first = np.unique(t, return_index=True)
    at_risk = np.cumsum(r[::-1])[::-1][first]
    events = np.add.reduceat(d.astype(np.float64), first)
    return times, np.cumsum(events / at_risk)

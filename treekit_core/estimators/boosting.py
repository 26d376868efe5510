"""Gradient boosting (issue 60): the boosting structure and its regressor and classifier.

Each round computes the loss's gradient and hessian at the current raw prediction, grows
one tree per raw column on the gradient (squared error of the negative gradient, as
scikit-learn's ``GradientBoosting*``, or the Newton gain of gradient and hessian, as
LightGBM and HistGradientBoosting: any splitter, question kind, missing-value rule and
constraint the composition names), values its leaves as the loss says
(:meth:`treekit_core.components.Loss.leaf_values`) and adds ``learning_rate`` times them
to the raw prediction (Friedman's gradient boosting). A boosted tree is an ordinary
:class:`Tree` whose ``value`` is what its leaves add, so every evaluator walks it (a row
with a missing value mixes its leaves' values by C4.5's shares, as the tree's evaluator
mixes any values).
"""

from __future__ import annotations

import contextlib
import math
import numbers

import attrs
import numpy as np

from treekit_core.engine.constraints import VALUE_LOWER, VALUE_UPPER
from treekit_core.engine.feature_sampling import RandomFeatureSubset
from treekit_core.engine.importances import impurity_decrease
from treekit_core.engine.tree_text import export_text
from treekit_core.engine.validation import check_sample_weight, has_missing, known_finite
from treekit_core.estimators import boosting_file
from treekit_core.estimators.base import ComposedEstimator
from treekit_core.estimators.ensemble import resolve_max_features
from treekit_core.estimators.inputs import _rng
from treekit_core.estimators.memberships import grown_leaf_mixtures
from treekit_core.registry import get_registry

#: The rows boosting writes for its trees every round, by the kind of rows the criterion
#: reads (:data:`treekit_core.components.evidence.EVIDENCE_KINDS`), and their width:
#: ``moments`` (r, r^2) of the residual r = -g, ``newton_moments`` (-g, h, g^2 / h).
ROW_WIDTHS = {"moments": 2, "newton_moments": 3}


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
    """The boosting structure: rounds of trees on the loss's gradient. The trees' criterion
    is ``squared_error`` or ``newton`` (:meth:`_criterion_choice`); the splitter,
    propagator and evaluator are the user's."""

    fixed_components = {
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

    def _component_choice(self, kind: str) -> tuple:
        """The splitter None means the histogram splitter where ``treekit-histogram`` is
        installed (boosting's usual search), else the exhaustive one; the criterion is
        :meth:`_criterion_choice`'s."""
        if kind == "splitter" and self.splitter is None:
            installed = get_registry().components("splitter")
            return ("histogram" if "histogram" in installed else "exhaustive"), self.splitter_params
        if kind == "criterion":
            return self._criterion_choice()
        return super()._component_choice(kind)

    def _criterion_choice(self) -> tuple:
        """(criterion, parameters) of the trees. ``"squared_error"`` of the negative
        gradient (Friedman's trees, scikit-learn's ``GradientBoosting*``) or ``"newton"``,
        the Newton gain (LightGBM's, HistGradientBoosting's); None: the Newton gain where
        the loss prefers it (:attr:`treekit_core.Loss.prefers_newton_gain`) and the
        splitter provides ``binned_search`` (the peers of a binned search grow by it),
        else squared error. A criterion with an ``l2_regularization`` parameter takes the
        estimator's unless ``criterion_params`` names it."""
        criterion = self.criterion
        if criterion is None:
            newton = self._loss_class().prefers_newton_gain and self._splitter_provides(
                "binned_search"
            )
            criterion = "newton" if newton else "squared_error"
        if not isinstance(criterion, str):  # an instance: its own parameters
            return criterion, None
        params = dict(self.criterion_params or {})
        cls = get_registry().get_class("criterion", criterion)
        if attrs.has(cls) and "l2_regularization" in attrs.fields_dict(cls):
            params.setdefault("l2_regularization", self.l2_regularization)
        return criterion, params or None

    def _loss_class(self):
        """The class of the loss ``loss`` names (or of the instance given)."""
        if isinstance(self.loss, str):
            return get_registry().get_class("loss", self.loss)
        return type(self.loss)

    def _splitter_provides(self, capability: str) -> bool:
        """Whether the trees' splitter (:meth:`_component_choice`'s) provides
        ``capability``."""
        splitter, _ = self._component_choice("splitter")
        if isinstance(splitter, str):
            splitter = get_registry().get_class("splitter", splitter)
        return capability in splitter.provides

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
        if composition.criterion.evidence not in ROW_WIDTHS:
            raise ValueError(
                f"criterion {composition.criterion.name!r} reads "
                f"{composition.criterion.evidence!r} rows; boosting writes "
                f"{' or '.join(map(repr, ROW_WIDTHS))} rows for its trees: name "
                "'squared_error' or 'newton'"
            )
        self._check_target(composition)
        data, _ = self._validate_training(X, y_numbers, sample_weight, composition)
        k = resolve_max_features(self.max_features, data.n_features)
        if k < data.n_features:  # features drawn at every node, as a forest draws them
            composition.feature_sampler = RandomFeatureSubset(k)
        composition.check(data)
        responses = composition.target.responses(data.evidence)
        if responses is not None and responses.ndim != 1:
            raise ValueError(
                f"y has {responses.shape[1]} outputs; {type(self).__name__} boosts one "
                "(fit one model per output, or a forest or tree of several outputs)"
            )
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
        # X is checked for missing values once, not by every round's walk to the leaves
        complete = known_finite(data.X) if not has_missing(data.X) else contextlib.nullcontext()
        with numba_threads_capped(composition.fit_threads()), complete:
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
        composition.splitter.share_across_trees(data, n_threads=composition.fit_threads())
        self.estimators_ = list(kept)
        train_score = list(self.train_score_) if kept else []
        valid_score = list(self.validation_score_) if kept and valid_raw is not None else []
        best, since_best = min(valid_score, default=math.inf), 0
        n_inbag = max(1, int(self.subsample * n))
        from treekit_core.kernels.row_passes import (  # numba, once fitting
            add_leaf_values,
            on_row_threads,
        )

        # each tree's rows, rewritten every round (_grow_one): the target's own rows where
        # they fit (the fit's y is copied out of them, nothing reads them again; 16 MB
        # less at the peak at 1M rows), else a buffer of the fit's
        width = ROW_WIDTHS[composition.criterion.evidence]
        evidence = data.evidence
        if not (
            data is data_all
            and evidence.shape == (n, width)
            and evidence.dtype == np.float64
            and evidence.flags.c_contiguous
            and evidence.flags.owndata
            and evidence.flags.writeable
        ):
            evidence = np.empty((n, width))
        # (weight, state) of the round whose train_score_ entry is still to be taken: the
        # loss at the raw prediction it left, in the next round's pass for the gradient
        # (Loss.gradient_hessian_scored), after the last round on its own
        unscored = None
        shared = loss.fit_state(y, weight)
        for _ in range(len(kept), rounds):
            round_weight = weight
            if self.subsample < 1.0:
                mask = np.zeros(n)
                mask[rng.choice(n, size=n_inbag, replace=False)] = 1.0
                round_weight = weight * mask
            state = {**shared, **loss.round_state(y, raw, weight)}
            if unscored is None:
                gradient, hessian = loss.gradient_hessian(y, raw, state)
            else:
                gradient, hessian, score = loss.gradient_hessian_scored(y, raw, state, *unscored)
                train_score.append(score)
            trees = []
            for k in range(n_raw):
                tree, rows, added = self._grow_one(
                    loss,
                    composition,
                    data,
                    rng,
                    y,
                    raw,
                    gradient,
                    hessian,
                    round_weight,
                    k,
                    state,
                    evidence,
                )
                trees.append(tree)
                if rows.size != n:  # rows reaching several leaves: their parts summed
                    added = np.bincount(rows, weights=added, minlength=n)
                    raw[:, k] += self.learning_rate * added
                else:  # each row in one leaf: raw[:, k] += rate * values[leaf], one pass
                    on_row_threads(add_leaf_values, n, raw, k, self.learning_rate, *added)
                if valid_raw is not None:
                    valid_raw[:, k] += self.learning_rate * self._tree_values(tree, X_valid)
            self.estimators_.append(trees)
            # let the round's gradient and hessian go before the next round's are made
            # beside the loss's temporaries (16 MB each at 1M rows)
            del gradient, hessian
            # unweighted rows scored as such (None): the same number (a weight of 1 times a
            # loss is the loss, their sum the count) without the pass over the weights
            unit_rows = self._unweighted and round_weight is weight
            unscored = (None if unit_rows else round_weight, state)
            if valid_raw is not None:
                valid_score.append(loss.loss(y_valid, valid_raw, w_valid, state))
                if valid_score[-1] < best - self.tol:
                    best, since_best = valid_score[-1], 0
                else:
                    since_best += 1
                    if since_best >= self.n_iter_no_change:
                        break
        if unscored is not None:
            train_score.append(loss.loss(y, raw, *unscored))
        self.train_score_ = np.array(train_score)
        self.validation_score_ = np.array(valid_score)
        self.n_iter_ = len(self.estimators_)
        self.n_estimators_ = self.n_iter_

    def _grow_one(
        self, loss, composition, data, rng, y, raw, gradient, hessian, weight, k, state, evidence
    ):
        """One tree on column ``k``'s negative gradient, its leaves valued by the loss (kept
        in the constrained tree's intervals): (the tree, the training rows it reaches,
        what it adds to them before the learning rate: where each row is in one leaf, the
        leaves' values and each row's leaf; else the value of each (row, leaf) entry)."""
        # the tree's rows, written into the fit's one buffer (a fresh pair of columns a
        # round cost 8 MB more at the peak and page faults): (r, r^2) of the residual r for
        # squared error, (-g, h, g^2 / h) for the Newton gain
        from treekit_core.kernels.row_passes import (  # numba
            newton_rows,
            on_row_threads,
            residual_rows,
        )

        n = evidence.shape[0]
        if evidence.shape[1] == ROW_WIDTHS["newton_moments"]:
            on_row_threads(newton_rows, n, gradient, hessian, k, evidence)
        else:
            on_row_threads(residual_rows, n, gradient, k, evidence)
        grown = composition.grow(
            attrs.evolve(data, evidence=evidence, weight=weight, training_leaves_wanted=True),
            rng,
        )
        # from the growth where the splitter can say (a walk of X is a tenth of a round at
        # 1M rows: X is read whole)
        rows, nodes, shares = grown_leaf_mixtures(composition, grown, data)
        if rows.size == y.shape[0]:  # each row in one leaf (sorted, distinct: every row)
            # the arrays as they are: copies of them cost a tenth of a round at 1M rows
            rows_of = lambda values: values  # noqa: E731
            row_weight = weight
        else:
            rows_of = lambda values: values[rows]  # noqa: E731
            row_weight = weight[rows] * shares
        values = loss.leaf_values(
            rows_of(y),
            rows_of(raw),
            rows_of(gradient),
            rows_of(hessian),
            row_weight,
            nodes,
            grown.n_nodes,
            k,
            self.l2_regularization,
            state,
        )
        # float64, as the tree keeps them: the raw predictions move as predict's will
        values = np.asarray(values, dtype=np.float64)
        if VALUE_LOWER in grown.node_fields:  # grown under monotonic constraints
            # the loss's values kept in the intervals the tree keeps its means in: ordered
            # intervals, so the tree (and the sum of trees) stays monotone
            values = np.clip(values, grown.node_fields[VALUE_LOWER], grown.node_fields[VALUE_UPPER])
        # each row in one leaf: (the leaves' values, each row's leaf), for add_leaf_values
        added = (values, nodes) if rows.size == y.shape[0] else values[nodes] * shares
        return attrs.evolve(grown, value=values[:, None]), rows, added

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

    def _validate_training(self, X, y, sample_weight, composition, **target_arguments):
        data, classes = super()._validate_training(
            X, y, sample_weight, composition, **target_arguments
        )
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
        """Mean decrease in impurity of the trees' criterion, averaged over the trees
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

"""TreeClassifier: a composition of components with scikit-learn's conventions."""

from __future__ import annotations

import contextlib
import functools
import json
import numbers

import attrs
import numpy as np

from treekit_core.builtins.evaluators import apply_tree
from treekit_core.builtins.pruners.cost_complexity import (
    CostComplexity,
    node_risk,
    stratified_folds,
)
from treekit_core.components import ABSTAIN, KINDS
from treekit_core.engine import model_file
from treekit_core.engine.calibration import Calibration, CalibrationRule
from treekit_core.engine.categorical import encode, fit_categories, resolve_categorical
from treekit_core.engine.composition import Composition, CompositionError, PruningContext
from treekit_core.engine.importances import tree_importances
from treekit_core.engine.rejection import RejectRule, RiskCoverage, risk_coverage
from treekit_core.engine.sklearn_compat import as_sklearn
from treekit_core.engine.stopping import StoppingRules
from treekit_core.engine.training_data import TrainingData
from treekit_core.engine.tree import encode_floats
from treekit_core.engine.tree_text import export_text
from treekit_core.engine.validation import (
    check_class_statistics,
    check_counterexamples,
    check_n_threads,
    check_sample_weight,
    check_X,
    check_y,
    column_keys_of,
    densified,
    feature_label,
    feature_names_of,
    has_missing,
    kernel_layout,
    known_finite,
    warn_narrow_features,
)
from treekit_core.estimators.cp_table import cp_table_text
from treekit_core.estimators.errors import AbstentionError, NotFittedError
from treekit_core.estimators.params import ParamsMixin
from treekit_core.registry import PluginError, get_registry

MODEL_FORMAT = "treekit-model"
MODEL_VERSION = 2


def check_header(payload: dict, estimator: str) -> None:
    """The model file's format, version and estimator."""
    if payload.get("format") != MODEL_FORMAT:
        raise ValueError("not a treekit model: the JSON lacks format='treekit-model'")
    if payload.get("version") not in READABLE_MODEL_VERSIONS:
        raise ValueError(
            f"unsupported treekit model version {payload.get('version')!r}; this treekit "
            f"reads versions {', '.join(map(str, READABLE_MODEL_VERSIONS))}"
        )
    found = payload.get("estimator", "TreeClassifier")
    if found != estimator:
        raise ValueError(f"model file holds a {found!r}, not a {estimator!r}")


#: Model versions this treekit reads (version 1: binary trees with question codes, converted).
READABLE_MODEL_VERSIONS = (1, 2)
STOPPING_PARAMS = (
    "max_depth",
    "min_samples_split",
    "min_samples_leaf",
    "min_weight_fraction_leaf",
    "min_impurity_decrease",
    "min_gain",
)


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


def _plain(value):
    """numpy scalars and arrays inside parameters as the Python values JSON writes."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, (np.generic, np.ndarray)):
        return _plain(value.tolist())
    return value


def _preview(values, limit=8) -> str:
    values = list(values)
    text = ", ".join(repr(v) for v in values[:limit])
    return f"[{text}{', ...' if len(values) > limit else ''}]"


class Bunch(dict):
    """A dict whose keys are attributes too (scikit-learn's ``Bunch``)."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


def node_indicator(tree, leaves: np.ndarray):
    """CSR matrix n_samples x n_nodes with the nodes from the root to each sample's leaf."""
    from scipy.sparse import csr_matrix

    parent = tree.parents()
    paths = []
    for leaf in range(tree.n_nodes):
        path, node = [], leaf
        while node >= 0:
            path.append(node)
            node = parent[node]
        paths.append(path[::-1])
    rows = [paths[int(leaf)] for leaf in leaves]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
    indices = np.concatenate(rows).astype(np.int64) if rows else np.zeros(0, dtype=np.int64)
    data = np.ones(indices.shape[0], dtype=np.int64)
    return csr_matrix((data, indices, indptr), shape=(len(rows), tree.n_nodes))


def _without_zero_weight(X, evidence, weight):
    """The rows of positive weight. A zero-weight row is a removed row: it must not place
    a threshold, count towards ``min_samples_*`` or be drawn, so that weighting a row by 0
    and deleting it grow the same tree (as integer weights and repeated rows do)."""
    if (weight > 0).all():
        return X, evidence, weight
    kept = np.flatnonzero(weight > 0)
    return X[kept], np.ascontiguousarray(evidence[kept]), weight[kept]


def _rng(random_state) -> np.random.Generator:
    """The generator for ``random_state``: None (fresh entropy), a non-negative int, a
    numpy Generator or RandomState (as scikit-learn accepts)."""
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or (
        isinstance(random_state, numbers.Integral)
        and not isinstance(random_state, bool)
        and random_state >= 0
    ):
        return np.random.default_rng(None if random_state is None else int(random_state))
    raise ValueError(
        "random_state must be None, an int >= 0, or a numpy Generator or RandomState, got "
        f"{random_state!r}"
    )


class ComposedEstimatorMixin(ParamsMixin):
    """What TreeClassifier and ForestClassifier share: component resolution and checks."""

    def _make_composition(self) -> Composition:
        registry = get_registry()
        components = {
            kind: registry.create(kind, getattr(self, kind), getattr(self, f"{kind}_params"))
            for kind in KINDS
        }
        stopping = StoppingRules(**{name: getattr(self, name) for name in STOPPING_PARAMS})
        return Composition(
            **components,
            stopping=stopping,
            registry=registry,
            n_threads=check_n_threads(getattr(self, "n_threads", None)),
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

    @staticmethod
    def _evidence_reader(composition):
        """The criterion, once it is known to read the same evidence rows as the labeler:
        the components that read the rows encode labels into them."""
        criterion, labeler = composition.criterion, composition.labeler
        if criterion.evidence != labeler.evidence:
            raise CompositionError(
                f"criterion {criterion.name!r} cannot be combined with labeler {labeler.name!r}: "
                "the "
                f"criterion reads {criterion.evidence} evidence rows, the labeler "
                f"{labeler.evidence} rows"
            )
        return criterion

    def _validate_training(
        self, X, y, sample_weight, composition, counterexamples=None, classes=None
    ):
        X = densified(X)
        names = feature_names_of(X)
        keys = column_keys_of(X)
        self._column_keys = (
            keys if keys is not None and all(isinstance(k, (int, str)) for k in keys) else None
        )
        nominal = resolve_categorical(getattr(self, "categorical_features", None), X, names)
        self.categories_ = fit_categories(X, nominal, names)
        X_checked = check_X(encode(X, self.categories_), allow_nan=True, feature_names=names)
        self._check_missing_supported(X_checked, composition, names)
        warn_narrow_features(X_checked, names, nominal=set(self.categories_))
        n = X_checked.shape[0]
        n_categories = np.zeros(X_checked.shape[1], dtype=np.int64)
        for j, levels in self.categories_.items():
            n_categories[j] = len(levels)
        reader = self._evidence_reader(composition)
        weight = check_sample_weight(sample_weight, n)
        if counterexamples is not None:
            if y is not None:
                raise ValueError(
                    "give either y (class labels) or counterexamples, not both; encode labelled "
                    "rows as counterexample rows with K-1 ones"
                )
            classes, matrix = check_counterexamples(counterexamples, n, classes)
            check_class_statistics(n, classes.shape[0], "counterexamples")
            evidence = reader.encode_counterexamples(matrix)
            if evidence is None:
                raise CompositionError(
                    f"counterexamples need a criterion and labeler that read counterexample rows "
                    "(e.g. criterion='counterexample_entropy', labeler='complementary'); "
                    "criterion "
                    f"{composition.criterion.name!r} and labeler {composition.labeler.name!r} read "
                    f"{reader.evidence} rows"
                )
            self._check_abstain_value(classes)
            X_kept, evidence, weight = _without_zero_weight(X_checked, evidence, weight)
            data = TrainingData(
                kernel_layout(X_kept),
                np.ascontiguousarray(evidence),
                weight,
                names,
                classes=classes,
                n_categories=n_categories,
            )
            return data, classes
        if classes is not None:
            raise ValueError(
                "classes= only applies with counterexamples=; with y the classes come from y"
            )
        classes, encoded = check_y(y, n)
        check_class_statistics(n, classes.shape[0])
        self._check_abstain_value(classes)
        evidence = reader.encode_labels(encoded, classes.shape[0])
        X_kept, evidence, weight = _without_zero_weight(X_checked, evidence, weight)
        data = TrainingData(
            kernel_layout(X_kept),
            evidence,
            weight,
            names,
            classes=classes,
            n_categories=n_categories,
        )
        return data, classes

    @staticmethod
    def _check_missing_supported(X, composition, names) -> None:
        """NaN is accepted when every component that reads X handles missing values."""
        if not has_missing(X):
            return
        missing = np.isnan(X)
        refusing = [
            c for c in composition.components.values() if c.sees_features and not c.handles_missing
        ]
        if refusing:
            j = int(np.flatnonzero(missing.any(axis=0))[0])
            rows = np.flatnonzero(missing[:, j])
            who = ", ".join(f"{c.kind} {c.name!r}" for c in refusing)
            raise ValueError(
                f"X contains NaN in {feature_label(j, names)} ({rows.size} rows, first row "
                f"{int(rows[0])}); "
                f"{who} does not handle missing values: impute them, drop the rows, or use "
                "components "
                f"that handle them"
            )

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

    def _set_fitted(self, data, classes):
        self.classes_ = classes
        self.n_classes_ = int(classes.shape[0])
        self.n_features_in_ = data.n_features
        if data.feature_names is not None:
            self.feature_names_in_ = np.asarray(data.feature_names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_

    def _check_fitted(self):
        if not hasattr(self, "composition_"):
            raise as_sklearn(NotFittedError, "NotFittedError")(
                f"this {type(self).__name__} is not fitted yet; call fit(X, y) first"
            )

    @contextlib.contextmanager
    def _checked_for_predict(self, X):
        """X checked for prediction; while the block runs, X is known finite to every step
        (when it is), so no step passes over X again to find out."""
        from treekit_core.kernels.usable_cpus import fit_threads, numba_threads_capped

        report = {}
        X = self._check_predict_X(X, report)
        with (
            known_finite(X) if report["finite"] else contextlib.nullcontext(X) as checked,
            numba_threads_capped(fit_threads(self.composition_.n_threads)),
        ):
            yield checked

    def _check_predict_X(self, X, report=None) -> np.ndarray:
        self._check_fitted()
        report = {} if report is None else report
        X = densified(X)
        self._check_column_keys(X)
        names = feature_names_of(X)
        fitted_names = getattr(self, "feature_names_in_", None)
        if names is not None and fitted_names is not None and list(names) != list(fitted_names):
            raise ValueError(
                f"X has feature names {names}, but the model was fitted with {list(fitted_names)}"
            )
        X = check_X(
            encode(X, getattr(self, "categories_", {})),
            n_features=self.n_features_in_,
            estimator=type(self).__name__,
            allow_nan=True,
            feature_names=names,
            report=report,
        )
        if not report["finite"]:
            self._check_missing_supported(
                X, self.composition_, getattr(self, "feature_names_in_", None)
            )
        return X

    def _check_column_keys(self, X) -> None:
        """A DataFrame with integer (or mixed) column labels must come in the order the
        model was fitted with, as string names must: a reordered frame would otherwise be
        read column by column, silently wrong."""
        fitted = getattr(self, "_column_keys", None)
        if fitted is None or not hasattr(X, "columns"):
            return
        keys = column_keys_of(X)
        given = keys if keys is not None else [str(c) for c in X.columns]
        if list(given) != list(fitted):
            raise ValueError(
                f"X has the columns {_preview(given)}, but the model was fitted on a DataFrame "
                f"with the columns {_preview(fitted)} (in this order): select them in that order "
                "(X[model_columns]) or pass a plain array"
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
        out_of_fold = functools.cache(lambda n_folds, seed: self._out_of_fold(data, n_folds, seed))
        self.reject_threshold_ = None
        if rule is not None:
            self.reject_threshold_ = self._choose_reject_threshold(rule, data, out_of_fold)
        self._fit_calibration(data, out_of_fold)

    def _choose_reject_threshold(self, rule, data, out_of_fold) -> float:
        """Threshold from training-data scores, or from out-of-fold scores with rule.cv."""
        if rule.threshold is not None:
            return float(rule.threshold)
        if rule.cv is None:
            scores, correct = self._scores_and_correctness(data.X, data.evidence)
        else:
            scores, correct = out_of_fold(rule.cv, rule.seed)
        return rule.choose(scores, correct, data.weight)

    def _scores_and_correctness(self, X, evidence):
        """Confidence of every decision (rejection off) and whether it is correct: the
        labeler counts no error for it (for counterexample rows: it is not a class the
        sample is known not to be)."""
        _, decision, scores = self._decide_arrays(X, reject=False)
        return scores, self.composition_.labeler.sample_errors(evidence, decision) < 0.5

    def _out_of_fold(self, data, n_folds: int, seed: int):
        """(scores, correct) of every training row from a copy of this estimator fitted on
        the other folds (stratified K-fold; no rejection or calibration in the copies)."""

        labels = self.composition_.labeler.row_labels(data.evidence)
        fold = stratified_folds(labels, n_folds, np.random.default_rng(seed))
        scores = np.full(data.n_samples, -np.inf)
        correct = np.zeros(data.n_samples, dtype=bool)
        params = {**self.get_params(), "reject": None, "calibration": None}
        for k in range(n_folds):
            test = np.flatnonzero(fold == k)
            train = np.flatnonzero(fold != k)
            if test.size == 0 or train.size == 0:
                continue
            model = type(self)(**params)._fit_validated(data.subset(train), self.classes_)
            scores[test], correct[test] = model._scores_and_correctness(
                data.X[test], data.evidence[test]
            )
        return scores, correct

    def _fit_calibration(self, data, out_of_fold) -> None:

        rule = CalibrationRule.from_param(self.calibration)
        self.calibration_ = None
        if rule is not None:
            scores, correct = out_of_fold(rule.cv, rule.seed)
            self.calibration_ = Calibration.fit(rule.method, scores, correct, data.weight)

    def risk_coverage(self, X, y) -> "RiskCoverage":
        """Risk (error on accepted) against coverage as the reject threshold sweeps the
        confidence scores of X; ``.area`` is the area under the curve."""
        with self._checked_for_predict(X) as checked:
            proba, decision, scores = self._decide_arrays(checked, reject=False)
        correct = (decision >= 0) & (self.classes_[np.maximum(decision, 0)] == np.asarray(y))
        return risk_coverage(scores, correct)

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

    def predict(self, X) -> np.ndarray:
        """Class labels; where the composition abstains, ``abstain_value``."""
        self._check_fitted()
        if self.can_abstain_ and self.abstain_value is None:
            raise AbstentionError(
                f"this composition can abstain (labeler {self.composition_.labeler.name!r}"
                f"{', reject rule' if getattr(self, 'reject_threshold_', None) is not None else ''}"
                "), so predict() needs "
                f"abstain_value (a value that is not a class) to mark abstentions; or call "
                f"decide(X), which returns labels together with an abstention mask"
            )
        with self._checked_for_predict(X) as checked:
            _, class_index, _ = self._decide_arrays(checked, with_confidence=False)
        return self._labels_from(class_index)

    def predict_proba(self, X) -> np.ndarray:
        """Class distribution per sample (columns ordered as ``classes_``)."""
        with self._checked_for_predict(X) as checked:
            proba, _, _ = self._decide_arrays(checked, with_confidence=False)
        return proba

    def predict_log_proba(self, X) -> np.ndarray:
        """log of :meth:`predict_proba` (-inf where a class has probability 0)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy of ``predict``; an abstention counts as an error."""
        predicted = self.predict(X)
        y = np.asarray(y)
        correct = (predicted == y).astype(np.float64)
        return float(np.average(correct, weights=sample_weight))

    # -- JSON -----------------------------------------------------------------------
    def to_json(self, path=None) -> str:
        """Serialise the fitted model to JSON (written to ``path`` when given)."""
        self._check_fitted()
        payload = {
            "format": MODEL_FORMAT,
            "version": MODEL_VERSION,
            "estimator": type(self).__name__,
            "classes": self.classes_.tolist(),
            "classes_dtype": self.classes_.dtype.str,
            "feature_names": list(self.feature_names_in_)
            if hasattr(self, "feature_names_in_")
            else None,
            **(
                {"column_keys": self._column_keys}
                if getattr(self, "_column_keys", None) is not None
                else {}
            ),
            "composition": self.composition_.describe(),
            "params": self._json_params(),
            **(
                {"reject_threshold": encode_floats(self.reject_threshold_)}
                if hasattr(self, "reject_threshold_")
                else {}
            ),
            **(
                {"calibration": self.calibration_.to_dict()}
                if getattr(self, "calibration_", None) is not None
                else {}
            ),
            "categories": [
                [int(j), levels] for j, levels in getattr(self, "categories_", {}).items()
            ],
            **self._trees_payload(),
        }
        text = json.dumps(payload)
        if path is not None:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
        return text

    def _json_params(self) -> dict:
        """Constructor parameters as JSON; a component given as an instance is stored as
        its name and parameters."""
        params = self.get_params()
        for kind in KINDS:
            component = params[kind]
            if not isinstance(component, str):
                params[kind] = component.name
                params[f"{kind}_params"] = component.get_params() or None
        if not isinstance(params["random_state"], (int, type(None))):
            params["random_state"] = None
        if params.get("categorical_features") is not None:  # one index, a list or an array
            params["categorical_features"] = np.atleast_1d(
                np.asarray(params["categorical_features"], dtype=object)
            )
        if isinstance(params.get("reject"), RejectRule):
            params["reject"] = attrs.asdict(params["reject"])
        if params.get("calibration") is not None and not isinstance(
            params["calibration"], (str, dict)
        ):
            params["calibration"] = attrs.asdict(params["calibration"])
        return _plain(params)

    @classmethod
    def _from_json_params(cls, params: dict):
        """The estimator with a model file's parameters and its composition, every
        parameter checked as fit checks it; a parameter this version does not know (a file
        from a newer treekit) or a value fit would refuse is a ModelFileError naming it."""

        unknown = sorted(set(params) - set(cls._param_names()))
        if unknown:
            raise model_file.ModelFileError(
                f"model file: 'params' holds {', '.join(map(repr, unknown))}, which this "
                f"version of {cls.__name__} does not know (was the file written by a newer "
                "treekit?)"
            )
        try:
            model = cls(**params)
            model.composition_ = model._make_composition()
            RejectRule.from_param(model.reject)
            CalibrationRule.from_param(model.calibration)
        except (PluginError, CompositionError):
            raise  # a component not installed, or components that do not fit: said as such
        except (TypeError, ValueError) as exc:
            raise model_file.ModelFileError(f"model file: 'params': {exc}") from None
        return model

    @classmethod
    def from_json(cls, text_or_path):
        """Load a model written by :meth:`to_json`. Every field is checked before anything
        runs on it (``treekit_core.engine.model_file``); executes no code from the file:
        components are looked up by name in the registry."""

        payload = model_file.read_json(text_or_path)
        check_header(payload, cls.__name__)
        model = cls._from_json_params(model_file.field(payload, "params", dict))
        model.classes_ = model_file.read_classes(payload)
        model.n_classes_ = int(model.classes_.shape[0])
        trees = model._read_trees(payload, model.composition_, model.n_classes_)
        model.n_features_in_ = trees[0].n_features
        model.categories_ = model_file.read_categories(payload, model.n_features_in_)
        if "reject_threshold" in payload:
            model.reject_threshold_ = model_file.read_threshold(payload["reject_threshold"])
        model.calibration_ = None
        if "calibration" in payload:
            try:
                model.calibration_ = Calibration.from_dict(payload["calibration"])
            except ValueError as exc:
                raise model_file.ModelFileError(str(exc)) from None
        names = payload.get("feature_names")
        if names is not None:
            if (
                not isinstance(names, list)
                or len(names) != model.n_features_in_
                or not all(isinstance(n, str) for n in names)
            ):
                raise model_file.ModelFileError(
                    f"model file: 'feature_names' must list {model.n_features_in_} names (strings)"
                )
            model.feature_names_in_ = np.asarray(names, dtype=object)
        keys = payload.get("column_keys")
        if keys is not None:
            if (
                not isinstance(keys, list)
                or len(keys) != model.n_features_in_
                or not all(isinstance(k, (int, str)) and not isinstance(k, bool) for k in keys)
            ):
                raise model_file.ModelFileError(
                    f"model file: 'column_keys' must list {model.n_features_in_} column labels "
                    "(integers or strings)"
                )
            model._column_keys = keys
        return model


class TreeClassifier(ComposedEstimatorMixin):
    """A decision tree composed from registered components by name.

    Each component argument takes a registered name (see ``treekit plugins``) or a ready
    component instance; ``<kind>_params`` holds the parameters of a named component.

    The defaults are scikit-learn's: ``TreeClassifier()`` grows the full, unpruned tree
    (as ``DecisionTreeClassifier()`` does). rpart and J48 prune by default; for that,
    ``pruner="cost_complexity"`` (``pruner_params={"rule": "one_se"}`` is rpart's advice)
    or ``splitter="c45", pruner="pessimistic"``. The command line prunes by default.

    Stopping rules have scikit-learn's meaning; ``min_gain`` is the handout's threshold
    beta (a node becomes a leaf when the unweighted impurity drop of its best split is
    <= beta; None disables it).

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

    def _fit_validated(self, data, classes, composition=None, rule=None):
        """Fit on checked training data (also what cross-validated rejection refits)."""
        composition = composition if composition is not None else self._make_composition()
        composition.check(data)
        from treekit_core.kernels.usable_cpus import numba_threads_capped

        with numba_threads_capped(composition.fit_threads()):
            grown, self.tree_ = composition.fit_keeping_grown(data, _rng(self.random_state))
            # kept so prune(alpha) can go below the fitted alpha without regrowing
            self._grown_tree = None if grown is self.tree_ else grown
            self.composition_ = composition
            self._set_fitted(data, classes)
            self._fit_rejection_and_calibration(data, rule)
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
        """Leaf id of every sample (hard routing; a sample with a missing tested value
        reaches several leaves and is refused: use predict_proba)."""

        with self._checked_for_predict(X) as checked:
            return apply_tree(self.tree_, checked)

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
        return tree_importances(self.tree_)

    def cost_complexity_pruning_path(self, X, y, sample_weight=None):
        """scikit-learn's minimal cost-complexity path of the tree this estimator grows on
        (X, y) before any pruning: a Bunch with ``ccp_alphas`` (one per weakest-link step,
        0 first) and ``impurities`` (total weighted leaf impurity of each subtree, as a
        fraction of the root's weight). Needs no fit; the estimator stays unfitted."""

        params = {**self.get_params(), "pruner": "none", "pruner_params": None, "reject": None}
        grown = type(self)(**params).fit(X, y, sample_weight=sample_weight)
        sequence = CostComplexity(risk="impurity").sequence(grown.tree_, grown.composition_.labeler)
        return Bunch(ccp_alphas=sequence.alphas, impurities=sequence.risk)

    @property
    def pruning_path_(self) -> dict:
        """The pruner's record as equal-length columns (``pandas.DataFrame(model.
        pruning_path_)`` is rpart's cp table for cost-complexity pruning: alphas, cp,
        n_leaves, n_splits, risk, rel_error, CV error and its standard error, xerror, xstd,
        and the subtree in use)."""
        self._check_fitted()
        state = self.tree_.component_state.get("pruner")
        if not state:
            raise AttributeError(
                f"pruner {self.composition_.pruner.name!r} records no pruning path"
            )
        return self.composition_.pruner.path_table(state)

    def cp_table(self) -> str:
        """rpart's ``printcp`` output for a cost-complexity-pruned tree (``treekit path
        MODEL`` prints it)."""

        table = self.pruning_path_
        for needed in ("cp", "rel_error", "selected"):
            if needed not in table:
                raise AttributeError(
                    f"pruner {self.composition_.pruner.name!r} records no cp table (fit with "
                    "pruner='cost_complexity')"
                )
        root_weight = float(self.tree_.weight[0])
        root_error = float(table["risk"][-1]) * root_weight
        return cp_table_text(table, root_error, root_weight, int(self.tree_.n_samples[0]))

    def printcp(self) -> None:
        """Print :meth:`cp_table`, as rpart's ``printcp``."""
        print(self.cp_table(), end="")

    def prune(self, alpha=None, *, cp=None, risk=None) -> "TreeClassifier":
        """A new fitted estimator: this tree pruned by minimal cost-complexity at ``alpha``
        (scikit-learn's units) or ``cp`` (rpart's: alpha relative to the root's risk),
        without regrowing. The grown tree is kept from fit (and in the model file), so any
        alpha works, smaller ones than the fitted pruner chose included. ``risk``:
        "misclassification" or "impurity"; default the fitted pruner's, else
        "misclassification" (rpart). The new estimator has ``pruner="cost_complexity"``
        with that alpha, so refitting it gives the same tree."""

        self._check_fitted()
        if (alpha is None) == (cp is None):
            raise ValueError("prune needs exactly one of alpha= or cp=")
        if risk is None:
            risk = self.composition_.pruner.get_params().get("risk", "misclassification")
        source = getattr(self, "_grown_tree", None) or self.tree_
        if cp is not None:
            if not (isinstance(cp, numbers.Real) and cp >= 0 and np.isfinite(cp)):
                raise ValueError(f"cp must be a finite number >= 0, got {cp!r}")
            root = float(node_risk(source, risk, self.composition_.labeler)[0])
            alpha = float(cp) * root
        CostComplexity(risk=risk, alpha=alpha)  # validates both, naming them
        for kind in ("evaluator", "confidence"):
            if self.tree_.component_state.get(kind):
                raise ValueError(
                    f"the {kind} {getattr(self.composition_, kind).name!r} learned state from "
                    f"the training data, which prune() does not have: refit with "
                    f"pruner='cost_complexity', pruner_params={{'alpha': {alpha!r}}}"
                )
        if getattr(self, "reject_threshold_", None) is not None:
            raise ValueError(
                "the reject threshold was chosen for the fitted tree: refit with "
                f"pruner='cost_complexity', pruner_params={{'alpha': {alpha!r}}}"
            )
        params = {
            **self.get_params(),
            "pruner": "cost_complexity",
            "pruner_params": {"risk": risk, "alpha": float(alpha)},
        }
        pruned = type(self)(**params)
        composition = pruned._make_composition()
        context = PruningContext(composition, None, np.random.default_rng(0))
        tree = composition.pruner.prune(source, context)
        tree.component_state["evaluator"] = {}
        tree.component_state["confidence"] = {}
        pruned.tree_, pruned.composition_ = tree, composition
        pruned._grown_tree = getattr(self, "_grown_tree", None)
        for name in (
            "classes_",
            "n_classes_",
            "n_features_in_",
            "feature_names_in_",
            "categories_",
            "_column_keys",
            "reject_threshold_",
        ):
            if hasattr(self, name):
                setattr(pruned, name, getattr(self, name))
        return pruned

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
        return export_text(
            self.tree_,
            names,
            self.classes_,
            decimals,
            show_distribution,
            getattr(self, "categories_", {}),
            style,
            notes=lambda node, context: self.composition_.propagator.node_notes(
                self.tree_, node, context
            ),
        )

    def _trees_payload(self) -> dict:
        grown = getattr(self, "_grown_tree", None)
        return {
            "tree": self.tree_.to_dict(),
            **({"grown_tree": grown.to_dict()} if grown is not None else {}),
        }

    def _read_trees(self, payload, composition, n_classes) -> list:

        self.tree_ = model_file.read_tree(payload, composition, n_classes)
        self._grown_tree = None
        if "grown_tree" in payload:
            self._grown_tree = model_file.read_tree(
                {"tree": payload["grown_tree"]},
                composition,
                n_classes,
                "model file: grown_tree",
                stateful=(),
            )
            if self._grown_tree.n_features != self.tree_.n_features:
                raise model_file.ModelFileError(
                    "model file: grown_tree and tree disagree on n_features"
                )
        return [self.tree_]

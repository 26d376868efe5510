"""Multi-class decisions from binary trees (Cambridge handout): the decision DAG.

``PairwiseDAG`` trains one binary tree per pair of classes (K(K-1)/2 trees) and classifies
by knock-out: the candidates are the classes in order; the tree for the first and the last
candidate eliminates its loser, until one class is left. Every sample is evaluated by
exactly K-1 trees (Platt et al.'s DDAG); :meth:`PairwiseDAG.knock_out` says so per sample.
"""

from __future__ import annotations

import itertools

import numpy as np

from treekit_core.engine.sklearn_compat import as_sklearn
from treekit_core.engine.validation import check_sample_weight, check_X, check_y, densified
from treekit_core.estimators.errors import NotFittedError
from treekit_core.estimators.parameter_docs import document_parameters
from treekit_core.estimators.params import ParamsMixin
from treekit_core.estimators.tree_classifier import TreeClassifier


@document_parameters
class PairwiseDAG(ParamsMixin):
    """One tree per pair of classes, combined by knock-out. ``estimator`` is the template
    of every pairwise tree (default ``TreeClassifier()``); X may hold what it accepts."""

    estimator_type = "classifier"  # labels in, labels out

    def __init__(self, estimator=None):
        self.estimator = estimator

    def _template(self):
        return self.estimator if self.estimator is not None else TreeClassifier()

    def _input_tags(self) -> dict:
        return self._template()._input_tags()

    def fit(self, X, y, sample_weight=None):
        X = check_X(densified(X), allow_nan=True)
        classes, encoded = check_y(y, X.shape[0])
        weight = check_sample_weight(sample_weight, X.shape[0])
        template = self._template()
        models = {}
        for a, b in itertools.combinations(range(classes.size), 2):
            rows = np.flatnonzero((encoded == a) | (encoded == b))
            model = type(template)(**template.get_params(deep=False))
            models[(a, b)] = model.fit(
                X[rows], (encoded[rows] == b).astype(int), sample_weight=weight[rows]
            )
        self.classes_ = classes
        self.estimators_ = models
        self.n_features_in_ = X.shape[1]
        return self

    def knock_out(self, X) -> tuple[np.ndarray, np.ndarray]:
        """(class index, number of trees that evaluated the sample) per sample."""
        if not hasattr(self, "estimators_"):
            raise as_sklearn(NotFittedError, "NotFittedError")(
                "this PairwiseDAG is not fitted yet; call fit(X, y) first"
            )
        X = check_X(
            densified(X), n_features=self.n_features_in_, allow_nan=True, estimator="PairwiseDAG"
        )
        n = X.shape[0]
        first = np.zeros(n, dtype=np.int64)
        last = np.full(n, self.classes_.size - 1, dtype=np.int64)
        evaluations = np.zeros(n, dtype=np.int64)
        for _ in range(self.classes_.size - 1):
            for a, b in set(zip(first.tolist(), last.tolist(), strict=True)):
                rows = np.flatnonzero((first == a) & (last == b))
                b_wins = self.estimators_[(a, b)].predict(X[rows]) == 1
                first[rows[b_wins]] += 1  # a is knocked out
                last[rows[~b_wins]] -= 1  # b is knocked out
                evaluations[rows] += 1
        return first, evaluations

    def predict(self, X):
        index, _ = self.knock_out(X)
        return self.classes_[index]

    def score(self, X, y, sample_weight=None):
        correct = (self.predict(X) == np.asarray(y)).astype(np.float64)
        return float(np.average(correct, weights=sample_weight))

"""Multi-class decisions from binary trees (Cambridge handout): the decision DAG.

``PairwiseDAG`` trains one binary tree per pair of classes (K(K-1)/2 trees) and classifies
by knock-out: the candidates are the classes in order; the tree for the first and the last
candidate eliminates its loser, until one class is left. Every sample is evaluated by
exactly K-1 trees (Platt et al.'s DDAG).
"""

from __future__ import annotations

import itertools

import numpy as np

from treekit_core.estimators.params import ParamsMixin


class PairwiseDAG(ParamsMixin):
    def __init__(self, estimator=None):
        self.estimator = estimator

    def _new_estimator(self):
        from treekit_core.estimators.tree_classifier import TreeClassifier

        template = self.estimator if self.estimator is not None else TreeClassifier()
        return type(template)(**template.get_params())

    def fit(self, X, y, sample_weight=None):
        from treekit_core.engine.validation import check_X, check_y

        X = check_X(X)
        classes, encoded = check_y(y, X.shape[0])
        weight = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        self.classes_ = classes
        self.estimators_ = {}
        for a, b in itertools.combinations(range(classes.size), 2):
            rows = np.flatnonzero((encoded == a) | (encoded == b))
            model = self._new_estimator()
            model.fit(
                X[rows],
                (encoded[rows] == b).astype(int),
                sample_weight=None if weight is None else weight[rows],
            )
            self.estimators_[(a, b)] = model
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        from treekit_core.engine.validation import check_X

        X = check_X(X, n_features=self.n_features_in_)
        n = X.shape[0]
        first = np.zeros(n, dtype=np.int64)
        last = np.full(n, self.classes_.size - 1, dtype=np.int64)
        self.evaluations_ = np.zeros(n, dtype=np.int64)
        for _ in range(self.classes_.size - 1):
            for a, b in set(zip(first.tolist(), last.tolist(), strict=True)):
                rows = np.flatnonzero((first == a) & (last == b))
                b_wins = self.estimators_[(a, b)].predict(X[rows]) == 1
                first[rows[b_wins]] += 1  # a is knocked out
                last[rows[~b_wins]] -= 1  # b is knocked out
                self.evaluations_[rows] += 1
        return self.classes_[first]

    def score(self, X, y):
        return float((self.predict(X) == np.asarray(y)).mean())

"""IsolationForest: the anomaly detector of Liu, Ting & Zhou (2008), with scikit-learn's
parameters and outputs, as the outlier family on the ensemble structure.

Every tree grows on its own subsample of ``max_samples`` rows (``"auto"``: min(256, n),
drawn without replacement unless ``bootstrap``), with the ``isolation`` target and
criterion (no response: a node is split while it holds more than one row) and the
``random`` splitter drawing one feature per node and a threshold uniform in its range at
the node, to depth ceil(log2(max_samples)). A row's path length in a tree is the depth of
the leaf it reaches plus c(m), the average path length of an unsuccessful search in a
binary search tree of the m training rows that leaf holds:

    c(m) = 2 (ln(m - 1) + 0.5772156649) - 2 (m - 1) / m  (m > 2),  c(2) = 1,  c(m <= 1) = 0,

and its anomaly score is s = 2^(-E[h] / c(max_samples)), E[h] the mean path length over
the trees. ``score_samples`` returns -s (higher is more normal, scikit-learn's sign),
``decision_function`` -s - ``offset_`` and ``predict`` 1 for inliers (decision >= 0) and -1
for outliers. ``offset_`` is -0.5 with ``contamination="auto"`` (the paper's threshold),
else the ``contamination`` quantile of the training rows' scores.

A row missing a tested value goes down both branches with the branches' shares of the
subsample (C4.5's rule, the ``hard`` evaluator): its path length is the shares' average.
A nominal feature is cut by a random subset of its categories present at the node (the
``random`` splitter, node by node). ``max_features`` < 1.0 (features per tree) is not
offered: every tree may test every feature.
"""

from __future__ import annotations

import math
import numbers

import attrs
import numpy as np

from treekit_core.estimators.ensemble import EnsembleEstimator
from treekit_core.estimators.inputs import number_of_rows
from treekit_core.estimators.model_file import ModelFileError
from treekit_core.estimators.parameter_docs import document_parameters

#: The rows per tree from which an isolation forest grows its trees on joblib's threads
#: (``n_jobs``): below, a tree's Python work outweighs its compiled growth (measured,
#: :meth:`IsolationForest._threads_help`).
THREADED_TREE_ROWS = 4096

#: The Euler-Mascheroni constant (scikit-learn's ``np.euler_gamma``).
EULER_GAMMA = 0.5772156649015329


def average_path_length(counts) -> np.ndarray:
    """c(m) per count m (module docstring)."""
    m = np.asarray(counts, dtype=np.float64)
    out = np.zeros(m.shape)
    two = m == 2
    more = m > 2
    out[two] = 1.0
    out[more] = 2.0 * (np.log(m[more] - 1.0) + EULER_GAMMA) - 2.0 * (m[more] - 1.0) / m[more]
    return out


class OutlierFamily:
    """The family of estimators that score how unusual a row is (placed before the
    structure): ``fit`` on X alone, ``score_samples``, ``decision_function``,
    ``predict`` (1 inlier, -1 outlier) and scikit-learn's outlier-detector tags. Its
    components are fixed: the ``isolation`` target and criterion, the ``random`` splitter
    (:attr:`fixed_components`)."""

    estimator_type = "outlier_detector"
    #: What the model file keeps besides the trees (``fitted``).
    FITTED_NUMBERS = ("offset_", "max_samples_")
    fixed_components = {
        "criterion": "isolation",
        "splitter": "random",
        "propagator": "hard",
        "pruner": "none",
        "labeler": "majority",
        "evaluator": "hard",
        "confidence": "probability",
    }
    # the stopping rules scikit-learn's isolation trees keep (the depth: at fit)
    min_samples_split = 2
    min_samples_leaf = 1
    min_weight_fraction_leaf = 0.0
    min_impurity_decrease = 0.0
    min_gain = None
    target = None

    @property
    def max_depth(self):
        """ceil(log2(max_samples)) of the fit (None before it)."""
        rows = getattr(self, "max_samples_", None)
        return None if rows is None else max(int(math.ceil(math.log2(max(rows, 2)))), 1)

    def fit(self, X, y=None, sample_weight=None):
        """Fit on X (``y`` is ignored: scikit-learn's signature)."""
        n = number_of_rows(X)
        self._check_contamination()
        self.max_samples_ = self._rows_per_tree(n)
        if self.max_samples_ < 2:
            # c(1) = 0: a score 2^(-E[h] / 0) is no number
            raise ValueError(
                "IsolationForest isolates rows from each other: it needs at least 2 rows "
                f"per tree, got n_samples={n} and max_samples={self.max_samples_}"
            )
        data = self._fit_checked(X, np.zeros(n), sample_weight)
        if self.contamination == "auto":
            self.offset_ = -0.5
        else:
            with self._checked_for_predict(data.X) as checked:
                scores = self._scores_of_checked(checked)
            self.offset_ = float(np.percentile(scores, 100.0 * self.contamination))
        return self

    def _check_contamination(self) -> None:
        value = self.contamination
        if value == "auto":
            return
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value <= 0.5:
            raise ValueError(f"contamination must be 'auto' or a number in (0, 0.5], got {value!r}")

    def _check_params(self) -> None:
        super()._check_params()
        self._check_contamination()
        if self.max_features != 1.0:
            raise ValueError(
                "IsolationForest takes max_features=1.0 (every tree may test every feature; "
                f"a node tests one drawn at random), got {self.max_features!r}"
            )

    def _draws_rows(self) -> bool:
        return True  # a subsample per tree, with or without replacement

    def _threads_help(self, composition, data, draws: int) -> bool:
        """Not for trees of fewer than :data:`THREADED_TREE_ROWS` rows: a tree of 256 rows
        grows in a tenth of its Python work, which threads only contend for (100 trees,
        100 000 x 20: 0.084 s on one thread, 0.124 s on two; 4 096 rows: 0.195 / 0.183 s)."""
        return draws >= THREADED_TREE_ROWS and super()._threads_help(composition, data, draws)

    def _draws_with_replacement(self) -> bool:
        return bool(self.bootstrap)

    def _rows_per_tree(self, n_samples: int) -> int:
        """``max_samples``: "auto" min(256, n), an int (at most n), a float share of n."""
        value = self.max_samples
        if value == "auto":
            return min(256, n_samples)
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            if value < 1:
                raise ValueError(f"max_samples must be >= 1, got {value}")
            return min(int(value), n_samples)
        if isinstance(value, numbers.Real) and not isinstance(value, bool) and 0 < value <= 1:
            return max(int(value * n_samples), 1)
        raise ValueError(
            f"max_samples must be 'auto', an int >= 1 or a float in (0, 1], got {value!r}"
        )

    def _node_max_features(self):
        return 1

    def _read_fitted_numbers(self, numbers_read: dict) -> None:
        rows = numbers_read["max_samples_"]
        if rows != int(rows) or rows < 1:
            raise ModelFileError("model file: 'fitted'.max_samples_ must be a count >= 1")
        self.offset_ = float(numbers_read["offset_"])
        self.max_samples_ = int(rows)

    def _fitted_numbers(self) -> dict:
        return {"offset_": float(self.offset_), "max_samples_": int(self.max_samples_)}

    def _scores_of_checked(self, checked) -> np.ndarray:
        """score_samples of checked X: -2^(-E[h] / c(max_samples)). The path lengths are
        every tree's node values for the evaluator's average (one compiled pass over the
        trees for a block of rows; a row missing a value mixes its leaves')."""
        lengths = [
            attrs.evolve(tree, value=(tree.depth + average_path_length(tree.n_samples))[:, None])
            for tree in self.estimators_
        ]
        mean = self.composition_.evaluator.average_distribution(lengths, checked)[:, 0]
        return -np.power(2.0, -mean / average_path_length([self.max_samples_])[0])

    def score_samples(self, X) -> np.ndarray:
        """Minus the anomaly score of every row (module docstring): near -1 for an
        anomaly, near -0.5 or above for a normal row."""
        self._check_fitted()
        with self._checked_for_predict(X) as checked:
            return self._scores_of_checked(checked)

    def decision_function(self, X) -> np.ndarray:
        """``score_samples(X) - offset_``: negative for outliers."""
        return self.score_samples(X) - self.offset_

    def predict(self, X) -> np.ndarray:
        """1 for an inlier, -1 for an outlier (decision_function < 0)."""
        return np.where(self.decision_function(X) < 0, -1, 1)

    def fit_predict(self, X, y=None, sample_weight=None) -> np.ndarray:
        return self.fit(X, sample_weight=sample_weight).predict(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "outlier_detector"
        tags.target_tags.required = False
        return tags


@document_parameters
class IsolationForest(OutlierFamily, EnsembleEstimator):
    """Isolation forest (see the module docstring)."""

    def __init__(
        self,
        n_estimators=100,
        *,
        max_samples="auto",
        contamination="auto",
        max_features=1.0,
        bootstrap=False,
        n_jobs=None,
        random_state=None,
        warm_start=False,
        categorical_features=None,
    ):
        self._store_params(locals())

    @property
    def oob_score(self):
        return False  # no response to score

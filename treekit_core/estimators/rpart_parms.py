"""rpart's ``parms = list(prior = ..., loss = ...)`` as treekit parameters.

rpart (gini.c) grows with *altered priors*: a row of class i weighs

    a_i = pi_i * sum_j L[i][j] / (T * f_i),   T = sum_i pi_i * sum_j L[i][j],

(f_i the class's weighted share of the data, pi_i its prior, L[i][j] the loss of deciding j
when the truth is i), in the impurity and in the node weights of a split's improvement;
row counts (minsplit, minbucket) stay counts. It labels a node, and measures the risk that
cost-complexity pruning and the cp table use, by the expected loss under the priors:
argmin_j sum_i n_i (pi_i / f_i) L[i][j]. With the rows weighted by a_i, a node's weighted
class sums are s_i = n_i a_i, so n_i pi_i / f_i = T s_i / sum_k L[i][k]: the same decision
and a proportional risk come from the cost rule with costs C[i][j] = L[i][j] / sum_k L[i][k]
on the weighted sums. So rpart's tree is treekit's tree with class weights a_i and the
built-in ``cost_matrix`` labeler with those costs (the majority rule without a loss). The
weights sum to the number of rows, so unit-free parameters keep their meaning.

``predict_proba`` then gives the a-weighted class shares; rpart's ``predict(type="prob")``
gives the pi / f-weighted ones, which differ when the loss is not symmetric.
"""

from __future__ import annotations

import numpy as np


def rpart_parms(y, prior=None, loss=None, sample_weight=None) -> dict:
    """The estimator parameters that grow rpart's tree with ``parms = list(prior = prior,
    loss = loss)`` on labels ``y``: ``TreeClassifier(**rpart_parms(y, prior, loss), ...)``.

    ``prior``: one probability per class in the order of ``np.unique(y)`` (the classes_),
    positive, summing to 1; default the classes' weighted shares (rpart's). ``loss``: a
    K x K matrix, ``loss[i][j]`` the loss of deciding class j when the truth is class i,
    zero on the diagonal and positive off it (rpart's rule); default 1 off the diagonal.
    Returns ``class_weight``, ``labeler`` and ``labeler_params``."""
    y = np.asarray(y)
    if y.ndim != 1 or y.size == 0:
        raise ValueError("rpart_parms: y must be a non-empty 1-d array of class labels")
    classes, codes = np.unique(y, return_inverse=True)
    k = classes.size
    if k < 2:
        raise ValueError("rpart_parms: y must hold at least two classes")
    weight = np.ones(y.size) if sample_weight is None else np.asarray(sample_weight, float)
    if weight.shape != y.shape or not np.isfinite(weight).all() or (weight < 0).any():
        raise ValueError("rpart_parms: sample_weight must be finite, >= 0, one per label")
    share = np.bincount(codes, weights=weight, minlength=k)
    if (share <= 0).any():
        raise ValueError("rpart_parms: every class needs a positive total weight")
    share = share / share.sum()
    if prior is None:
        prior = share
    prior = np.asarray(prior, dtype=np.float64)
    if prior.shape != (k,) or not np.isfinite(prior).all() or (prior <= 0).any():
        raise ValueError(
            f"rpart_parms: prior must hold {k} positive probabilities (one per class of "
            f"{list(classes)}), got {prior.tolist()}"
        )
    if abs(prior.sum() - 1.0) > 1e-9:
        raise ValueError(f"rpart_parms: prior must sum to 1, got {prior.sum():g}")
    if loss is None:
        costs = None
        row_loss = np.ones(k)
    else:
        costs = np.asarray(loss, dtype=np.float64)
        off = ~np.eye(k, dtype=bool)
        if costs.shape != (k, k) or not np.isfinite(costs).all():
            raise ValueError(f"rpart_parms: loss must be a finite {k} x {k} matrix")
        if (np.diag(costs) != 0).any() or (costs[off] <= 0).any():
            raise ValueError(
                "rpart_parms: loss must be 0 on the diagonal and positive off it (rpart's rule)"
            )
        row_loss = costs.sum(axis=1)
    altered = prior * row_loss / (share * float(prior @ row_loss))
    params = {
        "class_weight": {
            label: float(a) for label, a in zip(classes.tolist(), altered, strict=True)
        }
    }
    if costs is None:
        return {**params, "labeler": "majority", "labeler_params": None}
    normalised = costs / row_loss[:, None]
    return {**params, "labeler": "cost_matrix", "labeler_params": {"costs": normalised.tolist()}}

"""The constructor parameters of every estimator, described once.

Estimators share most parameters (the components, the stopping rules, the forest's), so
each is described here a single time; :func:`document_parameters` appends a numpydoc
``Parameters`` section to an estimator's docstring listing its own ``__init__`` parameters
in signature order, with their defaults. An estimator family (the Dask ones, a new
target's) decorates its classes the same way, and a parameter this table does not describe
is refused at import, so no parameter goes undocumented.
"""

from __future__ import annotations

import inspect
import textwrap

#: One description per constructor parameter name.
PARAMETERS = {
    "criterion": "How a split is scored: a registered criterion name (``treekit plugins`` "
    "lists them) or a Criterion instance.",
    "splitter": "How the candidate questions of a node are searched (exhaustive, c45, "
    "histogram, ...): a name or a Splitter instance.",
    "propagator": "How the training rows go down a split, rows missing the tested value "
    "included (hard: C4.5's shares; surrogate: rpart's surrogate splits): a name or an "
    "instance.",
    "pruner": "How the grown tree is pruned (none, cost_complexity, pessimistic, mdl): a "
    "name or an instance.",
    "labeler": "How a leaf's class distribution becomes a decision (majority, cost_matrix, "
    "an abstaining rule): a name or an instance.",
    "evaluator": "How a sample is routed at prediction (hard, surrogate, soft): a name or an "
    "instance.",
    "confidence": "The confidence score of a decision, which rejection and calibration read: "
    "a name or an instance.",
    "target": "What the tree predicts (class labels, a number, counts, censored follow-up); "
    "None: the target the criterion reads.",
    "target_params": "Parameters of a named target (a dict), or None.",
    "criterion_params": "Parameters of a named criterion (a dict), or None.",
    "splitter_params": "Parameters of a named splitter (a dict), or None.",
    "propagator_params": "Parameters of a named propagator (a dict), or None.",
    "pruner_params": "Parameters of a named pruner (a dict: cost_complexity's alpha, cv, "
    "rule, sequence, ...), or None.",
    "labeler_params": "Parameters of a named labeler (a dict), or None.",
    "evaluator_params": "Parameters of a named evaluator (a dict), or None.",
    "confidence_params": "Parameters of a named confidence (a dict), or None.",
    "max_depth": "The deepest a leaf may lie (the root at 0); None: no limit.",
    "min_samples_split": "The fewest rows a node needs to be split.",
    "min_samples_leaf": "The fewest rows each child of a split must keep.",
    "min_weight_fraction_leaf": "The smallest share of the total sample weight each child "
    "of a split must keep.",
    "min_impurity_decrease": "A split must lower the weighted impurity by at least this "
    "(scikit-learn's meaning).",
    "max_leaf_nodes": "Grow best first (the leaf whose split improves most next) up to this "
    "many leaves (scikit-learn's best-first trees, LightGBM's num_leaves); None: depth first.",
    "min_gain": "A node stays a leaf when the unweighted impurity drop of its best split is "
    "<= this (the handout's beta); None: no such rule.",
    "categorical_features": "The nominal columns (indices, names or a boolean mask) besides "
    "a DataFrame's category and text columns; None: those only.",
    "reject": "A reject rule: a threshold on the confidence, or a dict with one of "
    "threshold, keep_correct, coverage, max_error (and cv, seed); None: decide every sample.",
    "calibration": "Calibrate P(the decision is correct) from cross-validated confidence "
    "('isotonic', 'platt' or a dict with cv, seed); None: no calibration.",
    "abstain_value": "What ``predict`` returns for an abstention (None: None; "
    "``decide(X).abstained`` says which rows abstained either way).",
    "class_weight": "Per-class multipliers of the row weights: None, a dict class -> "
    "weight, or 'balanced' (scikit-learn's meaning).",
    "monotonic_cst": "Per feature -1, 0 or 1 (or a dict of column names): the prediction "
    "never rises (-1) or never falls (1) as that feature grows; None: unconstrained.",
    "interaction_cst": "Groups of features that may appear together on one path from the "
    "root (LightGBM's meaning); None: unconstrained.",
    "random_state": "Seed or numpy Generator for every random choice (feature draws, "
    "bootstrap samples, folds).",
    "n_threads": "Threads one fit may run (None or -1: the CPUs this process may use); the "
    "tree is the same for any count.",
    "n_estimators": "The number of trees (boosting: of rounds, each growing one tree per raw "
    "column).",
    "loss": "What boosting minimises: a registered loss name (squared_error, absolute_error, "
    "huber, quantile, poisson, gamma, log_loss) or a Loss instance.",
    "loss_params": "Parameters of a named loss (a dict: huber's and quantile's alpha), or None.",
    "learning_rate": "The factor of every tree's leaf values in the raw prediction (> 0).",
    "max_iter": "The number of boosting rounds under HistGradientBoosting's and LightGBM's "
    "name: when given, it is the number of rounds; None: n_estimators.",
    "subsample": "The share of the rows, drawn without replacement, that grow each round's "
    "trees (stochastic gradient boosting); 1.0: every row.",
    "alpha": "The quantile of the huber and quantile losses (scikit-learn's parameter; "
    "loss_params overrides it).",
    "l2_regularization": "Added to a leaf's summed hessian in the Newton step of its value "
    "(HistGradientBoosting's meaning).",
    "early_stopping": "Hold out validation_fraction of the rows and stop once their loss has "
    "not fallen by tol for n_iter_no_change rounds.",
    "validation_fraction": "The share of the rows early stopping holds out (within classes "
    "for a classifier).",
    "n_iter_no_change": "Rounds without improvement of the held-out loss before early "
    "stopping stops.",
    "tol": "The least fall of the held-out loss that counts as an improvement.",
    "max_features": "Features drawn as candidates at each node: an int, a fraction, "
    "'sqrt', 'log2', or None (all).",
    "bootstrap": "Grow each tree on a bootstrap sample of the rows (else on all of them, "
    "or on a subsample of ``max_samples`` rows drawn without replacement where it is set: "
    "partykit's ``cforest``).",
    "balanced_bootstrap": "Draw each tree's bootstrap sample per class, as many rows of "
    "every class (balanced random forests).",
    "max_samples": "Rows drawn per tree: an int, a fraction, or None (as many as the data "
    "has); with ``bootstrap=False`` drawn without replacement (a subsample, 0.632: "
    "partykit's ``cforest``).",
    "honest": "Grow each tree's structure on one part of its rows and estimate every "
    "node's values from the other (Athey & Imbens's honest trees; grf's ``honesty``): "
    "leaf values, quantiles, survival curves, calibration and rejection then read rows "
    "that did not choose the splits. False: today's trees.",
    "honest_fraction": "With ``honest=True``, the share of each tree's rows (per class, or "
    "per event and censored) that grows its structure (grf's ``honesty.fraction``); the "
    "rest estimates.",
    "honest_prune_leaves": "With ``honest=True``, make a node whose child no estimation row "
    "reached a leaf (grf's ``honesty.prune.leaves``); False: such a child takes its "
    "parent's values.",
    "contamination": "The share of outliers expected in the training rows: 'auto' (the "
    "offset -0.5, the paper's threshold) or a number in (0, 0.5] (the offset is that "
    "quantile of the training rows' scores).",
    "conformal_fraction": "The share of the training rows held out (drawn from "
    "``random_state``) to calibrate ``predict_interval`` / ``predict_set``; None: no rows "
    "held out (give ``fit(..., conformal_rows=(X_c, y_c))`` instead).",
    "oob_score": "Score the forest on the rows each tree did not draw (``oob_score_``).",
    "warm_start": "Keep the fitted trees and add new ones up to ``n_estimators``.",
    "forest_confidence": "The confidence rejection reads: 'averaged' (the confidence of the "
    "averaged distribution) or 'vote_margin' (the margin of the trees' votes).",
    "n_jobs": "Processes or threads that grow the trees (joblib's meaning; None: one).",
    "estimator": "The template of every pairwise tree (default ``TreeClassifier()``).",
    "client": "The Dask ``distributed.Client`` (None: the current one).",
    "max_bins": "The most bins a numeric feature is cut into (histogram splitting).",
    "ci_group_size": "Trees per little bag: they share a half-sample of the rows, and the "
    "spread of the bags' estimates gives the forest's variance (grf's ``ci.group.size``; 1: "
    "no half-samples and no intervals).",
    "orthogonalize": "Centre y and the treatment on out-of-bag regression forests (or the "
    "``outcome_mean`` and ``propensity`` given to fit) before growing (grf's centring).",
    "keep_leaf_responses": "Gather every leaf's training responses to the client at fit, so "
    "``predict(X, quantiles=...)`` works (memory: about the response column).",
}


def document_parameters(cls):
    """Class decorator: append to ``cls.__doc__`` a ``Parameters`` section listing every
    parameter of ``cls.__init__`` (signature order, with its default) from
    :data:`PARAMETERS`; a parameter it does not describe raises ``TypeError`` (at import)."""
    signature = inspect.signature(cls.__init__)
    lines = ["", "Parameters", "----------"]
    for name, parameter in signature.parameters.items():
        if name == "self" or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if name not in PARAMETERS:
            raise TypeError(
                f"{cls.__name__}.__init__ parameter {name!r} is not described in "
                "treekit_core.estimators.parameter_docs.PARAMETERS"
            )
        default = (
            "" if parameter.default is parameter.empty else f" (default {parameter.default!r})"
        )
        lines.append(f"{name}{default}")
        lines.append(
            textwrap.fill(PARAMETERS[name], 88, initial_indent="    ", subsequent_indent="    ")
        )
    cls.__doc__ = inspect.cleandoc(cls.__doc__ or "") + "\n" + "\n".join(lines) + "\n"
    return cls

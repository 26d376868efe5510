"""Multivariate (oblique) questions w . x <= t (Cambridge handout, "multivariate decision
trees"): at every node a linear classifier proposes a direction w, and the best threshold
along w . x is chosen with the composition's criterion."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core import MISSING_BRANCH, Question, Split, Splitter, hookimpl

#: The treekit plugin API this plugin is written for (see treekit_core's CHANGELOG.md).
TREEKIT_PLUGIN_API = 4


def oblique_answer(x, feature, threshold, params, n_branches):
    """Branch 0 when coef . x <= threshold, else 1; missing when a feature with a nonzero
    coefficient is missing."""
    z = 0.0
    for f in range(params.shape[0]):
        c = params[f]
        if c != 0.0:
            if np.isnan(x[f]):
                return MISSING_BRANCH
            z += c * x[f]
    return 0 if z <= threshold else 1


@attrs.define(slots=False)
class ObliqueQuestion(Question):
    """coef . x <= threshold (branch 0) or > threshold (branch 1); the coefficients are the
    node field ``coef`` (one per feature)."""

    name: ClassVar[str] = "oblique"
    description: ClassVar[str] = "coef . x <= threshold: a hyperplane, two branches"
    answer: ClassVar[object] = staticmethod(oblique_answer)
    parameter_field: ClassVar[str] = "coef"

    def branch_texts(self, feature, threshold, params, n_branches, context):
        names, decimals = context.feature_names, context.decimals
        terms = " + ".join(f"{params[j]:.{decimals}g}*{names[j]}" for j in np.flatnonzero(params))
        value = f"{threshold:.{decimals}f}"
        return [f"{terms} <= {value}", f"{terms} >  {value}"]

    def tested_features(self, feature, params, n_features):
        """Every feature with a nonzero coefficient, credited by |coefficient| (in the
        units of X, so rescaling a feature changes its share)."""
        weight = np.abs(np.asarray(params, dtype=np.float64))
        features = np.flatnonzero(weight)
        if features.size == 0:
            return np.array([feature], dtype=np.int64), np.ones(1)
        return features, weight[features] / weight[features].sum()

    def check_node(self, feature, threshold, params, n_branches, n_features):
        if n_branches != 2:
            return f"{n_branches} branches; an oblique question has 2"
        if params.shape[0] != n_features:
            return f"{params.shape[0]} coefficients for {n_features} features"
        if not np.isfinite(threshold):
            return f"threshold {threshold!r} is not a finite number"
        if not 0 <= feature < n_features:
            return f"feature {feature} is outside [0, {n_features})"
        return None


def logistic_direction(X, target, weights, l2):
    """Weights of an L2-regularised logistic regression of ``target`` (0/1) on standardised
    X, mapped back to X's units (the bias is dropped: the threshold search replaces it)."""
    from scipy.optimize import minimize
    from scipy.special import expit

    mean = np.average(X, axis=0, weights=weights)
    scale = np.sqrt(np.average((X - mean) ** 2, axis=0, weights=weights))
    scale = np.where(scale > 0, scale, 1.0)
    Z = (X - mean) / scale
    total = weights.sum()

    def loss(theta):
        margin = Z @ theta[1:] + theta[0]
        p = expit(margin)
        eps = 1e-12
        value = (
            -(weights * (target * np.log(p + eps) + (1 - target) * np.log(1 - p + eps))).sum()
            / total
        )
        value += 0.5 * l2 * (theta[1:] ** 2).sum()
        residual = weights * (p - target) / total
        gradient = np.concatenate([[residual.sum()], Z.T @ residual + l2 * theta[1:]])
        return value, gradient

    # Separable nodes drive the unpenalised optimum to infinity: a small ridge and a tight
    # tolerance let the direction converge towards a separating one.
    result = minimize(
        loss,
        np.zeros(X.shape[1] + 1),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 2000, "gtol": 1e-10, "ftol": 1e-14},
    )
    return result.x[1:] / scale


def linear_model_direction(X, target, weights, kind):
    """Weights of scikit-learn's Perceptron or LinearSVC separating ``target`` (0/1) on
    standardised X, mapped back to X's units (the intercept is dropped: the threshold search
    replaces it)."""
    try:
        from sklearn.linear_model import Perceptron
        from sklearn.svm import LinearSVC
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"direction={kind!r} uses scikit-learn's implementation: pip install scikit-learn"
        ) from exc
    mean = np.average(X, axis=0, weights=weights)
    scale = np.sqrt(np.average((X - mean) ** 2, axis=0, weights=weights))
    scale = np.where(scale > 0, scale, 1.0)
    Z = (X - mean) / scale
    if kind == "perceptron":
        model = Perceptron(max_iter=1000, tol=1e-4, random_state=0)
    else:
        model = LinearSVC(C=1.0, max_iter=20000, random_state=0)
    model.fit(Z, target.astype(int), sample_weight=weights)
    return model.coef_[0] / scale


#: How a node's direction w is found: the handout's three linear classifiers.
DIRECTIONS = ("logistic", "perceptron", "linear_svm")


def _positive(instance, attribute, value):
    if not (isinstance(value, (int, float)) and value > 0):
        raise ValueError(f"{attribute.name} must be a number > 0, got {value!r}")


@attrs.define(slots=False)
class Oblique(Splitter):
    """Parameters: ``direction`` (the linear classifier that proposes w: "logistic",
    "perceptron" or "linear_svm"), ``l2`` (ridge penalty of the logistic regression on
    standardised features) and ``also_axis_aligned`` (also try the best single-feature
    threshold and keep whichever drops impurity more; the oblique question alone when
    False)."""

    name: ClassVar[str] = "oblique"
    description: ClassVar[str] = (
        "hyperplane questions w.x <= t from logistic regression (multivariate trees)"
    )
    provides: ClassVar[frozenset] = frozenset({"fractional_weights"})  # not axis-aligned
    l2: float = attrs.field(default=1e-5, validator=_positive)
    direction: str = attrs.field(default="logistic", validator=attrs.validators.in_(DIRECTIONS))
    also_axis_aligned: bool = attrs.field(
        default=True, validator=attrs.validators.instance_of(bool)
    )

    def check_data(self, data) -> None:
        data.refuse_nominal(self, "use the 'exhaustive' splitter (subset questions) or encode it")

    def prepare(self, data, criterion, rules):
        from treekit_core.kernels import best_split_of_node, scan_sorted_feature

        return {
            "axis": best_split_of_node,
            "scan": scan_sorted_feature,
            "impurity": criterion.compiled_impurity(),
            "params": criterion.impurity_params(data.n_statistics),
            "data": data,
        }

    def find_split(self, state, node, rules):
        data, impurity, params = state["data"], state["impurity"], state["params"]
        X = data.X[node.rows]
        evidence = data.evidence[node.rows]
        majority = int(np.argmax(node.statistics))
        target = (np.argmax(evidence, axis=1) == majority).astype(np.float64)
        best = None
        if 0 < (target * node.row_weights).sum() < node.weight:
            if self.direction == "logistic":
                coef = logistic_direction(X, target, node.row_weights, self.l2)
            else:
                coef = linear_model_direction(X, target, node.row_weights, self.direction)
            if np.any(coef != 0):
                z = X @ coef
                order = np.argsort(z, kind="mergesort")
                k = data.n_statistics
                left, right = np.empty(k), np.empty(k)
                drop, threshold, position = state["scan"](
                    impurity,
                    params,
                    np.ascontiguousarray(z[order]),
                    np.ascontiguousarray(node.row_weights[order, None] * evidence[order]),
                    np.ascontiguousarray(node.row_weights[order]),
                    node.statistics,
                    node.weight,
                    node.impurity,
                    rules.min_samples_leaf,
                    rules.min_weight_leaf,
                    left,
                    right,
                )
                if position >= 0:
                    best = Split(
                        int(np.argmax(np.abs(coef))),
                        float(threshold),
                        float(drop),
                        {"coef": coef},
                        question="oblique",
                        branch_shares=(0.5, 0.5),
                    )
        if self.also_axis_aligned:
            feature, threshold, drop, share = state["axis"](
                impurity,
                params,
                data.X,
                data.evidence,
                node.rows,
                node.row_weights,
                node.statistics,
                node.weight,
                node.features,
                rules.min_samples_leaf,
                rules.min_weight_leaf,
            )
            if feature >= 0 and (best is None or drop > best.improvement):
                best = Split(
                    int(feature), float(threshold), float(drop), {"missing_left": float(share)}
                )
        return best

    node_field_names = ("coef",)


@hookimpl
def treekit_splitters():
    return [Oblique]


@hookimpl
def treekit_questions():
    return [ObliqueQuestion]

"""Issue 55: what a plugin author hit writing from the docs alone. A target that decides
among its labels by its own rule (an ordinal target's median class) declares it, predicts
its labels, and exporters refuse what they cannot reproduce; the conformance kit catches a
question kind whose check_node lets an index past the row through (and the core refuses
such a model file), an impurity reading past its parameters, a splitter's unregistered
question kind and a target whose labels no rule decides among; its pytest fixture offers
every kind's check."""

import json
from typing import ClassVar

import attrs
import numpy as np
import pytest
from test_questions import Mod3, Mod3Splitter, mod3_data

from treekit_core import (
    MISSING_BRANCH,
    Criterion,
    ModelFileError,
    Question,
    Target,
    TargetRows,
    TreeClassifier,
    hookimpl,
    registered,
    testing,
)
from treekit_core.testing import ConformanceError, pytest_plugin

treekit_check = pytest_plugin.treekit_check  # the kit's fixture, as a plugin's conftest


class OrdinalMedian(Target):
    """Ordered classes; a node decides its median class (the first whose cumulative share
    reaches one half), not its most frequent one."""

    name = "ordinal_median"
    evidence = "one_hot"
    decides_with_labeler = False
    decides_among_labels = True

    def encode(self, y, n_samples, **given):
        labels, codes = np.unique(np.asarray(y), return_inverse=True)
        if codes.shape != (n_samples,):
            raise ValueError(f"y must hold {n_samples} ordered labels")
        return TargetRows(np.eye(labels.size)[codes], labels)

    def node_values(self, statistics, weights, labeler):
        values = statistics / np.where(weights > 0, weights, 1.0)[:, None]
        return values, self.decide(values, labeler)

    def decide(self, values, labeler):
        return (np.cumsum(values, axis=1) >= 0.5 - 1e-12).argmax(axis=1).astype(np.int64)

    def node_risk(self, statistics, weights, labeler):
        # the weight of rows whose class is not the median's
        decided = self.decide(statistics / np.where(weights > 0, weights, 1.0)[:, None], None)
        return weights - statistics[np.arange(len(weights)), decided]

    def sample_loss(self, rows, values, decisions, labeler):
        return (rows.argmax(axis=1) != decisions).astype(np.float64)

    def strata(self, rows, labeler):
        return rows.argmax(axis=1).astype(np.int64)


class Undeclared(OrdinalMedian):
    name = "ordinal_undeclared"
    decides_among_labels = None


class OrdinalPlugin:
    @hookimpl
    def treekit_targets(self):
        return [OrdinalMedian, Undeclared]


def ordinal_data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, np.digitize(X[:, 0] + rng.normal(size=n), [-1.0, 0.0, 1.0])


@pytest.fixture
def ordinal():
    with registered(OrdinalPlugin(), name="ordinal"):
        yield


def test_a_target_deciding_by_its_own_rule_predicts_its_labels(ordinal):
    X, y = ordinal_data()
    model = TreeClassifier(target="ordinal_median", max_depth=3).fit(X, y)
    proba = model.predict_proba(X)
    median = (np.cumsum(proba, axis=1) >= 0.5 - 1e-12).argmax(axis=1)
    np.testing.assert_array_equal(model.predict(X), model.classes_[median])
    assert (median != proba.argmax(axis=1)).any()  # a rule other than the most frequent
    decision = model.decide(X)
    np.testing.assert_array_equal(decision.labels, model.predict(X))
    again = TreeClassifier.from_json(model.to_json())
    np.testing.assert_array_equal(again.predict(X), model.predict(X))


def test_exporters_refuse_a_decision_rule_they_cannot_reproduce(ordinal):
    from treekit_core.export import NotExportableError, to_onnx, to_sklearn

    pytest.importorskip("sklearn")
    X, y = ordinal_data()
    model = TreeClassifier(target="ordinal_median", max_depth=3).fit(X, y)
    with pytest.raises(NotExportableError, match="target 'ordinal_median' .its own rule. decides"):
        to_sklearn(model, missing="larger_share")
    pytest.importorskip("onnx")
    with pytest.raises(NotExportableError, match="target 'ordinal_median' .its own rule. decides"):
        to_onnx(model)


def test_a_target_whose_labels_no_rule_decides_among_says_what_to_declare(ordinal):
    X, y = ordinal_data()
    model = TreeClassifier(target="ordinal_undeclared", max_depth=2).fit(X, y)
    with pytest.raises(ValueError, match="declares decides_among_labels = True"):
        model.predict(X)
    with pytest.raises(ConformanceError, match="declares decides_among_labels = True"):
        testing.check_target(Undeclared)
    testing.check_target(OrdinalMedian)
    testing.check_target(OrdinalMedian, labeler="majority")


# -- a question kind whose check_node misses an index-like parameter ---------------------


def difference_answer(x, feature, threshold, params, n_branches):
    """x[feature] - x[other] <= threshold, other = params[0] (an index into the row)."""
    value = x[feature] - x[np.int64(params[0])]
    if np.isnan(value):
        return MISSING_BRANCH
    return 0 if value <= threshold else 1


@attrs.define(slots=False)
class Difference(Question):
    name: ClassVar[str] = "difference"
    description: ClassVar[str] = "x_j - x_k <= t"
    answer: ClassVar[object] = staticmethod(difference_answer)
    parameter_field: ClassVar[str] = "other_feature"

    def branch_texts(self, feature, threshold, params, n_branches, context):
        other = context.feature_names[int(params[0])]
        name = context.feature_names[feature]
        return [f"{name} - {other} <= {threshold:g}", f"{name} - {other} > {threshold:g}"]

    def check_node(self, feature, threshold, params, n_branches, n_features):
        if not 0 <= feature < n_features:
            return f"feature {feature} outside [0, {n_features})"
        return None  # forgets params[0]


@attrs.define(slots=False)
class CheckedDifference(Difference):
    name: ClassVar[str] = "checked_difference"

    def check_node(self, feature, threshold, params, n_branches, n_features):
        problem = super().check_node(feature, threshold, params, n_branches, n_features)
        index = params[0] if params.size == 1 else np.nan
        if problem is None and not (
            np.isfinite(index) and index == int(index) and 0 <= index < n_features
        ):
            problem = f"other_feature {params[0]!r} is no feature index in [0, {n_features})"
        return problem


def test_the_kit_tries_check_node_with_hostile_fields():
    with pytest.raises(ConformanceError, match="`check_node` accepts a node .*IndexError"):
        testing.check_question(Difference, params=[1.0])
    testing.check_question(CheckedDifference, params=[1.0])


def test_the_core_refuses_a_model_file_whose_index_parameter_leaves_the_row():
    """The question's own check_node lets other_feature = 50 through on 3 features; the
    core runs its answer as plain Python on a row of zeros at load and refuses the node."""

    @attrs.define(slots=False)
    class DifferenceSplitter(Mod3Splitter):
        name: ClassVar[str] = "difference_search"

        def find_split(self, state, node, rules):
            from treekit_core import Split

            if node.depth > 0 or node.rows.size < 10:
                return None
            return Split(0, 0.0, 1e-3, {"other_feature": 1.0}, question="difference")

    @attrs.define(slots=False)
    class Plugin:
        @hookimpl
        def treekit_questions(self):
            return [Difference]

        @hookimpl
        def treekit_splitters(self):
            return [DifferenceSplitter]

    X, y = mod3_data()
    X = np.column_stack([X, X[:, 0]])
    with registered(Plugin(), name="difference"):
        model = TreeClassifier(splitter="difference_search").fit(X, y)
        payload = json.loads(model.to_json())
        assert payload["tree"]["node_fields"]["other_feature"][0] == 1.0
        TreeClassifier.from_json(json.dumps(payload))  # as written: loads
        payload["tree"]["node_fields"]["other_feature"][0] = 50.0
        with pytest.raises(ModelFileError, match="node 0 .'difference' question.: its parameters"):
            TreeClassifier.from_json(json.dumps(payload))


# -- an impurity that reads past its parameters ------------------------------------------


def past_its_params(sums, total_weight, params):
    if total_weight <= 0.0:
        return 0.0
    p = sums[0] / total_weight
    return params[5] * p * (1.0 - p)  # params holds one entry


class PastItsParams(Criterion):
    name = "past_its_params"
    impurity = staticmethod(past_its_params)


def test_the_kit_runs_the_impurity_as_plain_python_with_bounds():
    with pytest.raises(ConformanceError, match="reads outside its arrays as plain Python"):
        testing.check_criterion(PastItsParams)


# -- a splitter whose question kind the kit did not register -----------------------------


def test_the_kit_names_a_splitters_unregistered_question_kind():
    with pytest.raises(ConformanceError, match="asks a question kind that is not registered"):
        testing.check_splitter(Mod3Splitter, min_samples_leaf=1)
    testing.check_splitter(Mod3Splitter, min_samples_leaf=1, questions=[Mod3])


def test_the_pytest_fixture_offers_every_kinds_check(treekit_check):
    for kind in ("criterion", "splitter", "labeler", "confidence", "pruner", "target"):
        assert callable(getattr(treekit_check, kind))
    for kind in ("question", "evaluator", "corrupted_model_files", "json_round_trip"):
        assert callable(getattr(treekit_check, kind))
    assert treekit_check.target is testing.check_target


# -- a plain-Python impurity numba cannot compile ---------------------------------------


def importing_gini(sums, total_weight, params):
    import math  # numba compiles no import inside the function

    if total_weight <= 0.0:
        return 0.0
    total = 0.0
    for k in range(sums.shape[0]):
        total += (sums[k] / total_weight) ** 2
    return math.fabs(1.0 - total)


def listing_gini(sums, total_weight, params):
    shares = sums.tolist()  # numba types no ndarray.tolist
    return 1.0 - sum(shares) / total_weight


class ImportingGini(Criterion):
    name = "importing_gini"
    impurity = staticmethod(importing_gini)


class ListingGini(Criterion):
    name = "listing_gini"
    impurity = staticmethod(listing_gini)


@pytest.mark.parametrize("criterion", [ImportingGini, ListingGini])
@pytest.mark.parametrize("splitter", ["exhaustive", "c45"])
def test_an_impurity_numba_cannot_compile_is_one_error_naming_the_criterion(criterion, splitter):
    import inspect
    import traceback

    from treekit_core.compile_errors import KernelCompileError

    X, y = ordinal_data(120)
    function = criterion.impurity
    line = inspect.getsourcelines(function)[1]
    with pytest.raises(KernelCompileError) as caught:
        TreeClassifier(criterion=criterion(), splitter=splitter, max_depth=2).fit(X, y)
    message = str(caught.value)
    assert message.startswith(f"criterion {criterion.name!r}: {function.__qualname__} (")
    assert f"test_plugin_author.py, line {line})" in message
    assert "does not compile in numba's nopython mode" in message
    assert "import modules at the top of its file" in message
    assert len(traceback.extract_tb(caught.value.__traceback__)) < 15


# -- names a plugin author meets: row kinds and capabilities ----------------------------


def test_every_core_row_kind_is_described():
    from treekit_core.components import EVIDENCE_KINDS
    from treekit_core.registry import get_registry

    for name, info in get_registry().components("target").items():
        if info.cls.__module__.startswith("treekit_core."):
            assert info.cls.evidence in EVIDENCE_KINDS, name


def test_a_refusal_explains_a_third_party_capability_once():
    """It printed "needs median_decisions (median_decisions)": a capability the core does
    not know is explained by the component that names it, or named alone."""
    from treekit_core import CompositionError

    class NeedsMedians(OrdinalMedian):
        name = "needs_medians"
        requires = {"labeler": frozenset({"median_decisions"})}

    class Explains(NeedsMedians):
        name = "explains_medians"
        capability_descriptions = {"median_decisions": "a labeler deciding a median class"}

    class Plugin:
        @hookimpl
        def treekit_targets(self):
            return [NeedsMedians, Explains]

    X, y = ordinal_data(60)
    with registered(Plugin(), name="medians"):
        with pytest.raises(CompositionError) as bare:
            TreeClassifier(target="needs_medians").fit(X, y)
        with pytest.raises(CompositionError) as explained:
            TreeClassifier(target="explains_medians").fit(X, y)
    assert "needs median_decisions, which 'majority' does not provide" in str(bare.value)
    assert "median_decisions (a labeler deciding a median class)" in str(explained.value)

"""The authoring kit fails on broken components, saying what is wrong, and passes on the
built-ins (the plugins are checked in tests/test_integration.py)."""

from typing import ClassVar

import attrs
import numpy as np
import pytest

from treekit_core import Criterion, Evaluator, Labeler, Question, TreeClassifier, registered
from treekit_core.builtins import Multiway
from treekit_core.builtins.splitters import Exhaustive
from treekit_core.components.question import threshold_answer
from treekit_core.registry import get_registry
from treekit_core.testing import (
    ConformanceError,
    check_component,
    check_criterion,
    check_labeler,
    check_question,
    check_splitter,
    small_data,
)
from treekit_core.testing.pytest_plugin import treekit_check, treekit_registry  # noqa: E402,F401


def negative_impurity(class_sums, total_weight, params):
    return -1.0


@attrs.define(slots=False)
class Negative(Criterion):
    name: ClassVar[str] = "negative"
    impurity = staticmethod(negative_impurity)


def constant_impurity(class_sums, total_weight, params):
    return 0.5


@attrs.define(slots=False)
class NotZeroWhenPure(Criterion):
    name: ClassVar[str] = "not_zero_when_pure"
    impurity = staticmethod(constant_impurity)


@attrs.define(slots=False)
class GiniClaimingFreeSums(Criterion):
    """Gini declaring its first class's sum drop-free: a histogram leaving it out of the
    bins would score other cuts."""

    name: ClassVar[str] = "gini_claiming_free_sums"
    impurity = staticmethod(get_registry().get_class("criterion", "gini").impurity)

    def drop_free_statistics(self, n_statistics):
        return (0,)


@attrs.define(slots=False)
class SquaredErrorClaimingTooMuch(Criterion):
    """Squared error declaring both of its sums drop-free (only the sum of y^2 is)."""

    name: ClassVar[str] = "squared_error_claiming_too_much"
    evidence: ClassVar[str] = "moments"
    default_target: ClassVar[str] = "mean"
    impurity = staticmethod(get_registry().get_class("criterion", "squared_error").impurity)

    def drop_free_statistics(self, n_statistics):
        return (0, 1)


def uncompilable(class_sums, total_weight, params):
    return {"a": 1}["a"] + "x"


@attrs.define(slots=False)
class Uncompilable(Criterion):
    name: ClassVar[str] = "uncompilable"
    impurity = staticmethod(uncompilable)


@attrs.define(slots=False)
class Careless(Exhaustive):
    """Ignores min_samples_leaf."""

    name: ClassVar[str] = "careless"

    def build_tree(self, composition, data, rng, rules):
        return None

    def find_split(self, state, node, rules):
        return super().find_split(state, node, attrs.evolve(rules, min_samples_leaf=1))


@attrs.define(slots=False)
class SecretlyAbstains(Labeler):
    name: ClassVar[str] = "secret"

    def decide(self, proba):
        return np.where(proba.max(axis=1) > 0.5, np.argmax(proba, axis=1), -1)


class NeverSeparates(Exhaustive):
    """Finds a split that sends every row one way."""

    name: ClassVar[str] = "never_separates"

    def build_tree(self, composition, data, rng, rules):
        return None

    def find_split(self, state, node, rules):
        split = super().find_split(state, node, rules)
        if split is not None:
            split.threshold = np.inf  # every known value goes left
        return split


@attrs.define(slots=False)
class NaNLabeler(Labeler):
    name: ClassVar[str] = "nan_labeler"

    def distribution(self, class_sums, weights):
        return class_sums / class_sums.sum(axis=1, keepdims=True)  # 0 / 0 for empty nodes

    def decide(self, proba):
        return np.argmax(np.nan_to_num(proba), axis=1)


def test_a_splitter_that_never_separates_rows_is_caught():
    """Issue 37: named as the splitter, not found later as a model-file error."""
    with pytest.raises(ConformanceError, match="splitter 'never_separates': never separated"):
        check_splitter(NeverSeparates)


def test_a_labeler_returning_nan_is_caught_by_name():
    with pytest.raises(ConformanceError, match="labeler 'nan_labeler': distribution returned NaN"):
        check_labeler(NaNLabeler)


def test_negative_criterion_is_caught():
    with pytest.raises(ConformanceError, match="criterion 'negative': impurity is negative"):
        check_criterion(Negative)


def test_criterion_not_zero_on_pure_nodes_is_caught():
    with pytest.raises(ConformanceError, match="pure node .* is 0.5, not 0"):
        check_criterion(NotZeroWhenPure)


@pytest.mark.parametrize("criterion", [GiniClaimingFreeSums, SquaredErrorClaimingTooMuch])
def test_statistics_wrongly_declared_drop_free_are_caught(criterion):
    """Criterion.drop_free_statistics: a sum that does not cancel out of the drop is
    named before any histogram scores cuts without it (squared error's sum of y^2, which
    does cancel, passes with every builtin below)."""
    with pytest.raises(ConformanceError, match="declares drop_free_statistics.* a cut's drop is"):
        check_criterion(criterion)


def bound_without_slack(
    left_sums, left_weight, parent_sums, parent_weight, parent_impurity, params
):
    """Squared error's proxy bound with no slack: equal to w_t times the drop in exact
    arithmetic, so below the computed one for some cuts (a search would skip a cut that
    ties or beats its best by a rounding)."""
    right_weight = parent_weight - left_weight
    right_sum = parent_sums[0] - left_sums[0]
    proxy = left_sums[0] * left_sums[0] / left_weight + right_sum * right_sum / right_weight
    return parent_impurity * parent_weight + proxy - parent_sums[1]


@attrs.define(slots=False)
class SquaredErrorBoundTightly(Criterion):
    name: ClassVar[str] = "squared_error_bound_tightly"
    evidence: ClassVar[str] = "moments"
    default_target: ClassVar[str] = "mean"
    impurity = staticmethod(get_registry().get_class("criterion", "squared_error").impurity)
    drop_bound = staticmethod(bound_without_slack)


def test_a_drop_bound_below_the_computed_drop_is_caught():
    with pytest.raises(ConformanceError, match="its drop bound .* is not above w_t times the drop"):
        n = small_data(2)[0].shape[0]
        check_criterion(SquaredErrorBoundTightly, y=np.random.default_rng(0).normal(size=n))


@attrs.define(slots=False)
class SquaredErrorOfThreeStatistics(Criterion):
    name: ClassVar[str] = "squared_error_of_three_statistics"
    evidence: ClassVar[str] = "moments"
    default_target: ClassVar[str] = "mean"
    impurity = staticmethod(get_registry().get_class("criterion", "squared_error").impurity)
    fixed_statistics: ClassVar[int] = 3


def test_fixed_statistics_other_than_the_targets_width_are_caught():
    """A criterion declaring a number of statistics its default target does not write
    would get kernels reading columns the rows lack: the kit names both."""
    n = small_data(2)[0].shape[0]
    with pytest.raises(
        ConformanceError, match="fixed_statistics = 3, but its default target 'mean' writes 2"
    ):
        check_criterion(SquaredErrorOfThreeStatistics, y=np.random.default_rng(0).normal(size=n))


def test_a_drop_bound_belongs_to_the_impurity_beside_it():
    """Criterion.drop_bound_function: squared error's bound, inherited by a subclass that
    keeps its impurity, and by none that defines another (the outputs' mean variance)."""
    squared_error = get_registry().get_class("criterion", "squared_error")

    @attrs.define(slots=False)
    class KeepsTheImpurity(squared_error):
        pass

    @attrs.define(slots=False)
    class OwnImpurity(squared_error):
        impurity = staticmethod(negative_impurity)

    bound = squared_error.drop_bound
    assert squared_error().drop_bound_function() is bound
    assert KeepsTheImpurity().drop_bound_function() is bound
    assert OwnImpurity().drop_bound_function() is None
    assert squared_error().for_outputs().drop_bound_function() is None


def test_only_the_paired_moment_impurities_declare_their_second_sums_drop_free():
    """squared_error's and poisson's second sums (one per output) are drop-free; a
    subclass with an impurity of its own inherits no declaration (a histogram would
    otherwise score its cuts wrongly without a word)."""
    from treekit_core.builtins.criteria import Poisson, SquaredError

    registry = get_registry()
    assert registry.create("criterion", "squared_error").drop_free_statistics(2) == (1,)
    assert SquaredError().for_outputs().drop_free_statistics(6) == (1, 3, 5)
    assert Poisson().drop_free_statistics(2) == (1,)
    assert registry.create("criterion", "gini").drop_free_statistics(3) == ()

    @attrs.define(slots=False)
    class Damped(SquaredError):
        name: ClassVar[str] = "damped_squared_error"
        impurity = staticmethod(lambda sums, weight, params: 0.0)

    assert Damped().drop_free_statistics(2) == ()


def test_uncompilable_criterion_is_caught():
    with pytest.raises(ConformanceError, match="does not compile under numba"):
        check_criterion(Uncompilable)


def test_splitter_ignoring_min_samples_leaf_is_caught():
    with pytest.raises(ConformanceError, match="splitter 'careless': ignores min_samples_leaf=7"):
        check_splitter(Careless)


def test_labeler_abstaining_without_saying_so_is_caught():
    with pytest.raises(ConformanceError, match="abstains but its can_abstain is False"):
        check_labeler(SecretlyAbstains)


def test_every_builtin_component_passes():
    registry = get_registry()
    defaults = {"cost_matrix": {"costs": [[0.0, 1.0], [3.0, 0.0]]}}
    for kind in (
        "criterion",
        "splitter",
        "labeler",
        "confidence",
        "pruner",
        "evaluator",
        "propagator",
        "question",
    ):
        for name, info in registry.components(kind).items():
            if name == "variance":
                check_criterion(info.cls, n_classes=2)
                continue
            check_component(info.cls, defaults.get(name))


def test_pytest_plugin_fixtures(treekit_check, treekit_registry):  # noqa: F811
    assert "gini" in treekit_registry.components("criterion")
    treekit_check.component(Exhaustive)
    with pytest.raises(ConformanceError):
        treekit_check.criterion(Negative)


def _answers_out_of_range(x, feature, threshold, params, n_branches):
    return 7


def _answers_although_missing(x, feature, threshold, params, n_branches):
    return 0 if x[feature] <= threshold else 1  # NaN <= t is False: branch 1, not missing


@attrs.define(slots=False)
class OutOfRange(Question):
    name: ClassVar[str] = "out_of_range"
    answer: ClassVar[object] = staticmethod(_answers_out_of_range)

    def branch_texts(self, feature, threshold, params, n_branches, context):
        return ["a", "b"]


@attrs.define(slots=False)
class IgnoresMissing(OutOfRange):
    name: ClassVar[str] = "ignores_missing"
    answer: ClassVar[object] = staticmethod(_answers_although_missing)


def _two_candidates(n_values):
    return 2


def _runs_past_the_values(values, n_values, index):
    return index, n_values + 1  # ends past the values


def _threshold_run(values, n_values, index):
    return 0, 1


@attrs.define(slots=False)
class RunsPastTheValues(IgnoresMissing):
    name: ClassVar[str] = "runs_past_the_values"
    answer: ClassVar[object] = staticmethod(threshold_answer)
    range_count: ClassVar[object] = staticmethod(_two_candidates)
    range_candidate: ClassVar[object] = staticmethod(_runs_past_the_values)

    def range_parameters(self, before, first, last, after):
        return last / 2.0 + after / 2.0, {}


@attrs.define(slots=False)
class CandidatesWithoutACount(RunsPastTheValues):
    name: ClassVar[str] = "candidates_without_a_count"
    range_count: ClassVar[object] = None
    range_candidate: ClassVar[object] = staticmethod(_threshold_run)


def test_question_kinds_breaking_the_contract_are_caught():
    with pytest.raises(ConformanceError, match=r"gave the run \(0, 3\): not inside \[0, 2\]"):
        check_question(RunsPastTheValues)
    with pytest.raises(ConformanceError, match="one of range_count and range_candidate"):
        check_question(CandidatesWithoutACount)
    with pytest.raises(ConformanceError, match="returned 7, outside"):
        check_question(OutOfRange)
    with pytest.raises(ConformanceError, match="tested feature is missing"):
        check_question(IgnoresMissing)
    check_question(Multiway, n_branches=5)


def test_checking_a_criterion_compiles_no_grower_specialised_to_it(tmp_path, monkeypatch):
    """Issue 37: the kit grows its trees with the core's function-value kernels (shared by
    every criterion), so checking a criterion a plugin author has just edited writes and
    compiles no grower for it; ``splitters`` limits the trees to the splitters named."""
    monkeypatch.setenv("TREEKIT_KERNEL_DIR", str(tmp_path))
    from test_third_party_criterion import MyGini  # a third party's criterion, in a file

    check_criterion(MyGini, splitters=["exhaustive", "c45"])
    written = [path.name for path in tmp_path.iterdir()]
    assert not any(name.startswith("treekit_growth") for name in written), written
    # outside the kit, a fit specialises the grower to the criterion as before
    with registered(MyGini):
        TreeClassifier(criterion=MyGini(), max_depth=2).fit(*small_data(2))
    assert any(path.name.startswith("treekit_growth") for path in tmp_path.iterdir())


@attrs.define(slots=False)
class SizesByStatistics(Evaluator):
    """Mixes leaf values into an array sized by the statistics, as the soft evaluator's
    caller once did (its kernel then wrote past the array when values outnumbered them)."""

    name: ClassVar[str] = "sizes_by_statistics"

    def predict_distribution(self, tree, X):
        from treekit_core.builtins.evaluators import hard_distribution

        values = hard_distribution(tree, X)
        out = np.zeros((X.shape[0], tree.n_statistics))
        width = min(out.shape[1], values.shape[1])
        out[:, :width] = values[:, :width]
        return out


def test_an_evaluator_that_sizes_its_output_by_the_statistics_is_caught():
    from treekit_core.testing import check_evaluator

    with pytest.raises(ConformanceError, match="one column per node value"):
        check_evaluator(SizesByStatistics)
    from treekit_core.builtins import HardEvaluator

    check_evaluator(HardEvaluator)

"""The contract members conditional inference trees brought (issue 61): a target's
influence function h(y), checked by hand, and a splitter that leaves a node a leaf while
keeping per-node values (``Unsplit``), as the ctree splitter keeps a node's tests."""

from typing import ClassVar

import attrs
import numpy as np
import pytest

from treekit_core import NODE_TEST_FIELDS, Splitter, TreeRegressor, Unsplit, hookimpl
from treekit_core.builtins.targets import ClassLabels, Mean, SurvivalCurves
from treekit_core.registry import registered


def test_influence_functions_by_hand():
    # log-rank scores (coin's logrank_trafo, mid-ranks): Nelson-Aalen at the own time less
    # the event. Times 1, 2, 2, 3 with events 1, 1, 0, 1: at risk 4, 3, 1 at the distinct
    # times, one event each: hazards 1/4, 1/4 + 1/3, 1/4 + 1/3 + 1
    rows = np.array([[1.0, 1.0], [1.0, 2.0], [0.0, 2.0], [1.0, 3.0]])
    expected = [0.25 - 1, 0.25 + 1 / 3 - 1, 0.25 + 1 / 3, 0.25 + 1 / 3 + 1 - 1]
    np.testing.assert_allclose(SurvivalCurves().influence(rows)[:, 0], expected, rtol=1e-15)
    # classes: dummy codes, one column (the second class's) for two classes
    two = np.array([[1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_array_equal(ClassLabels().influence(two), [[0.0], [1.0]])
    three = np.eye(3)
    np.testing.assert_array_equal(ClassLabels().influence(three), three)
    with pytest.raises(ValueError, match="one class label per row"):
        ClassLabels().influence(np.array([[0.0, 1.0, 1.0]]))
    # a number: itself
    np.testing.assert_array_equal(Mean().influence(np.array([[2.0, 4.0]])), [[2.0]])


def test_a_splitter_may_keep_values_at_a_node_it_leaves_a_leaf():
    @attrs.define(slots=False)
    class TestsOnly(Splitter):
        name: ClassVar[str] = "tests_only"
        node_field_names: ClassVar[tuple] = NODE_TEST_FIELDS

        def find_split(self, state, node, rules):
            values = np.full(2, node.weight)  # one per feature
            fields = (values, values / 10, values / 100)
            return Unsplit(dict(zip(NODE_TEST_FIELDS, fields, strict=True)))

    class Plugin:
        @hookimpl
        def treekit_splitters(self):
            return [TestsOnly]

    X = np.column_stack([np.arange(12.0), np.ones(12)])
    with registered(Plugin(), name="tests-only"):
        model = TreeRegressor(splitter="tests_only", pruner="none").fit(X, np.arange(12.0))
        assert model.tree_.n_nodes == 1  # the root stays a leaf
        tests = model.node_tests(0)
        assert tests["statistic"].tolist() == [12.0, 12.0]
        assert tests["raw_p_value"].tolist() == [0.12, 0.12]
        assert list(tests["feature"]) == ["x[0]", "x[1]"]


def test_the_report_and_text_print_the_p_value_of_a_tested_split():
    from treekit_core import Split, TreeClassifier
    from treekit_core.tools.report import tree_html

    @attrs.define(slots=False)
    class TestedCut(Splitter):
        name: ClassVar[str] = "tested_cut"
        node_field_names: ClassVar[tuple] = NODE_TEST_FIELDS

        def find_split(self, state, node, rules):
            if node.depth > 0:
                return None
            p_values = np.array([0.0123, np.nan])  # the second feature was not tested
            fields = dict(zip(NODE_TEST_FIELDS, (p_values, p_values, p_values), strict=True))
            return Split(0, 5.5, 1.0, fields)

    class Plugin:
        @hookimpl
        def treekit_splitters(self):
            return [TestedCut]

    X = np.column_stack([np.arange(12.0), np.ones(12)])
    with registered(Plugin(), name="tested-cut"):
        model = TreeClassifier(splitter="tested_cut").fit(X, np.arange(12) > 5)
        assert model.export_text().splitlines()[0] == "|    (p = 0.012)"
        assert "x[0] &lt;= 5.5000 (p = 0.012)" in tree_html(model)
        assert list(model.node_tests(0)["feature"]) == ["x[0]"]

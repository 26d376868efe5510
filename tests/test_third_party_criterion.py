"""A criterion written as a plain Python function in a test file, registered by a test
plugin, grows a tree: what a third party does."""

from typing import ClassVar

import attrs
import numpy as np
import pytest

from treekit_core import Criterion, TreeClassifier, hookimpl, registered
from treekit_core.datasets import load_dataset


def my_gini(class_sums, total_weight, params):
    if total_weight <= 0.0:
        return 0.0
    s = 0.0
    for k in range(class_sums.shape[0]):
        p = class_sums[k] / total_weight
        s += p * p
    return 1.0 - s


def power_impurity(class_sums, total_weight, params):
    """1 - sum p^a with the exponent a as a runtime parameter (a=2 is gini)."""
    if total_weight <= 0.0:
        return 0.0
    s = 0.0
    for k in range(class_sums.shape[0]):
        s += (class_sums[k] / total_weight) ** params[0]
    return 1.0 - s


@attrs.define(slots=False)
class MyGini(Criterion):
    name: ClassVar[str] = "my_gini"
    impurity = staticmethod(my_gini)


@attrs.define(slots=False)
class Power(Criterion):
    name: ClassVar[str] = "power"
    exponent: float = attrs.field(default=2.0, validator=attrs.validators.gt(1.0))
    impurity = staticmethod(power_impurity)

    def impurity_params(self, n_classes):
        return np.array([self.exponent])


class CriterionPlugin:
    @hookimpl
    def treekit_criteria(self):
        return [MyGini, Power]


def test_python_criterion_grows_the_same_tree_as_builtin_gini():
    data = load_dataset("wisconsin", dropna=True)
    with registered(CriterionPlugin(), name="test-criteria"):
        ours = TreeClassifier(criterion="my_gini", min_samples_leaf=5).fit(data.X, data.y)
        parametrised = TreeClassifier(
            criterion="power", criterion_params={"exponent": 2.0}, min_samples_leaf=5
        ).fit(data.X, data.y)
    builtin = TreeClassifier(criterion="gini", min_samples_leaf=5).fit(data.X, data.y)
    for model in (ours, parametrised):
        np.testing.assert_array_equal(model.tree_.feature, builtin.tree_.feature)
        np.testing.assert_array_equal(model.tree_.threshold, builtin.tree_.threshold)


def test_runtime_parameter_changes_the_tree_without_new_compilation():
    data = load_dataset("pima")
    with registered(CriterionPlugin(), name="test-criteria"):
        a = TreeClassifier(criterion="power", criterion_params={"exponent": 2.0}, max_depth=4).fit(
            data.X, data.y
        )
        b = TreeClassifier(criterion="power", criterion_params={"exponent": 6.0}, max_depth=4).fit(
            data.X, data.y
        )
        compiled = a.composition_.criterion.compiled_impurity()
    assert not np.array_equal(a.tree_.threshold, b.tree_.threshold)
    assert compiled is b.composition_.criterion.compiled_impurity()
    if hasattr(compiled, "signatures"):
        assert len(compiled.signatures) == 1


def test_invalid_parameter_of_plugin_criterion_names_it():
    with registered(CriterionPlugin(), name="test-criteria"):
        with pytest.raises(ValueError, match="exponent"):
            TreeClassifier(criterion="power", criterion_params={"exponent": 0.5}).fit(
                [[0.0], [1.0]], [0, 1]
            )
        with pytest.raises(ValueError, match="no parameter 'exponnt'.*did you mean 'exponent'"):
            TreeClassifier(criterion="power", criterion_params={"exponnt": 3}).fit(
                [[0.0], [1.0]], [0, 1]
            )

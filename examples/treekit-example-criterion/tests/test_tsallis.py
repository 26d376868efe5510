import numpy as np

from treekit_core import TreeClassifier
from treekit_example_criterion import Tsallis


def test_conformance(treekit_check):
    treekit_check.criterion(Tsallis)
    treekit_check.component(Tsallis, {"q": 1.5})


def test_q_two_is_gini(treekit_registry):
    import treekit_example_criterion

    treekit_registry.register(treekit_example_criterion, "treekit-example-criterion")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + X[:, 1] ** 2 > 1).astype(int)
    a = TreeClassifier(criterion="tsallis", criterion_params={"q": 2.0}, max_depth=4).fit(X, y)
    b = TreeClassifier(criterion="gini", max_depth=4).fit(X, y)
    np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)

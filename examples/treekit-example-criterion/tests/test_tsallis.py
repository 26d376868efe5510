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


def test_the_pseudo_huber_loss_conforms(treekit_check):
    from treekit_example_criterion import PseudoHuber

    treekit_check.loss(PseudoHuber)
    treekit_check.loss(PseudoHuber, {"delta": 0.3})


def test_a_wide_pseudo_huber_boosts_as_squared_error(treekit_registry):
    """delta far above every residual: the loss is the squared error's half (gradient
    r, hessian 1 to 1e-12), so the boosted model is squared error's."""
    import treekit_example_criterion
    from treekit_core import BoostingRegressor

    treekit_registry.register(treekit_example_criterion, "treekit-example-criterion")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] + np.sin(X[:, 1]) + rng.normal(0, 0.2, 300)
    wide = BoostingRegressor(
        loss="pseudo_huber", loss_params={"delta": 1e6}, splitter="exhaustive", n_estimators=20
    ).fit(X, y, sample_weight=np.ones(300))
    plain = BoostingRegressor(splitter="exhaustive", n_estimators=20).fit(X, y)
    np.testing.assert_allclose(wide.predict(X), plain.predict(X), atol=1e-8)

"""Kaplan-Meier confidence bands of a survival tree's leaves (issue 63): survival's
``survfit`` with its defaults (Greenwood's variance, conf.type "log", 95%) on the bundled
lung, all rows and by sex (fixture: tests/fixtures/survfit_bands/make_fixtures.R, survival
3.5.3, 17 digits), 1e-10; NaN where survfit gives NA (the curve at 0)."""

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

from treekit_core import ForestSurvival, SurvivalTree
from treekit_core.datasets import load_dataset

REFERENCE = json.loads(
    (Path(__file__).parent / "fixtures" / "survfit_bands" / "survfit_bands.json").read_text()
)


def _numbers(values):
    return np.array([np.nan if v is None else float(v) for v in values])


def _check(model, x_row, group):
    S, lower, upper = model.predict_survival_function(
        np.asarray([x_row], dtype=float), return_array=True, return_conf_int=True
    )
    times = _numbers(group["time"])
    at = np.searchsorted(model.unique_times_, times)
    np.testing.assert_array_equal(model.unique_times_[at], times)
    np.testing.assert_allclose(S[0, at], _numbers(group["surv"]), rtol=1e-10)
    np.testing.assert_allclose(lower[0, at], _numbers(group["lower"]), rtol=1e-10)
    np.testing.assert_allclose(upper[0, at], _numbers(group["upper"]), rtol=1e-10)


def test_a_leaf_s_band_is_survfit_s():
    assert REFERENCE["survival_version"] == "3.5.3"
    lung = load_dataset("lung")
    y = lung.y  # (event, time), as scikit-survival's Surv
    root = SurvivalTree(min_samples_split=10**6).fit(lung.X, y)
    _check(root, lung.X[0], REFERENCE["lung_all"][0])
    sex = lung.X[:, [lung.feature_names.index("sex")]]
    by_sex = SurvivalTree(max_depth=1, min_samples_leaf=1).fit(sex, y)
    assert by_sex.tree_.n_leaves == 2
    for group in REFERENCE["lung_sex"]:
        _check(by_sex, [float(group["group"])], group)
    for copy in (pickle.loads(pickle.dumps(by_sex)), SurvivalTree.from_json(by_sex.to_json())):
        np.testing.assert_array_equal(
            copy.predict_survival_function(sex, return_array=True, return_conf_int=True)[1],
            by_sex.predict_survival_function(sex, return_array=True, return_conf_int=True)[1],
        )


def test_bands_are_refused_where_no_leaf_is_one_row_s():
    lung = load_dataset("lung")
    forest = ForestSurvival(n_estimators=2, random_state=0).fit(lung.X, lung.y)
    with pytest.raises(ValueError, match="a forest's averaged curve has none"):
        forest.predict_survival_function(lung.X, return_array=True, return_conf_int=True)
    tree = SurvivalTree(max_depth=3).fit(lung.X, lung.y)
    with pytest.raises(ValueError, match="needs return_array=True"):
        tree.predict_survival_function(lung.X, return_conf_int=True)
    missing = lung.X[:2].copy()
    missing[1, tree.tree_.feature[0]] = np.nan
    with pytest.raises(ValueError, match="row 1 of X reaches several leaves"):
        tree.predict_survival_function(missing, return_array=True, return_conf_int=True)
    payload = json.loads(tree.to_json())
    del payload["tree"]["component_state"]["target"]["greenwood"]
    old = SurvivalTree.from_json(json.dumps(payload))  # a file written before: loads
    with pytest.raises(ValueError, match="refit it for confidence bands"):
        old.predict_survival_function(lung.X[:3], return_array=True, return_conf_int=True)
    np.testing.assert_array_equal(
        old.predict_survival_function(lung.X, return_array=True),
        tree.predict_survival_function(lung.X, return_array=True),
    )


def test_the_leaves_pictures_shade_their_bands():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from treekit_core.tools import plots

    lung = load_dataset("lung")
    sex = lung.X[:, [lung.feature_names.index("sex")]]
    tree = SurvivalTree(max_depth=1, min_samples_leaf=1).fit(sex, lung.y)
    _, ax = plt.subplots()
    plots.plot_survival_curves(tree, sex, lung.y, ax)
    shaded = [c for c in ax.collections if c.get_alpha() == 0.15]
    assert len(shaded) == 2
    _, lower, upper = tree.predict_survival_function(sex, return_array=True, return_conf_int=True)
    # each shaded band spans its leaf's band: from its lowest lower bound to 1
    drawn = sorted(
        (np.nanmin(path.vertices[:, 1]), np.nanmax(path.vertices[:, 1]))
        for c in shaded
        for path in c.get_paths()[:1]
    )
    expected = sorted((np.nanmin(lower[sex[:, 0] == g]), 1.0) for g in np.unique(sex[:, 0]))
    np.testing.assert_allclose(drawn, expected, rtol=1e-12)
    plt.close("all")

"""Causal trees and forests (issue 65): the effect of a binary treatment per row (several
arms: tests/test_multi_arm_treatments.py).

The criteria are checked against brute-force hand computations of Athey & Imbens'
honest criterion and grf's pseudo-outcome split on small data; the forest's estimate and
variance against a transcription of grf's C++ (``InstrumentalPredictionStrategy``); the
forest against econml's ``econml.grf.CausalForest`` on the simulation designs of Wager &
Athey (2018, section 5) measured in the same run; the average treatment effect on their
confounded null design."""

import json
import math
import pickle

import numpy as np
import pytest
from scipy.stats import beta

from treekit_core import CausalForest, CausalTree, TreeRegressor
from treekit_core.estimators.ensemble import generators_of, half_sample
from treekit_core.estimators.treatment_effects import little_bag_variance


def heterogeneous_design(n, d, seed, design=1):
    """Wager & Athey (2018), section 5.2: X ~ U[0, 1]^d, e(x) = 0.5, m(x) = 0,
    tau(x) = s(x_1) s(x_2) with s(x) = 1 + 1 / (1 + exp(-20 (x - 1/3))) (first design) or
    2 / (1 + exp(-12 (x - 1/2))) (second), y = m + (w - 1/2) tau + N(0, 1)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    if design == 1:
        s = lambda x: 1 + 1 / (1 + np.exp(-20 * (x - 1 / 3)))  # noqa: E731
    else:
        s = lambda x: 2 / (1 + np.exp(-12 * (x - 1 / 2)))  # noqa: E731
    tau = s(X[:, 0]) * s(X[:, 1])
    w = rng.binomial(1, 0.5, size=n)
    y = (w - 0.5) * tau + rng.normal(size=n)
    return X, y, w, tau


def null_design(n, d, seed):
    """Wager & Athey (2018), section 5.1: no effect, confounded: e(x) = (1 + beta_{2,4}(x_1))
    / 4, m(x) = 2 x_1 - 1, y = m + N(0, 1)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    w = rng.binomial(1, 0.25 * (1 + beta.pdf(X[:, 0], 2, 4)))
    y = 2 * X[:, 0] - 1 + rng.normal(size=n)
    return X, y, w


def small_data(seed=0, n=40):
    rng = np.random.default_rng(seed)
    x = rng.permutation(n).astype(float)
    w = np.tile([0, 1], n // 2)[rng.permutation(n)]
    y = np.where(x >= n / 2, 2.0 * w, 0.0) + rng.normal(size=n)
    return x[:, None], y, w


def honest_criterion_by_hand(x, y, w, least, penalty):
    """Every admissible cut of the single feature scored by Athey & Imbens' honest
    criterion computed from the rows: G(t) = n_t (tau_t^2 - penalty (v_1 / n_1 + v_0 /
    n_0)), v the arm's variance (1/n divisor); the score (G(L) + G(R) - G(P)) / n_P."""

    def gain(rows):
        treated, control = y[rows][w[rows] == 1], y[rows][w[rows] == 0]
        tau = treated.mean() - control.mean()
        variance = treated.var() / treated.size + control.var() / control.size
        return rows.sum() * (tau * tau - penalty * variance)

    everything = np.ones(x.size, dtype=bool)
    scores = {}
    values = np.unique(x)
    for low, high in zip(values[:-1], values[1:], strict=True):
        left = x <= low
        arms_ok = all(
            ((side & (w == arm)).sum() >= least) for side in (left, ~left) for arm in (0, 1)
        )
        if arms_ok:
            scores[(low + high) / 2] = (gain(left) + gain(~left) - gain(everything)) / x.size
    return scores


def grf_score_by_hand(x, y, w, least, alpha):
    """Every admissible cut scored by grf's causal split: the parent's pseudo-outcomes
    rho_i = (w_i - w_bar)(y_i - y_bar - tau (w_i - w_bar)), the score ((sum_L rho)^2 / n_L +
    (sum_R rho)^2 / n_R) / n_P; a child needs `least` rows of each arm and alpha of the
    parent's sum of (w - w_bar)^2 in its own sum of (w - w_child)^2."""
    w_bar, y_bar = w.mean(), y.mean()
    tau = np.sum((w - w_bar) * (y - y_bar)) / np.sum((w - w_bar) ** 2)
    rho = (w - w_bar) * (y - y_bar - tau * (w - w_bar))
    spread = np.sum((w - w_bar) ** 2)
    scores = {}
    values = np.unique(x)
    for low, high in zip(values[:-1], values[1:], strict=True):
        left = x <= low
        arms_ok = all(
            ((side & (w == arm)).sum() >= least) for side in (left, ~left) for arm in (0, 1)
        )
        sizes_ok = all(
            np.sum((w[side] - w[side].mean()) ** 2) >= alpha * spread for side in (left, ~left)
        )
        if arms_ok and sizes_ok:
            score = rho[left].sum() ** 2 / left.sum() + rho[~left].sum() ** 2 / (~left).sum()
            scores[(low + high) / 2] = score / x.size
    return scores


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_causal_tree_s_split_and_leaves_are_the_hand_computation(seed):
    """One split (max_depth=1, not honest): the cut of the largest hand-computed honest
    criterion, its score as the root's improvement, each leaf's effect the difference of
    its arms' mean outcomes and its standard error sqrt(s_1^2 / n_1 + s_0^2 / n_0)
    (unbiased arm variances)."""
    X, y, w = small_data(seed)
    model = CausalTree(max_depth=1, honest=False, min_samples_leaf=1).fit(X, y, w)
    scores = honest_criterion_by_hand(X[:, 0], y, w, least=2, penalty=2.0)
    best = max(scores, key=scores.get)
    tree = model.tree_
    assert tree.threshold[0] == best
    assert tree.node_fields["improvement"][0] == pytest.approx(scores[best], rel=1e-12)
    intervals = model.predict_interval(X, alpha=0.05)
    for side in (X[:, 0] <= best, X[:, 0] > best):
        treated, control = y[side & (w == 1)], y[side & (w == 0)]
        effect = treated.mean() - control.mean()
        np.testing.assert_allclose(model.predict(X[side]), effect, rtol=1e-12)
        se = math.sqrt(treated.var(ddof=1) / treated.size + control.var(ddof=1) / control.size)
        bounds = [effect - 1.959963984540054 * se, effect + 1.959963984540054 * se]
        np.testing.assert_allclose(intervals[side], np.tile(bounds, (side.sum(), 1)), rtol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_grf_s_causal_split_is_the_hand_computation(seed):
    X, y, w = small_data(seed)
    model = CausalTree(criterion="grf_causal", max_depth=1, honest=False, min_samples_leaf=1)
    tree = model.fit(X, y, w).tree_
    scores = grf_score_by_hand(X[:, 0], y, w, least=5, alpha=0.05)
    best = max(scores, key=scores.get)
    assert tree.threshold[0] == best
    assert tree.node_fields["improvement"][0] == pytest.approx(scores[best], rel=1e-12)


def test_an_honest_tree_s_leaves_are_estimated_from_the_other_rows():
    """Honest (the default): every leaf's effect is the difference of the arms' means over
    the estimation rows it holds; every leaf holds both arms of them (leaves without are
    pruned)."""
    X, y, w, _ = heterogeneous_design(600, 3, 0)
    model = CausalTree(min_samples_leaf=20, random_state=0).fit(X, y, w)
    tree = model.tree_
    estimation = model._tree_weights(_training_data(model, X, y, w))[0] > 0
    leaves = model.apply(X)
    for leaf in np.unique(leaves):
        rows = (leaves == leaf) & estimation
        assert tree.n_samples[leaf] == rows.sum()
        treated, control = y[rows & (w == 1)], y[rows & (w == 0)]
        assert treated.size and control.size
        expected = treated.mean() - control.mean()
        assert model.predict(X[leaves == leaf][:1])[0] == pytest.approx(expected, rel=1e-10)


def _training_data(model, X, y, w):
    composition = model._make_composition()
    return model._validate_training(X, y, None, composition, treatment=w)[0]


def test_the_forest_estimate_is_the_slope_of_the_forest_weighted_moments():
    """predict = sum_i alpha_i (w_i - w_bar)(y_i - y_bar) / sum_i alpha_i (w_i - w_bar)^2
    with alpha_i(x) = (1 / B) sum_b 1{i in L_b(x)} / |L_b(x)| over each tree's estimation
    rows (grf's weights; w and y centred on the nuisances given)."""
    X, y, w, _ = heterogeneous_design(500, 3, 1)
    m, e = np.full(y.size, y.mean()), np.full(y.size, 0.5)
    forest = CausalForest(n_estimators=10, random_state=0).fit(
        X, y, w, outcome_mean=m, propensity=e
    )
    data = _training_data(forest, X, y - m, w)
    weights = forest._tree_weights(data)
    yc, wc = y - m, w - e
    leaves_of_rows = forest.apply(X)
    for x in X[:5]:
        alpha = np.zeros(y.size)
        for t, leaf in enumerate(forest.apply(x[None, :])[0]):
            rows = (leaves_of_rows[:, t] == leaf) & (weights[t] > 0)
            alpha[rows] += weights[t][rows] / weights[t][rows].sum() / len(forest.estimators_)
        w_bar, y_bar = alpha @ wc, alpha @ yc
        expected = alpha @ ((wc - w_bar) * (yc - y_bar)) / (alpha @ (wc - w_bar) ** 2)
        assert forest.predict(x[None, :])[0] == pytest.approx(expected, rel=1e-9)


def grf_variance_transcribed(per_tree_row, group_size):
    """grf's InstrumentalPredictionStrategy::compute_variance and ObjectiveBayesDebiaser
    (core/src/prediction, grf 2.x), line by line, for one row (trees x (m_w, m_y, m_ww,
    m_wy)), the instrument the treatment and every weight 1."""
    average = per_tree_row.mean(axis=0)
    a_w, a_y, a_ww, a_wy = average
    effect_numerator = a_wy * 1.0 - a_y * a_w
    first_stage = a_ww * 1.0 - a_w * a_w
    tau = effect_numerator / first_stage
    mu = (a_y - a_w * tau) / 1.0
    groups = len(per_tree_row) // group_size
    rho_squared, rho_grouped_squared = 0.0, 0.0
    for group in range(groups):
        group_rho = 0.0
        for j in range(group_size):
            m_w, m_y, m_ww, m_wy = per_tree_row[group * group_size + j]
            psi_1 = m_wy - m_ww * tau - m_w * mu
            psi_2 = m_y - m_w * tau - 1.0 * mu
            rho = (1.0 * psi_1 - a_w * psi_2) / first_stage
            rho_squared += rho * rho
            group_rho += rho
        group_rho /= group_size
        rho_grouped_squared += group_rho * group_rho
    var_between = rho_grouped_squared / groups
    var_total = rho_squared / (groups * group_size)
    group_noise = (var_total - var_between) / (group_size - 1)
    initial = var_between - group_noise
    se = max(var_between, group_noise) * math.sqrt(2.0 / groups)
    if abs(se) < 1e-10:
        return tau, 0.0
    ratio = initial / se
    numerator = math.exp(-ratio * ratio / 2) / math.sqrt(2 * math.pi)
    denominator = 0.5 * math.erfc(-ratio / math.sqrt(2))
    return tau, initial + se * numerator / denominator


def test_the_variance_is_grf_s_bootstrap_of_little_bags():
    X, y, w, _ = heterogeneous_design(800, 3, 2)
    forest = CausalForest(n_estimators=20, random_state=0).fit(X, y, w)
    per_tree = np.stack(
        [forest.composition_.evaluator.predict_distribution(t, X[:15]) for t in forest.estimators_],
        axis=1,
    )
    tau, variance = little_bag_variance(per_tree, 2)
    for i in range(15):
        expected_tau, expected_variance = grf_variance_transcribed(per_tree[i], 2)
        assert tau[i] == pytest.approx(expected_tau, rel=1e-12)
        assert variance[i] == pytest.approx(expected_variance, rel=1e-9, abs=1e-15)
    intervals = forest.predict_interval(X[:15], alpha=0.1)
    np.testing.assert_allclose(intervals.mean(axis=1), forest.predict(X[:15]), rtol=1e-12)
    np.testing.assert_allclose(
        (intervals[:, 1] - intervals[:, 0]) / 2, 1.6448536269514722 * np.sqrt(variance), rtol=1e-9
    )


def test_the_trees_of_a_little_bag_subsample_one_half():
    """ci_group_size trees share a half-sample (n // 2 rows drawn without replacement by the
    bag); each draws max_samples of the rows from it, without replacement."""
    X, y, w, _ = heterogeneous_design(400, 3, 3)
    forest = CausalForest(n_estimators=6, ci_group_size=3, max_samples=0.3, random_state=0)
    forest.fit(X, y, w, outcome_mean=np.zeros(400), propensity=np.full(400, 0.5))
    strata = w.astype(np.int64)
    seeds = forest._draw_seeds(forest._tree_seeds)
    drawn = [forest._drawn_counts(s, strata, 2, 120) for s in seeds]
    for t, counts in enumerate(drawn):
        assert set(np.unique(counts)) <= {0.0, 1.0} and counts.sum() == 120
        half = half_sample(generators_of(seeds[t])[1], 400)
        assert half.size == 200 and set(np.flatnonzero(counts)) <= set(half.tolist())
    assert seeds[0][1] == seeds[2][1] != seeds[3][1]


def test_the_forest_matches_econml_on_wager_and_athey_s_designs():
    """Both heterogeneous designs, 3 data sets each (n = 2000, d = 6), 100 trees, the same
    max_samples (0.45), min_samples_leaf (5) and honesty as econml's CausalForest defaults,
    without centring (econml's forest does not centre): RMSE of the effects on 1000 new rows
    at most 1.05x econml's (mean over the data sets); 95% intervals covering the truth on
    average at least as often as econml's minus 0.03 and at most on 98% of the rows."""
    econml = pytest.importorskip("econml.grf")
    ours_rmse, their_rmse, ours_cover, their_cover = [], [], [], []
    for design in (1, 2):
        for seed in range(3):
            X, y, w, _ = heterogeneous_design(2000, 6, 10 * seed + design, design)
            X_new, _, _, truth = heterogeneous_design(1000, 6, 100 + seed, design)
            theirs = econml.CausalForest(n_estimators=100, random_state=seed).fit(X, w, y)
            ours = CausalForest(n_estimators=100, orthogonalize=False, random_state=seed)
            ours.fit(X, y, w)
            ours_rmse.append(np.sqrt(np.mean((ours.predict(X_new) - truth) ** 2)))
            their_rmse.append(np.sqrt(np.mean((theirs.predict(X_new).ravel() - truth) ** 2)))
            low, high = ours.predict_interval(X_new, alpha=0.05).T
            ours_cover.append(np.mean((low <= truth) & (truth <= high)))
            low, high = theirs.predict_interval(X_new, alpha=0.05)
            their_cover.append(np.mean((low.ravel() <= truth) & (truth <= high.ravel())))
    assert np.mean(ours_rmse) <= 1.05 * np.mean(their_rmse), (ours_rmse, their_rmse)
    assert np.mean(ours_cover) >= np.mean(their_cover) - 0.03, (ours_cover, their_cover)
    assert np.mean(ours_cover) <= 0.98


def test_the_average_effect_s_interval_covers_zero_on_the_null_design():
    """20 data sets of the confounded null design (n = 1000): grf's AIPW estimate with its
    standard error covers 0 (95%) in at least 17 (a binomial(20, 0.95) falls below 17 with
    probability 1.6%)."""
    covered = 0
    for seed in range(20):
        X, y, w = null_design(1000, 5, seed)
        forest = CausalForest(n_estimators=50, random_state=seed).fit(X, y, w)
        estimate, se = forest.average_treatment_effect()
        covered += abs(estimate) <= 1.959963984540054 * se
    assert covered >= 17


def test_centring_removes_the_confounding_bias_of_the_effects():
    """On the confounded null design the centred forest's effects are near 0 on average;
    without centring, confounding (e and m both rise with x_1... e falls) biases them."""
    X, y, w = null_design(2000, 5, 0)
    centred = CausalForest(n_estimators=50, random_state=0).fit(X, y, w).predict(X)
    raw = CausalForest(n_estimators=50, orthogonalize=False, random_state=0).fit(X, y, w)
    assert abs(centred.mean()) < 0.1 < abs(raw.predict(X).mean())


def test_model_files_and_pickles_keep_causal_models():
    X, y, w, _ = heterogeneous_design(600, 3, 4)
    for model in (
        CausalTree(min_samples_leaf=20, random_state=0).fit(X, y, w),
        CausalForest(n_estimators=10, random_state=0).fit(X, y, w),
    ):
        for copy in (type(model).from_json(model.to_json()), pickle.loads(pickle.dumps(model))):
            np.testing.assert_array_equal(copy.predict(X), model.predict(X))
            np.testing.assert_array_equal(copy.predict_interval(X), model.predict_interval(X))
    assert pickle.loads(pickle.dumps(model)).average_treatment_effect() == (
        model.average_treatment_effect()
    )
    with pytest.raises(ValueError, match="does not hold: fit it again"):
        CausalForest.from_json(model.to_json()).average_treatment_effect()
    payload = json.loads(model.to_json())
    payload["trees"][0]["statistics"] = [row[:7] for row in payload["trees"][0]["statistics"]]
    with pytest.raises(ValueError, match="expected 8"):
        CausalForest.from_json(json.dumps(payload))


def test_the_text_shows_each_leaf_s_effect_and_the_importances_its_heterogeneity():
    X, y, w, _ = heterogeneous_design(2000, 4, 5)
    tree = CausalTree(min_samples_leaf=100, random_state=0).fit(X, y, w)
    text = tree.export_text()
    assert "effect: " in text and "treated" in text and "control" in text
    forest = CausalForest(n_estimators=20, random_state=0).fit(X, y, w)
    importances = forest.feature_importances_
    assert set(np.argsort(importances)[-2:]) == {0, 1}  # tau depends on x_1 and x_2 only


def test_what_a_causal_model_cannot_take_is_refused_by_name():
    X, y, w, _ = heterogeneous_design(200, 3, 6)
    with pytest.raises(ValueError, match="treatment must number the arms 0 \\(control\\), 1"):
        CausalTree().fit(X, y, w * 2)
    with pytest.raises(ValueError, match="treatment holds only treated rows"):
        CausalTree().fit(X, y, np.ones(200))
    with pytest.raises(ValueError, match="treatment has shape"):
        CausalTree().fit(X, y, w[:10])
    with pytest.raises(ValueError, match="criterion 'gini' reads target 'class_labels'"):
        CausalTree(criterion="gini").fit(X, y, w)
    with pytest.raises(ValueError, match="fit needs treatment="):
        TreeRegressor(criterion="grf_causal").fit(X, y)
    with pytest.raises(ValueError, match="multiple of ci_group_size=2"):
        CausalForest(n_estimators=3).fit(X, y, w)
    with pytest.raises(ValueError, match="max_samples must be at most 0.5"):
        CausalForest(max_samples=0.7).fit(X, y, w)
    forest = CausalForest(n_estimators=4, random_state=0).fit(X, y, w)
    with pytest.raises(ValueError, match="conformal and quantile intervals do not apply"):
        forest.predict_interval(X, method="conformal")
    with pytest.raises(ValueError, match="alpha must be a number in \\(0, 1\\)"):
        forest.predict_interval(X, alpha=1.5)
    with pytest.raises(ValueError, match="propensity must"):
        CausalForest(n_estimators=4).fit(X, y, w, propensity=np.full(200, 1.5))
    weighted = CausalForest(n_estimators=4, random_state=0)
    weight = np.r_[np.zeros(20), np.ones(180)]  # rows of weight 0: nuisances predicted there
    estimate, se = weighted.fit(X, y, w, sample_weight=weight).average_treatment_effect()
    assert np.isfinite(estimate) and se > 0
    with pytest.raises(Exception, match="cannot search nominal feature column 0"):
        CausalForest(n_estimators=4, categorical_features=[0]).fit(np.round(X * 3), y, w)
    raw = CausalForest(n_estimators=4, orthogonalize=False, random_state=0).fit(X, y, w)
    with pytest.raises(ValueError, match="fit with orthogonalize=True"):
        raw.average_treatment_effect()
    with pytest.raises(ValueError, match="ci_group_size >= 2"):
        CausalForest(n_estimators=4, ci_group_size=1).fit(X, y, w).predict_interval(X)
    with pytest.raises(ValueError, match="criterion 'grf_causal': alpha must be in"):
        CausalForest(criterion_params={"alpha": 0.7}).fit(X, y, w)


def test_the_conformance_kit_passes_the_treatment_effect_components():
    """The kit gives the target and the criteria an example treatment (every other row)
    and grows causal trees with every installed splitter."""
    from treekit_core.builtins import CausalTreeCriterion, GrfCausalCriterion, TreatmentEffect
    from treekit_core.testing import check_criterion, check_target, example_response

    check_target(TreatmentEffect, y=example_response(TreatmentEffect))
    for criterion in (CausalTreeCriterion, GrfCausalCriterion):
        check_criterion(criterion)


def test_the_command_line_fits_and_predicts_effects(tmp_path, capsys):
    """fit --target y --treatment w (rows missing either dropped) writes a causal tree
    (--forest N: a causal forest); predict writes each row's effect and 95% interval,
    equal to the model's; evaluate refuses (no row observes its effect)."""
    from treekit_core.tools.cli import main

    X, y, w, _ = heterogeneous_design(300, 2, 7)
    path = tmp_path / "trial.csv"
    lines = ["age,dose,treated,outcome"]
    for i in range(300):
        outcome = "" if i == 5 else f"{y[i]:.17g}"
        lines.append(f"{X[i, 0]:.17g},{X[i, 1]:.17g},{w[i]},{outcome}")
    path.write_text("\n".join(lines) + "\n")
    for extra, kind in (([], CausalTree), (["--forest", "10"], CausalForest)):
        model_path, out = tmp_path / "model.json", tmp_path / "effects.csv"
        argv = ["fit", str(path), "--target", "outcome", "--treatment", "treated", *extra]
        assert main([*argv, "--out", str(model_path)]) == 0
        assert "1 rows without both dropped" in capsys.readouterr().out
        model = kind.from_json(model_path.read_text())
        assert main(["predict", str(model_path), str(path), "--out", str(out)]) == 0
        written = out.read_text().splitlines()
        assert written[0] == "effect,effect_lower_95,effect_upper_95"
        values = np.array([[float(v) for v in line.split(",")] for line in written[1:]])
        np.testing.assert_allclose(values[:, 0], model.predict(X), rtol=1e-9)
        np.testing.assert_allclose(values[:, 1:], model.predict_interval(X), rtol=1e-9)
    assert main(["evaluate", str(model_path), str(path), "--target", "outcome"]) == 2
    assert "no row observes" in capsys.readouterr().err


def test_a_causal_tree_s_picture_shows_its_leaves_effects(tmp_path):
    pytest.importorskip("matplotlib")
    from treekit_core.tools.plots import plot_tree

    X, y, w, _ = heterogeneous_design(800, 2, 8)
    model = CausalTree(min_samples_leaf=60, random_state=0).fit(X, y, w)
    axes = plot_tree(model)
    texts = [t.get_text() for t in axes.texts]
    assert sum("effect: " in t for t in texts) == model.get_n_leaves()


def test_warm_start_grows_the_trees_one_fit_would():
    """4 + 4 trees (whole little bags) are the 8 of one fit with the same random_state:
    the same effects, intervals and average effect (the nuisance forests are refitted from
    the same seeds)."""
    X, y, w, _ = heterogeneous_design(500, 3, 0)
    grown = CausalForest(n_estimators=4, warm_start=True, random_state=3).fit(X, y, w)
    grown.set_params(n_estimators=8).fit(X, y, w)
    once = CausalForest(n_estimators=8, random_state=3).fit(X, y, w)
    np.testing.assert_array_equal(grown.predict(X), once.predict(X))
    np.testing.assert_array_equal(grown.predict_interval(X), once.predict_interval(X))
    assert grown.average_treatment_effect() == once.average_treatment_effect()

"""Conditional inference trees (issue 61) against partykit 1.2-16 / libcoin 1.0-9 (fixtures
made by tests/fixtures/make_fixtures.R, versions recorded in each file), and the promises
the method makes: unbiased selection of features under the null and a type I error at the
root bounded by 1 - mincriterion (simulations with their Monte Carlo error stated)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from treekit_core import (
    CompositionError,
    SurvivalTree,
    TreeClassifier,
    TreeRegressor,
    export_text,
)
from treekit_core.datasets import load_dataset

FIXTURES = Path(__file__).parent / "fixtures"
PARTYKIT = {"min_samples_split": 20, "min_samples_leaf": 7, "pruner": "none"}


def partykit_case(fixture):
    reference = json.loads((FIXTURES / f"{fixture}.json").read_text())
    assert reference["partykit_version"] == "1.2.16" and reference["libcoin_version"] == "1.0.9"
    data = load_dataset(fixture.split("_")[0])
    rows = np.asarray(reference["rows"])  # partykit's rows: those missing no value
    X, y = data.X[rows], data.y[rows]
    categorical = data.categorical if data.categorical.any() else None
    if reference["kind"] == "class":
        params = {"teststat": "maximum"} if fixture.endswith("maximum") else {}
        model = TreeClassifier(
            splitter="ctree", splitter_params=params, categorical_features=categorical, **PARTYKIT
        )
    elif reference["kind"] == "ordered":  # the response cut as the fixture script cuts it
        y = pd.Categorical(
            pd.cut(y, [0, 30, 60, np.inf], labels=["low", "mid", "high"]), ordered=True
        )
        model = TreeClassifier(target="ordinal_labels", splitter="ctree", **PARTYKIT)
    elif reference["kind"] == "surv":
        model = SurvivalTree(splitter="ctree", **PARTYKIT)
    elif reference["kind"] == "multivariate":  # Ozone + Temp: Temp leaves the features
        temp = data.feature_names.index("Temp")
        y = np.column_stack([y, X[:, temp]])
        X = np.delete(X, temp, axis=1)
        model = TreeRegressor(splitter="ctree", **PARTYKIT)
    else:
        model = TreeRegressor(splitter="ctree", categorical_features=categorical, **PARTYKIT)
    return reference, data, X, y, model.fit(X, y)


@pytest.mark.parametrize(
    "fixture",
    [
        "pima",
        "airquality",
        "solder",
        "gbsg",
        "airquality_ordinal",
        "pima_maximum",
        "airquality_multivariate",
    ],
)
def test_the_tree_partykit_grows(fixture):
    """The same tree (features, cuts, level sets, node sizes, in partykit's depth-first
    order), every node's statistics and adjusted p-values to 1e-6 (the maximum statistic
    of one dimension too), the predictions: classes (two; three ordered) as probabilities,
    numbers (two at once: a multivariate response, issue 64), censored follow-up's
    terminal nodes."""
    reference, data, X, y, model = partykit_case(fixture)
    tree = model.tree_
    assert tree.n_nodes == len(reference["nodes"])
    for node, theirs in enumerate(reference["nodes"]):
        assert bool(tree.is_leaf[node]) == theirs["leaf"], node
        assert tree.n_samples[node] == theirs["n"], node
        if "statistic" in theirs:
            tests = model.node_tests(node).set_index("feature")
            tested = [f"x[{f}]" for f in theirs["tested"]]  # X is an array: names x[j]
            assert sorted(tests.index) == sorted(tested), node
            np.testing.assert_allclose(
                tests.loc[tested, "statistic"], theirs["statistic"], rtol=1e-6
            )
            np.testing.assert_allclose(tests.loc[tested, "p_value"], theirs["p_value"], rtol=1e-6)
        else:  # partykit ran no test: the stopping rules made it a leaf
            assert model.node_tests(node).empty
        if theirs["leaf"]:
            continue
        assert tree.feature[node] == theirs["feature"], node
        if "kid_of_level" in theirs:  # nominal: the levels partykit sends to its first kid
            names = data.categories[data.feature_names[theirs["feature"]]]
            mask = int(tree.question_params(node)[0])
            for level, kid in zip(theirs["levels"], theirs["kid_of_level"], strict=True):
                if kid != "NA":
                    code = names.index(level)
                    assert ((mask >> code) & 1) == (kid == 1), (node, level)
        else:
            assert tree.threshold[node] == theirs["cut"], node
    if reference["kind"] in ("class", "ordered"):
        np.testing.assert_allclose(model.predict_proba(X), reference["predict"], atol=1e-9)
    elif reference["kind"] == "surv":  # partykit's terminal node ids, 1-based depth first
        np.testing.assert_array_equal(model.apply(X) + 1, reference["predict"])
    else:
        np.testing.assert_allclose(model.predict(X), reference["predict"], rtol=1e-9)


def test_node_tests_survive_a_model_file_and_the_text_prints_p_values():
    reference, data, X, y, model = partykit_case("pima")
    loaded = TreeClassifier.from_json(model.to_json())
    for node in range(model.tree_.n_nodes):
        assert loaded.node_tests(node).equals(model.node_tests(node))
    text = export_text(model)
    # the root's chosen feature (plas) has an adjusted p-value of 2.7e-37
    assert text.splitlines()[0] == "|    (p < 0.001)"
    # node 3 splits on preg with p = 0.0287...: rounded to 3 decimals as partykit's plot
    p_value = model.node_tests(3).set_index("feature").loc["x[0]", "p_value"]
    assert f"(p = {round(p_value, 3):g})" in text
    with pytest.raises(ValueError, match="node must be an int"):
        model.node_tests(model.tree_.n_nodes)
    plain = TreeClassifier(max_depth=2).fit(X, y)
    with pytest.raises(ValueError, match="keeps no tests.*'exhaustive'"):
        plain.node_tests(0)


def test_a_target_without_an_influence_function_is_refused_by_name():
    X = np.arange(40.0)[:, None]
    with pytest.raises(CompositionError, match="'ctree'.*'rpart_poisson'|'rpart_poisson'.*'ctree'"):
        TreeRegressor(splitter="ctree", criterion="rpart_poisson").fit(X, np.arange(40) % 3)


def test_parameters_are_checked_naming_them():
    X, y = np.arange(40.0)[:, None], np.arange(40) % 2
    for params, match in (
        ({"mincriterion": 1.5}, "mincriterion"),
        ({"teststat": "max"}, "teststat"),
        ({"splittry": 0}, "splittry"),
    ):
        with pytest.raises((ValueError, TypeError), match=match):
            TreeClassifier(splitter="ctree", splitter_params=params).fit(X, y)


def null_data(rng, n=200):
    """y independent of five features with 2, 5, 10, 50 and 1000 distinct values."""
    X = np.column_stack([rng.integers(0, k, n) / k for k in (2, 5, 10, 50)] + [rng.random(n)])
    return X, rng.integers(0, 2, n)


def test_the_root_chooses_features_without_regard_to_their_number_of_values():
    """Under the null the root's feature is equally likely to be any of the five (a
    chi-squared test of equal frequencies over 1 000 repetitions, level 0.01: a correct
    method fails it with probability 0.01, and the seed is fixed); the exhaustive CART
    search prefers the features with more values and fails it."""
    rng = np.random.default_rng(61)
    ctree_counts, cart_counts = np.zeros(5), np.zeros(5)
    for _ in range(1000):
        X, y = null_data(rng)
        ctree = TreeClassifier(
            splitter="ctree", splitter_params={"mincriterion": 0.0}, max_depth=1, pruner="none"
        ).fit(X, y)
        ctree_counts[ctree.tree_.feature[0]] += 1
        cart = TreeClassifier(max_depth=1, pruner="none").fit(X, y)
        cart_counts[cart.tree_.feature[0]] += 1
    assert chisquare(ctree_counts).pvalue > 0.01, ctree_counts
    assert chisquare(cart_counts).pvalue < 0.01, cart_counts
    assert cart_counts[4] > 400  # the continuous feature, most of the time


def test_the_type_one_error_at_the_root_is_at_most_one_minus_mincriterion():
    """Null data, 1 000 repetitions: the share of roots that split is at most 0.05 plus
    three Monte Carlo standard errors (sqrt(0.05 x 0.95 / 1000) = 0.0069)."""
    rng = np.random.default_rng(1961)
    splits = 0
    for _ in range(1000):
        X, y = null_data(rng)
        model = TreeClassifier(splitter="ctree", max_depth=1, pruner="none").fit(X, y)
        splits += not model.tree_.is_leaf[0]
    assert splits / 1000 <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 1000), splits


def test_pictures_show_a_split_s_p_value():
    import matplotlib

    matplotlib.use("Agg")
    from treekit_core import export_dot
    from treekit_core.tools.plots import plot_tree

    reference, data, X, y, model = partykit_case("pima")
    assert 'label="x[1] <= 127.0000\\np < 0.001"' in export_dot(model)
    axes = plot_tree(model)
    texts = [t.get_text() for t in axes.texts]
    # the root's box: its question and p-value (the picture wraps lines to fit)
    assert any(t.startswith("x[1] <= 127.0000") and t.endswith("p < 0.001") for t in texts)


def test_a_row_missing_a_feature_is_left_out_of_that_feature_s_test():
    """partykit's rule: each feature is tested on the rows that have it; the other features
    keep every row. The statistics at the root equal the tests run on those rows alone."""
    data = load_dataset("pima")
    X, y = data.X.copy(), data.y
    X[::5, 1] = np.nan  # a fifth of plas missing
    model = TreeClassifier(splitter="ctree", pruner="none", max_depth=1).fit(X, y)
    tests = model.node_tests(0).set_index("feature")
    known = ~np.isnan(X[:, 1])
    alone = TreeClassifier(splitter="ctree", pruner="none", max_depth=1).fit(X[known], y[known])
    assert tests.loc["x[1]", "raw_p_value"] == pytest.approx(
        alone.node_tests(0).set_index("feature").loc["x[1]", "raw_p_value"], rel=1e-12
    )
    full = TreeClassifier(splitter="ctree", pruner="none", max_depth=1).fit(data.X, y)
    assert tests.loc["x[0]", "statistic"] == pytest.approx(
        full.node_tests(0).set_index("feature").loc["x[0]", "statistic"], rel=1e-12
    )
    assert np.isfinite(model.predict_proba(X)).all()


def test_a_nominal_feature_with_many_levels_is_split_without_trying_every_subset():
    # 25 levels: 2^24 subsets would not fit in memory at once (the fuzz run found an
    # allocation of 56 GiB); past 20 levels the levels ordered by their mean are cut
    rng = np.random.default_rng(3)
    level = rng.integers(0, 25, 2000)
    y = (level % 2 == 0).astype(int) ^ (rng.random(2000) < 0.1)
    X = np.column_stack([level.astype(float), rng.normal(size=2000)])
    model = TreeClassifier(
        splitter="ctree", categorical_features=[0], pruner="none", max_depth=1
    ).fit(X, y)
    mask = int(model.tree_.question_params(0)[0])
    first = {c for c in range(25) if (mask >> c) & 1}
    assert first == {c for c in range(25) if c % 2 == 1} or first == {
        c for c in range(25) if c % 2 == 0
    }


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 300),
    d=st.integers(1, 6),
    missing=st.sampled_from([0.0, 0.05]),
    weighted=st.booleans(),
)
def test_the_fast_sums_of_every_feature_are_the_general_sums_bit_for_bit(
    seed, n, d, missing, weighted
):
    """Where h has one column and every feature is tested, a node's sums come from a
    faster pass (every_feature_sums): the general pass's numbers exactly where no row
    misses a value, NaN for a feature that misses one (the node then takes the general
    pass)."""
    from treekit_ctree.node_sums import every_feature_sums, feature_sums

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).round(2)
    X[rng.random(X.shape) < missing] = np.nan
    H = rng.normal(size=(n, 1))
    rows = np.sort(rng.choice(n, size=rng.integers(1, n + 1), replace=False)).astype(np.int64)
    weights = rng.integers(1, 4, rows.size).astype(float) if weighted else np.ones(rows.size)
    fast = every_feature_sums(X, rows, weights, H)
    general = feature_sums(X, rows, weights, H, np.arange(d, dtype=np.int64))
    missing_at_node = np.isnan(X[rows]).any(axis=0)
    assert np.array_equal(np.isnan(fast[1]), missing_at_node)
    for a, b in zip(fast, general, strict=True):
        np.testing.assert_array_equal(a[~missing_at_node], b[~missing_at_node])


def test_a_cforest_is_a_forest_of_ctrees_on_subsamples():
    """partykit's cforest perturbation: each tree a ctree on 0.632 of the rows drawn
    without replacement (``bootstrap=False, max_samples=0.632``): with every feature a
    candidate, tree i is the ctree TreeClassifier grows on the rows it drew (features,
    cut points, p-values), and the forest averages their class shares."""
    from treekit_core import ForestClassifier

    data = load_dataset("pima")
    X, y = data.X, data.y
    params = {**PARTYKIT, "splitter_params": {"mincriterion": 0.0, "testtype": "Univariate"}}
    forest = ForestClassifier(
        n_estimators=3,
        splitter="ctree",
        bootstrap=False,
        max_samples=0.632,
        max_features=None,
        random_state=0,
        **params,
    ).fit(X, y)
    for i, tree in enumerate(forest.estimators_):
        # the tree's draw: round(0.632 n) distinct rows from its seed's generator
        rng = np.random.default_rng(forest._tree_seeds[i])
        drawn = np.zeros(len(y), dtype=bool)
        drawn[rng.choice(len(y), size=round(0.632 * len(y)), replace=False)] = True
        alone = TreeClassifier(splitter="ctree", **params).fit(X[drawn], y[drawn]).tree_
        assert tree.n_nodes == alone.n_nodes
        np.testing.assert_array_equal(tree.feature, alone.feature)
        np.testing.assert_array_equal(tree.threshold, alone.threshold)
        np.testing.assert_array_equal(
            tree.node_fields["test_p_value"], alone.node_fields["test_p_value"]
        )
    shares = np.mean(
        [forest.composition_.evaluator.predict_distribution(t, X) for t in forest.estimators_],
        axis=0,
    )
    np.testing.assert_allclose(forest.predict_proba(X), shares, rtol=1e-12)


def test_the_command_line_grows_a_ctree_without_pruning_it(tmp_path, capsys):
    """treekit fit --splitter ctree: the splitter stops by its tests (stops_by_test), so
    the command line prunes none (it prunes other trees by cost complexity): the tree of
    TreeClassifier(splitter="ctree") on the file's rows, p-values and all."""
    from treekit_core.tools.cli import main

    data = load_dataset("pima")
    path = tmp_path / "pima.csv"
    names = list(data.feature_names)
    lines = [",".join([*names, "class"])]
    for x, label in zip(data.X, data.y, strict=True):
        lines.append(",".join([*(repr(float(v)) for v in x), str(label)]))
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "model.json"
    assert (
        main(["fit", str(path), "--target", "class", "--splitter", "ctree", "--out", str(out)]) == 0
    )
    assert "pruner none" in capsys.readouterr().out
    fitted = TreeClassifier.from_json(out.read_text())
    direct = TreeClassifier(splitter="ctree").fit(data.X, data.y)
    assert fitted.tree_.n_nodes == direct.tree_.n_nodes > 1
    np.testing.assert_array_equal(fitted.tree_.threshold, direct.tree_.threshold)
    np.testing.assert_allclose(
        fitted.tree_.node_fields["test_p_value"], direct.tree_.node_fields["test_p_value"]
    )


@pytest.mark.parametrize("family", ["regression", "survival"])
def test_the_regressor_s_and_survival_forests_grow_ctrees(family):
    """ForestRegressor and ForestSurvival take the ctree splitter too: every tree splits
    only where its test is significant (the chosen feature's adjusted p-value below
    1 - mincriterion = 0.05 at every split node) and keeps its tests."""
    from treekit_core import ForestRegressor, ForestSurvival

    if family == "regression":
        data = load_dataset("quakes")
        forest = ForestRegressor(n_estimators=3, splitter="ctree", random_state=0, **PARTYKIT)
        forest.fit(data.X, data.y)
    else:
        data = load_dataset("gbsg")
        forest = ForestSurvival(n_estimators=3, splitter="ctree", random_state=0, **PARTYKIT)
        forest.fit(data.X.astype(float), data.y)
    assert forest.predict(data.X.astype(float)).shape[0] == data.X.shape[0]
    for tree in forest.estimators_:
        split = np.flatnonzero(~tree.is_leaf)
        assert split.size
        chosen = tree.node_fields["test_p_value"][split, tree.feature[split]]
        assert (chosen < 0.05).all()

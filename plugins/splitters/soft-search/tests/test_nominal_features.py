"""Soft components on mixed nominal + numeric data: thresholds are softened, subset and
multi-way questions route hard, so nothing is mis-routed (the earlier code read a subset
question's placeholder threshold as a real one: accuracy 0.51 instead of 1.0)."""

import numpy as np
import pandas as pd
import pytest

from treekit_core import TreeClassifier

COMPOSITIONS = {
    "soft propagation": {"propagator": "soft"},
    "soft evaluation": {"evaluator": "soft"},
    "quinlan ramps": {"evaluator": "quinlan_ramp"},
    "soft search": {"splitter": "soft_search"},
    "soft search, c45 rules": {"splitter": "soft_search", "splitter_params": {"c45_rules": True}},
    "soft search + STP + SE": {
        "splitter": "soft_search",
        "propagator": "soft",
        "evaluator": "soft",
    },
    "udt": {"splitter": "udt", "propagator": "udt", "evaluator": "udt"},
}


def colour_decides(n=400, seed=0):
    """The issue's case: y decided by a 4-category pandas column, plus a numeric column."""
    rng = np.random.default_rng(seed)
    colour = pd.Categorical(rng.choice(["a", "b", "c", "d"], n))
    frame = pd.DataFrame({"colour": colour, "size": rng.uniform(1, 10, n)})
    y = np.isin(np.asarray(colour), ["a", "c"]).astype(int)
    return frame, y


#: Multi-way questions are an option of the exhaustive splitter (the default one).
CASES = [(name, "subset") for name in sorted(COMPOSITIONS)] + [
    (name, "multiway") for name in sorted(COMPOSITIONS) if "splitter" not in COMPOSITIONS[name]
]


@pytest.mark.parametrize("name,nominal_split", CASES)
def test_soft_components_reach_the_hard_trees_accuracy_on_nominal_data(name, nominal_split):
    X, y = colour_decides()
    hard = TreeClassifier(criterion="entropy", max_depth=3).fit(X, y)
    assert hard.score(X, y) == 1.0
    params = dict(COMPOSITIONS[name])
    if nominal_split == "multiway":
        params["splitter_params"] = {"nominal_split": "multiway"}
    model = TreeClassifier(criterion="entropy", max_depth=3, **params).fit(X, y)
    assert model.score(X, y) == 1.0
    c45_rules = params.get("splitter_params", {}).get("c45_rules", False)
    assert model.tree_.question_of(0).name == ("multiway" if c45_rules else nominal_split)
    loaded = TreeClassifier.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


def colour_and_size(n=400, seed=1):
    rng = np.random.default_rng(seed)
    colour = pd.Categorical(rng.choice(["a", "b", "c", "d"], n))
    size = rng.uniform(1, 10, n)
    frame = pd.DataFrame({"colour": colour, "size": size})
    y = (np.isin(np.asarray(colour), ["a", "c"]) ^ (size > 5)).astype(int)
    frame.loc[rng.random(n) < 0.05, "size"] = np.nan
    return frame, y


@pytest.mark.parametrize("evaluator", ["soft", "udt"])
def test_soft_evaluation_agrees_with_hard_routing_as_the_spread_vanishes(evaluator):
    X, y = colour_and_size()
    hard = TreeClassifier(criterion="entropy", max_depth=4).fit(X, y)
    names = {q.name for q in hard.tree_.questions}
    assert names == {"subset", "threshold"}
    params = {"u": 1e-9} if evaluator == "soft" else {"width": 1e-9}
    soft = TreeClassifier(
        criterion="entropy", max_depth=4, evaluator=evaluator, evaluator_params=params
    ).fit(X, y)
    np.testing.assert_allclose(soft.predict_proba(X), hard.predict_proba(X), atol=1e-9)


def test_soft_propagation_grows_the_hard_tree_as_the_spread_vanishes():
    X, y = colour_and_size()
    hard = TreeClassifier(criterion="entropy", max_depth=4).fit(X, y)
    soft = TreeClassifier(
        criterion="entropy", max_depth=4, propagator="soft", propagator_params={"u": 1e-12}
    ).fit(X, y)
    np.testing.assert_array_equal(soft.tree_.feature, hard.tree_.feature)
    np.testing.assert_allclose(soft.tree_.weight, hard.tree_.weight, rtol=1e-9)
    np.testing.assert_allclose(soft.predict_proba(X), hard.predict_proba(X), atol=1e-9)


def test_soft_evaluation_softens_the_threshold_and_not_the_subset():
    """A sample of category 'a' near the size threshold gets a mixed distribution; its
    category never leaks probability to the other side of the subset question."""
    X, y = colour_and_size()
    model = TreeClassifier(
        criterion="entropy", max_depth=4, evaluator="soft", evaluator_params={"u": 0.1}
    ).fit(X, y)
    hard = TreeClassifier(criterion="entropy", max_depth=4).fit(X, y)
    assert "subset" in {q.name for q in model.tree_.questions}
    near = pd.DataFrame({"colour": pd.Categorical(["a", "b"], categories=["a", "b", "c", "d"])})
    near["size"] = 5.0
    proba = model.predict_proba(near)
    assert (0.05 < proba[:, 1]).all() and (proba[:, 1] < 0.95).all()
    far = near.assign(size=[9.5, 9.5])  # 8 spreads from the threshold: the hard answer
    np.testing.assert_allclose(model.predict_proba(far), hard.predict_proba(far), atol=1e-6)
    np.testing.assert_array_equal(model.predict(far), [0, 1])


def test_udt_propagation_under_another_splitter_terminates():
    """Used to grow a chain forever (543k nodes after 60 s): children that barely shrink now
    end the branch. In a subprocess, so a regression fails instead of hanging."""
    import subprocess
    import sys

    code = (
        "from treekit_core import TreeClassifier\n"
        "from treekit_core.datasets import load_dataset\n"
        "d = load_dataset('haberman')\n"
        "m = TreeClassifier(propagator='udt').fit(d.X, d.y)\n"
        "print(m.get_n_leaves())\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert 1 <= int(done.stdout.split()[-1]) <= 306

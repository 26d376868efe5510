"""Issue 55: nominal features with log-rank trees and forests (they were refused). Subset
questions scored by the log-rank kernel, every subset up to EXACT_LIMIT categories and the
hazard order's prefixes beyond (by hand); multi-way questions by the K-sample log-rank
statistic, which is survival::survdiff's (fixtures made by
tests/fixtures/survdiff/make_fixtures.R with survival 3.5.3)."""

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from treekit_core import CompositionError, ForestSurvival, SurvivalTree, TreeRegressor
from treekit_core.builtins.logrank_nominal import EXACT_LIMIT, k_sample_logrank
from treekit_core.datasets import survival_array

FIXTURE = Path(__file__).parent / "fixtures" / "survdiff" / "survdiff.json"


@pytest.mark.parametrize("case", ["veteran_celltype", "veteran_trt", "lung_ecog", "pbc_stage"])
def test_the_k_sample_statistic_is_survdiffs(case):
    reference = json.loads(FIXTURE.read_text())
    assert reference["survival_version"] == "3.5.3"
    data = reference["cases"][case]
    _, groups = np.unique(np.asarray(data["group"]), return_inverse=True)
    statistic = k_sample_logrank(
        np.asarray(data["status"], dtype=float),
        np.asarray(data["time"], dtype=float),
        np.ones(len(groups)),
        groups,
        data["groups"],
    )
    assert statistic == pytest.approx(data["chisq"], rel=1e-10, abs=1e-12)


def two_sample_statistic(event, time, left):
    """|U| / sqrt(V) of the two groups, from the K-sample statistic (K = 2: its root)."""
    return np.sqrt(k_sample_logrank(event, time, np.ones(time.size), left.astype(int), 2))


def follow_up(n, n_categories, seed):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_categories, size=n)
    hazard = np.exp(rng.normal(size=n_categories))[codes]
    time = np.round(rng.exponential(1.0 / hazard), 2) + 0.01
    censor = rng.exponential(2.0, size=n)
    event = time <= censor
    return codes, event.astype(float), np.minimum(time, censor)


@pytest.mark.parametrize("n_categories", [4, EXACT_LIMIT + 3])
def test_the_root_subset_is_the_best_candidate_by_hand(n_categories):
    """A stump on one nominal column: its subset is the best of every subset (up to
    EXACT_LIMIT categories) or of the hazard order's prefixes (beyond), its improvement
    that subset's log-rank statistic."""
    codes, event, time = follow_up(600, n_categories, seed=n_categories)
    X = codes[:, None].astype(float)
    model = SurvivalTree(max_depth=1, categorical_features=[0], min_samples_leaf=1)
    model.fit(X, survival_array(event == 1, time))
    tree = model.tree_
    assert tree.questions[tree.question[0]].name == "subset"
    mask = int(tree.node_fields["category_mask"][0])
    chosen = {c for c in range(n_categories) if (mask >> c) & 1}
    if n_categories <= EXACT_LIMIT:
        candidates = [
            {0, *rest}
            for size in range(n_categories - 1)
            for rest in itertools.combinations(range(1, n_categories), size)
        ]
    else:
        deaths = np.bincount(codes, weights=event, minlength=n_categories)
        exposure = np.bincount(codes, weights=time, minlength=n_categories)
        order = np.argsort(deaths / exposure, kind="mergesort")
        candidates = [set(order[: i + 1].tolist()) for i in range(n_categories - 1)]
    scores = [two_sample_statistic(event, time, np.isin(codes, list(c))) for c in candidates]
    best = candidates[int(np.argmax(scores))]
    assert chosen in (best, set(range(n_categories)) - best)
    assert tree.node_fields["improvement"][0] == pytest.approx(max(scores), rel=1e-9)


def test_a_multiway_stump_asks_every_category_and_scores_the_k_sample_test():
    from scipy.stats import chi2, norm

    codes, event, time = follow_up(500, 4, seed=1)
    model = SurvivalTree(
        max_depth=1,
        categorical_features=[0],
        splitter_params={"nominal_split": "multiway"},
        min_samples_leaf=1,
    ).fit(codes[:, None].astype(float), survival_array(event == 1, time))
    tree = model.tree_
    assert tree.questions[tree.question[0]].name == "multiway" and tree.n_children[0] == 4
    statistic = k_sample_logrank(event, time, np.ones(time.size), codes, 4)
    expected = norm.isf(chi2.sf(statistic, 3) / 2)
    assert tree.node_fields["improvement"][0] == pytest.approx(expected, rel=1e-9)
    np.testing.assert_array_equal(model.apply(codes[:, None].astype(float)), codes + 1)


pd = pytest.importorskip("pandas")


def test_text_columns_with_log_rank_trees_forests_and_the_command_line(tmp_path, capsys):
    """The command line failed on ordinary clinical CSVs ('cannot search nominal feature
    2 with criterion logrank'); a tree, a forest and `treekit fit` take text columns."""
    from treekit_core.tools.cli import main

    codes, event, time = follow_up(300, 3, seed=2)
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "stage": pd.Categorical(np.array(["I", "II", "III"])[codes]),
            "age": rng.normal(60, 10, size=300).round(),
        }
    )
    y = survival_array(event == 1, time)
    tree = SurvivalTree(max_depth=2).fit(frame, y)
    assert "stage" in tree.export_text()
    forest = ForestSurvival(n_estimators=5, random_state=0).fit(frame, y)
    assert 0.5 < forest.score(frame, y) <= 1.0
    csv = tmp_path / "clinic.csv"
    frame.assign(time=time, status=event.astype(int)).to_csv(csv, index=False)
    argv = ["fit", str(csv), "--time", "time", "--event", "status", "--out", str(tmp_path / "m")]
    assert main(argv) == 0
    assert "fitted" in capsys.readouterr().out


def test_a_row_search_without_nominal_questions_refuses_naming_the_column():
    frame = pd.DataFrame({"ward": pd.Categorical(list("abc") * 20), "dose": np.arange(60.0)})
    with pytest.raises(CompositionError, match="nominal feature column 0 .'ward'. with criterion"):
        TreeRegressor(criterion="absolute_error").fit(frame, np.arange(60.0))

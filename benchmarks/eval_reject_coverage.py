"""How close cross-validated rejection's held-out coverage comes to the one asked (issue 57).

    python benchmarks/eval_reject_coverage.py [--splits 6] [--forest]

For random halves of bundled sets, a model with ``reject={"coverage": c, "cv": 5}`` is fitted
on one half; on the other, every threshold step of the model (its training scores, and
accept-none) has a held-out coverage, and the best is the one nearest c. Reported per way of
mapping the model's own coverage to the coverage of unseen rows: how often the chosen step
is the best one (trees: coarse steps) and the mean distance |held-out coverage - c| (forests:
fine steps). The ways: ``isotonic`` (treekit's: the isotonic fit of the folds' (own share,
held-out share) pairs), ``running_max`` (treekit before: their upper envelope), ``own`` (no
map: the model's own training coverage). Not a timing: an accuracy check that can be rerun.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import treekit_core.estimators.decisions as decisions
from treekit_core import ForestClassifier, TreeClassifier
from treekit_core.datasets import load_dataset
from treekit_core.engine.calibration import isotonic_points
from treekit_core.engine.rejection import accepted_fraction, nearest_step, score_steps

SETS = ("pima", "wdbc", "haberman", "wisconsin", "vote", "bupa", "balance_scale", "soybean")


def pairs(folds):
    """Every fold copy's (share of its own rows, share of its held-out rows) at its scores."""
    own_shares, held_out = [np.array([0.0, 1.0])], [np.array([0.0, 1.0])]
    for own, own_weight, test in folds.folds:
        values = np.unique(own)
        own_shares.append(accepted_fraction(own, values, own_weight))
        held_out.append(accepted_fraction(folds.scores[test], values, folds.weight[test]))
    return np.concatenate(own_shares), np.concatenate(held_out)


def maps(folds, own_coverage):
    x, y = pairs(folds)
    order = np.lexsort((y, x))
    points_x, points_y = isotonic_points(x, y, np.ones(x.size))
    return {
        "isotonic": np.interp(own_coverage, points_x, points_y),
        "running_max": np.interp(own_coverage, x[order], np.maximum.accumulate(y[order])),
        "own": own_coverage,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=6)
    parser.add_argument("--forest", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    seen = {}
    choose = decisions.ClassifierFamily._choose_reject_threshold

    def capture(self, rule, training_scores, out_of_fold):  # keep what the rule read
        seen["scores"], seen["folds"] = training_scores()[0], out_of_fold(rule.cv, rule.seed)
        return choose(self, rule, training_scores, out_of_fold)

    decisions.ClassifierFamily._choose_reject_threshold = capture
    tally, cases = {}, 0
    for name in SETS if not args.forest else SETS[:4]:
        data = load_dataset(name)
        categorical = data.categorical if data.categorical.any() else None
        for prune_rule in ("one_se", "min_error"):
            for wanted in (0.8, 0.9):
                for split in range(args.splits):
                    order = np.random.default_rng(1000 + split).permutation(data.y.size)
                    train, test = order[: data.y.size // 2], order[data.y.size // 2 :]
                    if args.forest:
                        model = ForestClassifier(n_estimators=30, min_samples_leaf=3)
                    else:
                        model = TreeClassifier(
                            pruner="cost_complexity", pruner_params={"rule": prune_rule}
                        )
                    model.set_params(
                        reject={"coverage": wanted, "cv": 5},
                        categorical_features=categorical,
                        random_state=split,
                    ).fit(data.X[train], data.y[train])
                    steps, own = score_steps(seen["scores"])
                    held_out_scores = model.decide(data.X[test]).confidence
                    reachable = accepted_fraction(held_out_scores, steps)
                    best = np.abs(reachable - wanted).min()
                    for way, expected in maps(seen["folds"], own).items():
                        got = reachable[nearest_step(expected, wanted, larger=own)]
                        hits, distance = tally.get(way, (0, 0.0))
                        tally[way] = (
                            hits + (abs(abs(got - wanted) - best) < 1e-12),
                            distance + abs(got - wanted),
                        )
                    cases += 1
    kind = "forests (30 trees)" if args.forest else "CV-pruned trees"
    print(f"{kind}: {cases} random halves, coverage 0.8 and 0.9 asked, cv=5")
    for way, (hits, distance) in tally.items():
        mean = distance / cases
        print(f"  {way:12s} nearest step {hits:4d}/{cases}   mean |held-out - asked| {mean:.4f}")


if __name__ == "__main__":
    main()

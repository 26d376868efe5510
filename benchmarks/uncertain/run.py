"""Nunes et al., Experiments 1 and 2: soft search (SS), soft training propagation (STP),
SS+STP, soft evaluation (SE), Quinlan's PLT and UDT against C4.5, under measurement noise.

    python benchmarks/uncertain/run.py --perms 10 --inner 10 --jobs 2 --save raw.json > results.md

Protocol (docs/algorithms.md section 4), with the deviations stated in the README: stratified 70/30
splits (``--perms`` permutations), Gaussian noise N(0, (n * mean_a)^2) per feature with
n in {0, 0.1, 0.2, 0.3}, added to the training data (Experiment 1) or to the test data
(Experiment 2). Each soft method's u is tuned from {0.05, 0.1, 0.2} by inner ``--inner``-fold
CV, the noise placed as the paper places it (inner training folds in Experiment 1, inner
validation folds in Experiment 2). C4.5 is ``splitter="c45", pruner="pessimistic"`` with
Laplace-corrected leaves and a confidence factor fixed per data set so that it averages
about 15 leaves; every method uses the same pruning. UDT (no tuning, w = 0.1, s = 100) runs
on ``--udt-perms`` permutations at the noise levels ``--udt-noise``: it is two orders of
magnitude slower. SS is the soft search with C4.5's rules (``c45_rules=True``: MinSplit,
log2(Tries)/|D| penalty, average-gain filter, gain ratio), as the paper's SS lives in C4.5.

``--jobs N`` runs the (experiment, data set, noise, permutation) tasks in N processes with
one numba thread each; ``--save F`` writes every finished task to F (JSON) and ``--resume``
skips tasks already in F, so an interrupted run continues; ``--report-only`` prints the
tables from F.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import markdown_table, stratified_folds, stratified_split, wilcoxon_p  # noqa: E402

from treekit_core import TreeClassifier  # noqa: E402
from treekit_core.datasets import load_dataset  # noqa: E402

DATA = ("pima", "bupa", "haberman", "wdbc")
NOISE = (0.0, 0.1, 0.2, 0.3)
U_GRID = (0.05, 0.1, 0.2)
CF_GRID = (0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
CF_SPLITS = 10  # 70% subsamples on which C4.5's leaf count is averaged to choose the CF
METHODS = ("C4.5", "SS", "STP", "SS+STP", "SE", "PLT", "UDT")
PAPER_VI_VII = {  # leaves C4.5/SS/STP and accuracy C4.5/SS/STP, training noise 0 | 0.2
    "pima": ("15.2/2.9/5.0 | 17.5/13.5/4.0", "74.3/74.5/75.0 | 71.8/72.7/73.3"),
    "bupa": ("15.2/10.7/9.1 | 16.9/10.1/6.4", "66.1/66.9/64.6 | 60.6/64.1/62.1"),
    "haberman": ("15.1/10.0/2.0 | 18.4/10.3/5.6", "71.4/73.6/73.0 | 69.9/73.3/73.9"),
    "wdbc": ("10.0/12.8/11.6 | 13.6/14.9/17.4", "93.2/94.1/94.0 | 92.3/92.4/93.3"),
}


def model(method, cf, u):
    base = dict(
        criterion="entropy",
        pruner="pessimistic",
        pruner_params={"confidence_factor": cf},
        labeler_params={"laplace": True},
    )
    if method == "C4.5":
        return TreeClassifier(splitter="c45", **base)
    if method == "SS":
        return TreeClassifier(
            splitter="soft_search", splitter_params={"u": u, "c45_rules": True}, **base
        )
    if method == "STP":
        return TreeClassifier(splitter="c45", propagator="soft", propagator_params={"u": u}, **base)
    if method == "SS+STP":
        return TreeClassifier(
            splitter="soft_search",
            splitter_params={"u": u, "c45_rules": True},
            propagator="soft",
            propagator_params={"u": u},
            **base,
        )
    if method == "SE":
        return TreeClassifier(splitter="c45", evaluator="soft", evaluator_params={"u": u}, **base)
    if method == "PLT":
        return TreeClassifier(splitter="c45", evaluator="quinlan_ramp", **base)
    if method == "UDT":
        return TreeClassifier(splitter="udt", propagator="udt", evaluator="udt", **base)
    raise ValueError(method)


def add_noise(X, level, means, rng):
    if level == 0:
        return X
    return X + rng.normal(0.0, 1.0, size=X.shape) * (level * np.abs(means))


def confidence_factor(X, y):
    """The CF whose C4.5 tree averages closest to 15 leaves on CF_SPLITS stratified 70%
    subsamples (seeds apart from the permutations'; leaf counts vary a lot between
    subsamples, so a few are not enough)."""
    leaves = {}
    for cf in CF_GRID:
        counts = []
        for seed in range(CF_SPLITS):
            train, _ = stratified_split(y, 0.3, 100 + seed)
            counts.append(model("C4.5", cf, 0).fit(X[train], y[train]).get_n_leaves())
        leaves[cf] = np.mean(counts)
    return min(CF_GRID, key=lambda cf: (abs(leaves[cf] - 15), -cf)), leaves


def tune_u(method, cf, X, y, level, experiment, inner, seed):
    if method in ("C4.5", "PLT", "UDT"):
        return None
    means = X.mean(axis=0)
    folds = stratified_folds(y, inner, seed)
    best, best_score = U_GRID[0], -1.0
    for u in U_GRID:
        correct = 0
        for k in range(inner):
            tr, va = folds != k, folds == k
            rng = np.random.default_rng(seed * 1000 + k)
            Xtr, Xva = X[tr], X[va]
            if experiment == 1:
                Xtr = add_noise(Xtr, level, means, rng)
            else:
                Xva = add_noise(Xva, level, means, rng)
            correct += (model(method, cf, u).fit(Xtr, y[tr]).predict(Xva) == y[va]).sum()
        if correct > best_score:
            best, best_score = u, correct
    return best


def run_task(experiment, name, level, perm, cf, inner, with_udt):
    """One permutation of one experiment at one noise level: every method fitted once, each
    soft method after tuning its u. Returns [(method, leaves, accuracy %, fit s, u)]."""
    data = load_dataset(name)
    X, y = data.X, data.y
    train, test = stratified_split(y, 0.3, perm)
    rng = np.random.default_rng(10_000 * experiment + 100 * perm + int(level * 10))
    means = X[train].mean(axis=0)
    Xtr, Xte = X[train], X[test]
    if experiment == 1:
        Xtr = add_noise(Xtr, level, means, rng)
    else:
        Xte = add_noise(Xte, level, means, rng)
    rows = []
    for method in METHODS:
        if method == "UDT" and not with_udt:
            continue
        u = tune_u(method, cf, X[train], y[train], level, experiment, inner, perm)
        start = time.perf_counter()
        fitted = model(method, cf, u).fit(Xtr, y[train])
        seconds = time.perf_counter() - start
        accuracy = float((fitted.predict(Xte) == y[test]).mean())
        rows.append((method, int(fitted.get_n_leaves()), 100 * accuracy, seconds, u))
    return rows


def _warm_up():
    """Load every method's compiled kernels once, so that no fit time includes numba's
    first-call loading from its cache."""
    data = load_dataset("haberman")
    for method in METHODS:
        model(method, 0.25, 0.1).fit(data.X[:60], data.y[:60]).predict(data.X[:10])


def _worker_start():
    os.environ["NUMBA_NUM_THREADS"] = "1"
    _warm_up()


def run(args, results, save):
    cfs = {}
    for name in DATA:
        data = load_dataset(name)
        cfs[name], leaves_by_cf = confidence_factor(data.X, data.y)
        print(
            f"{name}: CF {cfs[name]} (C4.5 leaves by CF "
            f"{ {cf: round(float(v), 1) for cf, v in leaves_by_cf.items()} })",
            file=sys.stderr,
            flush=True,
        )
        results["cf"][name] = cfs[name]
    tasks = []  # permutation first: an interrupted run leaves whole permutations behind
    for perm in range(args.perms):
        for experiment in (1, 2):
            for name in DATA:
                for level in NOISE:
                    key = f"{experiment}|{name}|{level}|{perm}"
                    if key in results["tasks"]:
                        continue
                    with_udt = perm < args.udt_perms and level in args.udt_noise
                    tasks.append(
                        (key, (experiment, name, level, perm, cfs[name], args.inner, with_udt))
                    )
    print(f"{len(tasks)} tasks to run", file=sys.stderr, flush=True)

    def record(key, rows):
        results["tasks"][key] = rows
        if save:
            Path(save).write_text(json.dumps(results))
        print(f"done {key} ({len(results['tasks'])})", file=sys.stderr, flush=True)

    if args.jobs <= 1:
        _warm_up()
        for key, task in tasks:
            record(key, run_task(*task))
        return
    import multiprocessing

    os.environ["NUMBA_NUM_THREADS"] = "1"  # inherited by the spawned workers: one core each
    with ProcessPoolExecutor(
        args.jobs, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_start
    ) as pool:
        futures = {pool.submit(run_task, *task): key for key, task in tasks}
        for future in as_completed(futures):
            record(futures[future], future.result())


def collect(results):
    """{(experiment, name, level, method): [(perm, leaves, accuracy, seconds, u)]}"""
    table = {}
    for key, rows in results["tasks"].items():
        experiment, name, level, perm = key.split("|")
        for method, leaves, accuracy, seconds, u in rows:
            table.setdefault((int(experiment), name, float(level), method), []).append(
                (int(perm), leaves, accuracy, seconds, u)
            )
    return table


def report(results, experiment):
    print(
        f"\n## Experiment {experiment}: noise added to the "
        f"{'training' if experiment == 1 else 'test'} data\n"
    )
    for level in NOISE:
        rows = []
        for name in DATA:
            c45_runs = results[(experiment, name, level, "C4.5")]
            base = {p: (leaves, a) for p, leaves, a, s, u in c45_runs}
            for method in METHODS:
                runs = results.get((experiment, name, level, method))
                if not runs:
                    continue
                leaves = np.mean([r[1] for r in runs])
                accuracy = np.mean([r[2] for r in runs])
                seconds = np.mean([r[3] for r in runs])
                p = (
                    wilcoxon_p([r[2] for r in runs], [base[r[0]][1] for r in runs])
                    if method != "C4.5"
                    else float("nan")
                )
                p_leaves = (
                    wilcoxon_p([r[1] for r in runs], [base[r[0]][0] for r in runs])
                    if method not in ("C4.5", "SE", "PLT")
                    else float("nan")
                )
                us = [r[4] for r in runs if r[4] is not None]
                rows.append(
                    [
                        name,
                        method,
                        len(runs),
                        leaves,
                        "" if np.isnan(p_leaves) else f"{p_leaves:.3f}",
                        accuracy,
                        "" if np.isnan(p) else f"{p:.3f}",
                        seconds,
                        f"{np.median(us):g}" if us else "",
                    ]
                )
        print(f"### noise n = {level}\n")
        print(
            markdown_table(
                [
                    "data",
                    "method",
                    "runs",
                    "leaves",
                    "p (leaves)",
                    "accuracy %",
                    "p (accuracy)",
                    "fit s",
                    "median u",
                ],
                rows,
            )
        )
        print()
    print(
        "### Averages over the four data sets, difference to C4.5 (paper Tables IV/V give ranges "
        "over n)\n"
    )
    print("Wilcoxon signed-rank p over all pooled (data set, permutation) pairs in brackets.\n")
    rows = []
    for method in METHODS[1:]:
        row = [method]
        for level in NOISE:
            d_leaves, d_acc = [], []
            for name in DATA:
                runs = results.get((experiment, name, level, method))
                if not runs:
                    continue
                base = {r[0]: r for r in results[(experiment, name, level, "C4.5")]}
                d_leaves += [r[1] - base[r[0]][1] for r in runs]
                d_acc += [r[2] - base[r[0]][2] for r in runs]
            if not d_leaves:
                row.append("")
                continue
            p_leaves = (
                wilcoxon_p(d_leaves, np.zeros(len(d_leaves)))
                if method not in ("SE", "PLT")
                else float("nan")
            )
            p_acc = wilcoxon_p(d_acc, np.zeros(len(d_acc)))
            row.append(
                f"{np.mean(d_leaves):+.1f} / {np.mean(d_acc):+.1f} (p {p_leaves:.2g} / {p_acc:.2g})"
                if not np.isnan(p_leaves)
                else f"0 / {np.mean(d_acc):+.1f} (p - / {p_acc:.2g})"
            )
        rows.append(row)
    print(markdown_table(["method"] + [f"n={level}: leaves / accuracy" for level in NOISE], rows))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--perms", type=int, default=10)
    parser.add_argument("--inner", type=int, default=10)
    parser.add_argument("--udt-perms", type=int, default=10)
    parser.add_argument("--udt-noise", type=float, nargs="*", default=list(NOISE))
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--save", help="JSON file that receives every finished task")
    parser.add_argument("--resume", action="store_true", help="skip the tasks already in --save")
    parser.add_argument("--report-only", action="store_true", help="print the tables of --save")
    args = parser.parse_args()
    results = {"cf": {}, "tasks": {}, "seconds": 0.0}
    if (args.resume or args.report_only) and args.save and Path(args.save).exists():
        results = json.loads(Path(args.save).read_text())
    if not args.report_only:
        settings = results.setdefault("settings", {"inner": args.inner, "jobs": args.jobs})
        if settings["inner"] != args.inner:
            parser.error(
                f"--inner {args.inner} differs from the {settings['inner']} of the saved run in "
                f"{args.save}"
            )
        start = time.time()
        run(args, results, args.save)
        results["seconds"] = results.get("seconds", 0.0) + time.time() - start
        if args.save:
            Path(args.save).write_text(json.dumps(results))
    table = collect(results)
    perms = max(len(v) for (e, n, lv, m), v in table.items() if m == "C4.5")
    udt = max((len(v) for (e, n, lv, m), v in table.items() if m == "UDT"), default=0)
    print("# Uncertain measurements: results\n")
    settings = results.get("settings", {"inner": args.inner, "jobs": args.jobs})
    print(
        f"{perms} stratified 70/30 permutations, u tuned by {settings['inner']}-fold inner CV "
        f"from {U_GRID}; "
        f"UDT on {udt} permutations; total {results['seconds']:.0f} s with {settings['jobs']} "
        "process(es).\n"
    )
    print(
        "Confidence factor per data set (C4.5 ~15 leaves): "
        + ", ".join(f"{name} {results['cf'][name]}" for name in DATA)
        + "\n"
    )
    print("Paper, Tables VI/VII (Experiment 1, training noise 0 | 0.2):\n")
    print(
        markdown_table(
            [
                "data",
                "leaves C4.5/SS/STP, n = 0",
                "n = 0.2",
                "accuracy C4.5/SS/STP, n = 0",
                "n = 0.2",
            ],
            [
                [name, *PAPER_VI_VII[name][0].split(" | "), *PAPER_VI_VII[name][1].split(" | ")]
                for name in DATA
            ],
        )
    )
    print("\nOurs beside the paper (Experiment 1, training noise 0 | 0.2; C4.5/SS/STP):\n")
    rows = []
    for name in DATA:
        ours = []
        for column in (1, 2):  # leaves, accuracy
            for level in (0.0, 0.2):
                ours.append(
                    "/".join(
                        f"{np.mean([r[column] for r in table[(1, name, level, m)]]):.1f}"
                        for m in ("C4.5", "SS", "STP")
                    )
                )
        paper_leaves, paper_accuracy = (part.split(" | ") for part in PAPER_VI_VII[name])
        rows.append(
            [
                name,
                ours[0],
                paper_leaves[0],
                ours[1],
                paper_leaves[1],
                ours[2],
                paper_accuracy[0],
                ours[3],
                paper_accuracy[1],
            ]
        )
    print(
        markdown_table(
            [
                "data",
                "leaves n=0 ours",
                "paper",
                "leaves n=0.2 ours",
                "paper",
                "accuracy n=0 ours",
                "paper",
                "accuracy n=0.2 ours",
                "paper",
            ],
            rows,
        )
    )
    for experiment in (1, 2):
        report(table, experiment)


if __name__ == "__main__":
    main()

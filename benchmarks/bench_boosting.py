"""Gradient boosting (issue 60): treekit's BoostingRegressor / BoostingClassifier beside
LightGBM and scikit-learn's HistGradientBoosting, side by side in one run, each fit in a
fresh process; Cox boosting beside scikit-survival; a loss written in plain Python beside
the built-in loss it re-implements.

    python benchmarks/bench_boosting.py [--n 1000000] [--threads 1 2] [--repeats 1]
        [--only large real cox python] [--cv-repeats 10] [--json FILE]
        [--tasks regression classification] [--criterion default|newton]

Sections:

* ``large``: ``--n`` x 20 synthetic rows (regression: a sum of 10 features, a sine and
  noise; classification: make_classification, 10 informative), 100 rounds, learning rate
  0.1, 31 leaves grown leaf-wise (treekit ``max_leaf_nodes=31, max_depth=None``; LightGBM
  ``num_leaves=31``; HistGradientBoosting ``max_leaf_nodes=31``), 255 bins, at least 20
  rows a leaf, no bagging, no early stopping; 100 000 more rows held out: fit wall and CPU
  time, peak memory (max RSS, the data included), held-out R^2 / accuracy; per thread count.
* ``real``: the same settings on the bundled sets (quakes' magnitude, pima, wdbc), 5-fold
  cross-validated R^2 / accuracy (``--cv-repeats`` repeats of it, shuffled by seeds 0, 1,
  ...: one 5-fold split of pima moves its accuracy by a percent), one thread, and
  treekit's gaps to LightGBM with their standard errors over the folds; treekit with its
  default criterion (the Newton gain for the log loss on the histogram splitter, squared
  error of the negative gradient for the squared loss) and with the Newton gain for both
  (``treekit_newton``, LightGBM's split rule).
* ``cox``: 20 000 x 20 censored rows, 100 rounds of depth-3 trees: treekit's
  BoostingSurvival (histogram splitter) beside scikit-survival's
  GradientBoostingSurvivalAnalysis(loss="coxph"): fit wall, held-out concordance.
* ``python``: the squared error as an ElementwiseLoss (plain Python row functions) beside
  the built-in ``squared_error``, 200 000 x 20, 100 rounds, depth 6.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from common import machine_line, run_in_fresh_process  # noqa: E402

SETTINGS = dict(rounds=100, learning_rate=0.1, leaves=31, bins=255, min_leaf=20)

LARGE_WORKER = textwrap.dedent("""
    import json, os, resource, sys, time
    import numpy as np
    library, task, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rounds, rate, leaves, bins, min_leaf = map(float, sys.argv[4:9])
    rounds, leaves, bins, min_leaf = int(rounds), int(leaves), int(bins), int(min_leaf)
    criterion = None if sys.argv[9] == "default" else sys.argv[9]
    threads = int(os.environ.get("OMP_NUM_THREADS", "0")) or None
    held = 100_000
    if task == "classification":
        from sklearn.datasets import make_classification
        X, y = make_classification(n_samples=n + held, n_features=20, n_informative=10,
                                   random_state=0)
    else:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(n + held, 20))
        y = X[:, :10].sum(axis=1) + np.sin(3 * X[:, 10]) + rng.normal(0, 1, n + held)
    X_test, y_test, X, y = X[n:], y[n:], X[:n], y[:n]
    classify = task == "classification"
    if library == "lightgbm":
        import lightgbm
        make = lightgbm.LGBMClassifier if classify else lightgbm.LGBMRegressor
        model = lambda r: make(n_estimators=r, learning_rate=rate, num_leaves=leaves,
                               max_bin=bins, min_child_samples=min_leaf, subsample=1.0,
                               colsample_bytree=1.0, verbose=-1, n_jobs=threads)
    elif library == "sklearn":
        from sklearn.ensemble import (HistGradientBoostingClassifier,
                                      HistGradientBoostingRegressor)
        make = HistGradientBoostingClassifier if classify else HistGradientBoostingRegressor
        model = lambda r: make(max_iter=r, learning_rate=rate, max_leaf_nodes=leaves,
                               max_bins=bins, min_samples_leaf=min_leaf,
                               early_stopping=False, random_state=0)
    else:
        from treekit_core import BoostingClassifier, BoostingRegressor
        make = BoostingClassifier if classify else BoostingRegressor
        model = lambda r: make(n_estimators=r, learning_rate=rate, max_leaf_nodes=leaves,
                               max_depth=None, splitter="histogram",
                               splitter_params={"max_bins": bins}, min_samples_leaf=min_leaf,
                               criterion=criterion)
    model(2).fit(X[:2000], y[:2000])  # warm-up: kernels from the cache
    wall, cpu = time.perf_counter(), time.process_time()
    fitted = model(rounds).fit(X, y)
    fit_wall, fit_cpu = time.perf_counter() - wall, time.process_time() - cpu
    predicted = fitted.predict(X_test)
    if classify:
        score = float(np.mean(predicted == y_test))
    else:
        score = float(1 - np.sum((predicted - y_test) ** 2) / np.sum((y_test - y_test.mean()) ** 2))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"fit_wall": fit_wall, "fit_cpu": fit_cpu, "peak_mb": peak, "score": score}))
""")

COX_WORKER = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    library, n = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n + 5000, 20))
    risk = X[:, 0] + 0.5 * X[:, 1] - 0.5 * X[:, 2] ** 2
    time_ = rng.exponential(np.exp(-risk))
    censor = rng.exponential(1.5, n + 5000)
    event = time_ <= censor
    observed = np.minimum(time_, censor)
    from sksurv.util import Surv
    y = Surv.from_arrays(event, observed)
    X_test, y_test, X, y = X[n:], y[n:], X[:n], y[:n]
    settings = dict(n_estimators=100, learning_rate=0.1, max_depth=3)
    if library == "sksurv":
        from sksurv.ensemble import GradientBoostingSurvivalAnalysis
        model = lambda: GradientBoostingSurvivalAnalysis(loss="coxph", random_state=0, **settings)
    else:
        from treekit_core import BoostingSurvival
        model = lambda: BoostingSurvival(splitter="histogram", **settings)
        BoostingSurvival(n_estimators=2).fit(X[:500], y[:500])
    wall = time.perf_counter()
    fitted = model().fit(X, y)
    fit_wall = time.perf_counter() - wall
    from treekit_core import concordance_index
    score = concordance_index(y_test["event"], y_test["time"], fitted.predict(X_test))
    print(json.dumps({"fit_wall": fit_wall, "score": float(score)}))
""")

PYTHON_WORKER = textwrap.dedent("""
    import json, sys, time
    import attrs
    import numpy as np
    from typing import ClassVar
    from treekit_core import BoostingRegressor, ElementwiseLoss, hookimpl, registered

    def row_gradient(y, raw, params):
        return raw - y

    def row_hessian(y, raw, params):
        return 1.0

    def row_loss(y, raw, params):
        return (y - raw) ** 2

    @attrs.define(frozen=True)
    class PlainSquaredError(ElementwiseLoss):
        name: ClassVar[str] = "plain_squared_error"
        row_gradient = staticmethod(row_gradient)
        row_hessian = staticmethod(row_hessian)
        row_loss = staticmethod(row_loss)

        def initial_raw(self, y, weight, n_classes):
            return np.array([np.average(y, weights=weight)])

        def link(self, raw):
            return raw[:, 0]

    class Plugin:
        @hookimpl
        def treekit_losses(self):
            return [PlainSquaredError]

    loss, n = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 20))
    y = X[:, :10].sum(axis=1) + rng.normal(0, 1, n)
    with registered(Plugin(), name="bench-plain-loss"):
        make = lambda r: BoostingRegressor(loss=loss, n_estimators=r, max_depth=6)
        make(2).fit(X[:2000], y[:2000])
        wall = time.perf_counter()
        model = make(100).fit(X, y)
        fit_wall = time.perf_counter() - wall
    print(json.dumps({"fit_wall": fit_wall, "score": float(model.train_score_[-1])}))
""")


def _median_runs(worker, args, threads, repeats):
    runs = [run_in_fresh_process(worker, args, ROOT, threads) for _ in range(repeats)]
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def large_section(n, thread_counts, repeats, tasks=("regression", "classification"),
                  criterion="default"):  # fmt: skip
    libraries = ["treekit", "lightgbm", "sklearn"]
    results = []
    for task in tasks:
        for threads in thread_counts:
            row = {
                library: _median_runs(
                    LARGE_WORKER,
                    [library, task, n, *SETTINGS.values(), criterion],
                    threads,
                    repeats,
                )
                for library in libraries
            }
            for library, r in row.items():
                ratio = r["fit_wall"] / row["lightgbm"]["fit_wall"]
                print(
                    f"{task:14s} n={n} threads={threads} {library:8s}: fit {r['fit_wall']:7.2f} s "
                    f"wall {r['fit_cpu']:7.2f} s CPU (x{ratio:.2f} LightGBM) | peak "
                    f"{r['peak_mb']:6.0f} MB (x{r['peak_mb'] / row['lightgbm']['peak_mb']:.2f}) | "
                    f"held-out {'accuracy' if task == 'classification' else 'R^2'} "
                    f"{r['score']:.4f}",
                    flush=True,
                )
            results.append({"task": task, "n": n, "threads": threads, **row})
    return results


def real_section(cv_repeats=1):
    """5-fold cross-validated scores on the bundled sets (``cv_repeats`` times, shuffled by
    seeds 0, 1, ...), one thread, in this process."""
    import lightgbm
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from sklearn.model_selection import KFold, StratifiedKFold

    from treekit_core import BoostingClassifier, BoostingRegressor
    from treekit_core.datasets import load_dataset

    rate, leaves, bins, min_leaf = (
        SETTINGS[k] for k in ("learning_rate", "leaves", "bins", "min_leaf")
    )
    rows = []
    for name, task in (
        ("quakes", "regression"),
        ("pima", "classification"),
        ("wdbc", "classification"),
    ):
        data = load_dataset(name)
        X, y = data.X, np.asarray(data.y)
        classify = task == "classification"
        if classify:
            y = np.unique(y, return_inverse=True)[1]
        makers = {
            # criterion None: treekit's default (the Newton gain for the log loss on the
            # histogram splitter, squared error for the squared loss); "treekit_newton":
            # the Newton gain for both (LightGBM's rule)
            **{
                label: lambda classify=classify, criterion=criterion: (
                    BoostingClassifier if classify else BoostingRegressor
                )(
                    n_estimators=100,
                    learning_rate=rate,
                    max_leaf_nodes=leaves,
                    max_depth=None,
                    splitter="histogram",
                    splitter_params={"max_bins": bins},
                    min_samples_leaf=min_leaf,
                    criterion=criterion,
                    n_threads=1,
                )
                for label, criterion in (("treekit", None), ("treekit_newton", "newton"))
            },
            "lightgbm": lambda classify=classify: (
                lightgbm.LGBMClassifier if classify else lightgbm.LGBMRegressor
            )(
                n_estimators=100,
                learning_rate=rate,
                num_leaves=leaves,
                max_bin=bins,
                min_child_samples=min_leaf,
                verbose=-1,
                n_jobs=1,
            ),
            "sklearn": lambda classify=classify: (
                HistGradientBoostingClassifier if classify else HistGradientBoostingRegressor
            )(
                max_iter=100,
                learning_rate=rate,
                max_leaf_nodes=leaves,
                max_bins=bins,
                min_samples_leaf=min_leaf,
                early_stopping=False,
            ),
        }
        splits = [
            split
            for seed in range(cv_repeats)
            for split in (StratifiedKFold if classify else KFold)(
                5, shuffle=True, random_state=seed
            ).split(X, y)
        ]
        scores, per_fold = {}, {}
        for library, make in makers.items():
            fold_scores = per_fold[library] = []
            for train, test in splits:
                model = make().fit(X[train], y[train])
                predicted = model.predict(X[test])
                if classify:
                    fold_scores.append(float(np.mean(predicted == y[test])))
                else:
                    residual = np.sum((predicted - y[test]) ** 2)
                    fold_scores.append(
                        float(1 - residual / np.sum((y[test] - y[test].mean()) ** 2))
                    )
            scores[library] = float(np.mean(fold_scores))
        # treekit's gaps to LightGBM, fold by fold on the same folds: their means and
        # standard errors (the folds of one repeat share rows, so the errors are rough)
        gaps = {}
        for label in ("treekit", "treekit_newton"):
            gap = np.subtract(per_fold[label], per_fold["lightgbm"])
            error = float(gap.std(ddof=1) / np.sqrt(gap.size)) if gap.size > 1 else float("nan")
            gaps[f"{label}_gap"], gaps[f"{label}_gap_se"] = float(gap.mean()), error
        print(
            f"{name:8s} ({task}): "
            + ", ".join(f"{k} {v:.4f}" for k, v in scores.items())
            + "; minus lightgbm: "
            + ", ".join(
                f"{label} {gaps[label + '_gap']:+.4f} (s.e. {gaps[label + '_gap_se']:.4f})"
                for label in ("treekit", "treekit_newton")
            )
            + f" over {len(splits)} folds",
            flush=True,
        )
        rows.append({"data": name, "task": task, **scores, **gaps})
    return rows


def cox_section(repeats):
    row = {
        lib: _median_runs(COX_WORKER, [lib, 20_000], None, repeats) for lib in ("treekit", "sksurv")
    }
    ratio = row["sksurv"]["fit_wall"] / row["treekit"]["fit_wall"]
    for lib, r in row.items():
        print(
            f"cox 20000 x 20 {lib:8s}: fit {r['fit_wall']:7.2f} s | held-out concordance "
            f"{r['score']:.4f}",
            flush=True,
        )
    print(f"cox: treekit {ratio:.1f}x faster than scikit-survival", flush=True)
    return row


def python_section(repeats):
    row = {
        loss: _median_runs(PYTHON_WORKER, [loss, 200_000], None, repeats)
        for loss in ("squared_error", "plain_squared_error")
    }
    ratio = row["plain_squared_error"]["fit_wall"] / row["squared_error"]["fit_wall"]
    for loss, r in row.items():
        print(
            f"loss {loss:20s}: fit {r['fit_wall']:6.2f} s (final training loss {r['score']:.6f})",
            flush=True,
        )
    print(f"plain-Python loss / built-in: x{ratio:.2f}", flush=True)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--only", nargs="*", default=["large", "real", "cox", "python"])
    parser.add_argument("--cv-repeats", type=int, default=10)
    parser.add_argument("--tasks", nargs="*", default=["regression", "classification"])
    parser.add_argument("--criterion", default="default", help="treekit's, large section")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    print(machine_line(ROOT, "sklearn", "lightgbm", "sksurv"), flush=True)
    results = {}
    if "large" in args.only:
        results["large"] = large_section(
            args.n, args.threads, args.repeats, args.tasks, args.criterion
        )
    if "real" in args.only:
        results["real"] = real_section(args.cv_repeats)
    if "cox" in args.only:
        results["cox"] = cox_section(args.repeats)
    if "python" in args.only:
        results["python"] = python_section(args.repeats)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()

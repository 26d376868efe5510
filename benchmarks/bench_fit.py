"""Fit and predict speed: treekit against scikit-learn, side by side in one run.

    python benchmarks/bench_fit.py                       # n in 10k, 100k, 1M, satimage
    python benchmarks/bench_fit.py --sizes 10000 100000 --repeats 3 --json out.json
    python benchmarks/bench_fit.py --only busy           # one section

Every measurement runs in a fresh process (so peak memory is the process's own) after a
warm-up fit that loads the kernels from the cache; the runs of the contestants alternate
(treekit one thread, treekit all threads, scikit-learn, again ...) so drift hits them all,
and medians are reported. Both libraries fit the same data (make_classification, 20
features, 10 informative, seeded; and satimage) with gini, every feature at every node,
grown out. Reported:

* ``fit``: wall and CPU seconds of fit (CPU = user + system time of all the process's
  threads), peak resident memory of the process, predict wall time on the training rows
  (the first call after fit, and the median of five more calls);
  treekit with ``NUMBA_NUM_THREADS=1`` and with every thread, scikit-learn (one thread);
* ``criterion``: a criterion written as plain Python in this file against built-in gini,
  and the kernels specialised per criterion against the function-value kernels
  (``TREEKIT_SPECIALISE=0``), n = 100 000, one thread;
* ``busy``: the same fits while a CPU-bound process (a bounded Python busy loop that this
  script starts and stops) runs beside them, and a 50-tree forest on 4000 x 20;
* ``first``: a fresh process that loads the arrays from a file (so neither library finds
  the other's dependencies imported), imports the estimator, fits once and fits again, no
  warm-up: the import, the first fit and the steady fit, wall and CPU, and import + first
  fit, which is what a script pays (scikit-learn loads its compiled modules at import;
  treekit loads numba and its kernels at the first fit), one thread and all threads;
* ``cold``: the first ``treekit demo`` and the first fit at 100 000 rows with an empty
  numba cache and kernel directory (everything compiled for this machine), and the first
  fit with a warm cache.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from common import (  # noqa: E402
    SPAN_CLOCK,
    machine_line,
    median_rows,
    one_core_busy,
    run_in_fresh_process,
    saved_data,
)

FIT_WORKER = textwrap.dedent("""
    import json, resource, sys, time
    import numpy as np
    library, data, n, workload = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    if data == "satimage":
        from treekit_core.datasets import load_dataset
        bundle = load_dataset("satimage"); X, y = bundle.X, bundle.y
    else:
        from sklearn.datasets import make_classification
        X, y = make_classification(n_samples=n, n_features=20, n_informative=10,
                                   random_state=0)
    if library == "sklearn":
        from sklearn.tree import DecisionTreeClassifier
        make = lambda: DecisionTreeClassifier(criterion="gini", random_state=0)
        leaves = lambda model: int(model.get_n_leaves())
    else:
        from treekit_core import TreeClassifier
        sys.path.insert(0, sys.argv[5])
        import bench_fit
        criterion = {"treekit": "gini", "python_gini": bench_fit.python_gini_criterion(),
                     "python_asymmetric": bench_fit.asymmetric_criterion()}[library]
        make = lambda: TreeClassifier(criterion=criterion)
        leaves = lambda model: model.get_n_leaves()
    if workload == "forest":
        if library == "sklearn":
            from sklearn.ensemble import RandomForestClassifier
            make = lambda: RandomForestClassifier(n_estimators=50, random_state=0)
        else:
            from treekit_core import ForestClassifier
            make = lambda: ForestClassifier(n_estimators=50, random_state=0)
        leaves = lambda model: 0
    # warm-up: kernels from the cache, for X's memory order (a slice of a Fortran-ordered
    # X is neither C- nor Fortran-contiguous, and would warm another kernel)
    order = "F" if X.flags.f_contiguous and not X.flags.c_contiguous else "C"
    make().fit(X[:500], y[:500]).predict(np.array(X[:10], order=order))
    wall, cpu = time.perf_counter(), time.process_time()
    model = make().fit(X, y)
    fit_wall, fit_cpu = time.perf_counter() - wall, time.process_time() - cpu
    wall, cpu = time.perf_counter(), time.process_time()
    model.predict(X)
    predict_wall, predict_cpu = time.perf_counter() - wall, time.process_time() - cpu
    again = []  # the same call repeated: a single call of a millisecond is mostly noise
    for _ in range(5):
        wall = time.perf_counter()
        model.predict(X)
        again.append(time.perf_counter() - wall)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"fit_wall": fit_wall, "fit_cpu": fit_cpu, "predict_wall": predict_wall,
                      "predict_cpu": predict_cpu, "predict_again": sorted(again)[2],
                      "peak_mb": peak, "leaves": leaves(model)}))
""")


FIRST_WORKER = SPAN_CLOCK + textwrap.dedent("""
    library, data_file, labels_file = sys.argv[1], sys.argv[2], sys.argv[3]
    X, y = np.load(data_file), np.load(labels_file)
    start = clock()
    if library == "sklearn":
        from sklearn.tree import DecisionTreeClassifier
        make = lambda: DecisionTreeClassifier(criterion="gini", random_state=0)
    else:
        from treekit_core import TreeClassifier
        make = lambda: TreeClassifier(criterion="gini")
    imported = span("import", start)
    make().fit(X, y)
    fitted = span("first_fit", imported)
    make().fit(X, y)
    span("steady_fit", fitted)
    spans["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(spans))
""")


def python_gini(class_sums, total_weight, params):
    if total_weight <= 0.0:
        return 0.0
    s = 0.0
    for k in range(class_sums.shape[0]):
        p = class_sums[k] / total_weight
        s += p * p
    return 1.0 - s


def asymmetric_entropy(class_sums, total_weight, params):
    """Marcellin et al.'s asymmetric entropy, w_k = params[k], written as plain Python."""
    if total_weight <= 0.0:
        return 0.0
    h = 0.0
    for k in range(class_sums.shape[0]):
        p = class_sums[k] / total_weight
        w = params[k]
        h += p * (1.0 - p) / ((1.0 - 2.0 * w) * p + w * w)
    return h


def _plain_python_criterion(name, function, params=None):
    """A criterion as a third party writes it: the impurity a plain function in this file."""

    import attrs
    import numpy as np

    from treekit_core import Criterion

    @attrs.define(slots=False)
    class PlainPython(Criterion):
        impurity = staticmethod(function)

        def impurity_params(self, n_classes):
            return np.zeros(1) if params is None else np.full(n_classes, params)

    PlainPython.name = name
    return PlainPython()


def python_gini_criterion():
    return _plain_python_criterion("bench_python_gini", python_gini)


def asymmetric_criterion():
    return _plain_python_criterion("bench_asymmetric", asymmetric_entropy, 0.3)


def run_worker(library, data, n, workload="fit", threads=None, env_extra=None):
    return run_in_fresh_process(
        FIT_WORKER, [library, data, n, workload, HERE], ROOT, threads, False, env_extra
    )


CONTESTANTS = {
    "treekit 1 thread": ("treekit", 1),
    "treekit all threads": ("treekit", None),
    "scikit-learn": ("sklearn", None),
}


def fit_section(sizes, repeats, workload="fit", label=""):
    results = []
    for data, n in [("synthetic", n) for n in sizes] + [("satimage", 0)]:
        runs = {name: [] for name in CONTESTANTS}
        for _ in range(repeats if n < 1_000_000 else max(1, repeats // 2)):
            for name, (library, threads) in CONTESTANTS.items():
                runs[name].append(run_worker(library, data, n, workload, threads))
        row = {"data": data, "n": n, **{name: median_rows(r) for name, r in runs.items()}}
        sk = row["scikit-learn"]
        for name in CONTESTANTS:
            r = row[name]
            print(
                f"{label}{data:>9} n={n:>8} {name:>19}: fit {r['fit_wall']:8.3f} s wall "
                f"{r['fit_cpu']:8.3f} s CPU (x{r['fit_wall'] / sk['fit_wall']:.2f} / "
                f"x{r['fit_cpu'] / sk['fit_cpu']:.2f} sklearn) | peak {r['peak_mb']:7.0f} MB "
                f"(x{r['peak_mb'] / sk['peak_mb']:.2f}) | predict {r['predict_wall'] * 1e3:8.2f} "
                f"ms (x{r['predict_wall'] / sk['predict_wall']:.2f}), again "
                f"{r['predict_again'] * 1e3:8.2f} ms "
                f"(x{r['predict_again'] / sk['predict_again']:.2f}) | leaves {r['leaves']:.0f}",
                flush=True,
            )
        results.append(row)
    return results


def criterion_section(repeats, n=100_000):
    runs = {"built-in gini": [], "Python gini": [], "Python asymmetric": [], "function value": []}
    for _ in range(repeats):
        runs["built-in gini"].append(run_worker("treekit", "synthetic", n, threads=1))
        runs["Python gini"].append(run_worker("python_gini", "synthetic", n, threads=1))
        runs["Python asymmetric"].append(run_worker("python_asymmetric", "synthetic", n, threads=1))
        runs["function value"].append(
            run_worker("treekit", "synthetic", n, threads=1, env_extra={"TREEKIT_SPECIALISE": "0"})
        )
    row = {name: median_rows(r) for name, r in runs.items()}
    base = row["built-in gini"]["fit_wall"]
    for name, r in row.items():
        print(
            f"criterion n={n} one thread {name:>18}: fit {r['fit_wall']:.3f} s "
            f"(x{r['fit_wall'] / base:.2f} built-in gini, specialised)",
            flush=True,
        )
    return row


def forest_fits(repeats, label):
    runs = {name: [] for name in CONTESTANTS}
    for _ in range(repeats):
        for name, (library, threads) in CONTESTANTS.items():
            runs[name].append(run_worker(library, "synthetic", 4000, "forest", threads))
    runs = {name: median_rows(r) for name, r in runs.items()}
    for name, r in runs.items():
        print(f"{label} forest 50 trees 4000 x 20 {name:>19}: {r['fit_wall']:.3f} s", flush=True)
    return runs


def busy_section(sizes, repeats):
    """The fits again with one CPU-bound process beside them (bounded: it stops by itself)."""
    with one_core_busy(3000):
        rows = fit_section(sizes, repeats, label="busy ")
        forest = forest_fits(repeats, "busy")
    idle_forest = forest_fits(repeats, "idle")
    return {"fits": rows, "forest_busy": forest, "forest_idle": idle_forest}


def first_fit_section(repeats, n=100_000):
    """The first fit in a fresh process, without warm-up, against the steady fit."""
    contestants = {
        "treekit 1 thread": ("treekit", 1),
        **{k: v for k, v in CONTESTANTS.items() if k != "treekit 1 thread"},
    }
    with tempfile.TemporaryDirectory() as folder:
        files = saved_data(folder, "classification", n)
        runs = {name: [] for name in contestants}
        for _ in range(repeats):
            for name, (library, threads) in contestants.items():
                runs[name].append(
                    run_in_fresh_process(FIRST_WORKER, [library, *files], ROOT, threads, False)
                )
    row = {name: median_rows(r) for name, r in runs.items()}
    sk = row["scikit-learn"]
    for name, r in row.items():
        first_plus = r["import_cpu"] + r["first_fit_cpu"]
        sk_plus = sk["import_cpu"] + sk["first_fit_cpu"]
        print(
            f"first fit n={n} {name:>19}: import {r['import_wall']:.3f} s wall "
            f"{r['import_cpu']:.3f} s CPU | first fit {r['first_fit_wall']:.3f} s wall "
            f"{r['first_fit_cpu']:.3f} s CPU (x{r['first_fit_cpu'] / sk['first_fit_cpu']:.2f}"
            f" sklearn CPU) | steady fit {r['steady_fit_wall']:.3f} s wall "
            f"{r['steady_fit_cpu']:.3f} s CPU (x{r['steady_fit_cpu'] / sk['steady_fit_cpu']:.2f})"
            f" | import + first fit {first_plus:.3f} s CPU (x{first_plus / sk_plus:.2f}) | "
            f"peak {r['peak_mb']:.0f} MB",
            flush=True,
        )
    return row


def cold_section(repeats):
    """First run on a machine: empty numba cache and kernel directory (medians of
    ``repeats`` fresh directories)."""
    runs = []
    for _ in range(repeats):
        out = {}
        with tempfile.TemporaryDirectory() as folder:
            env = {
                **os.environ,
                "PYTHONPATH": ROOT,
                "NUMBA_CACHE_DIR": os.path.join(folder, "numba"),
                "TREEKIT_KERNEL_DIR": os.path.join(folder, "kernels"),
            }
            for attempt in ("cold", "warm"):
                start = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-m", "treekit_core.tools.cli", "demo"],
                    env=env,
                    check=True,
                    capture_output=True,
                    cwd="/",
                )
                out[f"demo_{attempt}_s"] = time.perf_counter() - start
        with tempfile.TemporaryDirectory() as folder:
            env_extra = {
                "NUMBA_CACHE_DIR": os.path.join(folder, "numba"),
                "TREEKIT_KERNEL_DIR": os.path.join(folder, "kernels"),
            }
            for attempt in ("cold", "warm"):
                start = time.perf_counter()
                run_worker("treekit", "synthetic", 100_000, env_extra=env_extra)
                out[f"first_fit_100k_{attempt}_s"] = time.perf_counter() - start
        runs.append(out)
    out = median_rows(runs)
    print(
        f"cold cache: treekit demo {out['demo_cold_s']:.1f} s (warm {out['demo_warm_s']:.1f} s); "
        f"a new process making 100 000 rows, fitting and predicting "
        f"{out['first_fit_100k_cold_s']:.1f} s (warm {out['first_fit_100k_warm_s']:.1f} s); "
        f"medians of {repeats}",
        flush=True,
    )
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--busy-sizes", type=int, nargs="*", default=[100_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--only", choices=["fit", "criterion", "busy", "first", "cold"], nargs="*", default=None
    )
    parser.add_argument("--json", default=None, help="also write the results to this file")
    args = parser.parse_args(argv)
    sections = args.only or ["fit", "criterion", "busy", "first", "cold"]

    print(machine_line(ROOT, "sklearn"), flush=True)
    results = {}
    if "fit" in sections:
        results["fit"] = fit_section(args.sizes, args.repeats)
    if "criterion" in sections:
        results["criterion"] = criterion_section(args.repeats)
    if "busy" in sections:
        results["busy"] = busy_section(args.busy_sizes, args.repeats)
    if "first" in sections:
        results["first"] = first_fit_section(args.repeats)
    if "cold" in sections:
        results["cold"] = cold_section(args.repeats)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()

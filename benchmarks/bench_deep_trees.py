"""Operations on a grown-out regression tree, at growing sizes (issues 56 and 66): every
one must grow at most as n log n in the tree's nodes.

    python benchmarks/bench_deep_trees.py                     # 25 000 .. 200 000 rows
    python benchmarks/bench_deep_trees.py --sizes 10000 20000

Data: n rows x 5 standard normal features and a unique standard normal response, grown out
(``min_samples_leaf=1``: about 2n nodes), one thread, one fresh process per size (kernels
from the cache). Wall seconds of: the fit; ``prune(alpha=0.01)``; the fit with
cost-complexity pruning chosen by 10-fold CV and 1-SE (the command line's default);
``export_text``; ``to_json`` and ``from_json``; ``predict`` of the n rows;
``decision_path`` of one row; the HTML report's tree (``tree_html``); ``plot_tree``. Then
the command line's default regression fit against ``--pruner none`` on an 8 000-row CSV.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from common import machine_line, run_in_fresh_process  # noqa: E402

WORKER = textwrap.dedent("""
    import json, sys, time, warnings
    import numpy as np
    warnings.simplefilter("ignore")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from treekit_core import TreeRegressor
    from treekit_core.tools.plots import plot_tree
    from treekit_core.tools.report import tree_html
    n = int(sys.argv[1])
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(n, 5)), rng.normal(size=n)
    TreeRegressor(max_depth=3).fit(X[:100], y[:100])  # load the kernels
    out = {}
    def timed(name, call):
        start = time.perf_counter()
        result = call()
        out[name] = time.perf_counter() - start
        return result
    model = timed("fit", lambda: TreeRegressor(n_threads=1).fit(X, y))
    out["nodes"] = float(model.tree_.n_nodes)
    timed("prune", lambda: model.prune(alpha=0.01))
    timed("fit_cv10", lambda: TreeRegressor(
        n_threads=1, pruner="cost_complexity", pruner_params={"cv": 10, "rule": "one_se"},
        random_state=0).fit(X, y))
    timed("export_text", model.export_text)
    text = timed("to_json", model.to_json)
    loaded = timed("from_json", lambda: TreeRegressor.from_json(text))
    timed("predict", lambda: loaded.predict(X))
    timed("decision_path", lambda: model.decision_path(X[:1]))
    timed("tree_html", lambda: tree_html(model))
    timed("plot_tree", lambda: plt.close(plot_tree(model).figure))
    print(json.dumps(out))
""")

COLUMNS = (
    "fit",
    "prune",
    "fit_cv10",
    "export_text",
    "to_json",
    "from_json",
    "predict",
    "decision_path",
    "tree_html",
    "plot_tree",
)


def cli_fits(rows: int) -> tuple[float, float]:
    """Wall seconds of ``treekit fit`` with its defaults and with ``--pruner none``."""
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.normal(size=(rows, 5))
    y = X[:, 0] + rng.normal(size=rows)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "regression.csv")
        np.savetxt(
            path,
            np.column_stack([X, y]),
            delimiter=",",
            header="a,b,c,d,e,y",
            comments="",
            fmt="%.6f",
        )
        seconds = []
        for extra in ([], ["--pruner", "none"]):
            argv = [
                sys.executable,
                "-m",
                "treekit_core.tools.cli",
                "fit",
                path,
                "--target",
                "y",
                "--out",
                os.path.join(folder, "m.json"),
                *extra,
            ]
            start = time.perf_counter()
            subprocess.run(
                argv, check=True, capture_output=True, env={**os.environ, "PYTHONPATH": ROOT}
            )
            seconds.append(time.perf_counter() - start)
    return seconds[0], seconds[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[25_000, 50_000, 100_000, 200_000])
    parser.add_argument("--cli-rows", type=int, default=8_000)
    args = parser.parse_args()
    print(machine_line(ROOT))
    print("| rows | nodes | " + " | ".join(COLUMNS) + " |")
    print("|---|---|" + "---|" * len(COLUMNS))
    for n in args.sizes:
        row = run_in_fresh_process(WORKER, [n], ROOT, threads=1)
        cells = " | ".join(f"{row[c]:.3f}" for c in COLUMNS)
        print(f"| {n} | {int(row['nodes'])} | {cells} |")
    default, unpruned = cli_fits(args.cli_rows)
    print(
        f"\ntreekit fit on {args.cli_rows} rows: defaults {default:.2f} s, --pruner none "
        f"{unpruned:.2f} s (x{default / unpruned:.2f})"
    )


if __name__ == "__main__":
    main()

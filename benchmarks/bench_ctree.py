"""Conditional inference trees: treekit's ctree splitter against partykit's ctree and
treekit's exhaustive CART, side by side in one run (issue 61).

    python benchmarks/bench_ctree.py                      # 10 000 and 100 000 rows
    python benchmarks/bench_ctree.py --sizes 100000 --repeats 5

Data: n rows x 20 standard normal features, a binary class drawn with probability
logistic(x0 - 0.5 x1 + 0.3 x2 x3), seeded, written once to a CSV both sides read. partykit:
``system.time(ctree(y ~ ., data = df))`` in one R session per repeat (the package loaded,
the CSV read, before the clock starts), its default controls. treekit: a fresh process
per repeat; the first fit in the process (what a script pays: the plugin's imports and
cached kernels load) and a second fit of the same data (what partykit's figure is,
the package loaded), ``min_samples_split=20, min_samples_leaf=7`` (partykit's minsplit
and minbucket) and no pruning; CART the same with the exhaustive splitter. One thread.
Medians over the repeats, wall seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from common import machine_line, markdown_table, run_in_fresh_process  # noqa: E402

WORKER = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    data = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1)
    X, y = data[:, :-1], data[:, -1].astype(int)
    from treekit_core import TreeClassifier
    model = TreeClassifier(splitter=sys.argv[2], min_samples_split=20, min_samples_leaf=7,
                           pruner="none")
    start = time.perf_counter(); model.fit(X, y); first = time.perf_counter() - start
    start = time.perf_counter(); model.fit(X, y); second = time.perf_counter() - start
    print(json.dumps({"first": first, "second": second, "leaves": model.get_n_leaves()}))
""")

R_SCRIPT = textwrap.dedent("""
    suppressPackageStartupMessages(library(partykit))
    df <- read.csv(commandArgs(trailingOnly = TRUE)[1]); df$y <- factor(df$y)
    elapsed <- system.time(fit <- ctree(y ~ ., data = df))[["elapsed"]]
    cat(sprintf('{"second": %.6f, "leaves": %d}\\n', elapsed,
                length(nodeids(fit, terminal = TRUE))))
""")


def write_data(n: int, path: str) -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 20))
    p = 1 / (1 + np.exp(-(X[:, 0] - 0.5 * X[:, 1] + 0.3 * X[:, 2] * X[:, 3])))
    y = (rng.random(n) < p).astype(int)
    header = ",".join([f"x{i}" for i in range(20)] + ["y"])
    np.savetxt(
        path, np.column_stack([X, y]), delimiter=",", header=header, comments="", fmt="%.17g"
    )


def partykit(path: str) -> dict:
    import json

    script = os.path.join(os.path.dirname(path), "ctree.R")
    with open(script, "w") as handle:
        handle.write(R_SCRIPT)
    done = subprocess.run(["Rscript", script, path], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(machine_line(ROOT, "scipy"))
    version = subprocess.run(
        [
            "Rscript",
            "-e",
            'cat(R.version.string, "partykit", as.character(packageVersion("partykit")))',
        ],
        capture_output=True,
        text=True,
    ).stdout
    print(version)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for n in args.sizes:
            path = os.path.join(folder, f"data_{n}.csv")
            write_data(n, path)
            runs = {"partykit": [partykit(path) for _ in range(args.repeats)]}
            for splitter in ("ctree", "exhaustive"):
                runs[splitter] = [
                    run_in_fresh_process(WORKER, [path, splitter], ROOT, threads=1)
                    for _ in range(args.repeats)
                ]
            theirs = statistics.median(r["second"] for r in runs["partykit"])
            for name, label in (
                ("partykit", "partykit ctree"),
                ("ctree", "treekit ctree"),
                ("exhaustive", "treekit CART (exhaustive)"),
            ):
                second = statistics.median(r["second"] for r in runs[name])
                first = (
                    statistics.median(r["first"] for r in runs[name])
                    if name != "partykit"
                    else None
                )
                rows.append(
                    [
                        f"{n:,}",
                        label,
                        "" if first is None else f"{first:.3f}",
                        f"{second:.3f}",
                        f"{theirs / second:.1f}x",
                        str(runs[name][0]["leaves"]),
                    ]
                )
    print(
        markdown_table(
            [
                "rows",
                "fit",
                "first fit in process (s)",
                "fit, package loaded (s)",
                "partykit / it",
                "leaves",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()

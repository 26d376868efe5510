"""Cebron et al.: accuracy of counterexample trees as information is removed.

    python benchmarks/counterexamples/run.py [--repeats 100] > benchmarks/counterexamples/results.md

The paper's protocol: a random 30% of the rows train, 70% test, repeated; each training
label becomes a counterexample vector (K-1 ones), then a fraction of its entries is set to
0 ("no information") at random. The tree: criterion counterexample_entropy (normalised),
labeler complementary, exhaustive splits; two variants: unpruned, and pruned by
cost-complexity with 5-fold CV. (With entries removed no node looks pure, so an unpruned
tree grows to single-sample leaves whose removed entries tie with the true class.) Nominal
features are ordinal codes of their sorted values (treekit_core.datasets); soybean's
missing values become one more code (-1). Writes accuracy boxplots to
benchmarks/counterexamples/accuracy.png.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from treekit_core import TreeClassifier
from treekit_core.datasets import load_dataset
from treekit_counterexample import labels_as_counterexamples, remove_information

HERE = Path(__file__).resolve().parent
LEVELS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
EXTRA = {"satimage": [0.99, 0.995, 0.999]}
PAPER = {
    "lenses": "declines linearly; usable up to about 30% removed",
    "balance_scale": "declines more slowly than lenses",
    "satimage": "stand-in for nursery, which barely declines until 99% removed",
    "soybean": "many-class stand-in (19 classes)",
}


VARIANTS = {
    "unpruned": {},
    "pruned (cost-complexity, 5-fold CV)": {
        "pruner": "cost_complexity",
        "pruner_params": {"cv": 5},
    },
}


def run(name, repeats, variant):
    data = load_dataset(name)
    X = np.where(np.isnan(data.X), -1.0, data.X)
    classes, codes = np.unique(data.y, return_inverse=True)
    Y = labels_as_counterexamples(codes, classes.size)
    levels = LEVELS + EXTRA.get(name, [])
    accuracy = {level: [] for level in levels}
    n = len(codes)
    for repeat in range(repeats):
        rng = np.random.default_rng(repeat)
        train = np.sort(rng.permutation(n)[: max(2, int(round(0.3 * n)))])
        test = np.setdiff1d(np.arange(n), train)
        for level in levels:
            partial = remove_information(Y[train], level, np.random.default_rng(10_000 + repeat))
            model = TreeClassifier(
                criterion="counterexample_entropy", labeler="complementary", **VARIANTS[variant]
            )
            model.fit(X[train], counterexamples=partial, classes=classes)
            accuracy[level].append(float((model.predict(X[test]) == classes[codes[test]]).mean()))
    return accuracy


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument(
        "--pruned-repeats", type=int, default=30, help="repeats of the (10x slower) pruned variant"
    )
    args = parser.parse_args()
    start = time.time()
    results = {}
    for variant in VARIANTS:
        for name in ("lenses", "balance_scale", "satimage", "soybean"):
            repeats = args.repeats if variant == "unpruned" else args.pruned_repeats
            results[(name, variant)] = run(name, repeats, variant)
            print(
                f"{name} {variant} done after {time.time() - start:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    print("# Counterexamples: accuracy against information removed\n")
    print(
        f"{args.repeats} repeats unpruned, {args.pruned_repeats} pruned; 30% train / 70% test; "
        f"median accuracy (25th-75th percentile).\n"
    )
    for (name, variant), accuracy in results.items():
        print(f"## {name}, {variant}\n\nPaper: {PAPER[name]}.\n")
        print("| removed | median accuracy | 25% | 75% |\n|---|---|---|---|")
        for level, values in accuracy.items():
            q1, med, q3 = np.percentile(values, [25, 50, 75])
            print(f"| {level:.1%} | {med:.3f} | {q1:.3f} | {q3:.3f} |")
        print()
    print(f"Total time {time.time() - start:.0f} s.")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 4, figsize=(22, 8))
    for ax, ((name, variant), accuracy) in zip(axes.ravel(), results.items(), strict=False):
        levels = list(accuracy)
        ax.boxplot([accuracy[level] for level in levels], showfliers=False)
        ax.set_xticks(range(1, len(levels) + 1))
        ax.set_xticklabels([f"{100 * level:g}" for level in levels], fontsize=8)
        ax.set_title(f"{name}, {variant.split(' (')[0]}")
        ax.set_xlabel("% of counterexample entries removed")
        ax.set_ylabel("test accuracy")
        ax.set_ylim(0, 1)
    fig.tight_layout()
    fig.savefig(HERE / "accuracy.png", dpi=90)


if __name__ == "__main__":
    main()

"""Calibrated confidence on held-out data: Brier score of "the decision is correct".

    python benchmarks/boundary_distance/calibration.py

Outer stratified 10-fold CV on wisconsin and pima (bundled); in each outer fold a CART
pruned by cost-complexity (10-fold CV, 1-SE) is fitted with `calibration=` (its own inner
5-fold CV) for the boundary-distance confidence and for the maximum class probability, and
scored on the held-out fold. Brier = mean (p - correct)^2 over held-out rows; the
uncalibrated baseline is the maximum class probability itself. Prints a markdown table.
"""

from __future__ import annotations

import numpy as np

from treekit_core import TreeClassifier
from treekit_core.datasets import load_dataset
from treekit_core.engine.folds import stratified_folds


def held_out(name, confidence, method, folds=10):
    data = load_dataset(name, dropna=True)
    _, labels = np.unique(data.y, return_inverse=True)
    fold = stratified_folds(labels, folds, np.random.default_rng(0))
    squared, raw = [], []
    for k in range(folds):
        train, test = fold != k, fold == k
        model = TreeClassifier(
            pruner="cost_complexity",
            pruner_params={"rule": "one_se"},
            confidence=confidence,
            calibration=method,
            random_state=0,
        ).fit(data.X[train], data.y[train])
        decision = model.decide(data.X[test])
        correct = (decision.labels == data.y[test]).astype(float)
        squared.append((decision.p_correct - correct) ** 2)
        raw.append((decision.proba.max(axis=1) - correct) ** 2)
    return float(np.concatenate(squared).mean()), float(np.concatenate(raw).mean())


def main() -> None:
    print(
        "| data | confidence | calibration | Brier (calibrated p_correct) "
        "| Brier (max probability) |"
    )
    print("|---|---|---|---|---|")
    for name in ("wisconsin", "pima"):
        for confidence in ("boundary_distance", "probability"):
            for method in ("isotonic", "platt"):
                calibrated, raw = held_out(name, confidence, method)
                print(f"| {name} | {confidence} | {method} | {calibrated:.4f} | {raw:.4f} |")


if __name__ == "__main__":
    main()

"""The ``treekit`` command line."""
from __future__ import annotations

import argparse
import sys

import numpy as np


def stratified_split(y, test_fraction: float, seed: int):
    """Row indices (train, test) with each class split in the same proportion."""
    rng = np.random.default_rng(seed)
    train, test = [], []
    for label in np.unique(y):
        rows = rng.permutation(np.flatnonzero(y == label))
        n_test = int(round(test_fraction * rows.size))
        test.extend(rows[:n_test])
        train.extend(rows[n_test:])
    return np.sort(np.array(train)), np.sort(np.array(test))


def cmd_demo(args) -> int:
    from treekit_core import TreeClassifier
    from treekit_core.datasets import load_dataset
    from treekit_core.metrics import diagnostic_report

    dataset = load_dataset(args.data, dropna=True)
    train, test = stratified_split(dataset.target, 0.3, args.seed)
    model = TreeClassifier(criterion=args.criterion, pruner=args.pruner, random_state=args.seed,
                           min_samples_leaf=args.min_samples_leaf)
    model.fit(dataset.data[train], dataset.target[train])
    print(f"treekit demo: {dataset.name} ({dataset.description})")
    print(f"composition: {model.composition_.describe()}")
    print(f"trained on {train.size} rows, tested on {test.size} (stratified 70/30, seed {args.seed})")
    print(f"leaves: {model.get_n_leaves()}  depth: {model.get_depth()}\n")
    names = list(dataset.feature_names)
    from treekit_core.tree import export_text

    print(export_text(model.tree_, names, model.classes_))
    decision = model.decide(dataset.data[test])
    report = diagnostic_report(dataset.target[test], decision.labels, decision.abstained, list(model.classes_))
    print("test metrics:")
    print(report.to_text())
    return 0


def cmd_plugins(args) -> int:
    import attrs

    from treekit_core.components import KINDS
    from treekit_core.plugins import get_registry

    registry = get_registry()
    print("distributions: " + ", ".join(registry.distributions))
    for kind in KINDS:
        print(f"\n{kind} components:")
        for name, info in sorted(registry.components(kind).items()):
            params = ", ".join(
                f"{f.name}={f.default!r}" if f.default is not attrs.NOTHING else f.name
                for f in attrs.fields(info.cls)
            )
            print(f"  {name:<24} [{info.distribution}] {info.cls.description}"
                  + (f"\n  {'':<24} parameters: {params}" if params else ""))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="treekit", description="Compose, fit and use decision trees.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="fit a tree on a bundled data set and print it with test metrics")
    demo.add_argument("--data", default="wdbc", help="bundled data set (default: wdbc)")
    demo.add_argument("--criterion", default="gini")
    demo.add_argument("--pruner", default="cost_complexity")
    demo.add_argument("--min-samples-leaf", type=int, default=7)
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(run=cmd_demo)
    plugins = sub.add_parser("plugins", help="list installed components by kind")
    plugins.set_defaults(run=cmd_plugins)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, OSError) as exc:
        print(f"treekit {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

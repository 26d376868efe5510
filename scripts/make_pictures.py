"""Render one of each picture into docs/pictures (the README shows them).

    python scripts/make_pictures.py

Uses bundled data only; the boundary map uses the boundary-distance plugin when it is
installed (else the probability confidence).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from treekit_core import TreeClassifier  # noqa: E402
from treekit_core.datasets import load_dataset  # noqa: E402
from treekit_core.registry import get_registry  # noqa: E402
from treekit_core.tools import plots  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "docs" / "pictures"


def save(name, draw, figsize):
    fig, ax = plt.subplots(figsize=figsize)
    draw(ax)
    fig.tight_layout()
    fig.savefig(OUT / name, dpi=80)
    plt.close(fig)
    print(f"wrote {OUT / name}")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    import pandas as pd

    wisconsin = load_dataset("wisconsin", dropna=True)
    frame = pd.DataFrame(wisconsin.X, columns=wisconsin.feature_names)
    pruned = TreeClassifier(pruner="cost_complexity", random_state=0).fit(frame, wisconsin.y)
    save("tree.png", lambda ax: plots.plot_tree(pruned, ax), (12, 6))
    save("pruning_path.png", lambda ax: plots.plot_pruning_path(pruned, ax), (8, 4.5))
    save(
        "risk_coverage.png",
        lambda ax: plots.plot_risk_coverage(
            {"probability": pruned.risk_coverage(frame, wisconsin.y)}, ax
        ),
        (7, 4.5),
    )
    pima = load_dataset("pima")
    full = TreeClassifier().fit(pd.DataFrame(pima.X, columns=pima.feature_names), pima.y)
    save("tree_large.png", lambda ax: plots.plot_tree(full, ax), (26, 8))
    lenses = load_dataset("lenses")
    multiway = TreeClassifier(splitter="c45", categorical_features=lenses.categorical).fit(
        lenses.X, lenses.y
    )
    save("tree_multiway.png", lambda ax: plots.plot_tree(multiway, ax), (10, 5))
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 10, size=(400, 2))
    y = (X[:, 1] > 5 + 2 * np.sin(X[:, 0] / 1.5)).astype(int)
    confidence = (
        "boundary_distance"
        if "boundary_distance" in get_registry().components("confidence")
        else "probability"
    )
    mapped = TreeClassifier(max_depth=5, confidence=confidence, reject={"keep_correct": 0.95}).fit(
        X, y
    )
    save(
        "boundary_map.png",
        lambda ax: plots.plot_boundary_distance_map(mapped, X, y, ax=ax),
        (7, 5.5),
    )
    save(
        "soft_gain.png",
        lambda ax: plots.plot_soft_gain(X[:, 1], y, sigma=0.5, ax=ax),
        (8, 4.5),
    )


if __name__ == "__main__":
    main()

"""Which features a node may test: all of them, or a fresh random subset per node
(Breiman's forests). The sampler is part of the composition, not a component kind."""

from __future__ import annotations

import attrs
import numpy as np


@attrs.frozen
class AllFeatures:
    """Every feature is a candidate at every node."""

    def draw(self, rng, n_features: int) -> np.ndarray:
        return np.arange(n_features, dtype=np.int64)

    def fused_settings(self, rng, n_features: int) -> tuple[int, int]:
        """(features per node, seed) for the fused builder; draws nothing from ``rng``."""
        return n_features, 0

    def subset_size(self, n_features: int) -> int:
        return n_features


@attrs.frozen
class RandomFeatureSubset:
    """A fresh random subset of ``size`` features at every node (Breiman's forests)."""

    size: int

    def draw(self, rng, n_features: int) -> np.ndarray:
        return rng.permutation(n_features)[: self.size].astype(np.int64)

    def subset_size(self, n_features: int) -> int:
        return self.size

    def fused_settings(self, rng, n_features: int) -> tuple[int, int]:
        """(features per node, seed) for the fused builder, which draws subsets itself."""
        return self.size, int(rng.integers(2**31 - 1))

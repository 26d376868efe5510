"""The training-data container: features, per-sample weights and the target's rows."""

from __future__ import annotations

import attrs
import numpy as np


@attrs.define(eq=False)
class TrainingData:
    """What the grow loop sees: features, per-sample weights and the target's rows.

    ``evidence`` is n x S, the rows of statistics the target wrote (``Target.encode``): a
    one-hot row for a class label, a row marking excluded classes for a counterexample,
    (y, y^2) for a measurement (docs/architecture.md). The weight is kept separate from the
    rows because a row's sum is not a weight.
    """

    X: np.ndarray  #: float64, n x d, C or Fortran order (never written)
    evidence: np.ndarray  #: float64, n x S, C order
    weight: np.ndarray  #: float64, n
    feature_names: list | None = None
    #: What the tree decides among (class labels, in the order of decision indices); None for
    #: a target that decides among no labels.
    classes: np.ndarray | None = None
    #: Number of categories of every nominal feature (0 for a numeric feature); None: all numeric.
    n_categories: np.ndarray | None = None
    #: Values derived from X alone (e.g. presorted orders), shared by data sets with the same X.
    cache: dict = attrs.field(factory=dict)
    #: The target that wrote ``evidence``; the subset search asks it how to order a nominal
    #: feature's categories (``Target.category_order``). None: the class labels' order.
    target: object = None
    #: Whether the estimator will ask the splitter for every training row's leaf of each
    #: tree grown on this data (``Splitter.training_leaves``, once per tree): a splitter
    #: that answers from what its growth left keeps it only then (4 bytes a row a tree,
    #: until asked).
    training_leaves_wanted: bool = False

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def nominal_features(self) -> np.ndarray:
        """The nominal features' indices (remembered: every node's split search asks)."""
        cached = self.cache.get("nominal_features")
        if cached is None:
            if self.n_categories is None:
                cached = np.zeros(0, dtype=np.int64)
            else:
                cached = np.flatnonzero(self.n_categories > 0)
            self.cache["nominal_features"] = cached
        return cached

    def refuse_nominal(self, component, advice: str | None = None) -> None:
        """For components that only understand numeric features; ``advice`` ends the
        message (default: encode the feature, or use another component of the kind)."""
        if self.nominal_features.size:
            j = int(self.nominal_features[0])
            name = f" ({self.feature_names[j]!r})" if self.feature_names is not None else ""
            if advice is None:
                advice = (
                    f"encode it (one column per category), or use a {component.kind} that "
                    "handles nominal features"
                )
            raise ValueError(
                f"{component.kind} {component.name!r} handles numeric features only, but feature "
                f"{j}{name} is nominal; {advice}"
            )

    @property
    def has_missing(self) -> bool:
        if "has_missing" not in self.cache:
            self.cache["has_missing"] = bool(np.isnan(self.X).any())
        return self.cache["has_missing"]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def n_statistics(self) -> int:
        return self.evidence.shape[1]

    def subset(self, rows: np.ndarray) -> "TrainingData":
        return TrainingData(
            np.asfortranarray(self.X[rows]),
            np.ascontiguousarray(self.evidence[rows]),
            np.ascontiguousarray(self.weight[rows]),
            self.feature_names,
            self.classes,
            self.n_categories,
            target=self.target,
        )

    def writeable(self) -> "TrainingData":
        """Itself, or a copy whose arrays can be written when some cannot: joblib hands a
        worker process large arrays as read-only memory maps, and the compiled kernels are
        typed for ordinary arrays."""
        arrays = [self.X, self.evidence, self.weight, *self.cache.values()]
        if all(not isinstance(a, np.ndarray) or a.flags.writeable for a in arrays):
            return self
        cache = {k: np.array(v) if isinstance(v, np.ndarray) else v for k, v in self.cache.items()}
        return attrs.evolve(
            self,
            X=np.array(self.X, order="F"),
            evidence=np.array(self.evidence, order="C"),
            weight=np.array(self.weight),
            cache=cache,
        )

    def with_weight(self, weight: np.ndarray) -> "TrainingData":
        """The same rows with other weights (shares X and its cache)."""
        return attrs.evolve(self, weight=np.ascontiguousarray(weight, dtype=np.float64))

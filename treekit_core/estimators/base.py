"""The composed-estimator base: what TreeClassifier, ForestClassifier and the facades to
come share (the composition from the parameters, input checks, decisions, the model file)."""

from __future__ import annotations

import numpy as np

from treekit_core.components import KINDS
from treekit_core.engine.composition import Composition
from treekit_core.engine.stopping import StoppingRules
from treekit_core.engine.validation import (
    check_n_threads,
)
from treekit_core.estimators.decisions import Decisions
from treekit_core.estimators.inputs import InputChecks
from treekit_core.estimators.model_file import ModelFile
from treekit_core.estimators.params import ParamsMixin
from treekit_core.registry import get_registry

STOPPING_PARAMS = (
    "max_depth",
    "min_samples_split",
    "min_samples_leaf",
    "min_weight_fraction_leaf",
    "min_impurity_decrease",
    "min_gain",
)


def node_indicator(tree, leaves: np.ndarray):
    """CSR matrix n_samples x n_nodes with the nodes from the root to each sample's leaf."""
    from scipy.sparse import csr_matrix

    parent = tree.parents()
    paths = []
    for leaf in range(tree.n_nodes):
        path, node = [], leaf
        while node >= 0:
            path.append(node)
            node = parent[node]
        paths.append(path[::-1])
    rows = [paths[int(leaf)] for leaf in leaves]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
    indices = np.concatenate(rows).astype(np.int64) if rows else np.zeros(0, dtype=np.int64)
    data = np.ones(indices.shape[0], dtype=np.int64)
    return csr_matrix((data, indices, indptr), shape=(len(rows), tree.n_nodes))


class ComposedEstimatorMixin(InputChecks, Decisions, ModelFile, ParamsMixin):
    """What every composed estimator shares (TreeClassifier, ForestClassifier and the
    facades to come): the composition made from its parameters, the input checks, the
    decisions and the model file."""

    def _make_composition(self) -> Composition:
        registry = get_registry()
        components = {
            kind: registry.create(kind, getattr(self, kind), getattr(self, f"{kind}_params"))
            for kind in KINDS
            if kind != "target"
        }
        components["target"] = registry.create(
            "target",
            self._target_name(components["criterion"]),
            getattr(self, "target_params", None),
        )
        stopping = StoppingRules(**{name: getattr(self, name) for name in STOPPING_PARAMS})
        return Composition(
            **components,
            stopping=stopping,
            registry=registry,
            n_threads=check_n_threads(getattr(self, "n_threads", None)),
        )

    def _target_name(self, criterion):
        """The ``target`` parameter, or when it is None the target the criterion reads
        (:attr:`~treekit_core.components.Criterion.default_target`)."""
        target = getattr(self, "target", None)
        return criterion.default_target if target is None else target

    def __setstate__(self, state) -> None:
        """Unpickled: the composition gets this process's registry (a composition travels
        without one, and the engine never fetches one); an estimator pickled before targets
        were components gets the target its criterion reads."""
        state.setdefault("target", None)
        state.setdefault("target_params", None)
        self.__dict__.update(state)
        composition = state.get("composition_")
        if composition is not None and composition.registry is None:
            composition.registry = get_registry()
        if composition is not None and composition.target is None:
            composition.target = composition.registry.create(
                "target", self._target_name(composition.criterion)
            )

    def _input_tags(self) -> dict:
        """Sparse X is densified, nominal columns are accepted, and NaN is when every
        component of the composition that reads X handles missing values."""
        try:
            components = self._make_composition().components.values()
        except Exception:  # invalid parameters: fit will say which; claim nothing here
            return {"allow_nan": False, "sparse": True, "categorical": True}
        allow_nan = all(c.handles_missing for c in components if c.sees_features)
        return {"allow_nan": allow_nan, "sparse": True, "categorical": True}

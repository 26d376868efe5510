"""The single-tree structure: one composed tree, grown, pruned, walked and saved, whatever
it predicts (the family says that: ``base.py``)."""

from __future__ import annotations

import numbers

import numpy as np

from treekit_core.builtins.evaluators import apply_tree
from treekit_core.components.splitter import NODE_TEST_FIELDS
from treekit_core.engine.importances import tree_importances
from treekit_core.engine.tree_text import export_text
from treekit_core.estimators import model_file
from treekit_core.estimators.base import ComposedEstimator, node_indicator
from treekit_core.estimators.honesty import HonestSplit, honest_parts
from treekit_core.estimators.inputs import _rng
from treekit_core.estimators.pruning_paths import PruningPaths


class SingleTreeEstimator(PruningPaths, ComposedEstimator):
    """One tree (``tree_``) and the tree API of scikit-learn's ``DecisionTree*``:
    ``apply``, ``decision_path``, ``feature_importances_``, ``get_depth``,
    ``get_n_leaves``, ``export_text``; rpart's pruning paths (``printcp``, ``prune``,
    ``xpred``); a tree grown elsewhere finished here (``fit_grown_tree``)."""

    def _trees(self) -> list:
        """The fitted trees: this one."""
        return [self.tree_]

    def _kept_trees(self, data, classes) -> tuple:
        """What a fit gives ``_fit_validated`` besides the data: nothing (an ensemble gives
        the trees ``warm_start`` keeps)."""
        return ()

    def _honest_split(self, data, composition):
        """The tree's honest split of the rows (None unless ``honest``), drawn from
        ``_honest_seed`` within the target's strata."""
        honest, fraction, prune_leaves = self._honesty_params()
        if not honest:
            return None
        strata = composition.target.strata(data.evidence, composition.labeler)
        rng = np.random.default_rng(self._honest_seed)
        return HonestSplit(honest_parts(data.weight, strata, fraction, rng), prune_leaves)

    def _tree_weights(self, data) -> list:
        """Each tree's training weights as its leaves were estimated: the rows' own (an
        honest tree: its estimation rows')."""
        honest = self._honest_split(data, self.composition_)
        return [data.weight if honest is None else honest.estimation(data).weight]

    def _fit_validated(self, data, classes, composition=None, rule=None):
        """Fit on checked training data (also what cross-validated rejection refits)."""
        if composition is None:  # a refit: the composition for the data's labels and rows
            composition = self._composition_for(classes, data.evidence[:1])
        composition.check(data)
        from treekit_core.kernels.usable_cpus import numba_threads_capped

        rng = _rng(self.random_state)
        if self._honesty_params()[0]:
            self._honest_seed = int(rng.integers(0, 2**63 - 1))
        honest = self._honest_split(data, composition)
        with numba_threads_capped(composition.fit_threads()):
            grown, self.tree_ = composition.fit_keeping_grown(
                self._growth_data(data, composition), rng, honest
            )
            # kept so prune(alpha) can go below the fitted alpha without regrowing
            self._grown_tree = None if grown is self.tree_ else grown
            self.composition_ = composition
            self._set_fitted(data, classes)
            # calibration and rejection read the rows the leaves were estimated from
            self._after_growth(data if honest is None else honest.estimation(data), rule)
        return self

    def fit_grown_tree(self, tree, data, categories=None, cross_validation=None):
        """Finish a fit whose tree was grown elsewhere (the Dask estimators grow one over a
        cluster's partitions) and return self: label it, prune it, let the evaluator and
        confidence learn their state and set the fitted attributes, as ``fit`` does after
        growth. ``tree`` is an unlabelled grown tree (``tree_from_table``); ``data`` a
        ``TrainingData`` describing the training data, which may hold no rows (X of shape
        (0, d) and target rows of shape (0, S), with ``classes``, ``n_categories`` and
        ``feature_names``): then the composition must need none after growth (no
        cross-validated pruning, rejection or calibration, no evaluator or confidence that
        ``reads_training_rows``), or it is refused; a classifier's rejection and
        calibration may be fitted afterwards from scores (``fit_decision_rules``), a
        regressor's quantiles from the parts' leaf responses
        (``keep_leaf_response_masses``).
        ``categories`` (feature index -> category labels) encodes a DataFrame's category
        columns at predict, as ``fit`` learns it. ``cross_validation``: (cv_error,
        cv_std_error) per subtree level when the grower measured them on folds grown
        elsewhere (the pruner then chooses from them, :class:`PruningContext`)."""
        self._check_params()
        composition = self.make_composition(data.n_features, data.feature_names)
        self._check_target(composition)
        self._check_finish_elsewhere(data)
        composition.check(data)
        if data.n_samples == 0:
            composition.check_finish_without_rows()
        tree.relabel(composition.target, composition.labeler)
        self.tree_ = composition.finish(tree, data, _rng(self.random_state), cross_validation)
        self._grown_tree = None if tree is self.tree_ else tree
        self.composition_ = composition
        self.categories_ = dict(categories or {})
        self._column_keys = None
        self._set_fitted(data, data.classes)
        self._fitted_without_rows()
        return self

    def _check_finish_elsewhere(self, data) -> None:
        """Refuse what a tree grown elsewhere cannot bring (the classifier: rejection and
        calibration chosen on training rows it does not have). Called by
        ``fit_grown_tree`` before it finishes the tree."""

    def _node_values(self, X) -> np.ndarray:
        """The values the evaluator mixes for every sample of X (checked): its leaf's, or
        the mixture of the leaves it reaches."""
        return self.composition_.evaluator.predict_distribution(self.tree_, X)

    def apply(self, X) -> np.ndarray:
        """Leaf id of every sample: where the evaluator sends each sample to one node
        (rpart's surrogates, as rpart's ``where``), that node; else by hard routing, where
        a sample with a missing tested value reaches several leaves and is refused (use
        predict_proba)."""

        with self._checked_for_predict(X) as checked:
            nodes = self.composition_.evaluator.stopping_nodes(self.tree_, checked)
            return apply_tree(self.tree_, checked) if nodes is None else np.asarray(nodes)

    def decision_path(self, X):
        """A scipy.sparse CSR indicator, n_samples x n_nodes: entry (i, j) is 1 when sample
        i passes node j on its way to the leaf :meth:`apply` gives (scikit-learn's
        ``decision_path``)."""
        return node_indicator(self.tree_, self.apply(X))

    @property
    def feature_importances_(self) -> np.ndarray:
        """Mean decrease in impurity per feature, normalised to sum 1 (scikit-learn's
        definition; :mod:`treekit_core.engine.importances`)."""

        self._check_fitted()
        return tree_importances(self.tree_, self.composition_.criterion)

    def node_tests(self, node: int):
        """The tests the splitter ran at ``node`` (an id of ``tree_``, 0 the root), as
        partykit's ``sctest`` reports a conditional inference tree's: a pandas DataFrame,
        one row per feature tested, columns ``feature``, ``statistic``, ``p_value`` (as
        the method reports it: adjusted for the number of tests) and ``raw_p_value``; no
        rows where the node ran no test (the stopping rules made it a leaf first)."""
        import pandas as pd

        self._check_fitted()
        tree = self.tree_
        if not set(NODE_TEST_FIELDS) <= set(tree.node_fields):
            raise ValueError(
                f"this tree keeps no tests: splitter {self.composition_.splitter.name!r} runs "
                "none (splitter='ctree' does)"
            )
        if not (isinstance(node, numbers.Integral) and 0 <= node < tree.n_nodes):
            raise ValueError(f"node must be an int in [0, {tree.n_nodes}), got {node!r}")
        statistic, p_value, raw = (
            np.asarray(tree.node_fields[name], dtype=np.float64).reshape(tree.n_nodes, -1)[node]
            for name in NODE_TEST_FIELDS
        )
        tested = np.flatnonzero(~np.isnan(raw))
        names = getattr(self, "feature_names_in_", None)
        names = [f"x[{f}]" for f in range(tree.n_features)] if names is None else list(names)
        return pd.DataFrame(
            {
                "feature": [names[f] for f in tested],
                "statistic": statistic[tested],
                "p_value": p_value[tested],
                "raw_p_value": raw[tested],
            }
        )

    def get_depth(self) -> int:
        self._check_fitted()
        return self.tree_.max_depth

    def get_n_leaves(self) -> int:
        self._check_fitted()
        return self.tree_.n_leaves

    def export_text(
        self, decimals: int = 4, show_distribution: bool = True, style: str = "sklearn"
    ) -> str:
        """The tree as text: ``style="sklearn"`` (scikit-learn's export_text) or ``"j48"``
        (Weka's J48 output, line for line)."""
        self._check_fitted()
        names = list(self.feature_names_in_) if hasattr(self, "feature_names_in_") else None
        tree = self.tree_
        return export_text(
            tree,
            names,
            getattr(self, "classes_", None),
            decimals,
            show_distribution,
            getattr(self, "categories_", {}),
            style,
            notes=lambda node, context: self.composition_.propagator.node_notes(
                tree, node, context
            ),
            leaf_text=self._leaf_text(decimals),
        )

    def _leaf_text(self, decimals: int):
        """What a leaf of :attr:`tree_` says in :meth:`export_text` and ``export_dot``: a
        function of the node id, or None for the class decision and distribution. A tree
        predicting values prints them, as scikit-learn prints a regressor's (a family
        overrides it to say more)."""
        tree = self.tree_
        if self.composition_.target.predicts_labels():
            classes = getattr(self, "classes_", None)
            if not isinstance(classes, list):
                return None
            target = self.composition_.target  # several outputs: each output's class
            return lambda node: "classes: [{}]".format(
                ", ".join(
                    str(c)
                    for c in target.predictions(tree.value[node : node + 1], None, classes)[0]
                )
            )
        return lambda node: f"value: [{', '.join(f'{v:.{decimals}f}' for v in tree.value[node])}]"

    def _trees_payload(self) -> dict:
        grown = getattr(self, "_grown_tree", None)
        return {
            "tree": model_file.tree_to_dict(self.tree_),
            **({"grown_tree": model_file.tree_to_dict(grown)} if grown is not None else {}),
        }

    def _read_trees(self, payload, composition, labels) -> list:
        self.tree_ = model_file.read_tree(payload, composition, labels)
        self._grown_tree = None
        if "grown_tree" in payload:
            self._grown_tree = model_file.read_tree(
                {"tree": payload["grown_tree"]},
                composition,
                labels,
                "model file: grown_tree",
                stateful=(),
            )
            if self._grown_tree.n_features != self.tree_.n_features:
                raise model_file.ModelFileError(
                    "model file: grown_tree and tree disagree on n_features"
                )
        return [self.tree_]

"""The pruning path of a fitted tree: rpart's cp table (``printcp``, ``treekit path``),
scikit-learn's ``cost_complexity_pruning_path``, and ``prune(alpha | cp)`` from the grown
tree kept at fit. These are minimal cost-complexity pruning by definition (the names are
scikit-learn's and rpart's), and split-complexity pruning for log-rank trees (whose
criterion provides ``standardised_split_statistic``), so this module names those two
built-in pruners; nothing else in the estimators does."""

from __future__ import annotations

import numbers

import numpy as np

from treekit_core.builtins.pruners.cost_complexity import (
    CostComplexity,
    node_risk,
)
from treekit_core.builtins.pruners.split_complexity import SplitComplexity
from treekit_core.engine.composition import PruningContext
from treekit_core.engine.folds import stratified_folds
from treekit_core.engine.tree import nodes_kept


class Bunch(dict):
    """A dict whose keys are attributes too (scikit-learn's ``Bunch``)."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


class PruningPaths:
    """The pruning path of a fitted tree (rpart's cp table, scikit-learn's
    cost_complexity_pruning_path) and pruning it again at any alpha without regrowing."""

    def cost_complexity_pruning_path(self, X, y, sample_weight=None):
        """scikit-learn's minimal cost-complexity path of the tree this estimator grows on
        (X, y) before any pruning: a Bunch with ``ccp_alphas`` (one per weakest-link step,
        0 first) and ``impurities`` (total weighted leaf impurity of each subtree, as a
        fraction of the root's weight). Needs no fit; the estimator stays unfitted."""

        params = {**self.get_params(deep=False), "pruner": "none", "pruner_params": None}
        if "reject" in params:
            params["reject"] = None
        grown = type(self)(**params).fit(X, y, sample_weight=sample_weight)
        sequence = CostComplexity(risk="impurity").pruning_sequence(
            grown.tree_, grown.composition_.labeler, grown.composition_.target
        )
        return Bunch(ccp_alphas=sequence.alphas, impurities=sequence.risk)

    @property
    def pruning_path_(self) -> dict:
        """The pruner's record as equal-length columns (``pandas.DataFrame(model.
        pruning_path_)`` is rpart's cp table for cost-complexity pruning: alphas, cp,
        n_leaves, n_splits, risk, rel_error, CV error and its standard error, xerror, xstd,
        and the subtree in use)."""
        self._check_fitted()
        state = self.tree_.component_state.get("pruner")
        if not state:
            raise AttributeError(
                f"pruner {self.composition_.pruner.name!r} records no pruning path"
            )
        return self.composition_.pruner.path_table(state)

    def cp_table(self) -> str:
        """rpart's ``printcp`` output for a cost-complexity-pruned tree (``treekit path
        MODEL`` prints it)."""

        table = self.pruning_path_
        if "split_statistic" in table:  # split complexity (log-rank trees)
            return split_complexity_text(table, int(self.tree_.n_samples[0]))
        for needed in ("cp", "rel_error", "selected"):
            if needed not in table:
                raise AttributeError(
                    f"pruner {self.composition_.pruner.name!r} records no cp table (fit with "
                    "pruner='cost_complexity')"
                )
        root_weight = float(self.tree_.weight[0])
        root_error = float(table["risk"][-1]) * root_weight
        return cp_table_text(table, root_error, root_weight, int(self.tree_.n_samples[0]))

    def printcp(self) -> None:
        """Print the variables the tree splits on and :meth:`cp_table`, as rpart's
        ``printcp``."""
        names = getattr(self, "feature_names_in_", None)
        tree = self.tree_
        used = sorted(
            {
                str(names[j]) if names is not None else f"x[{j}]"
                for j in np.unique(tree.feature[~tree.is_leaf])
            }
        )
        print("Variables actually used in tree construction:")
        print(r_vector_text(used) if used else "character(0)")
        print()
        print(self.cp_table(), end="")

    def prune(self, alpha=None, *, cp=None, risk=None):
        """A new fitted estimator: this tree pruned by minimal cost-complexity at ``alpha``
        (scikit-learn's units) or ``cp`` (rpart's: alpha relative to the root's risk),
        without regrowing; a log-rank tree (no node risk) by LeBlanc & Crowley's split
        complexity at ``alpha`` (chi-square per split: ``pruner="split_complexity"``).
        The grown tree is kept from fit (and in the model file), so any
        alpha works, smaller ones than the fitted pruner chose included. ``risk``:
        "prediction" (the loss of each node's prediction, as rpart) or "impurity"; default
        the fitted pruner's, else "prediction". The new estimator has ``pruner="cost_complexity"``
        with that alpha, so refitting it gives the same tree."""

        self._check_fitted()
        if (alpha is None) == (cp is None):
            raise ValueError("prune needs exactly one of alpha= or cp=")
        target = self.composition_.target
        if "standardised_split_statistic" in self.composition_.criterion.provides and (
            "node_risk" not in target.provides
        ):
            if cp is not None:
                raise ValueError(
                    "cp is rpart's unit of cost complexity; a log-rank tree prunes by split "
                    "complexity: give alpha= (chi-square per split)"
                )
            penalty = self.composition_.pruner.get_params().get("penalty", 4.0)
            SplitComplexity(alpha=alpha, penalty=penalty)  # validates, naming them
            return self._pruned_copy(
                "split_complexity", {"alpha": float(alpha), "penalty": penalty}, alpha
            )
        if "node_risk" not in target.provides:
            raise ValueError(
                f"target {target.name!r} has no node risk, which cost-complexity pruning "
                "minimises: prune() cannot prune this tree"
            )
        fitted = self.composition_.pruner.get_params()
        if risk is None:
            risk = fitted.get("risk", "prediction")
        sequence = fitted.get("sequence", "weakest_link")  # rpart's snips prune as rpart
        if cp is not None:
            if not (isinstance(cp, numbers.Real) and cp >= 0 and np.isfinite(cp)):
                raise ValueError(f"cp must be a finite number >= 0, got {cp!r}")
            alpha = float(cp) * self._root_risk(risk)
        CostComplexity(risk=risk, alpha=alpha, sequence=sequence)  # validates, naming them
        if getattr(self, "reject_threshold_", None) is not None:
            raise ValueError(
                "the reject threshold was chosen for the fitted tree: refit with "
                f"pruner='cost_complexity', pruner_params={{'alpha': {alpha!r}}}"
            )
        return self._pruned_copy(
            "cost_complexity",
            {
                "risk": risk,
                "alpha": float(alpha),
                **({"sequence": sequence} if sequence != "weakest_link" else {}),
            },
            alpha,
        )

    def _pruned_copy(self, pruner: str, pruner_params: dict, alpha):
        """A new fitted estimator: the grown tree pruned by ``pruner`` with
        ``pruner_params`` (its alpha given), the fitted attributes copied."""
        source = getattr(self, "_grown_tree", None) or self.tree_
        for kind in ("evaluator", "confidence"):
            if self.tree_.component_state.get(kind):
                raise ValueError(
                    f"the {kind} {getattr(self.composition_, kind).name!r} learned state from "
                    f"the training data, which prune() does not have: refit with "
                    f"pruner={pruner!r}, pruner_params={{'alpha': {alpha!r}}}"
                )
        params = {**self.get_params(deep=False), "pruner": pruner, "pruner_params": pruner_params}
        pruned = type(self)(**params)
        labels = getattr(self, "classes_", None)
        composition = pruned._composition_for(labels, source.statistics[:1])
        context = PruningContext(composition, None, np.random.default_rng(0))
        tree = composition.pruner.prune(source, context)
        grown_state = source.component_state.get("target")
        if composition.target.state_per_node and grown_state:
            # the grown tree keeps every node's state: the pruned tree takes its nodes'
            kept = nodes_kept(source, tree)
            tree.component_state["target"] = composition.target.state_of_nodes(grown_state, kept)
        tree.component_state["evaluator"] = {}
        tree.component_state["confidence"] = {}
        pruned.tree_, pruned.composition_ = tree, composition
        pruned._grown_tree = getattr(self, "_grown_tree", None)
        for name in (
            "classes_",
            "n_classes_",
            "n_features_in_",
            "feature_names_in_",
            "categories_",
            "_column_keys",
            "reject_threshold_",
        ):
            if hasattr(self, name):
                setattr(pruned, name, getattr(self, name))
        return pruned

    def xpred(self, X, y, xval=10, cp=None, *, sample_weight=None, seed=0):
        """rpart's ``xpred.rpart``: cross-validated predictions of every training row at
        each cp, an (n_samples, len(cp)) array. The rows of a fold are predicted by a tree
        grown on the other folds with this estimator's parameters and pruned at that cp as
        ``xpred.rpart`` prunes it: at cp times the full data's root risk per unit of weight
        (rpart's ``tests/xpred1.R``), not times the fold tree's own root risk. Predictions
        are labels (an abstention is ``abstain_value``), or the target's predictions for a
        target that decides among no labels.

        ``xval``: the number of folds (stratified, dealt with ``seed``, as the cost-
        complexity pruner deals them) or a fold id per row (rpart's vector form). ``cp``:
        default rpart's: the geometric means of adjacent rows of this model's cp table, the
        first row at (1 + its cp) / 2. X and y must be the training data (a fitted tree
        does not keep it)."""
        self._check_fitted()
        if getattr(self, "n_outputs_", 1) > 1:
            raise ValueError(
                f"xpred gives one prediction per row and cp; this model predicts "
                f"{self.n_outputs_} outputs: cross-validate one model per output, or use "
                "sklearn.model_selection.cross_val_predict"
            )
        if cp is None:
            table = self.pruning_path_
            if "cp" not in table:
                raise AttributeError(
                    f"pruner {self.composition_.pruner.name!r} records no cp table: pass cp= "
                    "or fit with pruner='cost_complexity'"
                )
            # the table runs from the largest tree to the root; rpart's from the root
            cps = np.asarray(table["cp"], dtype=np.float64)[::-1]
            cp = np.sqrt(cps * np.concatenate([[10.0], cps[:-1]]))
            cp[0] = (1.0 + cps[0]) / 2.0
        cp = np.atleast_1d(np.asarray(cp, dtype=np.float64))
        if cp.ndim != 1 or not (np.isfinite(cp).all() and (cp >= 0).all()):
            raise ValueError("cp must be finite numbers >= 0")
        y = np.asarray(y)
        n = y.shape[0]
        target, labeler = self.composition_.target, self.composition_.labeler
        if isinstance(xval, numbers.Integral) and not isinstance(xval, bool):
            if xval < 2:
                raise ValueError(f"xval must be >= 2 folds or a fold id per row, got {xval}")
            # the strata the pruner deals folds by: the target's (classes; none for a
            # measurement), so the same seed gives the pruner's folds
            strata = target.strata(target.encode(y, n).rows, labeler)
            fold = stratified_folds(strata, int(xval), np.random.default_rng(seed))
        else:
            fold = np.asarray(xval)
            if fold.shape != (n,):
                raise ValueError(
                    f"xval must be a number of folds or one fold id per row ({n}), got shape "
                    f"{fold.shape}"
                )
        params = {**self.get_params(deep=False), "pruner": "none", "pruner_params": None}
        params.update({key: None for key in ("reject", "calibration") if key in params})
        weight = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        if weight is not None and weight.shape != (n,):
            raise ValueError(
                f"sample_weight must hold one weight per row ({n}), got shape {weight.shape}"
            )
        risk = self._cp_risk()
        # a tree's risks are per unit of its root's weight, so this model's root risk is
        # rpart's toprisk / total weight: the fold's absolute alpha cp x toprisk x (fold
        # weight / total weight) in the fold tree's units
        root_risk = self._root_risk(risk)
        out = None
        for k in np.unique(fold):
            test, train = np.flatnonzero(fold == k), np.flatnonzero(fold != k)
            if test.size == 0 or train.size == 0:
                continue
            fold_weights = None if weight is None else weight[train]
            grown = type(self)(**params).fit(_rows(X, train), y[train], sample_weight=fold_weights)
            for j, value in enumerate(cp):
                alpha = float(value) * root_risk
                predicted = grown.prune(alpha=alpha, risk=risk).predict(_rows(X, test))
                if out is None:
                    out = np.empty((n, cp.size), dtype=np.asarray(predicted).dtype)
                out[test, j] = predicted
        return out

    def _root_risk(self, risk: str) -> float:
        """The root's risk (``risk``: "prediction" or "impurity") per unit of its weight:
        what rpart's cp is relative to."""
        source = getattr(self, "_grown_tree", None) or self.tree_
        composition = self.composition_
        return float(node_risk(source, risk, composition.labeler, composition.target)[0])

    def _cp_risk(self) -> str:
        return self.composition_.pruner.get_params().get("risk", "prediction")


def _rows(X, rows):
    """Rows of an array or a DataFrame."""
    return X.iloc[rows] if hasattr(X, "iloc") else np.asarray(X)[rows]


def r_vector_text(values: list[str], width: int = 80) -> str:
    """``values`` as R prints a character vector without quotes: entries padded to one
    width, as many per line as fit in ``width``, each line led by the index of its first
    entry in brackets (``[1] Age   Start``)."""
    cell = max(len(v) for v in values)
    label = len(f"[{len(values)}]")
    per_line = max(1, (width - label) // (cell + 1))
    lines = []
    for start in range(0, len(values), per_line):
        cells = " ".join(v.ljust(cell) for v in values[start : start + per_line])
        lines.append(f"{f'[{start + 1}]'.rjust(label)} {cells}".rstrip())
    return "\n".join(lines)


def cp_table_text(table: dict, root_error: float, root_weight: float, n_samples: int) -> str:
    """The cp table as rpart prints it: root first (largest cp), one row per nested
    subtree, with ``xerror``/``xstd`` when the subtree was chosen by cross-validation; the
    subtree in use is marked with ``*``."""
    header = ["CP", "nsplit", "rel error"]
    columns = [table["cp"], table.get("n_splits", table["n_leaves"] - 1), table["rel_error"]]
    formats = ["{:.6f}", "{:d}", "{:.5f}"]
    if "xerror" in table:
        header += ["xerror", "xstd"]
        columns += [table["xerror"], table["xstd"]]
        formats += ["{:.5f}", "{:.5f}"]
    intro = (
        f"Root node error: {root_error:g}/{root_weight:g} = "
        f"{root_error / root_weight if root_weight else 0.0:.5f}"
    )
    return _path_text(intro, n_samples, header, columns, formats, table["selected"])


def split_complexity_text(table: dict, n_samples: int) -> str:
    """LeBlanc & Crowley's pruning path as a table in ``printcp``'s layout: root first,
    one row per nested subtree with its alpha (chi-square per split), splits, G(T) and,
    when chosen by the bootstrap, its optimism and the corrected split complexity
    G(T) - optimism - penalty x splits; ``*`` marks the subtree in use."""
    header = ["alpha", "nsplit", "G(T)"]
    columns = [table["alphas"], table["n_splits"], table["split_statistic"]]
    formats = ["{:.4f}", "{:d}", "{:.4f}"]
    if "optimism" in table:
        header += ["optimism", "corrected"]
        columns += [table["optimism"], table["corrected_complexity"]]
        formats += ["{:.4f}", "{:.4f}"]
    intro = "Split complexity (LeBlanc & Crowley): G(T) = sum of the splits' chi-squares"
    return _path_text(intro, n_samples, header, columns, formats, table["selected"])


def _path_text(intro, n_samples, header, columns, formats, selected) -> str:
    """printcp's layout of a pruning path: ``intro``, the rows, then one line per subtree
    from the root (the last column entry) to the full tree, ``*`` at the one in use."""
    order = np.arange(len(selected))[::-1]
    rows = [
        [
            f.format(int(c[k]) if f == "{:d}" else float(c[k]))
            for f, c in zip(formats, columns, strict=True)
        ]
        for k in order
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    label = len(str(len(rows)))
    lines = [
        intro,
        "",
        f"n= {n_samples}",
        "",
        " " * (label + 1) + " ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)),
    ]
    for number, (k, row) in enumerate(zip(order, rows, strict=True), start=1):
        mark = " *" if selected[k] else ""
        cells = " ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True))
        lines.append(f"{str(number).ljust(label)} {cells}{mark}")
    return "\n".join(lines) + "\n"

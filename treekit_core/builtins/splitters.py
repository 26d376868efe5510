"""Built-in splitter ``exhaustive``: every midpoint between consecutive distinct values."""

from __future__ import annotations

import functools
import math
import numbers
from typing import ClassVar

import attrs
import numpy as np

from treekit_core.builtins.c45_nominal import c45_multiway_splits, c45_nominal_split
from treekit_core.builtins.logrank_nominal import logrank_nominal_split
from treekit_core.builtins.nominal_subsets import (
    best_nominal_split,
    compiled_nominal_search,
    nominal_question_fields,
    nominal_question_wins,
    split_information,
)
from treekit_core.components import Split, Splitter
from treekit_core.components.errors import CompositionError
from treekit_core.engine.constraints import VALUE_LOWER, VALUE_UPPER
from treekit_core.engine.tree import tree_from_table
from treekit_core.engine.validation import feature_label
from treekit_core.registry import get_registry

NOMINAL_SPLITS = ("subset", "multiway")
#: Where the exhaustive splitter sends the rows missing a feature's value: "shares"
#: (C4.5's: a cut is judged on the known values, its drop scaled by their weight, and a
#: missing value goes down both branches by the known weight's shares) or "one_side"
#: (scikit-learn's since 1.3, LightGBM's: all of them to the side that drops impurity
#: most, chosen with the cut, and a value missing at prediction goes that way).
MISSING_RULES = ("shares", "one_side")


def _check_question_names(instance, attribute, value):
    if not all(isinstance(name, str) and name for name in value):
        raise ValueError(f"questions must be names of question kinds, got {list(value)!r}")


#: The row searches the presorted builder grows a whole tree with (the others, node by
#: node); None: a criterion that sums statistics.
FUSED_ROW_SEARCHES = (None, "absolute_deviation_search")

#: What a row-search kernel returns as its feature when the node's rows are ones its
#: test cannot score (Gray's search and rows with delayed entry).
REFUSED_ROWS = -2

#: The searches from a node's rows this splitter provides (Criterion.row_search): the
#: kernel module and function, the target's row columns it reads (the evidence kind fixes
#: them), what it scores (for refusals), and whether nominal features are searched too
#: (:mod:`.logrank_nominal`: the log-rank statistic of subsets and of categories).
ROW_SEARCHES = {
    "absolute_deviation_search": (
        "treekit_core.kernels.absolute_deviation",
        "best_absolute_split_of_node",
        (0,),
        "medians",
        False,
    ),
    "logrank_search": (
        "treekit_core.kernels.logrank",
        "best_logrank_split_of_node",
        (0, 1, 2),
        "log-rank statistics",
        True,
    ),
    "gray_search": (
        "treekit_core.kernels.gray",
        "best_gray_split_of_node",
        (3, 1, 0, 2),
        "Gray's statistics",
        False,
    ),
}

#: Weka's comparison tolerance (Utils.SMALL).
WEKA_SMALL = 1e-6


def refuse_scored_nominal(splitter, criterion, data) -> None:
    """For splitters that score threshold cuts with a criterion's split score but search
    nominal features by impurity drops (the shared subset and multiway searches)."""
    if type(criterion).split_score is not None and data.nominal_features.size:
        j = feature_label(int(data.nominal_features[0]), data.feature_names)
        raise CompositionError(
            f"splitter {splitter.name!r} cannot search nominal feature {j} with criterion "
            f"{criterion.name!r}: the subset and multiway searches score impurity drops, "
            "and the criterion scores splits its own way; encode the feature, or use a "
            "criterion without a split score"
        )


@attrs.define(slots=False)
class Exhaustive(Splitter):
    """CART's search: for every feature, every midpoint between consecutive distinct values;
    for a nominal feature, the best subset question (CART) or, with
    ``nominal_split="multiway"``, one branch per category (the handout's non-binary split).

    With ``gain_ratio=True`` each feature's best question (by impurity drop) competes on
    gain ratio, drop / SplitInfo (the handout's; missing values count as one more part of
    the split information, as in C4.5); otherwise on the impurity drop itself.
    Honours min_samples_leaf (counted in rows) and min_weight_fraction_leaf (in weight).
    Works with fractional sample weights. Ties are broken by the first feature (in
    candidate order) and the leftmost threshold.

    ``questions``: names of further question kinds to search at every node, kinds that
    declare range candidates (an interval question, for example); one of them is chosen
    only where it drops impurity strictly more than every threshold and nominal question.
    Searched by compiled kernels, node by node (the presorted builder knows thresholds
    only).

    ``missing`` (:data:`MISSING_RULES`): ``"shares"`` (C4.5's, the default) or
    ``"one_side"`` (scikit-learn's ``DecisionTree*`` since 1.3: every row missing the
    feature goes to the side chosen with the cut, tried right then left, and the cut of
    the known values from the missing ones; a feature without missing rows at a node
    sends a missing value to the child with more rows). Threshold questions only: nominal
    features, gain ratio, further question kinds and criteria scored from rows or by a
    split score are refused with it.
    """

    name: ClassVar[str] = "exhaustive"
    handles_missing: ClassVar[bool] = True
    provides: ClassVar[frozenset] = Splitter.provides | {
        "fused_builder",
        "split_scores",
        "absolute_deviation_search",
        "logrank_search",
        "gray_search",
        "monotonic_constraints",
        "interaction_constraints",
    }
    description: ClassVar[str] = "every midpoint between consecutive distinct values (CART)"
    nominal_split: str = attrs.field(
        default="subset", validator=attrs.validators.in_(NOMINAL_SPLITS)
    )
    gain_ratio: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))
    questions: tuple = attrs.field(default=(), converter=tuple, validator=_check_question_names)
    missing: str = attrs.field(default="shares", validator=attrs.validators.in_(MISSING_RULES))

    def check_composition(self, composition) -> None:
        """Monotonic constraints and range questions do not mix: a range question sends
        the middle of a feature's values one way, which no order of the values survives.
        Missing values on one side are searched for threshold questions scored by
        impurity drops."""
        if self.missing == "one_side":
            criterion = composition.criterion
            clash = (
                "gain_ratio=True (C4.5's, which counts missing values as a part)"
                if self.gain_ratio
                else f"question kind {self.questions[0]!r}"
                if self.questions
                else f"criterion {criterion.name!r}, scored from rows or by its own split score"
                if type(criterion).row_search is not None or type(criterion).split_score is not None
                else None
            )
            if clash is not None:
                raise CompositionError(
                    f"splitter {self.name!r} with missing='one_side' searches threshold "
                    f"questions by impurity drops; it cannot search with {clash}: use "
                    "missing='shares'"
                )
        if composition.constraints.has_monotonic and self.questions:
            raise CompositionError(
                f"splitter {self.name!r} cannot keep monotonic_cst while searching question "
                f"kind {self.questions[0]!r}: a range of a feature's values sent one way "
                "breaks any order of them; drop splitter_params['questions']"
            )

    def prepare(self, data, criterion, rules):
        from treekit_core.kernels.specialised import criterion_kernels

        refuse_scored_nominal(self, criterion, data)
        if self.missing == "one_side" and data.nominal_features.size:
            j = feature_label(int(data.nominal_features[0]), data.feature_names)
            raise CompositionError(
                f"splitter {self.name!r} with missing='one_side' searches threshold questions; "
                f"nominal feature {j} would send its missing values by shares: encode it, or "
                "use missing='shares'"
            )
        if type(criterion).row_search is not None:
            return self._prepare_row_search(data, criterion)
        kernels = criterion_kernels(criterion, n_statistics=data.n_statistics)
        return (
            kernels,
            kernels.impurity,
            criterion.impurity_params(data.n_statistics),
            data,
            self._range_searches(criterion),
        )

    def _prepare_row_search(self, data, criterion):
        """The state of a search from the node's rows (:data:`ROW_SEARCHES`: the kernel for
        the criterion's row search and the target's columns it reads); nominal features
        and further question kinds are refused, their searches add statistics up."""
        import importlib

        module, kernel, columns, scores, nominal = ROW_SEARCHES[type(criterion).row_search]
        if data.nominal_features.size and not nominal:
            j = feature_label(int(data.nominal_features[0]), data.feature_names)
            raise CompositionError(
                f"splitter {self.name!r} cannot search nominal feature {j} with criterion "
                f"{criterion.name!r}: its subset and multiway searches add statistics up, and "
                f"the criterion scores {scores}; encode the feature"
            )
        if self.questions:
            raise CompositionError(
                f"splitter {self.name!r} cannot search question kind {self.questions[0]!r} "
                f"with criterion {criterion.name!r}: the range search adds statistics up, "
                f"and the criterion scores {scores}"
            )
        kernel = getattr(importlib.import_module(module), kernel)
        columns = criterion.row_columns(columns, data.evidence.shape[1])
        read = tuple(np.ascontiguousarray(data.evidence[:, c]) for c in columns)
        return ("rows", kernel, read, data, tuple(criterion.row_search_arguments()), criterion)

    def _range_searches(self, criterion) -> list:
        """(question kind, compiled search) for every kind named in ``questions``: kinds
        that declare range candidates (:attr:`treekit_core.Question.range_count`)."""
        if not self.questions:
            return []
        from treekit_core.kernels.range_search import range_search_kernel

        kinds = get_registry().components("question")
        searches = []
        for name in self.questions:
            if name not in kinds:
                raise CompositionError(
                    f"splitter {self.name!r}: questions names {name!r}, which is no registered "
                    f"question kind (registered: {sorted(kinds)})"
                )
            kind = kinds[name].cls
            if kind.range_count is None or kind.range_candidate is None:
                raise CompositionError(
                    f"splitter {self.name!r} cannot search question kind {name!r}: the kind "
                    "declares no range candidates (range_count and range_candidate), which is "
                    "how this splitter enumerates a kind's questions"
                )
            if type(criterion).split_score is not None:
                raise CompositionError(
                    f"splitter {self.name!r} cannot search question kind {name!r} with "
                    f"criterion {criterion.name!r}: the range search scores impurity drops, "
                    "and the criterion scores splits its own way"
                )
            if self.gain_ratio:
                raise CompositionError(
                    f"splitter {self.name!r} with gain_ratio=True cannot search question kind "
                    f"{name!r}: gain ratio is defined here for threshold and nominal questions"
                )
            kernel = range_search_kernel(
                type(criterion).impurity, kind.range_count, kind.range_candidate, name
            )
            searches.append((kind(), kernel))
        return searches

    def build_tree(self, composition, data, rng, rules):
        """Grow the whole tree with the presorted builder (the same tree as the
        node-by-node loop, faster, on ``composition.fit_threads()`` threads; nominal
        features by subset or multi-way questions, in one thread), or, for a criterion searched from
        rows (absolute error), with its compiled builder (one thread); None where
        :meth:`grows_in_one_call` says no."""
        grows, nominal = self._one_call(composition, data)
        if not grows:
            return None  # the logrank search and data the presorted growth declines
        from treekit_core.kernels.builder import build_table
        from treekit_core.kernels.growth import rule_vector

        max_features, seed = composition.feature_sampler.fused_settings(rng, data.n_features)
        criterion = composition.criterion
        if type(criterion).row_search is not None:
            self._prepare_row_search(data, criterion)  # the same refusals as node by node
            from treekit_core.kernels.absolute_deviation import grow_absolute_error_tree
            from treekit_core.kernels.builder import kept_first, presort, stable_order

            response = np.ascontiguousarray(data.evidence[:, 0])
            weight = np.ascontiguousarray(data.weight, dtype=np.float64)
            # every feature's rows sorted, then the responses' (the last row)
            order = np.empty((data.n_features + 1, data.n_samples), dtype=np.int32)
            order[:-1] = presort(data.X, composition.fit_threads())
            order[-1] = stable_order(response)
            order, n_rows = kept_first(order, weight)
            tables = [  # handed on in a list: tree_from_table frees it once it is copied out
                grow_absolute_error_tree(
                    response, data.X, weight, order, n_rows, rule_vector(rules), max_features, seed
                )
            ]
            del order  # the presort: freed before the tree is made
            return tree_from_table(tables, data.n_features)
        constraints = composition.constraints
        signs = limits = None
        if constraints.has_monotonic:
            value = composition.target.monotone_value(data.n_statistics)
            signs = constraints.signs(value)
            limits = constraints.limits(value, -np.inf, np.inf)
        tables = [  # handed on in a list: tree_from_table frees it once it is copied out
            build_table(
                criterion,
                criterion.impurity_params(data.n_statistics),
                data.X,
                data.evidence,
                data.weight,
                rule_vector(rules),
                max_features,
                seed,
                composition.fit_threads(),
                data.cache.get("presort"),
                signs,
                limits,
                nominal,
            )
        ]
        return self._sides_of_missing_values(
            self._tree_of_table(composition, tables, data, signs is not None)
        )

    @staticmethod
    def _tree_of_table(composition, tables, data, constrained):
        """The presorted builder's table (the one element of ``tables``, handed on to
        :func:`tree_from_table`, which frees it) as a tree: subset questions where the
        table holds a category mask, multi-way questions where it holds a number of
        branches, the question kinds numbered in the order the nodes first ask them (as
        the node-by-node loop numbers them); every node's value interval under monotonic
        constraints (engine/constraints.py). A table without those columns (no
        constraint, no nominal feature: :func:`.growth.keeps_trailing`) asks thresholds
        only."""
        from treekit_core.kernels.growth import LEFT, SUMS, trailing_column

        if tables[0].shape[1] == SUMS + data.n_statistics:
            return tree_from_table(tables, data.n_features, data.n_statistics)

        def column(name):
            return np.ascontiguousarray(tables[0][:, trailing_column(data.n_statistics, name)])

        branches = column("branches")
        questions, question, fields = nominal_question_fields(
            column("category_mask"), branches, tables[0][:, LEFT] >= 0, composition.registry
        )
        bounds = (column("value_lower"), column("value_upper")) if constrained else None
        tree = tree_from_table(
            tables,
            data.n_features,
            data.n_statistics,
            questions=questions,
            question=question,
            node_fields=fields,
            n_branches=branches,
        )
        if bounds is not None:
            tree.node_fields[VALUE_LOWER], tree.node_fields[VALUE_UPPER] = bounds
        return tree

    def _sides_of_missing_values(self, tree):
        """A tree the presorted builder grew (no missing value in its rows) under
        ``missing="one_side"``: every node sends a missing value to the child with more
        training rows (ties: right), scikit-learn's rule for a feature without missing
        values at a node."""
        if self.missing != "one_side":
            return tree
        internal = np.flatnonzero(tree.child_start[1:] - tree.child_start[:-1] == 2)
        first = tree.child_start[internal]
        left, right = tree.child_ids[first], tree.child_ids[first + 1]
        to_left = (tree.n_samples[left] > tree.n_samples[right]).astype(np.float64)
        shares = tree.child_shares.copy()
        shares[first], shares[first + 1] = to_left, 1.0 - to_left
        tree.set_child_shares(shares)
        return tree

    def grows_in_one_call(self, composition, data) -> bool:
        """Features without missing values, no gain ratio or further question kinds, and
        a criterion scored by running sums or by absolute deviations (the log-rank search
        runs node by node); nominal features where :meth:`_fused_nominal` takes them."""
        return self._one_call(composition, data)[0]

    def _one_call(self, composition, data):
        """(whether the tree grows in one compiled call, :meth:`_fused_nominal`): what
        :meth:`grows_in_one_call` answers and :meth:`build_tree` reads, decided once."""
        row_search = type(composition.criterion).row_search
        # the compiled builder's row search is the absolute deviations' alone
        if not self._presorted_growth(data) or row_search not in FUSED_ROW_SEARCHES:
            return False, None
        if composition.stopping.max_leaf_nodes is not None:
            return False, None  # best first: the node-by-node loop grows it
        nominal = self._fused_nominal(composition, data)
        return not data.nominal_features.size or nominal is not None, nominal

    def _fused_nominal(self, composition, data):
        """What the presorted builder needs to ask the nominal features' questions
        (:func:`compiled_nominal_search` for ``nominal_split``, then whether they are
        multi-way), or None: no nominal feature, monotonic constraints, or a composition
        :func:`compiled_nominal_search` leaves to the node-by-node loop."""
        if not data.nominal_features.size or composition.constraints.has_monotonic:
            return None
        multiway = self.nominal_split == "multiway"
        found = compiled_nominal_search(composition, data, multiway)
        return None if found is None else (*found, multiway)

    def share_across_trees(self, data, n_threads: int = 1) -> None:
        """Presort X once for all trees of a forest or boosting fit, on ``n_threads``
        threads (when they grow presorted: not for a target whose statistics are no sums,
        which is searched from the rows)."""
        summarised = data.target is not None and data.target.summarises_rows
        if summarised or not self._presorted_growth(data):
            return
        from treekit_core.kernels.builder import presort

        data.cache["presort"] = presort(data.X, n_threads)

    def _presorted_growth(self, data) -> bool:
        """Whether the presorted builder may grow trees on this data: no missing value, no
        gain ratio or further question kinds."""
        return not (data.has_missing or self.gain_ratio or self.questions)

    def find_split(self, state, node, rules):
        if state[0] == "rows":
            return self._find_split_from_rows(state, node, rules)
        kernels, impurity, params, data, ranges = state
        kernel, bounds = kernels.best_split_of_node, ()
        if node.value_limits is not None:  # monotonic constraints: the bounded search
            kernel = kernels.best_split_within_bounds
            bounds = (node.constraint_signs, node.value_limits)
        if self.missing == "one_side":
            kernel, bounds = _one_side_search(impurity, node, data.n_features)
        features = node.features
        nominal = np.zeros(0, dtype=np.int64)
        if data.nominal_features.size:
            is_nominal = data.n_categories[features] > 0
            nominal, features = features[is_nominal], np.ascontiguousarray(features[~is_nominal])
        best, best_score = None, -np.inf
        groups = (
            [features]
            if not self.gain_ratio
            else [features[i : i + 1] for i in range(features.size)]
        )

        def search(compiled, candidates, *extra):
            """A compiled search of this node's rows over ``candidates`` (features)."""
            return compiled(
                params,
                data.X,
                data.evidence,
                node.rows,
                node.row_weights,
                node.statistics,
                node.weight,
                candidates,
                rules.min_samples_leaf,
                rules.min_weight_leaf,
                *extra,
            )

        for group in groups if features.size else []:
            split, score = self._threshold_split(*search(kernel, group, *bounds), data, node)
            if score > best_score:
                best, best_score = split, score
        if nominal.size:
            split, score = best_nominal_split(
                (impurity, params, data), node, rules, nominal, self.nominal_split, self.gain_ratio
            )
            if nominal_question_wins(split, score, best, best_score):
                best, best_score = split, score
        for question, range_search in ranges if features.size else []:
            found = search(range_search, features)
            feature, drop = int(found[0]), float(found[3])
            if feature < 0 or not drop > best_score:  # a kind's question must be strictly better
                continue
            threshold, fields = question.range_parameters(*(float(v) for v in found[4:8]))
            share = float(found[8])
            best = Split(
                feature,
                float(threshold),
                drop,
                dict(fields),
                question=question.name,
                branch_shares=(share, 1.0 - share),
            )
            best_score = drop
        return best

    @staticmethod
    def _gain_ratio(split, data, node) -> float:
        """The split's drop over its split information (missing values one more part),
        recorded in the split's node fields."""
        x = data.X[node.rows, split.feature]
        known = ~np.isnan(x)
        left = node.row_weights[known & (x <= split.threshold)].sum()
        right = node.row_weights[known].sum() - left
        info = split_information(np.array([left, right]), node.weight)
        score = split.improvement / info if info > 1e-12 else -np.inf
        split.node_fields["gain_ratio"] = score
        return score

    def _find_split_from_rows(self, state, node, rules):
        """The best threshold question by a row search (gain ratio as for sums), and for
        the log-rank search the best nominal question (:mod:`.logrank_nominal`): a nominal
        question wins only where it scores strictly more, as in the impurity searches."""
        _, kernel, columns, data, extra, criterion = state
        features, nominal = node.features, np.zeros(0, dtype=np.int64)
        if data.nominal_features.size:
            is_nominal = data.n_categories[features] > 0
            nominal, features = features[is_nominal], np.ascontiguousarray(features[~is_nominal])
        groups = [features] if not self.gain_ratio else [[f] for f in features]
        best, best_score = None, -np.inf
        for group in groups if features.size else []:
            found = kernel(
                *columns,
                data.X,
                node.rows,
                node.row_weights,
                np.ascontiguousarray(group, dtype=np.int64),
                rules.min_samples_leaf,
                rules.min_weight_leaf,
                *extra,
            )
            if found[0] == REFUSED_ROWS:
                raise ValueError(
                    f"criterion {criterion.name!r} cannot score rows that entered late "
                    "(delayed entry): its test has no risk sets from entry; fit without entry "
                    "or use 'logrank_cause'"
                )
            split, score = self._threshold_split(*found, data, node)
            if score > best_score:
                best, best_score = split, score
        if nominal.size:
            split, score = logrank_nominal_split(
                kernel, *columns, data, node, rules, nominal, self.nominal_split
            )
            if split is not None and self.gain_ratio:
                info = split_information(np.asarray(split.branch_shares) * node.weight, node.weight)
                score = score / info if info > 1e-12 else -np.inf
                split.node_fields["gain_ratio"] = score
            if nominal_question_wins(split, score, best, best_score):
                best, best_score = split, score
        return best

    def _threshold_split(self, feature, threshold, drop, share, data, node):
        """(Split, score) of a kernel's best threshold cut, (None, -inf) for none (feature
        -1); the score is the drop, or with gain_ratio the gain ratio."""
        if feature < 0:
            return None, -np.inf
        split = Split(int(feature), float(threshold), float(drop), {"missing_left": float(share)})
        return split, self._gain_ratio(split, data, node) if self.gain_ratio else float(drop)

    node_field_names = ()


def _one_side_search(impurity, node, n_features) -> tuple:
    """(the compiled search with missing values on one side, its constraint arguments:
    the node's signs and value limits, or none and unbounded)."""
    from treekit_core.kernels.one_side_search import best_split_missing_on_one_side

    if node.value_limits is not None:
        bounds = (node.constraint_signs, node.value_limits)
    else:
        bounds = (np.zeros(n_features), np.array([-np.inf, np.inf]))
    return functools.partial(best_split_missing_on_one_side, impurity), bounds


def _check_min_objects(instance, attribute, value):
    if isinstance(value, bool) or not (
        isinstance(value, numbers.Real) and math.isfinite(value) and value > 0
    ):
        raise ValueError(
            f"min_objects must be a number > 0 (J48's -M, an instance count), got {value!r}"
        )


@attrs.define(slots=False)
class C45(Splitter):
    """C4.5 release 8's split rules (as Weka 3.6's J48), docs/algorithms.md section 1.1.

    Numeric feature: cuts between values more than 1e-5 apart with at least
    MinSplit = clamp(0.1 * known weight / n_classes, min_objects, 25) weight on each side;
    gain on the known values times their weight fraction; minus log2(Tries) / |D|. The
    threshold snaps to the largest training value not above the midpoint.
    Nominal feature (:mod:`treekit_core.builtins.c45_nominal`): one branch per category
    (valid when two categories hold min_objects), or with ``binary_nominal=True`` (J48
    ``-B``) "= v" against the rest.
    Features with a valid split and at least the average gain (minus 1e-3) compete on gain
    ratio; as J48, a nominal feature with at least 0.3 x n_training_rows categories counts
    in the average only when every feature is such. The gain uses the composition's
    criterion: ``criterion="entropy"`` gives C4.5.
    """

    # MinSplit divides the weight by the number of classes, and gain ratio is C4.5's for
    # class entropies: defined for class labels only
    requires: ClassVar[dict] = {"target": frozenset({"class_decisions"})}
    provides: ClassVar[frozenset] = Splitter.provides | {
        "monotonic_constraints",
        "interaction_constraints",
    }
    name: ClassVar[str] = "c45"
    handles_missing: ClassVar[bool] = True
    description: ClassVar[str] = (
        "C4.5 release 8 gain ratio with MinSplit, MDL penalty and average-gain filter"
    )
    min_objects: float = attrs.field(default=2.0, validator=_check_min_objects)
    binary_nominal: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))

    def prepare(self, data, criterion, rules):
        from treekit_core.kernels.c45 import c45_feature_scores

        sorted_values = [np.unique(column[~np.isnan(column)]) for column in data.X.T]
        return (
            c45_feature_scores,
            criterion.compiled_impurity(),
            criterion.impurity_params(data.n_statistics),
            data,
            sorted_values,
        )

    def feature_scores(self, state, node, features):
        """Per feature of ``features`` (int64 array): C4.5's penalised information gain (NaN
        when the feature has no usable cut), gain ratio, threshold (the largest training
        value not above the cut's midpoint) and the share of the known weight on the left
        (where samples with a missing value go)."""
        kernel, impurity, params, data, sorted_values = state
        m = features.shape[0]
        info_gain, gain_ratio, split_point, left_weight = (
            np.empty(m),
            np.empty(m),
            np.empty(m),
            np.empty(m),
        )
        kernel(
            impurity,
            params,
            data.X,
            data.evidence,
            node.rows,
            node.row_weights,
            data.weight,
            features,
            float(self.min_objects),
            data.n_statistics,
            info_gain,
            gain_ratio,
            split_point,
            left_weight,
            *node.search_constraints(data.X.shape[1]),
        )
        threshold = np.full(m, np.nan)
        for index in np.flatnonzero(~np.isnan(info_gain)):
            values = sorted_values[features[index]]
            # J48's setSplitPoint: the largest value v with v - split point < 1e-6
            at = np.searchsorted(values, split_point[index] + WEKA_SMALL, side="left") - 1
            threshold[index] = values[at]
        return info_gain, gain_ratio, threshold, left_weight

    def find_split(self, state, node, rules):
        if node.weight < 2 * self.min_objects:
            return None
        features = node.features
        data = state[3]
        categories = (
            data.n_categories[features]
            if data.n_categories is not None
            else np.zeros(features.size, dtype=np.int64)
        )
        nominal = categories > 0
        m = features.shape[0]
        info_gain, gain_ratio = np.full(m, np.nan), np.zeros(m)
        threshold, left_weight = np.zeros(m), np.zeros(m)
        numeric = np.flatnonzero(~nominal)
        if numeric.size:
            scores = self.feature_scores(state, node, np.ascontiguousarray(features[numeric]))
            info_gain[numeric], gain_ratio[numeric], threshold[numeric], left_weight[numeric] = (
                scores
            )
        splits = {}
        positions = np.flatnonzero(nominal)
        if positions.size and not self.binary_nominal:  # every feature in one compiled call
            found = c45_multiway_splits(state[1:4], node, features[positions], self.min_objects)
            for a, scores in found.items():
                info_gain[positions[a]], gain_ratio[positions[a]], splits[positions[a]] = scores
        else:
            for position in positions:
                found = c45_nominal_split(
                    state[1:4], node, int(features[position]), self.min_objects, True
                )
                if found is not None:
                    info_gain[position], gain_ratio[position], splits[position] = found
        # J48: a nominal feature with very many categories counts in the average gain only
        # when every feature is one
        many = nominal & (categories >= 0.3 * data.n_samples)
        in_average = None if many.all() else ~many
        best = c45_choice(info_gain, gain_ratio, in_average)
        if best < 0:
            return None
        if best in splits:
            return splits[best]
        return Split(
            int(features[best]),
            float(threshold[best]),
            float(info_gain[best]),
            {"gain_ratio": float(gain_ratio[best]), "missing_left": float(left_weight[best])},
        )

    node_field_names = ("gain_ratio", "missing_left")


def c45_choice(info_gain, gain_ratio, in_average=None) -> int:
    """C4.5 release 8's choice among features (NaN gain: no usable cut): the first, in
    feature order, of the best gain ratio among those whose gain is at least the average
    gain minus 1e-3; -1 when none qualifies. ``in_average`` (default: every usable feature)
    says which usable features count in the average (J48 leaves out nominal features with
    very many categories)."""
    usable = ~np.isnan(info_gain)
    counted = usable if in_average is None else usable & in_average
    if not counted.any():
        return -1
    average = info_gain[counted].mean()
    best, best_ratio = -1, 0.0
    for index in np.flatnonzero(usable):
        if info_gain[index] >= average - 1e-3 and gain_ratio[index] > best_ratio + 1e-6:
            best, best_ratio = int(index), gain_ratio[index]
    return best

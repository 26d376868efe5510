"""A treekit tree or forest as an ONNX ``TreeEnsembleClassifier`` (ai.onnx.ml opset 3), or,
for a regressor, an ONNX ``TreeEnsembleRegressor``."""

from __future__ import annotations

import numpy as np

from treekit_core.export.hard_trees import (
    NotExportableError,
    check_argmax_labels,
    check_hard,
    check_missing_rule,
    fitted_trees,
    float32_floor,
    missing_branch,
)

TARGET = "ONNX's TreeEnsembleClassifier"
FLT_MAX = float(np.finfo(np.float32).max)


class _TreeNodes:
    """The node tuples of one ONNX tree, ids handed out as nodes are written."""

    def __init__(self, tree_id: int):
        self.tree_id = tree_id
        self.rows = []  # (id, mode, feature, value, true id, false id, missing goes true)
        self.leaf_votes = []  # (id, class, weight)

    def new_id(self) -> int:
        self.rows.append(None)
        return len(self.rows) - 1

    def branch(self, node_id, mode, feature, value, true_id, false_id, missing_true):
        self.rows[node_id] = (node_id, mode, int(feature), value, true_id, false_id, missing_true)

    def leaf(self, node_id, votes):
        self.rows[node_id] = (node_id, "LEAF", 0, 0.0, 0, 0, 0)
        self.leaf_votes.extend((node_id, k, float(w)) for k, w in enumerate(votes))


def _write(tree, nodes: _TreeNodes, scale, categories, missing) -> None:
    """Write the tree's nodes, ids handed out depth first (a parent before its children,
    as onnxruntime expects), without recursion: a tree may be thousands of levels deep.
    Ids are given on the way down; a node's tests, which name its children's ids, are
    written once every id is known."""
    own, tests, stack = {}, [], [0]
    while stack:
        node = stack.pop()
        own[node] = nodes.new_id()
        if tree.is_leaf[node]:
            nodes.leaf(own[node], tree.value[node] * scale)
            continue
        tests.append(_node_tests(tree, node, own[node], nodes, categories, missing))
        stack.extend(int(kid) for kid in tree.children(node)[::-1])
    for write in tests:
        write(own)


def _node_tests(tree, node, own_id, nodes: _TreeNodes, categories, missing):
    """Hands out the ids of ``node``'s extra tests (before its children's) and returns
    what writes its tests once every node's id is known."""
    question = tree.question_of(node)
    kids = [int(kid) for kid in tree.children(node)]
    gone = missing_branch(tree, node, missing, TARGET)
    feature, threshold = int(tree.feature[node]), float(tree.threshold[node])
    params = tree.question_params(node)
    if question.compares_threshold:
        return lambda own: nodes.branch(
            own_id,
            "BRANCH_LEQ",
            feature,
            float32_floor(threshold),
            own[kids[0]],
            own[kids[1]],
            gone == 0,
        )
    branches = question.category_branches(feature, threshold, params, len(kids))
    if branches is None:
        raise NotExportableError(
            f"{TARGET} tests one feature against a number; node {node} asks a "
            f"{question.name!r} question"
        )
    n_codes = len(categories.get(feature, ())) or len(kids)
    branches = np.asarray(branches)[:n_codes]
    # a chain of x == code tests for the codes that do not go where a missing value goes;
    # a missing or unseen code fails every test and so takes the missing branch. Links are
    # numbered before the subtrees below them (onnxruntime expects a parent before its
    # children).
    tested = [code for code in range(n_codes) if branches[code] != gone]
    # onnxruntime (1.32) merges a run of x == c tests on one feature into one set test
    # with the first test's target, so tests with different targets are kept apart by a
    # test every sample passes (x <= FLT_MAX, missing to the same place)
    apart = [i > 0 and branches[tested[i - 1]] != branches[code] for i, code in enumerate(tested)]
    links = [own_id] + [nodes.new_id() for _ in tested[1:]]
    separators = [nodes.new_id() if needed else None for needed in apart]

    def write(own):
        child_ids = [own[kid] for kid in kids]
        if not tested:  # every known code goes one way
            nodes.branch(own_id, "BRANCH_LEQ", feature, 0.0, child_ids[gone], child_ids[gone], True)
            return
        for i, code in enumerate(tested):
            next_id = links[i + 1] if i + 1 < len(tested) else child_ids[gone]
            if i + 1 < len(tested) and separators[i + 1] is not None:
                nodes.branch(
                    separators[i + 1], "BRANCH_LEQ", feature, FLT_MAX, next_id, next_id, True
                )
                next_id = separators[i + 1]
            target = child_ids[branches[code]]
            nodes.branch(links[i], "BRANCH_EQ", feature, float(code), target, next_id, False)

    return write


def _ensemble_attributes(trees, categories, missing, leaf_prefix: str) -> dict:
    """The ``nodes_*`` attributes of a tree-ensemble operator and its leaf attributes
    (``{leaf_prefix}_treeids``, ``_nodeids``, ``_ids``, ``_weights``: a classifier's class
    votes, a regressor's target values), each tree's leaves weighted 1 / n_trees."""
    written = []
    for tree_id, tree in enumerate(trees):
        nodes = _TreeNodes(tree_id)
        _write(tree, nodes, 1.0 / len(trees), categories, missing)
        written.append(nodes)
    rows = [(nodes.tree_id, *row) for nodes in written for row in nodes.rows]
    leaves = [(nodes.tree_id, *vote) for nodes in written for vote in nodes.leaf_votes]
    return {
        "nodes_treeids": [r[0] for r in rows],
        "nodes_nodeids": [r[1] for r in rows],
        "nodes_modes": [r[2] for r in rows],
        "nodes_featureids": [r[3] for r in rows],
        "nodes_values": [r[4] for r in rows],
        "nodes_truenodeids": [r[5] for r in rows],
        "nodes_falsenodeids": [r[6] for r in rows],
        "nodes_missing_value_tracks_true": [int(r[7]) for r in rows],
        f"{leaf_prefix}_treeids": [v[0] for v in leaves],
        f"{leaf_prefix}_nodeids": [v[1] for v in leaves],
        f"{leaf_prefix}_ids": [v[2] for v in leaves],
        f"{leaf_prefix}_weights": [v[3] for v in leaves],
    }


def to_onnx(model, missing: str = "warn", name: str = "treekit"):
    """An ``onnx.ModelProto``: one float32 input ``X`` [N, n_features], outputs ``label``
    [N] and ``probabilities`` [N, n_classes], in that order, from an ai.onnx.ml opset 3
    ``TreeEnsembleClassifier`` (a forest's leaves weighted 1 / n_trees, summed).

    Thresholds are rounded down to float32 (as skl2onnx rounds scikit-learn's), so on
    float32 input the tests answer exactly as treekit's. Subset and multi-way questions
    become chains of ``BRANCH_EQ`` on the category codes (nominal columns enter as codes:
    ``model.categories_``). Soft routing, oblique questions, abstention and labelers that
    do not pick the most probable class raise :class:`NotExportableError`.

    ``missing``: where treekit sends a sample with a missing value down every branch by the
    training shares (C4.5's rule, the default), the export sends it down the branch with
    the larger share, so only rows missing a tested value can differ from treekit;
    ``"warn"`` (the default) says so once (:class:`MissingValueExportWarning`),
    ``"larger_share"`` does not, ``"error"`` refuses with :class:`NotExportableError`.
    rpart's surrogate splits likewise: rows without missing values exact, a row missing a
    tested value sent down the larger share instead of its surrogates. A model that met no
    missing value at fit (``missing_at_fit_`` False) exports without the warning."""
    from onnx import TensorProto, helper

    if hasattr(model, "loss_"):  # boosted: the raw prediction, then the loss's link
        return _boosted_to_onnx(model, missing, name)
    if not model.composition_.target.predicts_labels():
        return _regressor_to_onnx(model, missing, name)
    if getattr(model, "n_outputs_", 1) > 1:
        raise NotExportableError(
            f"{TARGET} labels each sample with one class; this model predicts "
            f"{model.n_outputs_} outputs' labels (export one model per output)"
        )
    check_hard(model, TARGET)
    check_argmax_labels(model, TARGET)
    trees = fitted_trees(model)
    check_missing_rule(missing, model, TARGET)
    categories = getattr(model, "categories_", {}) or {}
    attributes = _ensemble_attributes(trees, categories, missing, "class")
    classes = np.asarray(model.classes_)
    if classes.dtype.kind in "biu" or (
        classes.dtype.kind == "f" and np.all(classes == np.round(classes))
    ):
        labels = {"classlabels_int64s": [int(c) for c in classes]}
        label_type = TensorProto.INT64
    else:
        labels = {"classlabels_strings": [str(c) for c in classes]}
        label_type = TensorProto.STRING
    ensemble = helper.make_node(
        "TreeEnsembleClassifier",
        ["X"],
        ["ensemble_label", "probabilities"],
        domain="ai.onnx.ml",
        **attributes,
        post_transform="NONE",
        **labels,
    )
    # The label is the first most probable class, as treekit decides; the operator's own
    # label output is not used: onnxruntime reads two-class scores its own way.
    if label_type == TensorProto.INT64:
        label_values = helper.make_tensor(
            "classes", TensorProto.INT64, [len(classes)], labels["classlabels_int64s"]
        )
    else:
        label_values = helper.make_tensor(
            "classes",
            TensorProto.STRING,
            [len(classes)],
            [c.encode() for c in labels["classlabels_strings"]],
        )
    nodes = [
        ensemble,
        helper.make_node("Constant", [], ["classes"], value=label_values),
        helper.make_node("ArgMax", ["probabilities"], ["best"], axis=1, keepdims=0),
        helper.make_node("Gather", ["classes", "best"], ["label"], axis=0),
    ]
    return _checked_model(
        nodes,
        name,
        trees[0].n_features,
        [
            helper.make_tensor_value_info("label", label_type, [None]),
            helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [None, len(classes)]),
        ],
    )


def _checked_model(nodes, name: str, n_features: int, outputs):
    """The model of a graph of ``nodes`` with one float32 input ``X`` [N, n_features] and
    ``outputs``, opsets 17 and ai.onnx.ml 3, checked by onnx's checker."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, n_features])],
        outputs,
    )
    onnx_model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)],
        producer_name="treekit",
    )
    onnx_model.ir_version = 8
    onnx.checker.check_model(onnx_model)
    return onnx_model


def _regressor_to_onnx(model, missing: str, name: str):
    """A regressor as an ``onnx.ModelProto`` with one float32 input ``X`` [N, n_features]
    and one output ``variable`` [N, k] from an ai.onnx.ml opset 3
    ``TreeEnsembleRegressor`` (a forest's leaf values weighted 1 / n_trees, summed): what
    ``predict`` returns, for targets whose prediction is their node values (the mean of
    each of k outputs; rpart's Poisson rate)."""
    from onnx import TensorProto, helper

    target = "ONNX's TreeEnsembleRegressor"
    check_hard(model, target)
    trees = fitted_trees(model)
    check_missing_rule(missing, model, target)
    n_targets = getattr(model, "n_outputs_", 1)
    if trees[0].value.shape[1] != n_targets:
        raise NotExportableError(
            f"{target} holds the predictions per leaf; target "
            f"{model.composition_.target.name!r} stores {trees[0].value.shape[1]} values per "
            f"node and predicts {n_targets}"
        )
    categories = getattr(model, "categories_", {}) or {}
    attributes = _ensemble_attributes(trees, categories, missing, "target")
    ensemble = helper.make_node(
        "TreeEnsembleRegressor",
        ["X"],
        ["variable"],
        domain="ai.onnx.ml",
        n_targets=n_targets,
        **attributes,
        aggregate_function="SUM",
        post_transform="NONE",
    )
    return _checked_model(
        [ensemble],
        name,
        trees[0].n_features,
        [helper.make_tensor_value_info("variable", TensorProto.FLOAT, [None, n_targets])],
    )


def _boosted_to_onnx(model, missing: str, name: str):
    """A boosted model: a ``TreeEnsembleRegressor`` of one target per raw column (each
    tree's leaves add the learning rate times their values to their column; the start is
    ``base_values``), then the loss's link as ONNX operators (:attr:`Loss.onnx_link`):
    a regressor's output ``variable`` [N, 1] (identity or exp), a survival model's the
    risk score, a classifier's ``label`` [N] and ``probabilities`` [N, K] (logistic for two
    classes, softmax for more)."""
    from onnx import TensorProto, helper

    target = "ONNX's TreeEnsembleRegressor"
    check_hard(model, target)
    check_missing_rule(missing, model, target)
    loss = model.loss_
    link = loss.onnx_link
    if link not in ("identity", "exp", "logistic", "softmax"):
        raise NotExportableError(
            f"{target} with ONNX's operators after it: loss {loss.name!r} names no link "
            f"ONNX expresses (onnx_link {link!r})"
        )
    categories = getattr(model, "categories_", {}) or {}
    written = []
    for trees in model.estimators_:
        for column, tree in enumerate(trees):
            nodes = _TreeNodes(len(written))
            _write(tree, nodes, model.learning_rate, categories, missing)
            nodes.leaf_votes = [(node, column, weight) for node, _, weight in nodes.leaf_votes]
            written.append(nodes)
    rows = [(nodes.tree_id, *row) for nodes in written for row in nodes.rows]
    leaves = [(nodes.tree_id, *vote) for nodes in written for vote in nodes.leaf_votes]
    n_raw = int(model._init_raw.size)
    ensemble = helper.make_node(
        "TreeEnsembleRegressor",
        ["X"],
        ["raw"],
        domain="ai.onnx.ml",
        n_targets=n_raw,
        nodes_treeids=[r[0] for r in rows],
        nodes_nodeids=[r[1] for r in rows],
        nodes_modes=[r[2] for r in rows],
        nodes_featureids=[r[3] for r in rows],
        nodes_values=[r[4] for r in rows],
        nodes_truenodeids=[r[5] for r in rows],
        nodes_falsenodeids=[r[6] for r in rows],
        nodes_missing_value_tracks_true=[int(r[7]) for r in rows],
        target_treeids=[v[0] for v in leaves],
        target_nodeids=[v[1] for v in leaves],
        target_ids=[v[2] for v in leaves],
        target_weights=[v[3] for v in leaves],
        base_values=[float(v) for v in model._init_raw],
        aggregate_function="SUM",
        post_transform="NONE",
    )
    n_features = model.n_features_in_
    if not hasattr(model, "classes_"):
        last = "Exp" if link == "exp" else "Identity"
        return _checked_model(
            [ensemble, helper.make_node(last, ["raw"], ["variable"])],
            name,
            n_features,
            [helper.make_tensor_value_info("variable", TensorProto.FLOAT, [None, 1])],
        )
    classes = np.asarray(model.classes_)
    nodes = [ensemble]
    if n_raw == 1:  # the logistic link of one raw column: P(classes_[1])
        one = helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])
        nodes += [
            helper.make_node("Sigmoid", ["raw"], ["positive"]),
            helper.make_node("Constant", [], ["one"], value=one),
            helper.make_node("Sub", ["one", "positive"], ["negative"]),
            helper.make_node("Concat", ["negative", "positive"], ["probabilities"], axis=1),
        ]
    else:  # a column per class: the softmax (a logistic loss of several columns)
        nodes.append(helper.make_node("Softmax", ["raw"], ["probabilities"], axis=1))
    integers = classes.dtype.kind in "biu"
    label_type = TensorProto.INT64 if integers else TensorProto.STRING
    values = (
        helper.make_tensor("classes", TensorProto.INT64, [classes.size], classes.astype(int))
        if integers
        else helper.make_tensor(
            "classes", TensorProto.STRING, [classes.size], [str(c).encode() for c in classes]
        )
    )
    nodes += [
        helper.make_node("Constant", [], ["classes"], value=values),
        helper.make_node("ArgMax", ["probabilities"], ["best"], axis=1, keepdims=0),
        helper.make_node("Gather", ["classes", "best"], ["label"], axis=0),
    ]
    return _checked_model(
        nodes,
        name,
        n_features,
        [
            helper.make_tensor_value_info("label", label_type, [None]),
            helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [None, classes.size]),
        ],
    )

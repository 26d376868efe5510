"""Hard routing: each sample follows its answers to one leaf; a missing value sends it down
both branches by the node's missing share (then the result is a mixture of leaves)."""

import numpy as np
from numba import prange

from treekit_core.engine.questions import MAX_CATEGORIES, OBLIQUE, SUBSET
from treekit_core.kernels.compiling import JIT_DISABLED, jit

#: What :func:`answer` returns: the share of the sample that goes left, or MISSING.
GO_LEFT, GO_RIGHT, MISSING = 1.0, 0.0, -1.0

#: One node in 32 bytes, so a visit touches one cache line instead of several arrays.
NODE_DTYPE = np.dtype(
    [
        ("left", np.int32),
        ("right", np.int32),
        ("feature", np.int32),
        ("question", np.int32),
        ("threshold", np.float64),
        ("mask", np.int64),
        ("share", np.float64),
    ],
    align=True,
)


def pack_nodes(
    children_left, children_right, feature, threshold, question=None, mask=None, share=None
):
    nodes = np.zeros(children_left.shape[0], dtype=NODE_DTYPE)
    nodes["left"], nodes["right"] = children_left, children_right
    nodes["feature"], nodes["threshold"] = feature, threshold
    if question is not None:
        nodes["question"], nodes["mask"], nodes["share"] = question, mask, share
    # The kernels read fields as attributes (nodes[i].left): numba's records allow it, plain
    # numpy elements do not, so without the JIT (NUMBA_DISABLE_JIT=1) they get a recarray.
    return nodes.view(np.recarray) if JIT_DISABLED else nodes


@jit()
def answer(nodes, coef, X, i, node):
    """GO_LEFT, GO_RIGHT, or MISSING when the tested value is missing."""
    kind = nodes[node].question
    if kind == OBLIQUE:
        z = 0.0
        for f in range(coef.shape[1]):
            c = coef[node, f]
            if c != 0.0:
                if np.isnan(X[i, f]):
                    return MISSING
                z += c * X[i, f]
        return GO_LEFT if z <= nodes[node].threshold else GO_RIGHT
    x = X[i, nodes[node].feature]
    if np.isnan(x):
        return MISSING
    if kind == SUBSET:
        code = int(x)
        if code < 0 or code >= MAX_CATEGORIES:  # unseen category: routed like a missing value
            return MISSING
        return GO_LEFT if (nodes[node].mask >> code) & 1 else GO_RIGHT
    return GO_LEFT if x <= nodes[node].threshold else GO_RIGHT


@jit(parallel=True)
def apply_hard(X, nodes, coef):
    """Leaf id reached by every row of X (rows must have no missing tested values)."""
    n = X.shape[0]
    leaves = np.empty(n, dtype=np.int64)
    for i in prange(n):
        node = 0
        while nodes[node].left >= 0:
            if answer(nodes, coef, X, i, node) == GO_LEFT:
                node = nodes[node].left
            else:
                node = nodes[node].right
        leaves[i] = node
    return leaves


@jit(parallel=True)
def apply_thresholds(X, nodes):
    """apply_hard for trees whose every question is a threshold (the common case): no
    question-kind dispatch in the inner loop."""
    n = X.shape[0]
    leaves = np.empty(n, dtype=np.int64)
    for i in prange(n):
        node = 0
        while nodes[node].left >= 0:
            if X[i, nodes[node].feature] <= nodes[node].threshold:
                node = nodes[node].left
            else:
                node = nodes[node].right
        leaves[i] = node
    return leaves


@jit(parallel=True)
def mixture_hard(X, nodes, coef, value, max_depth):
    """Class distribution of every row: one leaf's distribution, or a mixture weighted by
    missing shares where a tested value is missing."""
    n = X.shape[0]
    n_classes = value.shape[1]
    out = np.zeros((n, n_classes))
    for i in prange(n):
        stack_node = np.empty(max_depth + 2, dtype=np.int64)
        stack_p = np.empty(max_depth + 2)
        stack_node[0] = 0
        stack_p[0] = 1.0
        top = 1
        while top > 0:
            top -= 1
            node = stack_node[top]
            p = stack_p[top]
            if nodes[node].left < 0:
                for c in range(n_classes):
                    out[i, c] += p * value[node, c]
                continue
            g = answer(nodes, coef, X, i, node)
            if g == MISSING:
                g = nodes[node].share
            if p * (1.0 - g) > 0.0:
                stack_node[top] = nodes[node].right
                stack_p[top] = p * (1.0 - g)
                top += 1
            if p * g > 0.0:
                stack_node[top] = nodes[node].left
                stack_p[top] = p * g
                top += 1
    return out

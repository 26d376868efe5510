"""Trees thousands of levels deep (issue 33): every walk over a tree is a loop, not a
recursion (Python stops at 1000 frames), so printing, exporting, reporting, drawing and
J48's pruning work at any depth and give what they give on a shallow tree."""

import json

import numpy as np
import pytest

from treekit_core import TreeClassifier

DEPTH = 1500  # past Python's default recursion limit of 1000


@pytest.fixture(scope="module")
def chain():
    """A chain: alternating labels on one feature; gini's first best threshold peels one
    row off at every level."""
    X = np.arange(DEPTH + 1, dtype=float).reshape(-1, 1)
    y = np.arange(DEPTH + 1) % 2
    model = TreeClassifier().fit(X, y)
    assert model.get_depth() == DEPTH
    return model, X, y


def test_export_text_of_a_deep_tree(chain):
    model, X, y = chain
    text = model.export_text(show_distribution=False)
    lines = text.splitlines()
    assert len(lines) == 3 * DEPTH + 1  # a branch line per non-root node, one per leaf
    assert lines[0] == "|--- x[0] <= 0.5000"
    assert lines[1] == "|   |--- class: 0"
    assert lines[-1] == "|   " * DEPTH + f"|--- class: {DEPTH % 2}"
    j48 = model.export_text(style="j48").splitlines()
    assert len(j48) == 2 * DEPTH
    assert j48[0].startswith("x[0] <= 0.5: 0 (1")


def test_html_report_tree_of_a_deep_tree(chain):
    from treekit_core.tools.report import tree_html

    model, X, y = chain
    page = tree_html(model, max_leaves=DEPTH + 1)  # room for every leaf: the whole chain
    assert page.count("<details") == DEPTH == page.count("</details>")
    assert page.count("<li>") == 2 * DEPTH == page.count("</li>")
    # by default (issue 56: a node budget) a tree of more leaves is listed to the depth
    # that fits, the subtree below each node there on one line
    from treekit_core.tools.plots import shown_depth
    from treekit_core.tools.report import HTML_LEAVES

    limit = shown_depth(model.tree_, HTML_LEAVES)
    page = tree_html(model)
    assert page.count("<details") == limit == page.count("</details>")
    assert f"{DEPTH + 1 - limit} leaves below" in page


def test_onnx_export_of_a_deep_tree_answers_as_treekit(chain):
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from treekit_core.export import to_onnx

    model, X, y = chain
    onnx_model = to_onnx(model, missing="larger_share")
    session = ort.InferenceSession(onnx_model.SerializeToString())
    labels, _ = session.run(None, {"X": X.astype(np.float32)})
    np.testing.assert_array_equal(labels, model.predict(X))


def test_plot_tree_of_a_deep_tree(chain):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from treekit_core.tools.plots import plot_tree

    model, X, y = chain
    ax = plot_tree(model, max_leaves=DEPTH + 1)
    assert len(ax.texts) > DEPTH


def test_pessimistic_pruning_of_a_deep_tree():
    # blocks of five rows of one class: the chain survives J48's pruning
    X = np.arange(3000, dtype=float).reshape(-1, 1)
    y = (np.arange(3000) // 5) % 2
    model = TreeClassifier(pruner="pessimistic").fit(X, y)
    assert model.get_depth() == 599
    np.testing.assert_array_equal(model.predict(X), y)


def test_a_deep_tree_round_trips_through_json(chain):
    model, X, y = chain
    again = type(model).from_json(json.loads(json.dumps(model.to_json())))
    np.testing.assert_array_equal(again.predict_proba(X), model.predict_proba(X))

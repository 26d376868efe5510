"""Every hookspec is documented and exercised (as datasette enforces for its hooks)."""

import inspect

import numpy as np
import pytest

from treekit_core import TreeClassifier, hookimpl, hookspecs, registered

ALL_HOOKS = sorted(
    name for name, obj in vars(hookspecs).items() if name.startswith("treekit_") and callable(obj)
)


def test_hook_list_is_complete():
    assert set(ALL_HOOKS) == set(hookspecs.REGISTRATION_HOOKS.values()) | set(
        hookspecs.LIFECYCLE_HOOKS
    )


@pytest.mark.parametrize("hook", ALL_HOOKS)
def test_hookspec_documents_arguments_and_return(hook):
    function = getattr(hookspecs, hook)
    doc = inspect.getdoc(function) or ""
    assert len(doc.splitlines()[0]) > 10, f"{hook} lacks a summary line"
    assert ":return:" in doc, f"{hook} does not document its return value"
    assert "Called" in doc or "called" in doc, f"{hook} does not say when it is called"
    for arg in inspect.signature(function).parameters:
        assert (
            f":param {arg}:" in doc or f":param int {arg}:" in doc or f":param float {arg}:" in doc
        ), f"{hook} does not document argument {arg!r}"


class Recorder:
    """Implements every hook and records the calls."""

    def __init__(self):
        self.calls = []

    def _record(self, name, **kwargs):
        self.calls.append((name, kwargs))

    @hookimpl
    def treekit_targets(self):
        self._record("treekit_targets")
        return []

    @hookimpl
    def treekit_criteria(self):
        self._record("treekit_criteria")
        return []

    @hookimpl
    def treekit_splitters(self):
        self._record("treekit_splitters")
        return []

    @hookimpl
    def treekit_propagators(self):
        self._record("treekit_propagators")
        return []

    @hookimpl
    def treekit_pruners(self):
        self._record("treekit_pruners")
        return []

    @hookimpl
    def treekit_labelers(self):
        self._record("treekit_labelers")
        return []

    @hookimpl
    def treekit_evaluators(self):
        self._record("treekit_evaluators")
        return []

    @hookimpl
    def treekit_confidences(self):
        self._record("treekit_confidences")
        return []

    @hookimpl
    def treekit_questions(self):
        self._record("treekit_questions")
        return []

    @hookimpl
    def treekit_losses(self):
        self._record("treekit_losses")
        return []

    @hookimpl
    def treekit_fit_started(self, composition, n_samples, n_features, n_classes):
        self._record(
            "treekit_fit_started", n_samples=n_samples, n_features=n_features, n_classes=n_classes
        )

    @hookimpl
    def treekit_node_split(self, node_id, depth, feature, threshold, improvement, n_samples):
        self._record(
            "treekit_node_split",
            node_id=node_id,
            depth=depth,
            feature=feature,
            threshold=threshold,
            improvement=improvement,
            n_samples=n_samples,
        )

    @hookimpl
    def treekit_fit_finished(self, composition, tree):
        self._record("treekit_fit_finished", n_nodes=tree.n_nodes)


def test_every_hook_is_called_with_its_documented_arguments():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    recorder = Recorder()
    with registered(recorder, name="recorder"):
        model = TreeClassifier(max_depth=3).fit(X, y)
    called = {name for name, _ in recorder.calls}
    assert called == set(ALL_HOOKS)
    started = [kw for name, kw in recorder.calls if name == "treekit_fit_started"]
    assert started == [{"n_samples": 200, "n_features": 3, "n_classes": 2}]
    splits = [kw for name, kw in recorder.calls if name == "treekit_node_split"]
    tree = model.tree_
    internal = np.flatnonzero(tree.children_left >= 0)
    assert [s["node_id"] for s in splits] == list(internal)
    for s in splits:
        assert (
            s["feature"] == tree.feature[s["node_id"]]
            and s["threshold"] == tree.threshold[s["node_id"]]
        )
        assert (
            s["depth"] == tree.depth[s["node_id"]]
            and s["n_samples"] == tree.n_samples[s["node_id"]]
        )
        assert s["improvement"] > 0
    finished = [kw for name, kw in recorder.calls if name == "treekit_fit_finished"]
    assert finished == [{"n_nodes": tree.n_nodes}]


def test_lifecycle_hooks_are_skipped_when_nobody_listens(monkeypatch):
    from treekit_core.registry import get_registry

    registry = get_registry()
    assert not registry.hook_has_listeners("treekit_node_split")
    calls = []
    monkeypatch.setattr(
        registry.plugin_manager.hook,
        "treekit_node_split",
        type(
            "H",
            (),
            {"get_hookimpls": lambda self: [], "__call__": lambda self, **kw: calls.append(kw)},
        )(),
    )
    TreeClassifier(max_depth=2).fit(np.arange(20.0).reshape(-1, 1), np.arange(20) % 2)
    assert calls == []

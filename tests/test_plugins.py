"""Registry: discovery by entry point, TREEKIT_LOAD_PLUGINS, names, duplicates."""

import types
from typing import ClassVar

import attrs
import pytest

from treekit_core import Criterion, PluginError, TreeClassifier, hookimpl
from treekit_core import registry as plugins
from treekit_core.builtins.criteria import gini_impurity


def _criterion_plugin(name):
    cls = attrs.define(slots=False)(
        type(
            f"C_{name}",
            (Criterion,),
            {
                "__annotations__": {"name": ClassVar[str]},
                "name": name,
                "impurity": staticmethod(gini_impurity),
            },
        )
    )
    module = types.SimpleNamespace()

    @hookimpl
    def treekit_criteria():
        return [cls]

    module.treekit_criteria = treekit_criteria
    return module, cls


class FakeDist:
    def __init__(self, name):
        self.name = name


class FakeEntryPoint:
    def __init__(self, name, dist, obj):
        self.name, self.dist, self._obj = name, FakeDist(dist), obj

    def load(self):
        return self._obj


@pytest.fixture
def fake_entry_points(monkeypatch):
    from treekit_core import builtins

    def install(*extra):
        eps = [FakeEntryPoint("treekit-core", "treekit-core", builtins), *extra]
        monkeypatch.setattr(plugins.importlib.metadata, "entry_points", lambda group: eps)

    return install


def test_entry_points_are_loaded_and_attributed(fake_entry_points, monkeypatch):
    plugin, cls = _criterion_plugin("alpha")
    fake_entry_points(FakeEntryPoint("alpha", "treekit-alpha", plugin))
    monkeypatch.delenv(plugins.LOAD_ENV, raising=False)
    registry = plugins.Registry()
    info = registry.components("criterion")["alpha"]
    assert info.cls is cls and info.distribution == "treekit-alpha"
    assert registry.components("criterion")["gini"].distribution == "treekit-core"


@pytest.mark.parametrize(
    "env,loaded",
    [("", False), ("treekit-alpha", True), ("treekit_alpha, other", True), ("other", False)],
)
def test_load_plugins_variable_restricts_distributions(fake_entry_points, monkeypatch, env, loaded):
    plugin, _ = _criterion_plugin("alpha")
    fake_entry_points(FakeEntryPoint("alpha", "treekit-alpha", plugin))
    monkeypatch.setenv(plugins.LOAD_ENV, env)
    registry = plugins.Registry()
    assert ("alpha" in registry.components("criterion")) is loaded
    assert "gini" in registry.components("criterion")  # the core always loads


def test_two_distributions_registering_one_name_is_an_error(fake_entry_points, monkeypatch):
    first, _ = _criterion_plugin("dup")
    second, _ = _criterion_plugin("dup")
    fake_entry_points(
        FakeEntryPoint("a", "treekit-first", first), FakeEntryPoint("b", "treekit-second", second)
    )
    monkeypatch.delenv(plugins.LOAD_ENV, raising=False)
    registry = plugins.Registry()
    with pytest.raises(
        PluginError, match="two plugins register the criterion 'dup'.*treekit-first.*treekit-second"
    ):
        registry.components("criterion")


def test_unknown_name_lists_installed_and_suggests():
    with pytest.raises(PluginError) as info:
        TreeClassifier(criterion="ginni").fit([[0.0], [1.0]], [0, 1])
    message = str(info.value)
    assert "unknown criterion 'ginni'" in message and "did you mean 'gini'" in message
    installed = (
        "absolute_error, causal_tree, entropy, exponential, gini, gray, grf_causal, isolation, "
        "logrank, logrank_cause, "
        "misclassification, newton, "
        "poisson, "
        "rpart_poisson, squared_error, variance"
    )
    assert installed in message


def test_unknown_splitter_without_close_match():
    with pytest.raises(
        PluginError, match="unknown splitter 'zzz'. Installed splitters: c45, exhaustive"
    ):
        TreeClassifier(splitter="zzz").fit([[0.0], [1.0]], [0, 1])


def test_instance_accepted_and_params_with_instance_refused():
    from treekit_core.builtins.criteria import Entropy

    model = TreeClassifier(criterion=Entropy()).fit([[0.0], [1.0]], [0, 1])
    assert model.composition_.criterion.name == "entropy"
    with pytest.raises(
        PluginError, match="criterion_params were given together with a ready criterion"
    ):
        TreeClassifier(criterion=Entropy(), criterion_params={"x": 1}).fit([[0.0], [1.0]], [0, 1])


def test_wrong_kind_instance_refused():
    from treekit_core.builtins.labelers import Majority

    with pytest.raises(
        PluginError, match="criterion: expected a criterion name.*labeler component 'majority'"
    ):
        TreeClassifier(criterion=Majority()).fit([[0.0], [1.0]], [0, 1])


def test_plugin_returning_non_component_is_named():
    class Bad:
        @hookimpl
        def treekit_criteria(self):
            return [object]

    registry = plugins.Registry(load_entry_points=False)
    registry.register(Bad(), "treekit-bad")
    with pytest.raises(PluginError, match="plugin 'treekit-bad' returned.*expected a subclass"):
        registry.components("criterion")


def test_installed_entry_point_of_core_is_found():
    import importlib.metadata

    names = {ep.dist.name for ep in importlib.metadata.entry_points(group="treekit")}
    assert "treekit-core" in names

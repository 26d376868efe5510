"""Compositions across plugin distributions.

These tests need the plugins under plugins/ installed; without them they skip, unless
TREEKIT_REQUIRE_PLUGINS is set (the tox env ``all`` and CI set it), where a missing plugin
fails the run instead.
"""

import importlib
import itertools
import os
import pickle

import numpy as np
import pytest

from treekit_core import CompositionError, TreeClassifier
from treekit_core.components import KINDS
from treekit_core.datasets import load_dataset
from treekit_core.registry import get_registry
from treekit_core.testing import check_component

PLUGINS = {
    "treekit_asymmetric_entropy": "treekit-asymmetric-entropy",
    "treekit_asymmetric_rules": "treekit-asymmetric-rules",
    "treekit_soft_search": "treekit-soft-search",
    "treekit_boundary_distance": "treekit-boundary-distance",
    "treekit_counterexample": "treekit-counterexample",
    "treekit_oblique": "treekit-oblique",
    "treekit_split_scores": "treekit-split-scores",
    "treekit_ctree": "treekit-ctree",
}
PARAMS = {  # components that need parameters to be composed at all, or to stay quick
    "asymmetric_thresholds": {"thresholds": [0.8, 0.3]},
    "cost_matrix": {"costs": [[0, 1], [3, 0]]},
    "udt": {"samples": 10},
    "cost_complexity": {"cv": 3},
    "ordinal_labels": {"order": ["negative", "positive"]},  # haberman's classes, in order
}


def require_plugins():
    modules = []
    for module, distribution in PLUGINS.items():
        try:
            modules.append((importlib.import_module(module), distribution))
        except ImportError:
            if os.environ.get("TREEKIT_REQUIRE_PLUGINS"):
                pytest.fail(
                    f"plugin {distribution} is required (TREEKIT_REQUIRE_PLUGINS) but not installed"
                )
            pytest.skip(f"plugin {distribution} is not installed")
    registry = get_registry()
    for module, distribution in modules:
        registry.register(module, distribution)
    return registry


@pytest.fixture
def registry():
    return require_plugins()


def test_every_plugin_component_passes_the_kit(registry):
    for kind in KINDS:
        for name, info in registry.components(kind).items():
            if info.distribution == "treekit-core":
                continue
            check_component(info.cls, PARAMS.get(name))


#: Components a composition takes only with a partner of another kind, which _base adds.
PARTNERS = {"ctree_surrogate": "surrogate"}


def _base(choice):
    base = {
        "criterion": "gini",
        "splitter": "exhaustive",
        "propagator": "hard",
        "pruner": "none",
        "labeler": "majority",
        "evaluator": "hard",
        "confidence": "probability",
    }
    # the counterexample target, criterion and labeler read the same rows
    if choice.get("target") == "counterexamples" and "criterion" not in choice:
        base["criterion"] = "counterexample_entropy"
    if choice.get("target") == "counterexamples" and "labeler" not in choice:
        base["labeler"] = "complementary"
    if choice.get("criterion") == "counterexample_entropy" and "labeler" not in choice:
        base["labeler"] = "complementary"
    if choice.get("labeler") == "complementary" and "criterion" not in choice:
        base["criterion"] = "counterexample_entropy"
    # propagator and evaluator "surrogate" come as a pair
    if choice.get("propagator") in ("surrogate", "ctree_surrogate") and "evaluator" not in choice:
        base["evaluator"] = "surrogate"
    if choice.get("evaluator") == "surrogate" and "propagator" not in choice:
        base["propagator"] = "surrogate"
    base.update(choice)
    return base


def _target_class(registry, kind, name):
    """The target a criterion reads (or the target itself); None for other kinds."""
    if kind not in ("criterion", "target"):
        return None
    cls = registry.get_class(kind, name)
    return registry.get_class("target", cls.default_target) if kind == "criterion" else cls


def _predicts_values(registry, kind, name) -> bool:
    """Whether the component reads or is a target that predicts numbers (regression, or
    censored follow-up)."""
    cls = _target_class(registry, kind, name)
    return cls is not None and not cls.decides_with_labeler


def _reads_follow_up(registry, kind, name) -> bool:
    """Whether the component reads or is a target of censored follow-up (survival)."""
    cls = _target_class(registry, kind, name)
    return cls is not None and "survival_curves" in cls.provides


def _reads_treatment(registry, kind, name) -> bool:
    """Whether the component reads or is a target of a treatment's effect (causal trees)."""
    cls = _target_class(registry, kind, name)
    return cls is not None and "treatment" in cls.fit_arguments


def _needs_a_test_statistic(kind, name) -> bool:
    """Split complexity prunes trees whose splits are scored by a test statistic (the
    log-rank criteria): no classification criterion provides one, so its pairs here would
    be refused for the base criterion, not for the pair (the survival matrix has it)."""
    return kind == "pruner" and name == "split_complexity"


def test_composition_matrix(registry):
    data = load_dataset("haberman")
    X, y = data.X[::2], data.y[::2]
    names = {
        kind: sorted(
            n
            for n in registry.components(kind)
            if not _predicts_values(registry, kind, n) and not _needs_a_test_statistic(kind, n)
        )
        for kind in KINDS
    }
    fitted, refused = 0, 0
    for kind_a, kind_b in itertools.combinations(KINDS, 2):
        for a, b in itertools.product(names[kind_a], names[kind_b]):
            chosen = _base({kind_a: a, kind_b: b})
            params = {
                f"{kind}_params": PARAMS.get(name)
                for kind, name in chosen.items()
                if name in PARAMS
            }
            model = TreeClassifier(**chosen, **params, max_depth=3, abstain_value="?")
            try:
                model.fit(X, y)
            except CompositionError as exc:
                message = str(exc)
                # a component that brings its partner (ctree_surrogate: the surrogate
                # evaluator) may be refused by the name of the partner
                named = [
                    f"'{c}'" in message or f"'{PARTNERS.get(c, c)}'" in message for c in (a, b)
                ]
                assert all(named), f"{a} + {b}: refusal names {message}"
                refused += 1
                continue
            except ValueError as exc:
                if "two classes only" in str(exc):  # variance with more classes: not this data
                    raise
                raise AssertionError(f"{kind_a} {a!r} + {kind_b} {b!r} failed: {exc}") from exc
            decision = model.decide(X)
            np.testing.assert_allclose(decision.proba.sum(axis=1), 1.0, err_msg=f"{a} + {b}")
            assert decision.confidence.shape == (len(y),)
            for copy in (
                pickle.loads(pickle.dumps(model)),
                TreeClassifier.from_json(model.to_json()),
            ):
                again = copy.decide(X)
                for part in ("proba", "labels", "confidence"):
                    np.testing.assert_array_equal(
                        getattr(again, part), getattr(decision, part), err_msg=f"{a} + {b}"
                    )
            fitted += 1
    assert fitted > 250 and refused > 5


REGRESSION_KINDS = ("criterion", "splitter", "propagator", "pruner", "evaluator")


def test_regression_composition_matrix(registry):
    """Every pair of components of the kinds a regressor takes, with a regression
    criterion: fitted (JSON and pickle round trips exact), or refused naming both."""
    from treekit_core import TreeRegressor

    data = load_dataset("airquality", dropna=True)  # the oblique splitter takes no NaN
    X, y = data.X, data.y
    names = {kind: sorted(registry.components(kind)) for kind in REGRESSION_KINDS}
    names["criterion"] = [
        n
        for n in names["criterion"]
        if _predicts_values(registry, "criterion", n)
        and not _reads_follow_up(registry, "criterion", n)
        and not _reads_treatment(registry, "criterion", n)
    ]
    fitted, refused = 0, 0
    for kind_a, kind_b in itertools.combinations(REGRESSION_KINDS, 2):
        for a, b in itertools.product(names[kind_a], names[kind_b]):
            chosen = {"criterion": "squared_error", **_base({kind_a: a, kind_b: b})}
            chosen = {kind: chosen[kind] for kind in REGRESSION_KINDS}
            if kind_a != "criterion" and kind_b != "criterion":
                chosen["criterion"] = "squared_error"
            params = {
                f"{kind}_params": PARAMS.get(name)
                for kind, name in chosen.items()
                if name in PARAMS
            }
            model = TreeRegressor(**chosen, **params, max_depth=3)
            try:
                model.fit(X, y)
            except CompositionError as exc:
                message = str(exc)
                assert f"'{a}'" in message or f"'{b}'" in message, f"{a} + {b}: {message}"
                refused += 1
                continue
            except ValueError as exc:
                raise AssertionError(f"{kind_a} {a!r} + {kind_b} {b!r} failed: {exc}") from exc
            predicted = model.predict(X)
            assert np.isfinite(predicted).all(), f"{a} + {b}"
            for copy in (
                pickle.loads(pickle.dumps(model)),
                TreeRegressor.from_json(model.to_json()),
            ):
                np.testing.assert_array_equal(copy.predict(X), predicted, err_msg=f"{a} + {b}")
            fitted += 1
    assert fitted > 40 and refused >= 2


def test_survival_composition_matrix(registry):
    """Every splitter, propagator, pruner and evaluator with each survival criterion (and
    every pair of them with log-rank): fitted (curves finite, JSON and pickle round trips
    exact), or refused naming both components."""
    from treekit_core import SurvivalTree

    data = load_dataset("veteran")
    X, y = data.X, data.y  # celltype as its code: a number
    criteria = sorted(
        n for n in registry.components("criterion") if _reads_follow_up(registry, "criterion", n)
    )
    assert criteria == ["exponential", "gray", "logrank", "logrank_cause"]
    kinds = REGRESSION_KINDS[1:]
    names = {kind: sorted(registry.components(kind)) for kind in kinds}
    choices = [
        {"criterion": criterion, kind: name}
        for criterion in criteria
        for kind in kinds
        for name in names[kind]
    ]
    choices += [
        {"criterion": "logrank", kind_a: a, kind_b: b}
        for kind_a, kind_b in itertools.combinations(kinds, 2)
        for a, b in itertools.product(names[kind_a], names[kind_b])
    ]
    fitted, refused = 0, 0
    for choice in choices:
        chosen = {kind: choice.get(kind, _base({})[kind]) for kind in REGRESSION_KINDS}
        params = {f"{kind}_params": PARAMS[name] for kind, name in chosen.items() if name in PARAMS}
        model = SurvivalTree(**chosen, **params, max_depth=3, min_samples_leaf=10)
        named = [name for kind, name in choice.items() if kind != "criterion"]
        try:
            model.fit(X, y)
        except CompositionError as exc:
            assert any(f"'{name}'" in str(exc) for name in named), f"{choice}: {exc}"
            refused += 1
            continue
        except ValueError as exc:
            raise AssertionError(f"{choice} failed: {exc}") from exc
        hazard = model.predict_cumulative_hazard_function(X, return_array=True)
        assert np.isfinite(hazard).all(), choice
        for copy in (pickle.loads(pickle.dumps(model)), SurvivalTree.from_json(model.to_json())):
            np.testing.assert_array_equal(
                copy.predict_cumulative_hazard_function(X, return_array=True), hazard, str(choice)
            )
        fitted += 1
    assert fitted > 20 and refused >= 4


def test_treatment_effect_composition_matrix(registry):
    """Every splitter, propagator, pruner and evaluator with each treatment-effect
    criterion (a causal tree, issue 65): fitted (effects and intervals equal after JSON
    and pickle round trips) or refused naming the component."""
    from treekit_core import CausalTree

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(400, 3))
    treatment = rng.binomial(1, 0.5, size=400)
    y = treatment * (X[:, 0] > 0.5) + rng.normal(size=400)
    criteria = sorted(
        n for n in registry.components("criterion") if _reads_treatment(registry, "criterion", n)
    )
    assert criteria == ["causal_tree", "grf_causal"]
    kinds = REGRESSION_KINDS[1:]
    fitted, refused = 0, 0
    for criterion in criteria:
        for kind in kinds:
            for name in sorted(registry.components(kind)):
                chosen = {k: _base({})[k] for k in kinds}
                chosen.update({"criterion": criterion, kind: name})
                params = {f"{k}_params": PARAMS[n] for k, n in chosen.items() if n in PARAMS}
                model = CausalTree(**chosen, **params, max_depth=3, min_samples_leaf=10)
                try:
                    model.fit(X, y, treatment)
                except CompositionError as exc:
                    assert f"'{name}'" in str(exc), f"{criterion} + {name}: {exc}"
                    refused += 1
                    continue
                except ValueError as exc:
                    raise AssertionError(f"{criterion} + {kind} {name!r} failed: {exc}") from exc
                effect, interval = model.predict(X), model.predict_interval(X)
                for copy in (
                    pickle.loads(pickle.dumps(model)),
                    CausalTree.from_json(model.to_json()),
                ):
                    np.testing.assert_array_equal(copy.predict(X), effect, f"{criterion} {name}")
                    np.testing.assert_array_equal(copy.predict_interval(X), interval)
                fitted += 1
    assert fitted > 10 and refused >= 2


def test_the_design_card_example_end_to_end(registry):
    """Soft search + asymmetric entropy + boundary-distance rejection, on wisconsin."""
    data = load_dataset("wisconsin")
    model = TreeClassifier(
        criterion="asymmetric_entropy",
        criterion_params={"w": [0.8, 0.2]},
        splitter="soft_search",
        splitter_params={"u": 0.1},
        pruner="cost_complexity",
        confidence="boundary_distance",
        reject={"keep_correct": 0.9},
        abstain_value="refer to a radiologist",
        random_state=0,
    ).fit(data.X, data.y)
    decision = model.decide(data.X)
    assert model.tree_.n_samples[0] == 699  # the 16 missing values are used
    rejected = decision.abstained.mean()
    assert 0.02 < rejected < 0.3
    kept = ~decision.abstained
    error_kept = (decision.labels[kept] != data.y[kept]).mean()
    error_all = (model.classes_[np.argmax(decision.proba, axis=1)] != data.y).mean()
    assert error_kept < error_all
    predicted = model.predict(data.X)
    assert set(predicted) <= {"benign", "malignant", "refer to a radiologist"}
    loaded = TreeClassifier.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.decide(data.X).abstained, decision.abstained)


FRESH_PROCESS = """
import pickle, sys, json
import numpy as np
from treekit_core import TreeClassifier
from treekit_core.datasets import load_dataset
data = load_dataset("haberman")
out = {}
for path in sys.argv[1:]:
    model = (pickle.load(open(path, "rb")) if path.endswith(".pkl")
             else TreeClassifier.from_json(path))
    out[path] = model.decide(data.X).proba.tolist()
print(json.dumps(out))
"""


def test_pickled_and_saved_models_load_in_a_fresh_process(registry, tmp_path):
    import subprocess
    import sys

    from treekit_core import ForestClassifier

    data = load_dataset("haberman")
    models = {
        "soft": TreeClassifier(
            splitter="soft_search", propagator="soft", evaluator="soft", max_depth=3
        ),
        "boundary": TreeClassifier(confidence="boundary_distance", pruner="cost_complexity"),
        "forest": ForestClassifier(n_estimators=3, random_state=0),
    }
    paths, expected = [], {}
    for name, model in models.items():
        model.fit(data.X, data.y)
        proba = model.decide(data.X).proba.tolist()
        path = tmp_path / f"{name}.pkl"
        path.write_bytes(pickle.dumps(model))
        paths.append(str(path))
        expected[str(path)] = proba
        if hasattr(model, "to_json") and name != "forest":
            json_path = tmp_path / f"{name}.json"
            model.to_json(json_path)
            paths.append(str(json_path))
            expected[str(json_path)] = proba
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS, *paths], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    import json

    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    for path in paths:
        np.testing.assert_array_equal(loaded[path], expected[path], err_msg=path)

"""Fuzzing: random compositions of every installed component on random data, and random
bad parameters. Each example ends, within a time bound, with either a model that satisfies
the properties below or a clear error: a ValueError raised by treekit's own code (not a
numpy, numba or attrs message surfacing from deep inside).

Properties of a fitted model: probabilities finite, in [0, 1], rows summing to 1; labels
in ``classes_`` or the abstain value; JSON and pickle round trips predict identically.

``TREEKIT_FUZZ=long python -m pytest tests/fuzz`` runs the long profile.
"""

from __future__ import annotations

import contextlib
import pickle
import signal
import traceback
import warnings

import numpy as np
import pytest
from fuzz.strategies import (
    BAD_VALUES,
    ESTIMATOR_PARAMETERS,
    LONG,
    compositions,
    data_sets,
    fuzz_settings,
)
from hypothesis import event, given
from hypothesis import strategies as st

from treekit_core import TreeClassifier

#: Seconds one example may take (a first call may compile kernels); a pure-Python loop
#: that runs away is interrupted, a compiled one is bounded by the grow loop's node budget.
TIME_BOUND = 600 if LONG else 300


class ExampleTimeout(BaseException):
    """Not an Exception: nothing in treekit may swallow it."""


@contextlib.contextmanager
def time_bound(seconds):
    if not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum, frame):
        raise ExampleTimeout(f"the example ran for more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


#: Fragments of messages that mean a library's internals reached the user.
UNCLEAR = (
    "could not convert",
    "setting an array element",
    "negative dimensions",
    "index out of bounds",
    "SeedSequence",
    "int too big",
    "No matching definition",
    "object of type",
    "unsupported operand",
    "not supported between instances",
)


def assert_clear_error(exc: BaseException) -> None:
    """A ValueError, raised by a treekit module, whose message names what was wrong."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = frames[-1].filename if frames else "?"
    detail = f"{type(exc).__name__} raised at {where}: {exc}"
    assert isinstance(exc, ValueError), detail
    assert "treekit" in where, detail
    message = str(exc)
    assert len(message) > 20, detail
    assert not any(fragment in message for fragment in UNCLEAR), detail


def check_fitted_model(model, X) -> None:
    proba = model.predict_proba(X)
    assert proba.shape == (X.shape[0], model.n_classes_)
    assert np.isfinite(proba).all()
    assert ((proba >= 0) & (proba <= 1 + 1e-12)).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    labels = model.predict(X)
    classes = set(model.classes_.tolist())
    for label in np.asarray(labels, dtype=object).tolist():
        assert label in classes or label is model.abstain_value or label == model.abstain_value
    loaded = TreeClassifier.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.predict_proba(X), proba)
    np.testing.assert_array_equal(
        np.asarray(loaded.predict(X), dtype=object), np.asarray(labels, dtype=object)
    )
    unpickled = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(unpickled.predict_proba(X), proba)


def fit_or_clear_error(X, y, weight, **params):
    """The fitted model, or None after checking the error is clear."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with time_bound(TIME_BOUND):
                model = TreeClassifier(**params).fit(X, y, sample_weight=weight)
                check_fitted_model(model, X)
                event("fitted")
                return model
        except ExampleTimeout:
            raise
        except AssertionError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure must be a clear error
            assert_clear_error(exc)
            event(f"refused: {type(exc).__name__}: {' '.join(str(exc).split()[:6])}")
            return None


@st.composite
def composed_fits(draw):
    X, y, weight, nominal = draw(data_sets())
    params = draw(compositions(len(np.unique(y))))
    if nominal:
        params["categorical_features"] = nominal
    return X, y, weight, params


@fuzz_settings(short=300)
@given(composed_fits())
def test_random_compositions_on_random_data_fit_or_fail_clearly(case):
    X, y, weight, params = case
    fit_or_clear_error(X, y, weight, **params)


@fuzz_settings(short=60)
@given(data_sets(max_rows=40))
def test_the_default_composition_fits_every_valid_data_set(case):
    X, y, weight, nominal = case
    model = fit_or_clear_error(X, y, weight, categorical_features=nominal or None, random_state=0)
    if model is None:  # only data no classifier can learn from may be refused
        known_weight = weight is None or weight.sum() > 0
        assert len(np.unique(y)) < 2 or not known_weight


@fuzz_settings(short=150)
@given(st.sampled_from(ESTIMATOR_PARAMETERS), BAD_VALUES)
def test_bad_estimator_parameters_fit_or_fail_clearly(name, value):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int)
    fit_or_clear_error(X, y, None, **{name: value})


@fuzz_settings(short=60)
@given(st.sampled_from(["X", "y", "sample_weight"]), BAD_VALUES)
def test_bad_fit_arguments_fail_clearly(argument, value):
    rng = np.random.default_rng(0)
    args = {"X": rng.normal(size=(30, 3)), "y": np.arange(30) % 2, "sample_weight": None}
    args[argument] = value
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            TreeClassifier().fit(args["X"], args["y"], sample_weight=args["sample_weight"])
        except Exception as exc:  # noqa: BLE001
            assert_clear_error(exc)
        else:
            assert argument == "sample_weight" and (
                value is None or isinstance(value, (int, float)) and value > 0
            ), f"{argument}={value!r} was accepted"


def test_the_time_bound_interrupts_a_runaway_python_loop():
    with pytest.raises(ExampleTimeout):
        with time_bound(0.2):
            while True:
                pass

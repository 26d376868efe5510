"""Hypothesis strategies for the fuzz suite: random data, random compositions of every
installed component with random valid parameters, and random bad parameters.

``TREEKIT_FUZZ=long`` raises the number of examples (the README's long profile); the
default is the short profile that ``.ci/run`` runs.
"""

from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, assume, settings
from hypothesis import strategies as st

from treekit_core.components import KINDS
from treekit_core.estimators.base import STOPPING_PARAMS
from treekit_core.registry import get_registry

LONG = os.environ.get("TREEKIT_FUZZ", "short") == "long"


def fuzz_settings(short: int, long: int = 5000):
    """Examples per test; no hypothesis deadline (a first call compiles kernels), the time
    bound is :func:`time_bound` around each example instead."""
    return settings(
        max_examples=long if LONG else short,
        deadline=None,
        derandomize=not LONG,  # CI runs the same examples every time
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
        database=None,
    )


# -- data -------------------------------------------------------------------------------
SCALES = [1e-9, 1e-3, 1.0, 1e3, 1e9, 1e150]


@st.composite
def numeric_column(draw, n):
    kind = draw(st.sampled_from(["normal", "integers", "constant", "extreme", "duplicates"]))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    if kind == "normal":
        column = rng.normal(size=n) * draw(st.sampled_from(SCALES))
    elif kind == "integers":
        column = rng.integers(-3, 4, n).astype(float)
    elif kind == "constant":
        column = np.full(n, draw(st.sampled_from([0.0, -1.5, 1e300])))
    elif kind == "extreme":
        column = rng.choice([-1.7e308, -1e-300, 0.0, 1e-300, 1.7e308], n)
    else:
        column = np.repeat(rng.normal(size=max(1, n // 4)), 4)[:n]
        column = np.pad(column, (0, n - column.size), mode="edge")
    return column


@st.composite
def data_sets(draw, max_rows=60):
    """(X as object array or floats, y, sample_weight or None, nominal column indices)."""
    n = draw(st.integers(2, max_rows))
    d = draw(st.integers(1, 4))
    n_classes = draw(st.sampled_from([2, 3, 2, 5, 2, 50, 1]))  # 1: a refusal case
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    nominal = sorted(draw(st.sets(st.integers(0, d - 1), max_size=d)))
    columns = []
    for j in range(d):
        if j in nominal:
            levels = np.array(["a", "b", "c", "d", "e"][: draw(st.integers(1, 5))], dtype=object)
            columns.append(rng.choice(levels, n).astype(object))
        else:
            columns.append(draw(numeric_column(n)))
    missing = draw(st.sampled_from([0.0, 0.0, 0.1, 0.4]))
    X = np.empty((n, d), dtype=object if nominal else np.float64)
    for j, column in enumerate(columns):
        X[:, j] = column
        X[rng.random(n) < missing, j] = np.nan
    y = rng.integers(0, n_classes, n)
    if draw(st.booleans()):  # labels that depend on the first column, so trees grow
        first = np.asarray(X[:, 0] if 0 not in nominal else X[:, 0] == "a", dtype=float)
        y = np.where(
            np.nan_to_num(first) > np.nanmedian(first) if np.isfinite(first).any() else 0, 1, 0
        )
        y = np.where(rng.random(n) < 0.1, rng.integers(0, n_classes, n), y) % max(n_classes, 1)
    weight = None
    if draw(st.booleans()):
        weight = rng.uniform(0, 3, n) * (rng.random(n) > 0.1)
    return X, y, weight, nominal


# -- compositions -------------------------------------------------------------------------
def _distribution(draw, n_classes):
    weights = np.array(_per_class(draw, n_classes, 0.1, 1.0))
    return (weights / weights.sum()).tolist()


def _per_class(draw, n_classes, low, high):
    return [draw(st.floats(low, high)) for _ in range(n_classes)]


#: Valid values of the component parameters the fuzzer varies, by parameter name (a
#: parameter not listed keeps its default; n_classes is the data's).
VALID = {
    "w": lambda draw, k: draw(st.floats(0.05, 0.95)) if k == 2 else _distribution(draw, k),
    "q": lambda draw, k: draw(st.sampled_from([0.5, 1.5, 2.0, 3.0])),
    "normalize": lambda draw, k: draw(st.booleans()),
    "l2": lambda draw, k: draw(st.sampled_from([1e-5, 1e-2, 1.0])),
    "also_axis_aligned": lambda draw, k: draw(st.booleans()),
    "u": lambda draw, k: draw(st.sampled_from([0.0, 0.05, 0.1, 0.3])),
    "window": lambda draw, k: draw(st.sampled_from([1.0, 3.0])),
    "resolution": lambda draw, k: draw(st.sampled_from([1.0, 4.0])),
    "max_candidates": lambda draw, k: draw(st.sampled_from([2, 50, 1000])),
    "c45_rules": lambda draw, k: draw(st.booleans()),
    "samples": lambda draw, k: draw(st.integers(2, 8)),
    "width": lambda draw, k: draw(st.sampled_from([0.01, 0.1, 0.5])),
    "nominal_split": lambda draw, k: draw(st.sampled_from(["subset", "multiway"])),
    "gain_ratio": lambda draw, k: draw(st.booleans()),
    "min_objects": lambda draw, k: draw(st.sampled_from([1, 2, 5])),
    "binary_nominal": lambda draw, k: draw(st.booleans()),
    "risk": lambda draw, k: draw(st.sampled_from(["misclassification", "impurity"])),
    "alpha": lambda draw, k: draw(st.sampled_from([None, 0.0, 0.01, 0.1])),
    "mdl.alpha": lambda draw, k: draw(st.sampled_from([0.0, 0.01, 0.1])),
    "cv": lambda draw, k: draw(st.integers(2, 4)),
    "rule": lambda draw, k: draw(st.sampled_from(["min_error", "one_se"])),
    "confidence_factor": lambda draw, k: draw(st.sampled_from([0.01, 0.25, 0.5])),
    "subtree_raising": lambda draw, k: draw(st.booleans()),
    "laplace": lambda draw, k: draw(st.booleans()),
    "thresholds": lambda draw, k: _per_class(draw, k, 0.05, 0.95),
    "costs": lambda draw, k: [
        [0.0 if i == j else draw(st.sampled_from([0.5, 1.0, 5.0])) for j in range(k)]
        for i in range(k)
    ],
    "scale": lambda draw, k: draw(st.sampled_from(["none", "std", "range"])),
    "abstain_is_different": lambda draw, k: draw(st.booleans()),
}
#: Parameters always drawn: a component cannot be made without them, or their default
#: holds for two classes only.
REQUIRED = {"thresholds", "costs", "w"}
#: Cheap settings for the slow components (udt's 100 samples per value).
QUICK = {"samples": 4, "cv": 2}


@st.composite
def compositions(draw, n_classes):
    """TreeClassifier keyword arguments: a random installed component of every kind with
    random valid parameters, and random stopping rules."""
    import attrs

    registry = get_registry()
    kwargs = {}
    for kind in KINDS:
        names = sorted(registry.components(kind))
        name = draw(st.sampled_from(names))
        kwargs[kind] = name
        cls = registry.get_class(kind, name)
        params = {}
        for field in attrs.fields(cls) if attrs.has(cls) else ():
            valid = VALID.get(f"{name}.{field.name}", VALID.get(field.name))
            if field.name in REQUIRED or (valid is not None and draw(st.booleans())):
                params[field.name] = valid(draw, max(n_classes, 2))
            elif field.name in QUICK:
                params[field.name] = QUICK[field.name]
        if params:
            kwargs[f"{kind}_params"] = params
    kwargs["max_depth"] = draw(st.sampled_from([None, 1, 3, 8]))
    kwargs["min_samples_leaf"] = draw(st.sampled_from([1, 2, 5]))
    kwargs["reject"] = draw(
        st.sampled_from([None, None, 0.5, {"coverage": 0.8}, {"keep_correct": 0.9, "cv": 2}])
    )
    kwargs["abstain_value"] = -1  # labels are 0..K-1; some compositions abstain
    kwargs["random_state"] = draw(st.integers(0, 3))
    if draw(st.integers(0, 9)):  # mostly compositions that fit together, some that do not
        assume(composes(kwargs))
    return kwargs


def composes(kwargs) -> bool:
    """Whether the components fit together (the check a fit makes before any data)."""
    from treekit_core import TreeClassifier

    try:
        model = TreeClassifier(**kwargs)
        composition = model._make_composition()
        composition.check()  # the evidence check included
    except ValueError:
        return False
    return True


# -- bad parameters -----------------------------------------------------------------------
BAD_VALUES = st.sampled_from(
    [
        -1,
        0,
        -0.5,
        1.5,
        2**70,
        -(2**70),
        float("nan"),
        float("inf"),
        -float("inf"),
        1e308,
        "",
        "abc",
        "3",
        None,
        True,
        [],
        [1, 2],
        [[1.0]],
        {"a": 1},
        object(),
        np.float64("nan"),
        np.int64(-3),
    ]
)
ESTIMATOR_PARAMETERS = [
    *STOPPING_PARAMS,
    "categorical_features",
    "reject",
    "abstain_value",
    "random_state",
    "n_threads",
]

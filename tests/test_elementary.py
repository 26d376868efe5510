"""kernels/elementary.py's exp, log and log1p (fdlibm's and Kahan's, written to vectorise):
within an ulp of numpy's exp and log and two of its log1p over their whole domains, the
C library's values at the edges (overflow, underflow, subnormals, zeros, infinities, NaN),
and the same bits compiled and without the JIT."""

import json
import os
import subprocess
import sys

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core.kernels import elementary

#: The most ulp each function is from numpy's (numpy's are the C library's here).
ULPS = {"exp": 1.0, "log": 1.0, "log1p": 2.0}
EDGES = {
    "exp": [0.0, -0.0, 1e-300, -1e-300, 709.78, elementary.EXP_OVERFLOW, 709.7827128933841,
            elementary.EXP_UNDERFLOW, np.nextafter(elementary.EXP_UNDERFLOW, -np.inf),
            -708.39, -708.4, -745.1, -745.13321910194, -745.14, -1000.0, 1000.0,
            np.inf, -np.inf, np.nan, 5e-324, 1.0, -1.0, 0.5 * np.log(2)],
    "log": [1.0, 2.0, 0.5, np.sqrt(2), np.sqrt(0.5), 1.0000000000000002, 0.9999999999999999,
            1e-310, 5e-324, 2.2250738585072014e-308, np.finfo(float).max, 0.0, -0.0,
            -1.0, np.inf, -np.inf, np.nan],
    "log1p": [0.0, -0.0, 1e-17, -1e-17, 1e-300, 5e-324, 1.0, -0.5, -1.0, -2.0,
              np.finfo(float).max, np.inf, -np.inf, np.nan, 2.0**-52, -(2.0**-53)],
}  # fmt: skip


def _kernel(name):
    function = getattr(elementary, name)

    @numba.njit(error_model="numpy")  # as the kernels that call them compile
    def apply(x, out):
        for i in range(x.size):
            out[i] = function(x[i])

    return apply


KERNELS = {name: _kernel(name) for name in ULPS}


def _values(name, x):
    out = np.empty_like(x)
    KERNELS[name](x, out)
    return out


def _ulps_from_numpy(name, x):
    """(the largest distance in ulp from numpy's value over x's finite nonzero results,
    whether the other results are numpy's)."""
    found = _values(name, x)
    with np.errstate(all="ignore"):
        expected = getattr(np, name)(x)
    regular = np.isfinite(expected) & (expected != 0.0)
    distance = np.abs(found[regular] - expected[regular]) / np.spacing(np.abs(expected[regular]))
    others_agree = np.array_equal(found[~regular], expected[~regular], equal_nan=True)
    signed = ~regular & ~np.isnan(expected)  # zeros and infinities (a NaN's sign is noise)
    signs_agree = np.array_equal(np.signbit(found[signed]), np.signbit(expected[signed]))
    return float(distance.max(initial=0.0)), others_agree and signs_agree


def _sample(name, rng):
    if name == "exp":
        return np.concatenate([rng.uniform(-746, 710, 400_000), rng.normal(0, 1, 200_000)])
    magnitudes = np.exp(rng.uniform(-744, 709, 400_000))
    if name == "log":
        return np.concatenate([magnitudes, rng.uniform(0.5, 2, 200_000)])
    return np.concatenate([magnitudes, rng.uniform(-1, 1, 200_000), -rng.random(50_000)])


@pytest.mark.parametrize("name", sorted(ULPS))
def test_each_is_within_an_ulp_or_two_of_numpys(name):
    rng = np.random.default_rng(0)
    x = np.concatenate([_sample(name, rng), EDGES[name]])
    distance, others_agree = _ulps_from_numpy(name, x)
    assert distance <= ULPS[name]
    assert others_agree  # zeros (with their signs), infinities, NaN: numpy's


@pytest.mark.parametrize("name", sorted(ULPS))
@settings(max_examples=300, deadline=None)
@given(x=st.floats(allow_nan=True, allow_infinity=True))
def test_any_double_is_within_an_ulp_or_two_of_numpys(name, x):
    distance, others_agree = _ulps_from_numpy(name, np.array([x]))
    assert distance <= ULPS[name] and others_agree


#: Run with NUMBA_DISABLE_JIT=1: the functions as plain Python on the values given (their
#: bits as int64), printed as JSON.
WITHOUT_JIT = """
import json, sys
import numpy as np
from treekit_core.kernels import elementary
values = np.array(json.loads(sys.argv[1]), dtype=np.int64).view(np.float64)
out = {}
with np.errstate(all="ignore"):
    for name in ("exp", "log", "log1p"):
        found = np.array([getattr(elementary, name)(v) for v in values])
        out[name] = found.view(np.int64).tolist()
print(json.dumps(out))
"""


def test_without_the_jit_the_bits_are_the_compiled_ones():
    rng = np.random.default_rng(1)
    x = np.concatenate(
        [rng.uniform(-746, 710, 300), np.exp(rng.uniform(-744, 709, 300)), rng.uniform(-1, 1, 300)]
        + [np.array(edges) for edges in EDGES.values()]
    )
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_JIT, json.dumps(x.view(np.int64).tolist())],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    plain = json.loads(done.stdout.strip().splitlines()[-1])
    for name in ULPS:
        values = _values(name, x)
        compiled, nan = values.view(np.int64), np.isnan(values)
        found = np.array(plain[name], dtype=np.int64)
        assert np.array_equal(found[~nan], compiled[~nan])
        assert np.isnan(found.view(np.float64)[nan]).all()

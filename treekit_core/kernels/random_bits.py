"""A random stream a kernel carries in a local array (xoshiro256**, Blackman & Vigna 2018,
seeded by splitmix64): numba's ``np.random`` keeps one generator per thread in its
runtime, whose two calls a node and feature cost an extremely randomised tree an eighth of
its growth (a call each of ``randint`` and ``random``, 20 ns together), and which, run
without the JIT (``NUMBA_DISABLE_JIT=1``), is numpy's one global generator shared by every
thread of a forest. The state is four unsigned 64-bit words; every function takes it and
advances it in place, so a tree's draws depend on its seed alone."""

import numpy as np

from treekit_core.kernels.compiling import generic_jit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@generic_jit
def _rotate_left(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@generic_jit
def seeded_state(seed) -> np.ndarray:
    """The state of the stream of ``seed`` (a non-negative integer): four words of
    splitmix64 (never all zero)."""
    state = np.empty(4, dtype=np.uint64)
    z = np.uint64(seed)
    for i in range(4):
        z = z + _GOLDEN
        x = z
        x = (x ^ (x >> np.uint64(30))) * _MIX1
        x = (x ^ (x >> np.uint64(27))) * _MIX2
        state[i] = x ^ (x >> np.uint64(31))
    return state


@generic_jit
def next_bits(state):
    """The next 64 random bits (xoshiro256**), advancing ``state``."""
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    result = _rotate_left(s1 * np.uint64(5), 7) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    state[0], state[1], state[2], state[3] = s0, s1, s2, _rotate_left(s3, 45)
    return result


@generic_jit
def uniform(state) -> float:
    """A float uniform on [0, 1): the top 53 bits."""
    return np.float64(next_bits(state) >> np.uint64(11)) * _UNIT


@generic_jit
def integer_below(state, low, high) -> int:
    """An integer uniform on low..high - 1 (high > low; at most 2**53 values): the floor of
    a uniform float scaled to the range (each value's chance off by at most (high - low) /
    2**53)."""
    return low + min(np.int64(uniform(state) * (high - low)), high - low - 1)

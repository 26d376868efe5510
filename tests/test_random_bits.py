"""The random stream the extremely randomised trees' kernel carries (kernels/random_bits.py):
xoshiro256** seeded by splitmix64, against the reference algorithms written out with
Python's integers, and its floats and integers in range and uniform."""

import numba
import numpy as np
import pytest

from treekit_core.kernels.random_bits import integer_below, next_bits, seeded_state, uniform

MASK = 2**64 - 1


def reference_stream(seed, count):
    """splitmix64 (Steele, Lea & Flood) filling the four words, then xoshiro256**
    (Blackman & Vigna's xoshiro256starstar.c), in Python integers."""
    z, state = seed, []
    for _ in range(4):
        z = (z + 0x9E3779B97F4A7C15) & MASK
        x = z
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
        state.append(x ^ (x >> 31))

    def rotl(x, k):
        return ((x << k) | (x >> (64 - k))) & MASK

    out = []
    s0, s1, s2, s3 = state
    for _ in range(count):
        out.append(rotl((s1 * 5) & MASK, 7) * 9 & MASK)
        t = (s1 << 17) & MASK
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotl(s3, 45)
    return out


@numba.njit
def _draw_bits(seed, count):
    state = seeded_state(seed)
    out = np.empty(count, dtype=np.uint64)
    for i in range(count):
        out[i] = next_bits(state)
    return out


@numba.njit
def _draw_numbers(seed, count, low, high):
    state = seeded_state(seed)
    floats, integers = np.empty(count), np.empty(count, dtype=np.int64)
    for i in range(count):
        floats[i] = uniform(state)
        integers[i] = integer_below(state, low, high)
    return floats, integers


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**31 - 2])
def test_the_stream_is_xoshiro256_starstar_seeded_by_splitmix64(seed):
    assert _draw_bits(seed, 50).tolist() == reference_stream(seed, 50)


def test_floats_and_integers_are_in_range_and_uniform():
    """200 000 draws: floats in [0, 1) with mean 1/2 (standard error 0.00065), integers
    in 3..19 with every value's count within 5 standard errors of n / 17."""
    floats, integers = _draw_numbers(7, 200_000, 3, 20)
    assert floats.min() >= 0.0 and floats.max() < 1.0
    assert abs(floats.mean() - 0.5) < 5 * 0.00065
    assert integers.min() == 3 and integers.max() == 19
    counts = np.bincount(integers - 3, minlength=17)
    expected = 200_000 / 17
    assert (np.abs(counts - expected) < 5 * np.sqrt(expected)).all(), counts
    again = _draw_numbers(7, 1000, 3, 20)
    assert np.array_equal(again[0], floats[:1000]) and np.array_equal(again[1], integers[:1000])

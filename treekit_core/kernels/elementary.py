"""exp, log and log1p written so that LLVM vectorises a loop that calls them.

A compiled loop over rows calls the C library's ``exp`` and ``log1p`` one value at a time
(5-9 and 13-18 ns a value here); these are fdlibm's algorithms in plain arithmetic, without
branches or calls (a value outside the formulas' range is chosen by a select, not a jump),
so a loop over rows computes four of them in one AVX2 vector: at 1M rows, exp 2.6 against
5.5 ms, the binomial loss's pass (gradient, hessian and deviance) 10 against 28 ms.

- ``exp`` (fdlibm's e_exp.c): x = k ln 2 + r with |r| <= ln 2 / 2 (Cody and Waite: ln 2 in
  two parts, the first exact times k), exp(r) = 1 - ((r c) / (c - 2) - r) with
  c = r - r^2 (P1 + r^2 (P2 + ... + r^2 P5)), times 2^k as two powers of two (each a
  normal number: results below 2^-1022 round once, at the second product).
- ``log`` (fdlibm's e_log.c): x = 2^k m with m in [sqrt(2)/2, sqrt(2)), f = m - 1,
  s = f / (2 + f), log(m) = f - f^2 / 2 + s (f^2 / 2 + R(s^2)) with fdlibm's polynomial R,
  plus k ln 2 (in two parts); a subnormal x is scaled by 2^54 first.
- ``log1p`` (Kahan's): u = 1 + x, log1p(x) = log(u) x / (u - 1), x where u is 1.

Within an ulp of the C library's exp and log, and two of its log1p (tests: 600 000 values
over their whole domains, the overflow and underflow edges, zeros, infinities and NaN);
plain IEEE arithmetic, so the same bits on every machine and without the JIT (a double's
bits are read and written by LLVM's bitcast, ``compiling.as_int64`` and ``as_float64``;
by numpy's ``view`` without the JIT). Their callers compile with numba's numpy error
model (``jit(error_model="numpy")``): the Python model's check of every division for a
zero divisor keeps a loop from vectorising."""

from __future__ import annotations

import numpy as np

from treekit_core.kernels.compiling import as_float64, as_int64, generic_jit

#: Added and subtracted, rounds a double below 2^51 in size to an integer (ties to even),
#: which its low bits then hold: a rounding and a conversion in vector instructions
#: (AVX2 has none that converts a double to an int64).
ROUNDING_SHIFT = 6755399441055744.0  # 1.5 * 2^52
LOG2_E = 1.4426950408889634
LN2_HIGH = 6.93147180369123816490e-01  # ln 2's leading 32 bits: k LN2_HIGH is exact
LN2_LOW = 1.90821492927058770002e-10
EXP_P1 = 1.66666666666666019037e-01
EXP_P2 = -2.77777777770155933842e-03
EXP_P3 = 6.61375632143793436117e-05
EXP_P4 = -1.65339022054652515390e-06
EXP_P5 = 4.13813679705723846039e-08
#: exp overflows above this and is 0 below the other (fdlibm's thresholds; at them it is
#: the largest double and the smallest subnormal).
EXP_OVERFLOW = 709.782712893383973096
EXP_UNDERFLOW = -745.13321910194110842
LOG_LG1 = 6.666666666666735130e-01
LOG_LG2 = 3.999999999940941908e-01
LOG_LG3 = 2.857142874366239149e-01
LOG_LG4 = 2.222219843214978396e-01
LOG_LG5 = 1.818357216161805012e-01
LOG_LG6 = 1.531383769920937332e-01
LOG_LG7 = 1.479819860511658591e-01
SMALLEST_NORMAL = 2.2250738585072014e-308
TWO_TO_54 = 18014398509481984.0
#: Added to a double's bits, carries m's exponent up by one where m >= sqrt(2) (fdlibm's
#: 0x3ff00000 - 0x3fe6a09e in the high word), so that m lands in [sqrt(2)/2, sqrt(2)).
LOG_CARRY = (0x3FF00000 - 0x3FE6A09E) << 32
LOG_MANTISSA = 0x000FFFFFFFFFFFFF
LOG_HALF_ROOT2 = 0x3FE6A09E << 32


@generic_jit
def exp(x):
    """e^x, within an ulp of the C library's; inf above :data:`EXP_OVERFLOW`, 0 below
    :data:`EXP_UNDERFLOW`, NaN for NaN."""
    inside = (x >= EXP_UNDERFLOW) & (x <= EXP_OVERFLOW)
    xc = x if inside else 0.0
    shifted = xc * LOG2_E + ROUNDING_SHIFT
    kf = shifted - ROUNDING_SHIFT  # k = round(x / ln 2)
    r_high = xc - kf * LN2_HIGH
    r_low = kf * LN2_LOW
    r = r_high - r_low
    z = r * r
    c = r - z * (EXP_P1 + z * (EXP_P2 + z * (EXP_P3 + z * (EXP_P4 + z * EXP_P5))))
    y = 1.0 - ((r_low - (r * c) / (2.0 - c)) - r_high)
    k = as_int64(shifted) - as_int64(ROUNDING_SHIFT)
    half = as_int64(kf * 0.5 + ROUNDING_SHIFT) - as_int64(ROUNDING_SHIFT)
    # 2^k as 2^half 2^(k - half): both normal for every k the range allows
    y = y * as_float64((half + 1023) << 52) * as_float64((k - half + 1023) << 52)
    # selects, not jumps: the loop stays one vector
    outside = x if x != x else (np.inf if x > EXP_OVERFLOW else 0.0)
    return y if inside else outside


@generic_jit
def log(x):
    """The natural logarithm, within an ulp of the C library's; -inf at 0, NaN below 0
    and for NaN, inf at inf."""
    finite = (x > 0.0) & (x < np.inf)
    tiny = x < SMALLEST_NORMAL
    xc = (x * TWO_TO_54 if tiny else x) if finite else 1.0
    carried = as_int64(xc) + LOG_CARRY
    # the exponent by an unsigned shift (AVX2 shifts no int64 arithmetically; it is >= 0)
    k = np.int64(np.uint64(carried) >> np.uint64(52)) - (1023 + 54 if tiny else 1023)
    m = as_float64((carried & LOG_MANTISSA) + LOG_HALF_ROOT2)
    f = m - 1.0
    half_square = 0.5 * f * f
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * (LOG_LG2 + w * (LOG_LG4 + w * LOG_LG6))
    t2 = z * (LOG_LG1 + w * (LOG_LG3 + w * (LOG_LG5 + w * LOG_LG7)))
    dk = as_float64(k + as_int64(ROUNDING_SHIFT)) - ROUNDING_SHIFT  # k as a double
    # fdlibm's k ln2_hi - ((f^2/2 - (s (f^2/2 + R) + k ln2_lo)) - f), the same roundings
    y = s * (half_square + (t2 + t1)) + dk * LN2_LOW - half_square + f + dk * LN2_HIGH
    outside = -np.inf if x == 0.0 else (x if x > 0.0 else np.nan)  # inf; NaN below 0, NaN
    return y if finite else outside


@generic_jit
def log1p(x):
    """log(1 + x) accurate for small x (Kahan's: log(u) x / (u - 1), u = 1 + x), within a
    few ulp of the C library's log1p."""
    u = 1.0 + x
    exact = (u == 1.0) | (u == np.inf)  # log1p is x (no division by 0 or inf)
    kahan = log(u) * (x / (1.0 if exact else u - 1.0))
    return x if exact else kahan

"""TANH. int8, whose output TFLite quantises with scale 1/128 and zero point 0. The runtimes differ:

- LiteRT's interpreter (optimised and reference kernels alike) looks the output up in a table
  filled at Prepare in float32 with std::tanh (tanhf), as LOGISTIC's (logistic.float32_table);
- TFLite Micro runs TFLite's reference integer kernel: x - zero point saturates to -128 / 127
  beyond an input radius, else it is rescaled (double rounding) to a fixed-point number with 4
  integer bits, whose tanh gemmlowp computes in 32-bit fixed point (exp of negative values by a
  Taylor polynomial and a barrel shifter, then (1 - e) / (1 + e) by Newton-Raphson), and the Q0.31
  result is shifted right by 24 (rounding half away from zero) to the int8 output.

Both are functions of the int8 input alone: tables (`gemmlowp_tanh` emulates the fixed point,
element-wise, with int32 wrap-around as the C++ code has)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from ..errors import UserError
from .logistic import float32_table, libm_f32
from .lookup import LookupOp

INT32_MIN, INT32_MAX = nx.INT32_MIN, nx.INT32_MAX
OUTPUT_QUANT = (1 / 128, 0)  # (scale, zero point) of an int8 TANH's output (TFLite's quantisation spec)
INPUT_INTEGER_BITS = 4  # the reference kernel's fixed-point input format: Q4.27


def _wrap(x: np.ndarray) -> np.ndarray:
    """int32 wrap-around of int32 values held in int64 (a sum of a few int32 never overflows)."""
    return (np.asarray(x, np.int64) + (1 << 31)) % (1 << 32) - (1 << 31)


def _mul(a, b) -> np.ndarray:
    """gemmlowp's SaturatingRoundingDoublingHighMul: the product of two fixed-point numbers."""
    return nx.saturating_rounding_doubling_high_mul(a, b)


def _shift_right(x, exponent: int) -> np.ndarray:
    return nx.rounding_divide_by_pot(x, exponent)


def _shift_left(x, exponent: int) -> np.ndarray:
    """SaturatingRoundingMultiplyByPOT with a positive exponent: a saturating left shift."""
    x = np.asarray(x, np.int64)
    threshold = (1 << (31 - exponent)) - 1
    return np.where(x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, x << exponent))


def _exp_on_quarter(a: np.ndarray) -> np.ndarray:
    """exp(a) for a in [-1/4, 0), Q0.31: a Taylor expansion around -1/8."""
    constant_term, one_third = 1895147668, 715827883
    x = _wrap(a + (1 << 28))
    x2 = _mul(x, x)
    x3 = _mul(x2, x)
    x4 = _mul(x2, x2)
    poly = _shift_right(_wrap(_mul(_wrap(_shift_right(x4, 2) + x3), one_third) + x2), 1)
    return _wrap(constant_term + _mul(constant_term, _wrap(x + poly)))


# exp(-2^k) in Q0.31 for the barrel shifter, k = -2 .. 4
_EXP_OF_MINUS_POWERS = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308), (2, 39332535),
                        (3, 720401), (4, 242))


def _exp_on_negative(a, integer_bits: int) -> np.ndarray:
    """exp(a) for a <= 0 given with `integer_bits` integer bits, Q0.31 (element-wise)."""
    a = np.asarray(a, np.int64)
    fractional_bits = 31 - integer_bits
    quarter = 1 << (fractional_bits - 2)
    a_mod_quarter_minus_quarter = _wrap((a & (quarter - 1)) - quarter)
    result = _exp_on_quarter(_shift_left(a_mod_quarter_minus_quarter, integer_bits))
    remainder = _wrap(a_mod_quarter_minus_quarter - a)
    for exponent, multiplier in _EXP_OF_MINUS_POWERS:
        if integer_bits > exponent:
            bit_set = (remainder & (1 << (fractional_bits + exponent))) != 0
            result = np.where(bit_set, _mul(result, multiplier), result)
    return np.where(a == 0, INT32_MAX, result)


def _rounding_half_sum(a, b) -> np.ndarray:
    """(a + b) / 2 rounded half away from zero, with C++'s truncating division."""
    total = np.asarray(a, np.int64) + b
    nudged = total + np.where(total >= 0, 1, -1)
    return np.where(nudged < 0, -((-nudged) >> 1), nudged >> 1)


def _one_minus_x_over_one_plus_x(a: np.ndarray) -> np.ndarray:
    """(1 - a) / (1 + a) for a in (0, 1), Q0.31, by three Newton-Raphson steps in Q2.29."""
    half_denominator = _rounding_half_sum(a, INT32_MAX)
    one = 1 << 29
    x = _wrap(1515870810 + _mul(half_denominator, -1010580540))  # 48/17 - 32/17 * d
    for _ in range(3):
        error = _wrap(one - _mul(half_denominator, x))
        x = _wrap(x + _shift_left(_mul(x, error), 2))
    return _shift_left(_wrap(x - one), 2)


def gemmlowp_tanh(a, integer_bits: int = INPUT_INTEGER_BITS) -> np.ndarray:
    """gemmlowp's tanh of fixed-point int32 values with `integer_bits` integer bits, Q0.31,
    element-wise."""
    a = np.asarray(a, np.int64)
    n = np.where(a < 0, a, _wrap(-a))
    t = _one_minus_x_over_one_plus_x(_exp_on_negative(n, integer_bits + 1))  # exp(2n): one more integer bit
    return np.where(a == 0, 0, np.where(a < 0, _wrap(-t), t))


def tflm_tanh_params(in_q) -> tuple[int, int, int]:
    """(input multiplier, its left shift, input radius) as TFLite Micro's Prepare: the input scale
    times 2^27 split by frexp, the radius floor(15 x 2^27 / 2^shift), all in double."""
    fraction, shift = math.frexp(float(np.float32(in_q.scale)) * float(1 << (31 - INPUT_INTEGER_BITS)))
    multiplier = nx.tflite_round(fraction * (1 << 31))
    if multiplier >= 1 << 31 or shift < 0:
        raise UserError(f"TANH input scale {in_q.scale}: outside what TFLite Micro's int8 kernel handles")
    radius = math.floor(((1 << INPUT_INTEGER_BITS) - 1) * float(1 << (31 - INPUT_INTEGER_BITS)) / float(1 << shift))
    return multiplier, shift, radius


def tflm_tanh_table(in_q) -> np.ndarray:
    multiplier, shift, radius = tflm_tanh_params(in_q)
    x = np.arange(-128, 128, dtype=np.int64) - in_q.zero_point
    inside = np.clip(x, 1 - radius, radius - 1)  # values beyond the radius saturate below
    fixed = nx.multiply_by_quantized_multiplier(inside, multiplier, shift)
    out = _shift_right(gemmlowp_tanh(fixed), 31 - 7)
    out = np.where(x <= -radius, nx.INT8_MIN, np.where(x >= radius, nx.INT8_MAX, out))
    return np.clip(out, nx.INT8_MIN, nx.INT8_MAX).astype(np.int8)


def _tanhf(x: np.float32) -> np.float32:
    return libm_f32("tanhf", x, np.tanh)


@dataclass(frozen=True)
class Tanh(LookupOp, elements=frozenset({"int8", "uint8"})):
    kind = "tanh"
    int8_counted_as = "logistic"  # msf_lookup_s8, as LOGISTIC

    def table(self, in_q, out_q) -> np.ndarray:
        return self.numerics_table(in_q, out_q, nx.LITERT)

    def numerics_table(self, in_q, out_q, numerics: str) -> np.ndarray:
        if numerics == nx.TFLM:
            return tflm_tanh_table(in_q)  # the output quantisation is fixed (OUTPUT_QUANT): not read
        return float32_table(in_q, out_q, _tanhf)

    def float_function(self, x: np.ndarray) -> np.ndarray:
        return np.tanh(x).astype(np.float32)

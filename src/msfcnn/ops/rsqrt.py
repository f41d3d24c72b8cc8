"""RSQRT (int8): 1 / sqrt(x), as LiteRT and TFLite Micro compute it in integers.

Both runtimes take v = q - input zero point, and return 127 for v = 0. Otherwise they form
1 / sqrt(v) as a fixed-point multiplier by Newton-Raphson (TFLite's
GetInvSqrtQuantizedMultiplierExp, emulated here value by value). They apply it to 1 shifted left
by 20, then rescale by 1 / (sqrt(input scale) * output scale) shifted back. The two runtimes form
that last factor differently: LiteRT takes the square root and the product in float32, TFLite
Micro in double.

The output is a function of the int8 input alone: a 256-entry table run by the lookup kernel. TFLite
stops with an error on an input below its zero point; the table gives such inputs 127, as it does
the zero point itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .lookup import LookupOp

INT32_MIN, INT32_MAX = nx.INT32_MIN, nx.INT32_MAX
KEEP_INTEGER_SHIFT = 20  # the runtimes' kShift: 1 / sqrt(v) is formed on 1 << 20, then shifted back


def _wrap(x: int) -> int:
    return (x + (1 << 31)) % (1 << 32) - (1 << 31)


def _mul(a: int, b: int) -> int:
    """gemmlowp's SaturatingRoundingDoublingHighMul: the product of two fixed-point numbers (on
    Python ints: numpy's per-call cost on scalars made model loading slow)."""
    if a == b == INT32_MIN:
        return INT32_MAX
    nudged = a * b + (1 << 30 if a * b >= 0 else 1 - (1 << 30))
    return nudged >> 31 if nudged >= 0 else -(-nudged >> 31)  # C's division rounds toward zero


def _shift_left(x: int, exponent: int) -> int:
    """SaturatingRoundingMultiplyByPOT with a positive exponent: a saturating left shift."""
    threshold = (1 << (31 - exponent)) - 1
    return INT32_MAX if x > threshold else INT32_MIN if x < -threshold else x << exponent


def inv_sqrt_multiplier(value: int) -> tuple[int, int]:
    """(multiplier, shift) with multiplier * 2^shift / 2^31 close to 1 / sqrt(value), for value >= 1:
    TFLite's GetInvSqrtQuantizedMultiplierExp with a reverse shift of -1 (the shift is a left one)."""
    if value <= 1:
        return INT32_MAX, 0
    shift = 11
    while value >= 1 << 29:
        value //= 4
        shift += 1
    pairs = (32 - value.bit_length() - 1) // 2 - 1  # bring value into [2^27, 2^29) by pairs of bits
    shift -= pairs
    value <<= 2 * pairs
    half_input = int(nx.rounding_divide_by_pot(value >> 1, 1))  # Q3.28, halved
    half_three = (1 << 28) + (1 << 27)  # 1.5 in Q3.28
    x = 1 << 28  # 1.0 in Q3.28: the starting guess
    for _ in range(5):  # Newton-Raphson: x <- 1.5 x - (v / 2) x^3, products rescaled to Q3.28
        cube = _shift_left(_mul(_mul(x, x), x), 6)
        x = _shift_left(_wrap(_mul(half_three, x) - _mul(half_input, cube)), 3)
    x = _mul(x, 1518500250)  # times sqrt(2) / 2 in Q0.31
    if shift < 0:
        x <<= -shift
        shift = 0
    return x, -shift


def output_multiplier(input_scale: float, output_scale: float, numerics: str) -> tuple[int, int]:
    """1 / (sqrt(input scale) * output scale) as (multiplier, shift), formed as each runtime does."""
    si, so = float(np.float32(input_scale)), float(np.float32(output_scale))
    if numerics == nx.TFLM:
        return nx.quantize_multiplier(1.0 / (math.sqrt(si) * so))
    root = np.sqrt(np.float32(si))  # std::sqrt of a float: a float
    return nx.quantize_multiplier(1.0 / float(root * np.float32(so)))


@dataclass(frozen=True)
class Rsqrt(LookupOp, elements=frozenset({"int8"})):
    kind = "rsqrt"
    int8_counted_as = "logistic"  # msf_lookup_s8, as LOGISTIC

    def table(self, in_q, out_q) -> np.ndarray:
        return self.numerics_table(in_q, out_q, nx.LITERT)

    def numerics_table(self, in_q, out_q, numerics: str) -> np.ndarray:
        multiplier, shift = output_multiplier(in_q.scale, out_q.scale, numerics)
        table = np.full(256, 127, dtype=np.int64)
        for q in range(int(in_q.zero_point) + 1, 128):
            inverse, inverse_shift = inv_sqrt_multiplier(q - int(in_q.zero_point))
            data = nx.multiply_by_quantized_multiplier(1, inverse, inverse_shift + KEEP_INTEGER_SHIFT)
            out = nx.multiply_by_quantized_multiplier(data, multiplier, shift - KEEP_INTEGER_SHIFT)
            table[q + 128] = min(max(int(out) + int(out_q.zero_point), -128), 127)
        return table.astype(np.int8)

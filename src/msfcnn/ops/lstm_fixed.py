"""The int16 gate functions of the integer LSTM, as numpy functions of int16 values (in int64
arrays), one per runtime:

- LiteRT (lstm_eval.cc's 8x8_16 path, portable tensor utils) calls gemmlowp's fixed-point
  logistic and tanh on int16 raw values: a Q3.12 gate input (tanh of the cell state: Q(15 + log2 of
  the cell scale)) to a Q0.15 output. Every step is gemmlowp's int16 arithmetic: non-saturating
  adds that wrap to 16 bits, SaturatingRoundingDoublingHighMul on 16 bits, constants given as
  int32 raw values rounded to 16 bits;
- TFLite Micro calls TFLite's reference int16 LOGISTIC and TANH: the input times 3 (Q3.12 read at
  3/4 of its scale), then a linear interpolation in a 256-entry table of sigmoid(i / 24) in Q0.16.

The C twins are in codegen/kernels/lstm.c.
"""

from __future__ import annotations

import numpy as np

from .. import numerics as nx

_I16_MIN, _I16_MAX = -(1 << 15), (1 << 15) - 1


def wrap16(x: np.ndarray) -> np.ndarray:
    """An int value cast to int16 (two's complement wrap), as the C++ int16 arithmetic stores it."""
    return ((np.asarray(x, np.int64) + (1 << 15)) & 0xFFFF) - (1 << 15)


def clamp16(x: np.ndarray) -> np.ndarray:
    return np.clip(np.asarray(x, np.int64), _I16_MIN, _I16_MAX)


def _mul(a, b) -> np.ndarray:
    """gemmlowp's SaturatingRoundingDoublingHighMul on int16: (a * b + nudge) / 2^15, truncated."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 14, 1 - (1 << 14))
    total = ab + nudge
    quotient = np.where(total < 0, -((-total) >> 15), total >> 15)
    return np.where((a == _I16_MIN) & (b == _I16_MIN), _I16_MAX, wrap16(quotient))


def _shift_left(x: np.ndarray, exponent: int) -> np.ndarray:
    """SaturatingRoundingMultiplyByPOT with a positive exponent, on int16."""
    if exponent == 0:
        return x
    threshold = (1 << (15 - exponent)) - 1
    return np.where(x > threshold, _I16_MAX, np.where(x < -threshold, _I16_MIN, wrap16(x << exponent)))


def _divide_pot(x: np.ndarray, exponent: int) -> np.ndarray:
    return nx.rounding_divide_by_pot(x, exponent) if exponent else x


def _constant(raw32: int) -> int:
    """A gemmlowp constant given as an int32 raw value, rounded to the int16 format."""
    return int(nx.rounding_divide_by_pot(np.int64(raw32), 16))


def _exp_on_quarter(a: np.ndarray) -> np.ndarray:
    """exp(a) for a in [-1/4, 0), Q0.15: gemmlowp's Taylor expansion around -1/8."""
    constant_term, one_third = _constant(1895147668), _constant(715827883)
    x = wrap16(a + (1 << 12))
    x2 = _mul(x, x)
    x3 = _mul(x2, x)
    x4 = _mul(x2, x2)
    x4_over_4 = _divide_pot(x4, 2)
    poly = _divide_pot(wrap16(_mul(wrap16(x4_over_4 + x3), one_third) + x2), 1)
    return clamp16(constant_term + _mul(constant_term, wrap16(x + poly)))  # AddSaturatingIf16Bit


_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308), (2, 39332535), (3, 720401),
           (4, 242))  # exp(-2^k) as int32 raw Q0.31


def _exp_on_negative(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """exp(a) for a <= 0 with `integer_bits` integer bits, Q0.15."""
    fractional = 15 - integer_bits
    quarter = 1 << (fractional - 2)
    reduced = wrap16((a & (quarter - 1)) - quarter)
    result = _exp_on_quarter(_shift_left(reduced, integer_bits))
    remainder = wrap16(reduced - a)
    for exponent, raw in _BARREL:
        if integer_bits > exponent:
            bit = 1 << (fractional + exponent)
            result = np.where(remainder & bit, _mul(result, _constant(raw)), result)
    if integer_bits > 5:
        clamp = _constant(-(1 << (36 - integer_bits)))
        result = np.where(a < clamp, 0, result)
    return np.where(a == 0, _I16_MAX, result)


def _newton_reciprocal(a: np.ndarray) -> np.ndarray:
    """x ~ 1 / (1 + a) for a in (0, 1), Q2.13, as gemmlowp's three Newton-Raphson steps, and the
    half denominator it started from."""
    total = a + _I16_MAX  # RoundingHalfSum(a, 1): (sum +- 1) / 2, truncated
    sign = np.where(total >= 0, 1, -1)
    half = wrap16(np.where(total + sign < 0, -((-(total + sign)) // 2), (total + sign) // 2))
    one = 1 << 13
    x = wrap16(_constant(1515870810) + _mul(half, _constant(-1010580540)))
    for _ in range(3):
        error = wrap16(one - _mul(half, x))
        x = wrap16(x + _shift_left(_mul(x, error), 2))
    return x


def gemmlowp_tanh16(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """gemmlowp::tanh of int16 raw values with `integer_bits` integer bits, Q0.15."""
    a = np.asarray(a, np.int64)
    negative = a < 0
    n = np.where(negative, a, wrap16(-a))
    x = _newton_reciprocal(_exp_on_negative(n, integer_bits + 1))  # exp(2n): one more integer bit
    t = _shift_left(wrap16(x - (1 << 13)), 2)  # (1 - e) / (1 + e) = 2 / (1 + e) - 1
    return np.where(a == 0, 0, np.where(negative, wrap16(-t), t))


def gemmlowp_logistic16(a: np.ndarray, integer_bits: int = 3) -> np.ndarray:
    """gemmlowp::logistic of int16 raw values with `integer_bits` integer bits, Q0.15."""
    a = np.asarray(a, np.int64)
    positive = a > 0
    magnitude = np.where(positive, a, wrap16(-a))
    x = _newton_reciprocal(_exp_on_negative(wrap16(-magnitude), integer_bits))
    if_positive = _shift_left(x, 1)  # 1 / (1 + e): x / 2 read with one integer bit, to Q0.15
    if_negative = wrap16(_I16_MAX - if_positive)
    return np.where(a == 0, _constant(1 << 30), np.where(positive, if_positive, if_negative))


# TFLite's int16 sigmoid table (sigmoid(i / 24) in Q0.16, i < 256), as measured from TFLite Micro's
# int16 LOGISTIC and TANH by fixtures/measure_sigmoid_table.py: its entries are not a plain rounding
# of the function (they lean towards the chords the kernels interpolate along).
_SIGMOID_TABLE = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794,
    41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443,
    48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374,
    54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544,
    58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279,
    61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990,
    63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030,
    64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652,
    64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019,
    65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476,
    65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498, 65500, 65501,
    65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516,
    65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529,
    65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532,
    65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
], np.int64)


def sigmoid_table() -> np.ndarray:
    return _SIGMOID_TABLE


def _scaled_input(x: np.ndarray, multiplier: int, left_shift: int) -> np.ndarray:
    """The reference kernels' input rescale: a zero multiplier means 3 << shift (power-of-two
    scales), otherwise (x * multiplier + round) >> shift."""
    if multiplier == 0:
        return np.asarray(x, np.int64) * (3 << left_shift)
    rounding = (1 << (left_shift - 1)) if left_shift > 0 else 0
    return (np.asarray(x, np.int64) * multiplier + rounding) >> left_shift


def _interpolated(value: np.ndarray, fraction_bits: int) -> np.ndarray:
    """|value| looked up in the sigmoid table: its bits above `fraction_bits` index the table, the
    ones below interpolate between two entries (uint32 in C); past the table, the last value."""
    magnitude = np.abs(value)
    table = sigmoid_table()
    index = magnitude >> fraction_bits
    lower, upper = table[np.minimum(index, 254)], table[np.minimum(index, 254) + 1]
    inside = (lower << fraction_bits) + (magnitude & ((1 << fraction_bits) - 1)) * (upper - lower)
    return np.where(index >= 255, 0xFFFF << fraction_bits if fraction_bits == 8 else 0x7FFF << 10, inside)


def tflm_logistic16(x: np.ndarray, multiplier: int = 0, left_shift: int = 0) -> np.ndarray:
    """reference_integer_ops::Logistic on int16: Q3.12 in (at 3/4), Q0.15 out."""
    value = _scaled_input(x, multiplier, left_shift)
    lookup = _interpolated(value, 9)
    result = np.where(value >= 0, lookup + (1 << 9), (1 << 25) - lookup + (1 << 9) - 1)
    return wrap16(result >> 10)


def tflm_tanh16(x: np.ndarray, multiplier: int, left_shift: int) -> np.ndarray:
    """reference_integer_ops::Tanh on int16 (tanh(x) = 2 sigmoid(2x) - 1 from the same table)."""
    value = _scaled_input(x, multiplier, left_shift)
    lookup = _interpolated(value, 8)
    result = np.where(value >= 0, lookup - (1 << 23) + (1 << 7), -lookup + (1 << 23) + (1 << 7) - 1)
    return wrap16(result >> 8)


def tflm_tanh_params(cell_log2: int) -> tuple[int, int]:
    """(input multiplier, left shift) TFLite Micro's LSTM gives TANH for a state of scale
    2^cell_log2 (-12 for a Q3.12 gate): a shift of 15 + cell_log2 - 3, or a multiplier of 3 and
    a right shift when that is negative."""
    shift = 15 + cell_log2 - 3
    return (0, shift) if shift >= 0 else (3, -shift)

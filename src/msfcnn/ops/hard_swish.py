"""HARD_SWISH: x * relu6(x + 3) / 6. int8: TFLite's reference kernel in 16-bit fixed point (the
interpreter's optimised kernel computes the same values), evaluated here once for each of the
256 int8 inputs into a table."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .lookup import LookupOp

INT16_MIN, INT16_MAX = -(1 << 15), (1 << 15) - 1


def _int16_multiplier(real: np.float32) -> tuple[int, int]:
    """QuantizeMultiplier, then DownScaleInt32ToInt16Multiplier: (int16 significand, exponent)."""
    mult, shift = nx.quantize_multiplier(float(real))
    if mult >= INT32_MAX_MINUS_OFFSET:
        return INT16_MAX, shift
    return (mult + (1 << 15)) >> 16, shift


INT32_MAX_MINUS_OFFSET = nx.INT32_MAX - (1 << 15)


def hard_swish_params(in_q, out_q) -> tuple[int, int, int, int]:
    """(output multiplier, its exponent, reluish multiplier, its exponent) as HardSwishPrepare,
    which works in float32."""
    f32 = np.float32
    hires_input_scale = f32(1.0 / 128.0) * f32(in_q.scale)
    reluish_scale = f32(3.0 / 32768.0)
    out_mult, out_exp = _int16_multiplier(hires_input_scale / f32(out_q.scale))
    reluish_mult, reluish_exp = _int16_multiplier(hires_input_scale / reluish_scale)
    return out_mult, out_exp, reluish_mult, reluish_exp


def _srdhm16(a: np.ndarray, b: int) -> np.ndarray:
    """gemmlowp's SaturatingRoundingDoublingHighMul on int16."""
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 14, 1 - (1 << 14))
    total = ab + nudge
    result = np.where(total < 0, -((-total) >> 15), total >> 15)  # C division truncates
    return np.where((a == INT16_MIN) & (b == INT16_MIN), INT16_MAX, result)


def _saturating_left_shift(x: np.ndarray, amount: int) -> np.ndarray:
    return np.clip(x * (1 << amount), INT16_MIN, INT16_MAX)


def hard_swish_table(in_q, out_q) -> np.ndarray:
    out_mult, out_exp, reluish_mult, reluish_exp = hard_swish_params(in_q, out_q)
    x = np.arange(-128, 128, dtype=np.int64) - in_q.zero_point
    hires = x * (1 << 7)
    preshift_output = _srdhm16(hires, out_mult)
    reluish = hires
    if reluish_exp > 0:
        reluish = _saturating_left_shift(reluish, reluish_exp - 1)
    reluish = _srdhm16(reluish, reluish_mult)
    if reluish_exp > 0:
        reluish = _saturating_left_shift(reluish, 1)
    if reluish_exp < 0:
        reluish = nx.rounding_divide_by_pot(reluish, -reluish_exp)
    reluish = (reluish + (1 << 15)) >> 1
    product = reluish * preshift_output  # SaturatingDoublingHighMul: truncating, never both -32768 here
    preshift = np.where(product < 0, -((-product) >> 15), product >> 15)
    out = nx.rounding_divide_by_pot(preshift, -out_exp) + out_q.zero_point
    out = (out - INT16_MIN) % (1 << 16) + INT16_MIN  # the kernel adds the zero point in int16
    return np.clip(out, nx.INT8_MIN, nx.INT8_MAX).astype(np.int8)


@dataclass(frozen=True)
class HardSwish(LookupOp, elements=frozenset({"int8", "float32"})):
    kind = "hard_swish"

    def table(self, in_q, out_q) -> np.ndarray:
        return hard_swish_table(in_q, out_q)

    def float_function(self, x: np.ndarray) -> np.ndarray:
        return x * np.clip(x + np.float32(3), np.float32(0), np.float32(6)) / np.float32(6)

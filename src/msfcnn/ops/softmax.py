"""SOFTMAX over the last axis; its cost is not counted in MACs.

int8 to int16 (the head of TFLite Micro's keyword models: output scale 1/65536, zero point -32768)
is a kernel of its own (`output_type` "int16", C `msf_softmax_wide_s8`), and the runtimes differ:

- LiteRT runs its int8 kernel's arithmetic (the float32 exp table) and saturates to int16;
- TFLite Micro runs TFLite's reference integer SOFTMAX: max - x rescaled (by beta x input scale,
  as a multiplier greater than one) into a Q5.26 number, its exp in gemmlowp's 32-bit fixed point
  (Q0.31), the sum in Q12.19, one reciprocal per row (its leading zeros, then 1 / (1 + x) by three
  Newton-Raphson steps), each exp times it shifted right (rounding) to 16 bits, minus 32768.
  Differences below the input radius (diff_min) give -32768 and stay out of the sum. max - x takes
  256 values, so the exps are a table computed at load time (`tflm_exp_table`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .. import numerics as nx
from .base import CCall, KernelContext, Pattern, ValueMap, c_struct, in_numerics
from .loop_counts import KernelBuild
from .logistic import expf
from .soft_float import reduced
from .tanh import _exp_on_negative, _mul

SCALED_DIFF_INTEGER_BITS = 5  # TFLite's reference int8 SOFTMAX: max - x as a Q5.26 number
ACCUMULATION_INTEGER_BITS = 12  # ... and the sum of the exps as a Q12.19 one


@dataclass(frozen=True)
class Softmax(ValueMap, pattern=Pattern.VECTOR, c_call=CCall.VECTOR,
              elements=frozenset({"int8", "int16", "float32", "uint8"})):
    kind = "softmax"
    c_kernel = "msf_softmax"
    beta: float = 1.0
    output_type: str | None = None  # "int16" from an int8 input; None: the input's type

    @property
    def c_kernel(self) -> str:  # type: ignore[override]
        """int8 to int16 runs its own entry (kernels/softmax_wide.c): the int8 kernel stays as it was."""
        return "msf_softmax" if self.output_type is None else "msf_softmax_wide"

    def output_element(self, input_element: str) -> str:
        return self.output_type or input_element

    def describe(self) -> str:
        return "softmax" if self.output_type is None else f"softmax to {self.output_type}"

    def latency_family(self, kernel: KernelBuild) -> str:
        """int8 to int16 (LiteRT's arithmetic) is a kernel of its own: "softmax_wide"."""
        return "softmax_wide" if self.output_type is not None and self.kernel_family is None \
            else super().latency_family(kernel)

    @classmethod
    def latency_families(cls, kernel: KernelBuild) -> tuple[str, ...]:
        own = super().latency_families(kernel)
        return own + ("softmax_wide",) if kernel.element == "int8" and cls.kernel_family is None else own

    def count_vector(self, family: str, kernel: KernelBuild, shape, counts) -> None:
        """softmax.c runs its three loops and the sum's reciprocal once per row of the last axis. A
        classifier head has one row, whose cost the fits of every calibration network's head put
        in the call's; a label per step or pixel has many, where the per-row division outweighs a
        short row's values. So its rows past the first count as `extra_row` (the 16x8 kernels,
        fitted on many rows, count every row as `vector_row`)."""
        if kernel.wide:
            super().count_vector(family, kernel, shape, counts)
        elif self.c_kernel == "msf_softmax" and self.kernel_family is None:
            counts[f"{family}:extra_row"] += int(np.prod(shape[:-1], dtype=np.int64)) - 1

    def value_counts(self, inputs: list[np.ndarray], output: np.ndarray, ctx: KernelContext) -> dict[str, float]:
        """The float kernel's exps of (x - max) * beta that take their reduction (soft_float.py):
        all but those within about ln 2 / 2 of their row's max."""
        if not ctx.is_float:
            return {}
        x = inputs[0].astype(np.float32).reshape(-1, inputs[0].shape[-1])
        return {"exp_reduced": reduced((x - x.max(axis=1, keepdims=True)) * np.float32(self.beta))}

    def for_numerics(self, ctx: KernelContext, shape) -> "Softmax":
        return in_numerics(Softmax, self, ctx, shape)

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        if self.output_type is not None:
            if ctx.numerics == nx.TFLM:
                return softmax_tflm(x, tflm_exp_table(ctx.input_quant[0].scale, self.beta), np.int16)
            return _softmax_int8(x, ctx.input_quant[0].scale, self.beta, ctx.output_quant, np.int16)
        if ctx.is_float:
            z = (x.astype(np.float32) - x.max(axis=-1, keepdims=True)) * np.float32(self.beta)
            e = np.exp(z)
            return e / e.sum(axis=-1, keepdims=True)
        if ctx.is_int16:
            return _softmax_int16(x, int16_input_multiplier(ctx.input_quant[0].scale, self.beta), ctx.numerics)
        return _softmax_int8(x, ctx.input_quant[0].scale, self.beta, ctx.output_quant)

    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        if self.output_type is not None and ctx.numerics == nx.TFLM:
            return {"exp_fixed": tflm_exp_table(ctx.input_quant[0].scale, self.beta)}
        if ctx.is_int16:
            return dict(zip(("exp_lut", "reciprocal_lut"), int16_luts(ctx.numerics)))
        return {} if ctx.is_float else {"exp_table": _exp_table(ctx.input_quant[0].scale, self.beta)}

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        depth = int(out_shape[-1])
        outer = int(np.prod(out_shape[:-1], dtype=np.int64))
        if ctx.is_float:
            return c_struct({"depth": depth, "outer": outer, "beta": self.beta})
        if ctx.is_int16:
            mult, shift = int16_input_multiplier(ctx.input_quant[0].scale, self.beta)
            return c_struct({"depth": depth, "outer": outer, "input_mult": mult, "input_shift": shift,
                             "exp_lut": names["exp_lut"], "reciprocal_lut": names["reciprocal_lut"]})
        if self.output_type is not None:
            return c_struct({"depth": depth, "outer": outer, "tflm": int(ctx.numerics == nx.TFLM),
                             "output_offset": ctx.output_quant.zero_point, "output_scale": ctx.output_quant.scale,
                             "exp_table": names.get("exp_table"), "exp_fixed": names.get("exp_fixed")})
        return c_struct({"depth": depth, "outer": outer, "output_offset": ctx.output_quant.zero_point,
                         "output_scale": ctx.output_quant.scale, "exp_table": names["exp_table"]})


def _exp_table(input_scale: float, beta: float) -> np.ndarray:
    """table[d] = expf(-input_scale * beta * d) for d = max - x in 0..255, in float32.

    Computed in float64 and rounded once, i.e. a correctly rounded expf (as glibc's).
    """
    scale = -np.float32(input_scale) * np.float32(beta)
    arguments = scale * np.arange(256, dtype=np.float32)  # float32 products, as in C
    return np.exp(arguments.astype(np.float64)).astype(np.float32)


def _softmax_int8(x: np.ndarray, input_scale: float, beta: float, out_q, out_type: type = np.int8) -> np.ndarray:
    """The interpreter's int8 SOFTMAX (optimized_ops::Softmax): a 256-entry float32 exp table
    indexed by max - x, a float32 sum taken element by element, and std::round to the output
    (int8, or int16 from LiteRT's int8 -> int16 kernel, the same template)."""
    rows = x.reshape(-1, x.shape[-1]).astype(np.int32)
    table = _exp_table(input_scale, beta)
    exps = table[rows.max(axis=1, keepdims=True) - rows]
    # A running float32 sum, element by element as the C loop: cumsum accumulates sequentially,
    # while numpy's sum() adds pairwise and rounds differently.
    total = np.cumsum(exps, axis=1, dtype=np.float32)[:, -1]
    inv = np.float32(1.0) / (total * np.float32(out_q.scale))
    prob = exps * inv[:, None]
    out = nx.round_half_away(prob) + out_q.zero_point
    info = np.iinfo(out_type)
    return np.clip(out, info.min, info.max).astype(out_type).reshape(x.shape)


# ---- int8 to int16 under TFLite Micro: TFLite's reference integer SOFTMAX -----------------------
@lru_cache(maxsize=64)
def _tflm_exp_table(input_scale: float, beta: float) -> tuple[int, ...]:
    multiplier, left_shift = _preprocess_softmax_scaling(beta, input_scale)
    d = np.arange(256, dtype=np.int64)
    rescaled = _mul(-d * (1 << left_shift), multiplier)  # MultiplyByQuantizedMultiplierGreaterThanOne
    # Below the input radius an input is out of the sum (its output is -32768): exp 0.
    exps = np.where(-d < -_input_radius(left_shift), 0, _exp_on_negative(rescaled, SCALED_DIFF_INTEGER_BITS))
    return tuple(int(e) for e in exps)


def tflm_exp_table(input_scale: float, beta: float) -> np.ndarray:
    """exp(-(d x beta x input scale)) in Q0.31 for d = max - x in 0..255, as TFLite's reference
    int8 SOFTMAX computes it (0 beyond the input radius, where it writes -32768 instead). An exp is
    never 0 inside the radius (the smallest is exp(-32) x 2^31 > 0)."""
    return np.array(_tflm_exp_table(float(np.float32(input_scale)), float(np.float32(beta))), np.int32)


def _preprocess_softmax_scaling(beta: float, input_scale: float) -> tuple[int, int]:
    """TFLite's PreprocessSoftmaxScaling: beta x input scale x 2^26 in double, capped at 2^31 - 1,
    as a multiplier greater than one (multiplier, left shift)."""
    real = min(beta * input_scale * float(1 << (31 - SCALED_DIFF_INTEGER_BITS)), float((1 << 31) - 1))
    multiplier, shift = nx.quantize_multiplier(real)
    return multiplier, shift


def _input_radius(left_shift: int) -> int:
    """TFLite's CalculateInputRadius(5, left_shift): the largest |max - x| the kernel exponentiates."""
    bits = SCALED_DIFF_INTEGER_BITS
    return int(np.floor(((1 << bits) - 1) * float(1 << (31 - bits)) / float(1 << left_shift)))


def _one_over_one_plus_x(a: np.ndarray) -> np.ndarray:
    """gemmlowp's 1 / (1 + a) for a in [0, 1), Q0.31 in and out, by three Newton-Raphson steps in
    Q2.29; element by element."""
    a = np.asarray(a, np.int64)
    total = a + nx.INT32_MAX
    half_denominator = np.where(total >= 0, (total + 1) // 2, -((1 - total) // 2))  # C++ division truncates
    x = _wrap32(1515870810 + nx.saturating_rounding_doubling_high_mul(half_denominator, -1010580540))
    for _ in range(3):
        error = _wrap32((1 << 29) - nx.saturating_rounding_doubling_high_mul(half_denominator, x))
        x = _wrap32(x + _saturating_shift_left(nx.saturating_rounding_doubling_high_mul(x, error), 2))
    return _saturating_shift_left(x, 1)


def _bit_length(x: np.ndarray) -> np.ndarray:
    """The bits of each positive value below 2^32 (Python's int.bit_length), element by element."""
    x = np.asarray(x, np.int64)
    return np.searchsorted(1 << np.arange(33, dtype=np.int64), x, side="right")


def _wrap32(x: np.ndarray) -> np.ndarray:
    """gemmlowp's int32 addition: wrapping."""
    return (np.asarray(x, np.int64) + (1 << 31)) % (1 << 32) - (1 << 31)


def _saturating_shift_left(x: np.ndarray, exponent: int) -> np.ndarray:
    threshold = (1 << (31 - exponent)) - 1
    return np.where(x > threshold, nx.INT32_MAX, np.where(x < -threshold, nx.INT32_MIN, x << exponent))


def softmax_tflm(x: np.ndarray, table: np.ndarray, out_type: type) -> np.ndarray:
    """TFLite's reference integer SOFTMAX from int8 to `out_type` (int16, or int8: the output's
    scale 1/2^bits and zero point its type's least value, as TFLite requires)."""
    info = np.iinfo(out_type)
    rows = x.reshape(-1, x.shape[-1]).astype(np.int64)
    exps = table[rows.max(axis=1, keepdims=True) - rows].astype(np.int64)
    # the sum in Q12.19 (gemmlowp's Rescale: a rounding shift; exps of 0 add nothing), then
    # GetReciprocal: the sum shifted up to its leading one, the one dropped, 1 / (1 + the rest)
    totals = nx.rounding_divide_by_pot(exps, ACCUMULATION_INTEGER_BITS).sum(axis=1)
    headroom = 32 - _bit_length(totals)  # leading zeros of the positive sums
    bits_over_unit = ACCUMULATION_INTEGER_BITS - headroom
    scales = _one_over_one_plus_x(((totals << headroom) & 0xFFFFFFFF) - (1 << 31))
    products = nx.saturating_rounding_doubling_high_mul(scales[:, None], exps)
    values = nx.rounding_divide_by_pot(products, bits_over_unit[:, None] + 31 - info.bits) + info.min
    out = np.where(exps == 0, info.min, np.clip(values, info.min, info.max))
    return out.astype(out_type).reshape(x.shape)


# ---- 16x8: TFLite's int16 SOFTMAX (reference_ops::SoftmaxInt16) --------------------------------
# Two 513-entry int16 tables, sampled by TFLite's gen_lut at Prepare: exp over [-10, 0] and
# 1 / (1 + x) over [0, 1], both to [-1, 1) in Q0.15. LiteRT samples them in double, TFLite Micro
# in float32 (with the C library's expf); the reciprocal tables then differ in two entries.
LUT_SIZE = 513


def int16_input_multiplier(input_scale: float, beta: float) -> tuple[int, int]:
    """(multiplier, shift) taking max - x to a 65535-step scale over [-10, 0]."""
    return nx.quantize_multiplier(float(np.float32(input_scale)) * float(np.float32(beta)) / (10.0 / 65535.0))


@lru_cache(maxsize=2)
def int16_luts(numerics: str) -> tuple[np.ndarray, np.ndarray]:
    """(exp table, reciprocal table) as `numerics`' interpreter fills them."""
    if numerics == nx.TFLM:
        f32 = np.float32
        return (_gen_lut(lambda v: expf(f32(v)), -10.0, 0.0, f32),
                _gen_lut(lambda v: f32(f32(1) / f32(f32(1) + f32(v))), 0.0, 1.0, f32))
    return (_gen_lut(lambda v: float(np.exp(v)), -10.0, 0.0, float),
            _gen_lut(lambda v: 1.0 / (1.0 + v), 0.0, 1.0, float))


def _gen_lut(func, low: float, high: float, real) -> np.ndarray:
    """TFLite's gen_lut for int16 tables in the arithmetic of `real` (float or np.float32): samples
    at the steps, each moved by half the error of linear interpolation at its midpoint; the last
    entry only gives the last slope."""
    step = real((real(high) - real(low)) / real(LUT_SIZE - 1))
    scale = real(32768.0)  # (int16 max - int16 min + 1) / (output max - output min)

    def rounded(v):
        return real(nx.tflite_round(float(v)))

    table = np.empty(LUT_SIZE, np.int16)
    for i in range(LUT_SIZE - 1):
        at = real(real(low) + real(real(i) * step))
        value, midpoint = func(at), func(real(at + real(step / real(2))))
        following = func(real(real(low) + real(real(i + 1) * step)))
        interpolated = rounded(real(real(following * scale) + rounded(value * scale)) / real(2))
        bias = rounded(real(interpolated - rounded(midpoint * scale)) / real(2))
        table[i] = min(max(int(rounded(value * scale) - bias), nx.INT16_MIN), nx.INT16_MAX)
    table[-1] = min(max(int(rounded(func(real(high)) * scale)), nx.INT16_MIN), nx.INT16_MAX)
    return table


def _lookup(values: np.ndarray, table: np.ndarray) -> np.ndarray:
    """generic_int16_table_lookup: 512 segments of 128 values, linear between the entries."""
    values = values.astype(np.int64)
    index = 256 + (values >> 7)
    base = table[index].astype(np.int64)
    slope = table[index + 1].astype(np.int64) - base
    return base + ((slope * (values & 0x7F) + 64) >> 7)


def _softmax_int16(x: np.ndarray, multiplier: tuple[int, int], numerics: str) -> np.ndarray:
    """The probabilities in Q0.15: exp(x - max) from the table, their sum's reciprocal from the
    other table (the sum normalised by its leading zeros), the product rounded (output scale 1/32768)."""
    exp_lut, reciprocal_lut = int16_luts(numerics)
    rows = x.reshape(-1, x.shape[-1]).astype(np.int64)
    scaled = nx.multiply_by_quantized_multiplier(rows - rows.max(axis=1, keepdims=True), *multiplier, nx.DOUBLE)
    exps = _lookup(np.clip(scaled + 32767, nx.INT16_MIN, nx.INT16_MAX), exp_lut)
    total = exps.sum(axis=1)
    headroom = np.array([32 - int(t).bit_length() for t in total])  # leading zeros of the uint32 sum
    shifted = ((total << (headroom - 1)) + (1 << 13)) >> 14
    reciprocal = _lookup(np.clip(shifted - ((1 << 15) + (1 << 16)), nx.INT16_MIN, nx.INT16_MAX), reciprocal_lut)
    right = (31 - headroom)[:, None]
    out = (exps * reciprocal[:, None] + (np.int64(1) << (right - 1))) >> right
    return np.clip(out, 0, nx.INT16_MAX).astype(np.int16).reshape(x.shape)

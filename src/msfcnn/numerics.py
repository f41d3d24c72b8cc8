"""TFLite's integer arithmetic, vectorised in int64 numpy.

These helpers are the shared vocabulary of the int8 reference kernels (`ops/*.py`):

- `quantize_multiplier` turns a real rescale factor into TFLite's (int32 significand, shift) pair;
- `multiply_by_quantized_multiplier` applies one, in one of the interpreter's rounding schemes;
- `activation_range` is the int8 clamp a fused activation becomes;
- `quantize_float` / `dequantize` are the float32 <-> int8 conversions at a model's edges.

Which rounding a kernel uses is a property of the kernel the TFLite interpreter runs, not of the
maths, and the interpreter mixes three:

- `DOUBLE`: TFLite's own MultiplyByQuantizedMultiplier (gemmlowp's SaturatingRoundingDoublingHighMul
  then RoundingDivideByPOT, halves away from zero), used by the element-wise kernels (depthwise
  conv, ADD, MEAN, requantise);
- `RUY`: the output stage of ruy's x86 GEMM kernels (AVX2 / AVX-512), which CONV_2D and
  FULLY_CONNECTED run on: also two roundings, but both round halves up, i.e. towards +infinity;
- `SINGLE`: one rounding of the 64-bit product (TFLITE_SINGLE_ROUNDING builds, ruy's portable
  code); not what the x86 interpreter does, kept for targets that do.

Each op names its scheme in a module constant; tests against the interpreter pin the choice down.
Under `TFLM` numerics (TFLite Micro, TFLite's reference kernels) CONV_2D and FULLY_CONNECTED use
`DOUBLE` too (`gemm_rounding`), and the kernels that follow vector code under LiteRT follow the
reference kernels' scalar code.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .errors import UserError

INT8_MIN, INT8_MAX = -128, 127
INT16_MIN, INT16_MAX = -(1 << 15), (1 << 15) - 1
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1

# Rounding schemes of MultiplyByQuantizedMultiplier (see the module docstring).
DOUBLE = "double"  # gemmlowp: SaturatingRoundingDoublingHighMul, then RoundingDivideByPOT
RUY = "ruy"  # ruy x86 kernels: (x * m + 2^30) >> 31, then (v + 2^(e-1)) >> e
SINGLE = "single"  # TFLITE_SINGLE_ROUNDING: one 64-bit product, one round-half-up shift
# 16x8 kernels (int64 accumulators): the multiplier cut to 16 bits, rounded half up, then one
# rounding (half up) of the 64-bit product: TFLite's MultiplyByQuantizedMultiplier(int64_t x, ...).
WIDE = "wide"

# Whose kernels an int8 graph is bit-exact with (a property of the loaded graph, `Graph.numerics`,
# handed to every kernel in its KernelContext):
LITERT = "litert"  # the LiteRT (TFLite) interpreter's optimized x86-64 kernels: the default
TFLM = "tflm"  # TFLite Micro's interpreter, i.e. TFLite's reference kernels (LiteRT BUILTIN_REF)
NUMERICS = (LITERT, TFLM)


def gemm_rounding(numerics: str) -> str:
    """The rounding of CONV_2D / FULLY_CONNECTED: ruy's x86 output stage under LiteRT, TFLite's
    MultiplyByQuantizedMultiplier in the reference kernels."""
    return DOUBLE if numerics == TFLM else RUY


def tflite_round(x: float) -> int:
    """std::round: halves away from zero (Python's round() would go to even)."""
    magnitude = abs(x)
    whole = math.floor(magnitude)
    if magnitude - whole >= 0.5:  # exact, unlike floor(magnitude + 0.5)
        whole += 1
    return int(math.copysign(whole, x))


def round_half_away(x: np.ndarray) -> np.ndarray:
    """std::round over a float array, to int64 (exact: the fraction test happens in float64)."""
    x = np.asarray(x, dtype=np.float64)
    magnitude = np.abs(x)
    whole = np.floor(magnitude)
    whole += (magnitude - whole) >= 0.5
    return (np.sign(x) * whole).astype(np.int64)


# The largest left shift of a quantised multiplier: TFLite shifts an int32 left by it (and its
# single-rounding build clamps the shift to 30), so a factor of 2^30 or more has no representation.
MAX_MULTIPLIER_SHIFT = 30


# np.errstate for scale ratios formed in float32: one that overflows (or inf / inf) makes no numpy
# warning on stderr; quantize_multiplier then refuses the non-finite factor in one line.
QUIET_FLOAT32 = {"over": "ignore", "invalid": "ignore"}


def quantize_multiplier(real: float) -> tuple[int, int]:
    """TFLite's QuantizeMultiplier: real = significand * 2^(shift - 31), significand in [2^30, 2^31).

    Returns (significand, shift); shift > 0 is a left shift. Follows frexp and the two corner cases
    of the C++ code (a significand that rounds up to 2^31, and shifts below -31 that become zero).
    """
    if not math.isfinite(real):
        raise UserError(f"a rescale factor (a ratio of the model's scales) is {real}: the fixed-point multipliers "
                        "need a finite one")
    if real == 0.0:
        return 0, 0
    fraction, shift = math.frexp(real)
    significand = tflite_round(fraction * (1 << 31))
    if significand == 1 << 31:
        significand //= 2
        shift += 1
    if shift > MAX_MULTIPLIER_SHIFT:
        raise UserError(f"a rescale factor (a ratio of the model's scales) of {real:.6g} is 2^{MAX_MULTIPLIER_SHIFT} "
                        "or more: TFLite's fixed-point multipliers cannot represent it")
    if shift < -31:
        return 0, 0
    return significand, shift


def quantize_multipliers(reals) -> tuple[np.ndarray, np.ndarray]:
    """`quantize_multiplier` over an array of per-channel factors: (int64 significands, int64 shifts)."""
    pairs = [quantize_multiplier(float(r)) for r in np.asarray(reals, dtype=np.float64).reshape(-1)]
    return (np.array([p[0] for p in pairs], dtype=np.int64), np.array([p[1] for p in pairs], dtype=np.int64))


def per_channel_multipliers(input_scale: float, weight_scales, output_scale: float,
                            channels: int) -> tuple[np.ndarray, np.ndarray]:
    """Conv / depthwise / per-channel FC rescale factors, as PopulateConvolutionQuantizationParams.

    TFLite stores scales as float32 and forms input_scale * weight_scale / output_scale in double;
    a single weight scale (per-tensor weights) is broadcast over the channels. The arrays are
    read-only: the executors ask for them at every patch, so they are computed once per layer.
    """
    scales = np.asarray(weight_scales, dtype=np.float32).reshape(-1)
    return _per_channel_multipliers(float(np.float32(input_scale)), scales.tobytes(),
                                    float(np.float32(output_scale)), channels)


@lru_cache(maxsize=4096)
def _per_channel_multipliers(input_scale: float, weight_scales: bytes, output_scale: float,
                             channels: int) -> tuple[np.ndarray, np.ndarray]:
    scales = np.frombuffer(weight_scales, dtype=np.float32).astype(np.float64)
    if scales.size == 1:
        scales = np.full(channels, scales[0])
    multipliers, shifts = quantize_multipliers(input_scale * scales / output_scale)
    multipliers.flags.writeable = False
    shifts.flags.writeable = False
    return multipliers, shifts


def _trunc_div_pow2(x: np.ndarray, bits: int) -> np.ndarray:
    """C's integer division by 2^bits (rounds toward zero), for int64 arrays."""
    q = np.abs(x) >> bits
    return np.where(x < 0, -q, q)


def saturating_rounding_doubling_high_mul(a: np.ndarray, b) -> np.ndarray:
    """gemmlowp's SaturatingRoundingDoublingHighMul on int32 values held in int64 arrays."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    result = _trunc_div_pow2(ab + nudge, 31)
    # The only overflow: INT32_MIN * INT32_MIN, which saturates.
    return np.where((a == INT32_MIN) & (b == INT32_MIN), INT32_MAX, result)


def high_mul_half_up(x: np.ndarray, multiplier: int) -> np.ndarray:
    """NEON's vqrdmulh (as the interpreter's x86 build runs it, through SSE): the doubling high
    multiply of int32 values, rounded half up; it never saturates for a positive multiplier."""
    return (np.asarray(x, dtype=np.int64) * np.int64(multiplier) + (np.int64(1) << 30)) >> 31


def rounding_divide_by_pot(x: np.ndarray, exponent) -> np.ndarray:
    """gemmlowp's RoundingDivideByPOT: arithmetic shift right, rounding halves away from zero."""
    x = np.asarray(x, dtype=np.int64)
    exponent = np.asarray(exponent, dtype=np.int64)
    mask = (np.int64(1) << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)


def multiply_by_quantized_multiplier(x, multiplier, shift, rounding: str = DOUBLE) -> np.ndarray:
    """TFLite's MultiplyByQuantizedMultiplier(int32 x, int32 multiplier, int shift), element-wise.

    `multiplier` and `shift` broadcast against `x` (per-channel arrays go on the last axis).
    The result is int64 holding int32 values.
    """
    x = np.asarray(x, dtype=np.int64)
    multiplier = np.asarray(multiplier, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    if rounding == SINGLE:
        total_shift = 31 - shift
        return (x * multiplier + (np.int64(1) << (total_shift - 1))) >> total_shift
    if rounding == RUY:
        return _ruy_x86_multiply(x, multiplier, shift)
    if rounding == WIDE:
        return _wide_multiply(x, multiplier, shift)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    # x * (1 << left) wraps in int32 in C; real models never get near that, so int64 is fine.
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x << left, multiplier), right)


def _ruy_x86_multiply(x: np.ndarray, multiplier: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """ruy's x86 output stage: left shift, 64-bit product rounded half up to the high 32 bits, then
    a rounding right shift (halves up) that saturates to 2^(31 - e) where x + nudge would overflow."""
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    high = ((x << left) * multiplier + (np.int64(1) << 30)) >> 31
    nudge = np.where(right > 0, np.int64(1) << np.maximum(right - 1, 0), 0)
    shifted = (high + nudge) >> right
    return np.where(high > INT32_MAX - nudge, np.int64(1) << (31 - right), shifted)


def _wide_multiply(x: np.ndarray, multiplier: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """MultiplyByQuantizedMultiplier of an int64 accumulator (|x| < 2^47): the significand reduced
    to 16 bits (rounded half up, saturating at 0x7FFF), then one rounding shift (half up)."""
    reduced = np.where(multiplier < 0x7FFF0000, (multiplier + (1 << 15)) >> 16, 0x7FFF)
    total_shift = 15 - shift
    return (x * reduced + (np.int64(1) << (total_shift - 1))) >> total_shift


def quantize_f32(value: float, scale: float, zero_point: int) -> int:
    """zero_point + round(value / scale) computed in float32, as CalculateActivationRangeQuantized."""
    return int(zero_point) + tflite_round(float(np.float32(value) / np.float32(scale)))


# The clamp of each activation in real values, (low, high); None: unbounded above. RELU_N1_TO_1
# and RELU_0_TO_1 exist only as standalone TFLite operators (ops/activation.py), never fused.
ACTIVATION_BOUNDS = {"relu": (0.0, None), "relu6": (0.0, 6.0), "relu_n1_to_1": (-1.0, 1.0), "relu_0_to_1": (0.0, 1.0)}


def activation_range(activation: str | None, quant, qmin: int = INT8_MIN, qmax: int = INT8_MAX) -> tuple[int, int]:
    """The int8 clamp of an activation (TFLite's CalculateActivationRangeQuantized; QuantizedReluX
    for the standalone ones: the same float32 division and rounding)."""
    if activation is None:
        return qmin, qmax
    if activation not in ACTIVATION_BOUNDS:
        raise ValueError(f"unknown activation {activation!r}")
    low, high = ACTIVATION_BOUNDS[activation]
    low_q = max(qmin, quantize_f32(low, quant.scale, quant.zero_point))
    return low_q, qmax if high is None else min(qmax, quantize_f32(high, quant.scale, quant.zero_point))


def float_activation(x: np.ndarray, activation: str | None) -> np.ndarray:
    """Activations in float graphs."""
    if activation is None:
        return x
    if activation not in ACTIVATION_BOUNDS:
        raise ValueError(f"unknown activation {activation!r}")
    low, high = ACTIVATION_BOUNDS[activation]
    return np.clip(x, np.float32(low), None if high is None else np.float32(high))


def requantize_accumulator(acc: np.ndarray, multiplier, shift, zero_point: int, clamp: tuple[int, int],
                           rounding: str, dtype: type = np.int8) -> np.ndarray:
    """Accumulator -> int8 (or int16): rescale, add the output zero point, clamp (the conv/FC epilogue)."""
    out = multiply_by_quantized_multiplier(acc, multiplier, shift, rounding) + zero_point
    return np.clip(out, clamp[0], clamp[1]).astype(dtype)


def exact_int_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for small integers, exact: float64 BLAS is exact while every partial sum is < 2^53.

    int8 activations minus zero points (|v| <= 255) times int8 weights (|w| <= 128) summed over K
    terms stay below 2^53 for any K < 2^37, far beyond any layer here.
    """
    out = np.asarray(a, dtype=np.float64) @ np.asarray(b, dtype=np.float64)
    return out.astype(np.int64)


# float32 reductions summed the way the C kernels sum them: one rounded float32 addition per term,
# in the order the kernel visits the terms. A float32 sum depends on its order, and a difference in
# its last bit can move a value after a QUANTIZE to the next integer; numpy's own sums (pairwise,
# BLAS) would put such values on the other side of the boundary from the C code.
def float32_sum_in_c_order(acc: np.ndarray | None, region: np.ndarray) -> np.ndarray:
    """acc (per channel, None: zeros) plus each pixel of a (rows, cols, C) region, row-major."""
    total = np.zeros(region.shape[-1], np.float32) if acc is None else np.array(acc, np.float32)
    for pixel in region.reshape(-1, region.shape[-1]).astype(np.float32):
        total += pixel
    return total


def float32_dot_in_c_order(acc: np.ndarray | None, weights: np.ndarray, x: np.ndarray) -> np.ndarray:
    """acc (per row of weights, None: zeros) plus weights @ x, term by term in the order of x, each
    product rounded to float32 before it is added (no fused multiply-add: C99 mode contracts none)."""
    total = np.zeros(weights.shape[0], np.float32) if acc is None else np.array(acc, np.float32)
    weights, x = weights.astype(np.float32), x.astype(np.float32)
    for k in range(x.size):
        total += weights[:, k] * x[k]
    return total


# The interpreter's QUANTIZE (float32 -> int8) and DEQUANTIZE (int8 -> float32) at a model's edges
# run vector code (NEON, translated to SSE on x86) on blocks of 8 values and scalar code on the
# rest, and the two paths round differently, so the position of a value in memory matters:
# - QUANTIZE, vector: x * float32(1 / scale), rounded half to even; scalar: x / scale in double,
#   rounded half away from zero;
# - DEQUANTIZE, vector: q * scale - zero_point * scale in float32 (three roundings); scalar:
#   (q - zero_point) * scale (one rounding).
# TFLite Micro (the reference kernels) runs the scalar code on every value.
EDGE_VECTOR_BLOCK = 8


def vector_part(size: int, numerics: str) -> int:
    """How many leading values of a `size`-value edge tensor the interpreter converts with vector code."""
    return 0 if numerics == TFLM else size // EDGE_VECTOR_BLOCK * EDGE_VECTOR_BLOCK


def vector_mask(positions: np.ndarray, size: int, numerics: str) -> np.ndarray:
    """Which of the values at flat `positions` (memory order) of a `size`-value tensor the
    interpreter's QUANTIZE / DEQUANTIZE convert with vector code."""
    return np.asarray(positions) < vector_part(size, numerics)


def quantize_values(x: np.ndarray, vector: np.ndarray, quant, numerics: str = LITERT,
                    dtype: type = np.int8) -> np.ndarray:
    """float32 -> int8 (or int16) value by value, by the vector code where `vector` is True and
    the scalar code elsewhere (see EDGE_VECTOR_BLOCK). TFLite Micro's scalar code divides in
    float32 (`val / static_cast<float>(scale)`), LiteRT's in double; both round half away."""
    x = np.asarray(x, dtype=np.float32)
    scale = np.float32(quant.scale)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):  # NaN, inf: INT64_MIN, as C on x86
        by_vector = np.rint(x * (np.float32(1.0) / scale)).astype(np.int64)
        quotient = (x / scale).astype(np.float64) if numerics == TFLM else x.astype(np.float64) / float(scale)
        by_scalar = round_half_away(quotient)
    q = np.where(vector, by_vector, by_scalar) + quant.zero_point
    info = np.iinfo(dtype)
    return np.clip(q, info.min, info.max).astype(dtype)


def dequantize_values(q: np.ndarray, vector: np.ndarray, quant, numerics: str = LITERT) -> np.ndarray:
    """int8 -> float32 value by value, by the vector code where `vector` is True (three float32
    roundings) and the scalar code elsewhere (one; TFLite Micro's product in double rounds to the
    same float32, since it is exact in double)."""
    value = np.asarray(q).astype(np.float32)
    scale, zero = np.float32(quant.scale), np.float32(quant.zero_point)
    return np.where(vector, value * scale - zero * scale, (value - zero) * scale).astype(np.float32)


def quantize_float(x: np.ndarray, quant, numerics: str = LITERT, dtype: type = np.int8) -> np.ndarray:
    """float32 -> int8 (or int16) exactly as the interpreter's QUANTIZE, over the array in memory order."""
    flat = np.asarray(x, dtype=np.float32).reshape(-1)
    vector = vector_mask(np.arange(flat.size), flat.size, numerics)
    return quantize_values(flat, vector, quant, numerics, dtype).reshape(np.shape(x))


def dequantize(q: np.ndarray, quant, numerics: str = LITERT) -> np.ndarray:
    """int8 -> float32 exactly as the interpreter's DEQUANTIZE, over the array in memory order."""
    flat = np.asarray(q).reshape(-1)
    vector = vector_mask(np.arange(flat.size), flat.size, numerics)
    return dequantize_values(flat, vector, quant, numerics).reshape(np.shape(q))

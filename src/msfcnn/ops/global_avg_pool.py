"""Global average pooling (TFLite MEAN over H and W, ONNX GlobalAveragePool): (H, W, C) -> (C,)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .base import CCall, KernelContext, Op, Pattern, Shape, c_struct, require_feature_map


@dataclass(frozen=True)
class GlobalAvgPool(Op, pattern=Pattern.REDUCE, c_call=CCall.MAP_TO_VECTOR, accumulates=True):
    kind = "global_avg_pool"
    c_kernel = "msf_global_avg_pool"
    keepdims: bool = False  # True: (1, 1, C) as TFLite MEAN with keep_dims

    def output_shape(self, inputs: list[Shape]) -> Shape:
        _, _, c = require_feature_map(inputs[0], self.kind)
        return (1, 1, c) if self.keepdims else (c,)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        h, w, c = inputs[0]
        return h * w * c

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        whole = (0, x.shape[0]), (0, x.shape[1])
        return self.finish(self.accumulate(None, x, *whole, x.shape, ctx), x.shape, ctx)

    # The iterative form used by fused execution: rows stream into a per-channel accumulator, so
    # the input feature map never has to exist whole. Integer sums are exact in any order.
    def accumulate(self, acc, region: np.ndarray, rows: tuple[int, int], cols: tuple[int, int],
                   in_shape: Shape, ctx: KernelContext) -> np.ndarray:
        """Add a (rows, cols, C) region of the input into the per-channel accumulator."""
        part = region.astype(np.float64 if ctx.is_float else np.int64).sum(axis=(0, 1))
        return part if acc is None else acc + part

    def finish(self, acc: np.ndarray, in_shape: Shape, ctx: KernelContext) -> np.ndarray:
        """The output from the accumulated sum over all H*W positions of an in_shape input."""
        count = in_shape[0] * in_shape[1]
        if ctx.is_float:
            out = (acc / count).astype(np.float32)
        else:
            # TFLite's interpreter runs two different int8 MEAN kernels: a specialised one for
            # 4-D keep_dims means over H and W, the generic one otherwise. Their rescaling differs.
            mean = _mean_keepdims if self.keepdims else _mean_generic
            out = mean(acc, count, ctx.input_quant[0], ctx.output_quant)
        return out.reshape(self.output_shape([tuple(in_shape)]))

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        h, w, c = require_feature_map(in_shapes[0], self.kind)
        fields = {"in_h": h, "in_w": w, "channels": c, "count": h * w, "keepdims": int(self.keepdims)}
        if ctx.is_float:
            return c_struct(fields)
        in_q, out_q = ctx.input_quant[0], ctx.output_quant
        if self.keepdims:
            mult, shift, bias = _keepdims_params(h * w, in_q, out_q)
            return c_struct({**fields, "mult": mult, "shift": shift, "input_zero_point": in_q.zero_point,
                             "output_offset": bias, "vector_channels": c // VECTOR_BLOCK * VECTOR_BLOCK})
        mult, shift = _generic_params(h * w, in_q, out_q)
        return c_struct({**fields, "mult": mult, "shift": shift, "input_zero_point": in_q.zero_point,
                         "output_offset": out_q.zero_point, "vector_channels": 0})


# optimized_integer_ops::Mean handles channels in blocks of 16 with NEON code (on x86 the
# interpreter runs it through the NEON_2_SSE translation) and the remaining channels with scalar
# code. The vector requantisation rounds ties up (vqrdmulh + vrshl, as ruy), the scalar one away
# from zero (gemmlowp): the same mean can come out one apart depending on its channel.
VECTOR_BLOCK = 16


def _mean_keepdims(total: np.ndarray, count: int, in_q, out_q) -> np.ndarray:
    """optimized_integer_ops::Mean: float32 set-up of one multiplier that folds in 1/count.

    The zero-point correction is a float32 bias rounded half away from zero, not an exact integer.
    Matches the single-threaded interpreter (more threads split the channels, and so the blocks,
    differently).
    """
    mult, shift, bias = _keepdims_params(count, in_q, out_q)
    vector = total.shape[-1] // VECTOR_BLOCK * VECTOR_BLOCK
    out = np.concatenate([nx.multiply_by_quantized_multiplier(total[:vector], mult, shift, nx.RUY),
                          nx.multiply_by_quantized_multiplier(total[vector:], mult, shift, nx.DOUBLE)]) + bias
    return np.clip(out, nx.INT8_MIN, nx.INT8_MAX).astype(np.int8)


def _keepdims_params(count: int, in_q, out_q) -> tuple[int, int, int]:
    """(multiplier, shift, bias) of optimized_integer_ops::Mean, set up in float32."""
    f32 = np.float32
    temp = f32(in_q.zero_point) * f32(in_q.scale) / f32(out_q.scale)
    temp = temp + f32(0.5) if temp > 0 else temp - f32(0.5)
    bias = int(out_q.zero_point) - int(temp)  # static_cast<int32_t> truncates
    real_scale = f32(in_q.scale) / (f32(count) * f32(out_q.scale))
    mult, shift = nx.quantize_multiplier(float(real_scale))
    return mult, shift, bias


def _generic_params(count: int, in_q, out_q) -> tuple[int, int]:
    """(multiplier, shift) of reference_ops::QuantizedMeanOrSum: in/out rescale with 1/count
    folded into the multiplier by an integer division."""
    mult, shift = nx.quantize_multiplier(float(np.float32(in_q.scale)) / float(np.float32(out_q.scale)))
    extra = min(count.bit_length() - 1, 32, 31 + shift)  # floor(log2(count)), clamped as TFLite
    return (mult << extra) // count, shift - extra


def _mean_generic(total: np.ndarray, count: int, in_q, out_q) -> np.ndarray:
    """reference_ops::QuantizedMeanOrSum: exact zero-point correction, then in/out rescale with
    1/count folded into the multiplier by an integer division."""
    mult, shift = _generic_params(count, in_q, out_q)
    out = nx.multiply_by_quantized_multiplier(total - in_q.zero_point * count, mult, shift, nx.DOUBLE)
    out = out + out_q.zero_point
    return np.clip(out, nx.INT8_MIN, nx.INT8_MAX).astype(np.int8)

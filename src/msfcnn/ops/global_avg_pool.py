"""Global average pooling (TFLite MEAN over H and W, ONNX GlobalAveragePool): (H, W, C) -> (C,);
and TFLite's AVERAGE_POOL_2D with one window over the whole map, which computes the same sums with
its own rounding and fused activation, and so streams as a tail the same way."""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from .. import numerics as nx
from ..errors import UserError
from .base import C_ACTIVATION, CCall, KernelContext, Op, Pattern, Shape, c_struct, require_feature_map


@dataclass(frozen=True)
class GlobalAvgPool(Op, pattern=Pattern.REDUCE, c_call=CCall.MAP_TO_VECTOR, accumulates=True,
                    elements=frozenset({"int8", "int16", "float32"})):
    kind = "global_avg_pool"
    c_kernel = "msf_global_avg_pool"
    keepdims: bool = False  # True: (1, 1, C) as TFLite MEAN with keep_dims
    # AVERAGE_POOL_2D over the whole map (keepdims): the quotient rounded half away from zero on
    # raw int8 values, then the pool's fused activation, as TFLite's average pool.
    pool: bool = False
    activation: str | None = None
    # The pool's one window, (rows, columns) from the top left corner: with VALID padding and a
    # stride at least the window, TFLite pools only those (DS-CNN's 24 x 5 window over a 25 x 5
    # map leaves the last row out). None: the whole map.
    extent: tuple[int, int] | None = None

    kernel_family = "mean"  # kernels/global_avg_pool.c
    wide_family = "mean"

    def count_map(self, family: str, kernel, in_shape: Shape, counts) -> None:
        """The int8 kernel sums four channels at a time: the last C mod 4 channels' values, one
        channel at a time, cost more each (global_avg_pool.c)."""
        if kernel.int8:
            h, w = self._extent(in_shape)
            counts[f"{family}:tail_input"] += h * w * (in_shape[2] % 4)

    def describe(self) -> str:
        if not self.pool:
            return super().describe()
        return "avgpool (whole map)" if self.extent is None else f"avgpool {self.extent[0]}x{self.extent[1]} (one window)"

    def _extent(self, in_shape: Shape) -> tuple[int, int]:
        return self.extent if self.extent is not None else (in_shape[0], in_shape[1])

    def output_shape(self, inputs: list[Shape]) -> Shape:
        _, _, c = require_feature_map(inputs[0], self.kind)
        return (1, 1, c) if self.keepdims else (c,)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        h, w = self._extent(inputs[0])
        return h * w * inputs[0][2]

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        whole = (0, x.shape[0]), (0, x.shape[1])
        return self.finish(self.accumulate(None, x, *whole, x.shape, ctx), x.shape, ctx)

    # The iterative form used by fused execution: rows stream into a per-channel accumulator, so
    # the input feature map never has to exist whole. Integer sums are exact in any order; float32
    # sums are the C kernel's, pixel by pixel in row-major order, so a plan that streams rows gives
    # the unfused result bit for bit.
    def accumulate(self, acc, region: np.ndarray, rows: tuple[int, int], cols: tuple[int, int],
                   in_shape: Shape, ctx: KernelContext) -> np.ndarray:
        """Add a (rows, cols, C) region of the input into the per-channel accumulator (the part of
        it inside the pool's window)."""
        h, w = self._extent(in_shape)
        region = region[:max(min(rows[1], h) - rows[0], 0), :max(min(cols[1], w) - cols[0], 0)]
        if ctx.is_float:
            return nx.float32_sum_in_c_order(acc, region)
        part = region.astype(np.int64).sum(axis=(0, 1))
        return part if acc is None else acc + part

    def finish(self, acc: np.ndarray, in_shape: Shape, ctx: KernelContext) -> np.ndarray:
        """The output from the accumulated sum over all H*W positions of an in_shape input."""
        count = prod(self._extent(in_shape))
        if self.pool:
            out = _pool_average(acc, count, self.activation, ctx)
        elif ctx.is_float:
            out = np.float32(acc) / np.float32(count)  # float32 division, as the C kernel
        else:
            # TFLite's interpreter runs two different int8 MEAN kernels: a specialised one for
            # 4-D keep_dims means over H and W, the generic one otherwise. Their rescaling differs.
            # TFLite Micro and the reference kernels have one (the generic one's arithmetic).
            # 16x8 MEAN runs the generic kernel under LiteRT too.
            mean = _mean_keepdims if _optimised_mean(self, ctx) else _mean_generic
            out = mean(acc, count, ctx.input_quant[0], ctx.output_quant, ctx.qtype)
        return out.reshape(self.output_shape([tuple(in_shape)]))

    def summed_values(self, in_shapes: list[Shape]) -> int | None:
        return prod(self._extent(in_shapes[0]))

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        h, w, c = require_feature_map(in_shapes[0], self.kind)
        win_h, win_w = self._extent((h, w, c))
        # The C kernel's keepdims selects the arithmetic: the optimised keep_dims kernel's (LiteRT) or
        # the reference one's (TFLite Micro's numerics, and MEAN without keep_dims).
        optimised = _optimised_mean(self, ctx)
        fields = {"in_h": h, "in_w": w, "channels": c, "count": win_h * win_w, "keepdims": int(optimised),
                  "win_h": win_h, "win_w": win_w}
        if self.pool:
            fields["pool"] = 1
            if ctx.is_float:
                fields["activation"] = C_ACTIVATION[self.activation]
            else:
                fields["act_min"], fields["act_max"] = ctx.activation_range(self.activation)
            return c_struct(fields)
        if ctx.is_float:
            return c_struct(fields)
        in_q, out_q = ctx.input_quant[0], ctx.output_quant
        if optimised:
            mult, shift, bias = _keepdims_params(h * w, in_q, out_q)
            return c_struct({**fields, "mult": mult, "shift": shift, "input_zero_point": in_q.zero_point,
                             "output_offset": bias, "vector_channels": c // VECTOR_BLOCK * VECTOR_BLOCK})
        mult, shift = _generic_params(h * w, in_q, out_q)
        return c_struct({**fields, "mult": mult, "shift": shift, "input_zero_point": in_q.zero_point,
                         "output_offset": out_q.zero_point, "vector_channels": 0})

    def takes_clamp(self) -> bool:
        return self.pool  # a MEAN's kernels apply no activation; an AVERAGE_POOL_2D's do


def _optimised_mean(op: GlobalAvgPool, ctx: KernelContext) -> bool:
    """Whether the interpreter runs its optimised int8 MEAN (4-D, keep_dims, LiteRT only)."""
    return op.keepdims and ctx.numerics == nx.LITERT and not ctx.is_int16


def _pool_average(total: np.ndarray, count: int, activation: str | None, ctx: KernelContext) -> np.ndarray:
    """AVERAGE_POOL_2D's quotient (input and output share their quantisation): int8 rounds half
    away from zero, (sum +- count / 2) / count with C's truncating division, then clamps to the
    fused activation's range; float divides, then applies the activation."""
    if ctx.is_float:
        return nx.float_activation(np.float32(total) / np.float32(count), activation)
    out = np.sign(total) * ((np.abs(total) + count // 2) // count)
    low, high = ctx.activation_range(activation)
    return np.clip(out, low, high).astype(ctx.qtype)


# optimized_integer_ops::Mean handles channels in blocks of 16 with NEON code (on x86 the
# interpreter runs it through the NEON_2_SSE translation) and the remaining channels with scalar
# code. The vector requantisation rounds ties up (vqrdmulh + vrshl, as ruy), the scalar one away
# from zero (gemmlowp): the same mean can come out one apart depending on its channel.
VECTOR_BLOCK = 16


def _mean_keepdims(total: np.ndarray, count: int, in_q, out_q, dtype: type = np.int8) -> np.ndarray:
    """optimized_integer_ops::Mean: float32 set-up of one multiplier that folds in 1/count.

    The zero-point correction is a float32 bias rounded half away from zero, not an exact integer.
    Matches the single-threaded interpreter (more threads split the channels, and so the blocks,
    differently).
    """
    mult, shift, bias = _keepdims_params(count, in_q, out_q)
    vector = total.shape[-1] // VECTOR_BLOCK * VECTOR_BLOCK
    out = np.concatenate([nx.multiply_by_quantized_multiplier(total[:vector], mult, shift, nx.RUY),
                          nx.multiply_by_quantized_multiplier(total[vector:], mult, shift, nx.DOUBLE)]) + bias
    return np.clip(out, np.iinfo(dtype).min, np.iinfo(dtype).max).astype(dtype)


def _keepdims_params(count: int, in_q, out_q) -> tuple[int, int, int]:
    """(multiplier, shift, bias) of optimized_integer_ops::Mean, set up in float32."""
    f32 = np.float32
    with np.errstate(**nx.QUIET_FLOAT32):
        temp = f32(in_q.zero_point) * f32(in_q.scale) / f32(out_q.scale)
    temp = temp + f32(0.5) if temp > 0 else temp - f32(0.5)
    if not abs(temp) < 2**31:  # static_cast<int32_t> of it would be undefined (inf or NaN too)
        raise UserError(f"MEAN: the input zero point {in_q.zero_point} x scale {in_q.scale:g} / output scale "
                        f"{out_q.scale:g} is past the int32 range of its bias")
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


def _mean_generic(total: np.ndarray, count: int, in_q, out_q, dtype: type = np.int8) -> np.ndarray:
    """reference_ops::QuantizedMeanOrSum: exact zero-point correction, then in/out rescale with
    1/count folded into the multiplier by an integer division."""
    mult, shift = _generic_params(count, in_q, out_q)
    out = nx.multiply_by_quantized_multiplier(total - in_q.zero_point * count, mult, shift, nx.DOUBLE)
    out = out + out_q.zero_point
    return np.clip(out, np.iinfo(dtype).min, np.iinfo(dtype).max).astype(dtype)

"""DEPTHWISE_CONV_2D of int8 tensors as the LiteRT interpreter computes it (Graph.numerics "litert").

The interpreter's optimized int8 depthwise kernel (optimized_integer_ops' DepthwiseConvGeneral on
x86: the 3x3-filter kernels are Arm-only) sums each output pixel's taps in int32, then requantises
a row of pixels with its per-channel Quantize: vector code (NEON, translated to SSE on x86) on the
first out_c // 8 x 8 channels of every pixel, scalar code on the rest. The scalar code is TFLite's
MultiplyByQuantizedMultiplier (ops/depthwise_conv2d.py's double rounding, halves away from zero);
the vector code shifts left, takes the doubling high multiply rounded half up (vqrdmulh) and
shifts right rounding half up (vrshl): numerics.RUY's two steps. They differ on ties below zero,
about 1 value in 500 to 2000 of such channels for usual scales.

A value's rounding depends on its output channel alone, so the op stays a window op that fuses as
any depthwise convolution. Its C kernel (codegen/kernels/depthwise_conv2d_litert.c) runs the
calibrated depthwise kernel twice over each region: on the other channels with double rounding,
then on the vector channels with ruy rounding, each with its own slice of the constants. (With a
depth multiplier that does not divide 8 the first part starts at the first output of the input
channel that holds the first scalar output, and the second overwrites its outputs before that.)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .. import numerics as nx
from .base import KernelContext, numerics_variant, require_feature_map
from .depthwise_conv2d import DepthwiseConv2D

VECTOR_CHANNELS = 8  # output channels per iteration of the interpreter's vector output stage
VECTOR_ROLE = "vector_channels"  # in a channel's own context: 1 if it is vector code, else 0


def vector_channels(out_c: int) -> int:
    """How many leading output channels the interpreter requantises with vector code."""
    return out_c // VECTOR_CHANNELS * VECTOR_CHANNELS


def litert_depthwise(op: DepthwiseConv2D, shape) -> DepthwiseConv2D:
    """`op` (a plain int8 depthwise convolution whose output has `shape`) as LiteRT computes it:
    itself when no channel is vector code (fewer than 8), else DepthwiseConv2DLitert."""
    if type(op) is not DepthwiseConv2D or vector_channels(shape[-1]) == 0:
        return op  # the uint8 weight-offset kernel, already LiteRT's, or all scalar code
    return DepthwiseConv2DLitert(op.win, op.depth_multiplier, op.activation)


@numerics_variant(DepthwiseConv2D, nx.LITERT)
def _under_litert(op: DepthwiseConv2D, ctx: KernelContext, shape) -> DepthwiseConv2D:
    """DepthwiseConv2D.for_numerics under LiteRT: its int8 kernel (litert_depthwise) once the
    graph is quantised; its 16x8 and float ones are TFLite's."""
    return litert_depthwise(op, shape) if ctx.dtype == "int8" and ctx.output_quant is not None else op


def tail_start(out_c: int, depth_multiplier: int) -> int:
    """The first output channel of the C kernel's scalar part: that of the input channel whose
    outputs hold the first scalar one (the part must start at an input channel's first output). Its
    outputs before the scalar ones are the vector part's too, which runs after it and overwrites them."""
    return vector_channels(out_c) // depth_multiplier * depth_multiplier


@dataclass(frozen=True)
class DepthwiseConv2DLitert(DepthwiseConv2D):
    """LiteRT's int8 depthwise convolution: ruy rounding on the first out_c // 8 x 8 channels."""

    plain_kernel = "msf_depthwise_conv2d_litert"

    def for_numerics(self, ctx: KernelContext, shape) -> DepthwiseConv2D:
        """Chosen again from the plain op (a graph loaded under LiteRT's numerics, then another's)."""
        return DepthwiseConv2D(self.win, self.depth_multiplier, self.activation).for_numerics(ctx, shape)

    def channel_parts(self, channels: int) -> tuple[int, ...]:
        """The C runs the depthwise kernel twice: over the scalar channels (from the first output
        of their input channel), then over the vector ones."""
        vector = vector_channels(channels)
        scalar = channels - tail_start(channels, self.depth_multiplier)
        return (scalar, vector) if scalar else (vector,)

    def tap_parts(self, params: str, channels: int) -> tuple[tuple[str, int], ...]:
        """The vector part (its first channels), then the scalar part if it has channels."""
        if self.depth_multiplier != 1 or self.win.dilated:
            return ()
        vector = vector_channels(channels)
        return ((f"&{params}.vector", 0),) + (((f"&{params}.tail", vector),) if vector < channels else ())

    def channel(self, ctx: KernelContext, c: int) -> KernelContext:
        """Channel c's context, which says whether the channel is vector code (the in-place
        scheme's numpy run computes one channel at a time)."""
        vector = int(c < vector_channels(ctx.consts["weights"].shape[-1]))
        own = super().channel(ctx, c)
        return replace(own, consts={**own.consts, VECTOR_ROLE: vector})

    def requantize(self, acc: np.ndarray, ctx: KernelContext) -> np.ndarray:
        mult, shift = self.multipliers(ctx)
        vector = ctx.consts.get(VECTOR_ROLE, vector_channels(acc.shape[-1]))
        low, high = ctx.activation_range(self.activation)
        zero_point = ctx.output_quant.zero_point
        out = nx.requantize_accumulator(acc, mult, shift, zero_point, (low, high), nx.DOUBLE)
        out[..., :vector] = nx.requantize_accumulator(acc[..., :vector], mult[:vector], shift[:vector], zero_point,
                                                      (low, high), nx.RUY)
        return out

    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        vector, scalar = self._parts(ctx)
        consts = _VectorPart(self.win, self.depth_multiplier, self.activation).c_consts(vector)
        if scalar is not None:
            consts.update({f"tail_{role}": v for role, v in DepthwiseConv2D.c_consts(self, scalar).items()})
        return consts

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        h, w, _ = require_feature_map(in_shapes[0], self.kind)
        vector_ctx, scalar_ctx = self._parts(ctx)
        plain = DepthwiseConv2D(self.win, self.depth_multiplier, self.activation)
        vector_part = _VectorPart(self.win, self.depth_multiplier, self.activation)
        vector = vector_part.c_params(vector_ctx, [self._part_shape(h, w, vector_ctx)],
                                      self._part_out(out_shape, vector_ctx), names)
        if scalar_ctx is None:
            tail = "{ .op = { .out_c = 0 } }" if self.win.dilated else "{ .out_c = 0 }"
        else:
            tail_names = {role[len("tail_"):]: name for role, name in names.items() if role.startswith("tail_")}
            tail = plain.c_params(scalar_ctx, [self._part_shape(h, w, scalar_ctx)],
                                  self._part_out(out_shape, scalar_ctx), tail_names)
        return f"{{ .vector = {vector}, .tail = {tail} }}"

    @staticmethod
    def _part_out(out_shape, part: KernelContext) -> tuple[int, ...]:
        """The output shape of a part: its own channels."""
        return (*out_shape[:-1], part.consts["weights"].shape[-1])

    def _part_shape(self, h: int, w: int, part: KernelContext) -> tuple[int, int, int]:
        """The input shape a part reads: the input channels of its outputs (the vector part's last
        one may have only some of its outputs there)."""
        return (h, w, -(-part.consts["weights"].shape[-1] // self.depth_multiplier))

    def _parts(self, ctx: KernelContext) -> tuple[KernelContext, KernelContext | None]:
        """The contexts of the vector channels and of the scalar part (None when no channel is
        scalar code), which starts at tail_start."""
        out_c = ctx.consts["weights"].shape[-1]
        vector, start = vector_channels(out_c), tail_start(out_c, self.depth_multiplier)
        first = _channel_slice(ctx, slice(0, vector))
        return first, (_channel_slice(ctx, slice(start, out_c)) if vector < out_c else None)


def _channel_slice(ctx: KernelContext, channels: slice) -> KernelContext:
    """`ctx` restricted to some output channels: their taps, biases and weight scales."""
    consts = {role: (v[..., channels] if np.ndim(v) and np.shape(v)[-1] > 1 else v) for role, v in ctx.consts.items()}
    return replace(ctx, consts=consts)


@dataclass(frozen=True)
class _VectorPart(DepthwiseConv2D):
    """The vector channels' plain kernel: its C output stage rounds as ruy's."""

    int8_rounding = nx.RUY

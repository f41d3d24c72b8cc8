"""TRANSPOSE_CONV / ONNX ConvTranspose: the transposed (fractionally strided) convolution.

Input pixel (y, x) adds input x weight to output pixel (y * stride_h - pad_top + i,
x * stride_w - pad_left + j) for each kernel tap (i, j); the output's size is given (TFLite's
output-shape operand, or ONNX's formula). Weights are (out_c, kh, kw, in_c), as TFLite stores them.

The runtimes scatter: TFLite Micro (the reference kernel) accumulates in a zeroed int32 (16x8:
int64) buffer of the output's size, adds the bias and requantises every value with
MultiplyByQuantizedMultiplier (two roundings); LiteRT's int8 kernel runs a GEMM and col2im into
such a buffer, then its per-channel Quantize, whose vector code rounds the first out_c // 8 x 8
channels of every pixel as ruy does (ops/depthwise_conv2d_litert.py) and its scalar code the
rest with two roundings. Integer sums are exact in any order, so the C kernel gathers instead: an
output pixel sums the taps whose input pixel exists (y = (oy + pad_top - i) / stride_h, when the
division is exact), one output channel at a time, and needs no buffer. An output row reads the
input rows a table of strides picks, not a sliding window: the op is unfused, on whole tensors.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from .. import numerics as nx
from ..errors import UserError
from .base import KernelContext, Op, Pattern, Shape, c_struct, require_feature_map
from .conv2d import weighted_c_consts, weighted_c_fields
from .loop_counts import Counts, KernelRun

VECTOR_CHANNELS = 8  # LiteRT's Quantize: vector code on the first out_c // 8 x 8 channels of a pixel
MAX_REACHING_TAPS = 64  # kernels/transpose_conv.h's MSF_TRANSPOSE_CONV_TAPS


@dataclass(frozen=True)
class TransposeConv(Op, pattern=Pattern.OPAQUE, elements=frozenset({"int8", "int16", "float32"})):
    kind = "transpose_conv"
    c_kernel = "msf_transpose_conv"
    filters: int
    kernel: tuple[int, int]
    strides: tuple[int, int]
    pads: tuple[int, int]  # (top, left): output position of input 0's tap 0 is -pad
    out_hw: tuple[int, int]
    activation: str | None = None

    def __post_init__(self):
        if min(self.kernel) <= 0 or min(self.strides) <= 0 or min(self.out_hw) <= 0 or min(self.pads) < 0:
            raise UserError(f"transpose_conv: bad kernel {list(self.kernel)}, strides {list(self.strides)}, "
                            f"pads {list(self.pads)} or output size {list(self.out_hw)}")
        reaching = prod(-(-k // s) for k, s in zip(self.kernel, self.strides))
        if reaching > MAX_REACHING_TAPS:  # the C kernel's taps of one output pixel are on its stack
            raise UserError(f"transpose_conv: kernel {self.kernel[0]}x{self.kernel[1]} at stride "
                            f"{self.strides[0]}x{self.strides[1]} reaches an output pixel with {reaching} taps; "
                            f"at most {MAX_REACHING_TAPS} are supported")

    def describe(self) -> str:
        kh, kw = self.kernel
        return f"transpose_conv {kh}x{kw}/{self.strides[0]} {self.filters}"

    def output_shape(self, inputs: list[Shape]) -> Shape:
        require_feature_map(inputs[0], self.kind)
        return (*self.out_hw, self.filters)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        h, w, c = inputs[0]
        return h * w * c * self.kernel[0] * self.kernel[1] * self.filters

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        weights, bias = ctx.consts["weights"], ctx.consts.get("bias")
        if ctx.is_float:
            acc = self._scatter(x.reshape(-1, x.shape[2]).astype(np.float32), weights.astype(np.float32), x.shape)
            if bias is not None:
                acc += bias.astype(np.float32)
            return nx.float_activation(acc, self.activation)
        cols = x.reshape(-1, x.shape[2]).astype(np.float64) - ctx.input_quant[0].zero_point
        acc = self._scatter(cols, weights, x.shape, exact=True)
        if bias is not None:
            acc += bias.astype(np.int64)
        mult, shift = self.multipliers(ctx)
        clamp, zero_point = ctx.activation_range(self.activation), ctx.output_quant.zero_point
        out = nx.requantize_accumulator(acc, mult, shift, zero_point, clamp, ctx.rounding(nx.DOUBLE), ctx.qtype)
        vector = self.vector_channels(ctx)
        if vector:  # LiteRT's vector code
            out[..., :vector] = nx.requantize_accumulator(acc[..., :vector], mult[:vector], shift[:vector], zero_point,
                                                          clamp, nx.RUY)
        return out

    def _scatter(self, cols: np.ndarray, weights: np.ndarray, in_shape, exact: bool = False) -> np.ndarray:
        """The sums of every output position, tap by tap: input x weight added at the positions
        the tap reaches (a buffer as large as the taps reach, cut to the output)."""
        h, w, _ = in_shape
        (kh, kw), (sh, sw), (top, left), (oh, ow) = self.kernel, self.strides, self.pads, self.out_hw
        full = (max((h - 1) * sh + kh, top + oh), max((w - 1) * sw + kw, left + ow), self.filters)
        acc = np.zeros(full, np.int64 if exact else np.float32)
        for i in range(kh):
            for j in range(kw):
                tap = weights[:, i, j, :].T
                part = nx.exact_int_matmul(cols, tap) if exact else cols @ tap
                acc[i:i + (h - 1) * sh + 1:sh, j:j + (w - 1) * sw + 1:sw] += part.reshape(h, w, self.filters)
        return acc[top:top + oh, left:left + ow]

    def vector_channels(self, ctx: KernelContext) -> int:
        """The leading output channels LiteRT's int8 kernel rounds as ruy (0 under TFLite Micro's
        numerics, in 16x8 and float32)."""
        if ctx.numerics != nx.LITERT or ctx.dtype != "int8" or ctx.is_float:
            return 0
        return self.filters // VECTOR_CHANNELS * VECTOR_CHANNELS

    def multipliers(self, ctx: KernelContext) -> tuple[np.ndarray, np.ndarray]:
        return nx.per_channel_multipliers(ctx.input_quant[0].scale, ctx.consts["weight_scales"],
                                          ctx.output_quant.scale, self.filters)

    def output_stage_rounding(self, numerics: str) -> str:
        return nx.DOUBLE

    def weights_shape(self, in_shape: Shape, out_shape: Shape) -> tuple[Shape, int]:
        kh, kw = self.kernel
        return (self.filters, kh, kw, in_shape[2]), kh * kw * in_shape[2]

    # ---- the C kernel (kernels/transpose_conv.c) -----------------------------------------------
    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        # the output-stage constants of the two roundings have one form (output_stage_consts)
        return weighted_c_consts(ctx, self.multipliers, nx.DOUBLE)

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        """A convolution's params (kernels/conv2d.h, int16.h) with the transposed geometry; int8
        and float32 in msf_transpose_conv_params, with LiteRT's vector channels."""
        h, w, c = require_feature_map(in_shapes[0], self.kind)
        fields = {"in_h": h, "in_w": w, "in_c": c, "out_c": self.filters, "kh": self.kernel[0], "kw": self.kernel[1],
                  "stride_h": self.strides[0], "stride_w": self.strides[1], "pad_top": self.pads[0],
                  "pad_left": self.pads[1],
                  **weighted_c_fields(ctx, self.activation, ctx.rounding(nx.DOUBLE), self.c_consts(ctx), names)}
        if ctx.is_int16:
            return c_struct(fields)
        return c_struct({"conv": c_struct(fields), "vector_channels": self.vector_channels(ctx)})

    # ---- the latency model's counts (ops/loop_counts.py) ---------------------------------------
    wide_family = "transpose_conv"

    def count_region(self, run: KernelRun, f: Counts) -> None:
        """kernels/transpose_conv.c: per output pixel and channel, every kernel row and its taps
        tested, then the taps that reach an input pixel summed over the input channels."""
        fam = run.family
        oh, ow, out_c = run.shape
        kh, kw = self.kernel
        rows, taps = self._reaching(run.in_shape, oh, ow)
        f[f"{fam}:pixel_channel"] += run.pixels * out_c
        f[f"{fam}:krow"] += run.pixels * out_c * kh
        f[f"{fam}:row_reaching"] += rows * out_c
        f[f"{fam}:tap_reaching"] += taps * out_c
        f[f"{fam}:value"] += taps * out_c * run.in_shape[2]

    def _reaching(self, in_shape: Shape, oh: int, ow: int) -> tuple[int, int]:
        """Over the whole output: (kernel rows that reach an input row, summed over the pixels;
        taps that reach an input pixel, likewise)."""
        h, w, _ = in_shape
        rows = self._axis_reach(h, oh, 0)
        cols = self._axis_reach(w, ow, 1)
        return int(rows.sum() * ow), int(rows.sum() * cols.sum())

    def _axis_reach(self, size: int, out: int, axis: int) -> np.ndarray:
        """Per output position along an axis: the kernel taps whose input position exists."""
        k, s, pad = self.kernel[axis], self.strides[axis], self.pads[axis]
        t = np.arange(out)[:, None] + pad - np.arange(k)[None, :]
        return ((t >= 0) & (t % s == 0) & (t // s < size)).sum(axis=1)

"""FULLY_CONNECTED / Gemm: a dense layer on the flattened input."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .base import CCall, KernelContext, Op, Pattern, Shape, as_feature_map, c_struct
from .conv2d import weighted_accumulator_bound, weighted_c_fields

# TFLite's int8 FULLY_CONNECTED runs a ruy GEMV: same output stage as CONV_2D (nx.gemm_rounding).


@dataclass(frozen=True)
class Dense(Op, pattern=Pattern.VECTOR, c_call=CCall.MAP_TO_VECTOR, accumulates=True,
            elements=frozenset({"int8", "int16", "float32", "uint8"})):
    kind = "dense"
    c_kernel = "msf_dense"
    multiplies_input = True
    units: int
    activation: str | None = None

    def output_shape(self, inputs: list[Shape]) -> Shape:
        return (self.units,)

    def output_stage_rounding(self, numerics: str) -> str:
        return nx.gemm_rounding(numerics)

    def accumulate_macs(self, values: int, output: Shape) -> int:
        return values * output[0]  # each streamed value into every unit

    def weights_shape(self, in_shape: Shape, out_shape: Shape) -> tuple[Shape, int]:
        size = 1
        for dim in in_shape:
            size *= dim
        return (self.units, size), size

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        size = 1
        for dim in inputs[0]:
            size *= dim
        return size * self.units

    def describe(self) -> str:
        return f"dense {self.units}"

    def count_map(self, family: str, kernel, in_shape: Shape, counts) -> None:
        """Run whole, the int8 kernel (msf_dense_s8) walks the input pixel by pixel for each unit
        (the pixel's address, then its channel loop): a map of H x W pixels costs H x W such
        passes a unit, a vector one. (The other dense kernels' fits have no such count.)"""
        if family == "dense":
            h, w = (in_shape[0], in_shape[1]) if len(in_shape) == 3 else (1, 1)
            counts[f"{family}:pixel_unit"] += h * w * self.units

    def count_accumulate(self, family: str, rows: int, pixels: int, output: Shape, counts) -> None:
        """The int8 accumulate (msf_dense_accumulate_s8) locates each pixel of the region (its input
        address and weights' offset), then makes a pass per unit over its channels (the unit's
        weights, its sum loaded, added and stored): a region of P pixels into U units costs P such
        locations and P x U passes. (The other accumulates' fits have no such counts.)"""
        if family == "dense_accumulate":
            counts[f"{family}:pixel"] += pixels
            counts[f"{family}:pixel_unit"] += pixels * self.units

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        grid = x.reshape(1, 1, -1) if x.ndim != 3 else x  # row-major over (H, W, C), as TFLite flattens NHWC
        if ctx.is_float:  # msf_dense_f32: one running sum per unit over all features
            return self.finish(nx.float32_dot_in_c_order(None, ctx.consts["weights"], grid.reshape(-1)), grid.shape, ctx)
        whole = (0, grid.shape[0]), (0, grid.shape[1])
        return self.finish(self.accumulate(None, grid, *whole, grid.shape, ctx), grid.shape, ctx)

    # The iterative form used by fused execution: regions of the (H, W, C) input stream in, each
    # adding its slice of the dot products, so the input never has to exist whole. Integer sums
    # are exact in any order; float32 ones follow the C kernels' orders (one rounded product and
    # one rounded sum per term): unfused, one running sum over all features; accumulated, each
    # pixel's own sum, then added. So a fused float dense may round otherwise than the unfused one.
    def accumulate(self, acc, region: np.ndarray, rows: tuple[int, int], cols: tuple[int, int],
                   in_shape: Shape, ctx: KernelContext) -> np.ndarray:
        """Add the contribution of input rows x cols (all channels) to the per-unit accumulator."""
        _, w, c = in_shape
        index = ((np.arange(*rows)[:, None, None] * w + np.arange(*cols)[None, :, None]) * c
                 + np.arange(c)[None, None, :]).reshape(-1)
        weights = ctx.consts["weights"][:, index]  # (units, in_features)
        if ctx.is_float:  # msf_dense_accumulate_f32: each pixel's sum over its channels, then added
            acc = np.zeros(self.units, np.float32) if acc is None else np.array(acc, np.float32)
            for pixel, x in enumerate(region.reshape(-1, c)):
                acc += nx.float32_dot_in_c_order(None, weights[:, pixel * c:(pixel + 1) * c], x)
            return acc
        part = nx.exact_int_matmul(weights, region.reshape(-1).astype(np.float64) - ctx.input_quant[0].zero_point)
        return part if acc is None else acc + part

    def finish(self, acc: np.ndarray, in_shape: Shape, ctx: KernelContext) -> np.ndarray:
        bias = ctx.consts.get("bias")
        if ctx.is_float:
            out = acc.astype(np.float32)
            if bias is not None:
                out += bias.astype(np.float32)
            return nx.float_activation(out, self.activation)
        acc = acc.astype(np.int64)
        if bias is not None:
            acc = acc + bias.astype(np.int64)
        mult, shift = self.multipliers(ctx)
        return nx.requantize_accumulator(acc, mult, shift, ctx.output_quant.zero_point,
                                         ctx.activation_range(self.activation), dense_rounding(ctx), ctx.qtype)

    def multipliers(self, ctx: KernelContext):
        """(multiplier, shift): arrays of `units` values per channel, or two scalars per tensor."""
        return dense_multipliers(ctx.input_quant[0].scale, ctx.consts["weight_scales"], ctx.output_quant.scale,
                                 self.units)

    def accumulator_bound(self, ctx: KernelContext) -> int | None:
        return weighted_accumulator_bound(ctx, 0)  # weights (units, inputs)

    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        weights, bias = ctx.consts["weights"], ctx.consts.get("bias")
        dtype = np.float32 if ctx.is_float else np.int8
        consts = {"weights": np.ascontiguousarray(weights, dtype=dtype).reshape(self.units, -1)}
        if bias is not None:
            consts["bias"] = np.ascontiguousarray(bias, dtype=np.float32 if ctx.is_float else
                                                  np.int64 if ctx.is_int16 else np.int32)
        if not ctx.is_float:
            mult, shift = self.multipliers(ctx)  # per tensor: one entry
            consts["mult"] = np.asarray(mult, dtype=np.int32).reshape(-1)
            consts["shift"] = np.asarray(shift, dtype=np.int32).reshape(-1)
        return consts

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        """in_shapes[0] is the (H, W, C) map the accumulate calls index (a vector is 1 x 1 x N): when
        the dense streams the feature map before a flattening reshape, pass that map's shape."""
        h, w, c = as_feature_map(in_shapes[0])
        consts = self.c_consts(ctx)
        if h * w * c != consts["weights"].shape[1]:
            raise ValueError(f"dense input {list(in_shapes[0])} does not match {consts['weights'].shape[1]} features")
        fields = {"units": self.units, "in_h": h, "in_w": w, "in_c": c}
        if not ctx.is_float:
            fields["per_channel"] = int(consts["mult"].size > 1)
        return c_struct({**fields, **weighted_c_fields(ctx, self.activation, dense_rounding(ctx), consts, names)})


def dense_rounding(ctx: KernelContext) -> str:
    """FULLY_CONNECTED's requantisation: as CONV_2D (nx.gemm_rounding) in int8. 16x8: TFLite
    Micro's kernel uses the 64-bit MultiplyByQuantizedMultiplier (nx.WIDE); LiteRT's rounds the
    64-bit product with the full multiplier once (nx.SINGLE: the only scheme that matches it on
    every value of the i16_fc fixture, where ruy's and the double rounding miss ties)."""
    if ctx.is_int16:
        return nx.WIDE if ctx.numerics == nx.TFLM else nx.SINGLE
    return nx.gemm_rounding(ctx.numerics)


def dense_multipliers(input_scale: float, weight_scales, output_scale: float, units: int):
    """Per-channel weights: as conv. Per-tensor weights: TFLite multiplies the two scales in
    float32 before widening to double (GetQuantizedConvolutionMultipler), which moves the last bits
    of the multiplier, and so the rounding of near-ties.

    Per-tensor is one scale, or one scale repeated over the channels (as a frontend may store it).
    """
    scales = np.asarray(weight_scales, dtype=np.float32).reshape(-1)
    if np.any(scales != scales[0]):
        return nx.per_channel_multipliers(input_scale, scales, output_scale, units)
    product = float(np.float32(input_scale) * scales[0])
    mult, shift = nx.quantize_multiplier(product / float(np.float32(output_scale)))
    return np.int64(mult), np.int64(shift)

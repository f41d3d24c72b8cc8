"""CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED with asymmetric per-tensor weights, as uint8
TFLite models (TF1-era quantisation) have them.

TFLite's uint8 kernels accumulate (input - input zero point) * (weight - weight zero point). The
frontend keeps the weights as those exact differences (`consts["weights"]`, int16, within +-255),
so the numpy kernels of the int8 ops compute the uint8 sums unchanged; padding (the input zero
point) still contributes 0. The C kernels (codegen/kernels/weight_offset.c) store the weights as
int8 (the uint8 weight - 128) and add `weight_offset` = -(weight zero point - 128) to each, as
TFLite adds its filter offset.

TFLite requantises uint8 layers with one multiplier, formed from the float32 product of the input
and weight scales (GetQuantizedConvolutionMultipler), for all three ops.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from ..errors import UserError
from .base import KernelContext, Op, Shape
from .conv2d import Conv2D
from .dense import Dense, dense_multipliers
from .depthwise_conv2d import DepthwiseConv2D
from .loop_counts import Counts, KernelRun, channel_blocks


class _WeightOffset:
    """What the three ops share: int8 weights stored with an offset, and one multiplier."""

    weight_zero_point: int  # of the weights stored as int8 in C (the uint8 zero point - 128)

    def stored(self, ctx: KernelContext) -> KernelContext:
        """`ctx` with the weights as the C kernels store them: int8, the exact value + zero point."""
        stored = ctx.consts["weights"].astype(np.int32) + self.weight_zero_point
        if stored.min(initial=0) < -128 or stored.max(initial=0) > 127:
            raise ValueError(f"weights out of the int8 range with zero point {self.weight_zero_point}")
        return replace(ctx, consts={**ctx.consts, "weights": stored.astype(np.int8)})

    def multipliers(self, ctx: KernelContext):
        channels = len(ctx.consts["bias"])
        mult, shift = dense_multipliers(ctx.input_quant[0].scale, ctx.consts["weight_scales"][:1],
                                        ctx.output_quant.scale, channels)
        return np.full(channels, mult, np.int64), np.full(channels, shift, np.int64)

    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        return super().c_consts(self.stored(ctx))  # type: ignore[misc]

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        base = super().c_params(ctx, in_shapes, out_shape, names)  # type: ignore[misc]  (c_consts stores)
        return f"{{ .base = {base}, .weight_offset = {-self.weight_zero_point} }}"


@dataclass(frozen=True)
class Conv2DWeightOffset(_WeightOffset, Conv2D):
    c_kernel = "msf_conv2d_wofs"
    kernel_family = "conv_wofs"
    weight_zero_point: int = 0

    def count_region(self, run: KernelRun, f: Counts) -> None:
        """weight_offset.c's CONV_2D: per block of channels, the offset term over the window's runs
        and values, then four channels a pass over them. Each pass of a pixel also sets up its
        four weight rows and stores its sums (`quad`), whatever its window's size."""
        fam, blocks, values = run.family, channel_blocks(run.channels), run.taps * run.in_shape[2]
        quads = sum(-(-n // 4) for n in blocks)
        f[f"{fam}:block"] += run.pixels * len(blocks)
        f[f"{fam}:quad"] += run.pixels * quads
        f[f"{fam}:run_block"] += run.krows * len(blocks)
        f[f"{fam}:value_block"] += values * len(blocks)
        f[f"{fam}:run_quad"] += run.krows * quads
        f[f"{fam}:value_quad"] += values * quads


@dataclass(frozen=True)
class DepthwiseConv2DWeightOffset(_WeightOffset, DepthwiseConv2D):
    c_kernel = "msf_depthwise_conv2d_wofs"
    kernel_family = "depthwise_wofs"
    weight_zero_point: int = 0

    def count_region(self, run: KernelRun, f: Counts) -> None:
        """weight_offset.c's DEPTHWISE_CONV_2D: per output channel, a loop over the taps."""
        fam = run.family
        f[f"{fam}:block"] += run.pixels * len(channel_blocks(run.channels))
        f[f"{fam}:tap"] += run.taps
        f[f"{fam}:tap_channel"] += run.taps * run.channels
        f[f"{fam}:block_channel"] += run.pixels * run.channels

    def in_place_channels(self, ctx=None) -> bool:
        return False  # no in-place variant of the kernel


@dataclass(frozen=True)
class DenseWeightOffset(_WeightOffset, Dense):
    c_kernel = "msf_dense_wofs"
    kernel_family = "dense_wofs"
    weight_zero_point: int = 0

    def count_accumulate(self, family: str, rows: int, pixels: int, output: Shape, f: Counts) -> None:
        """weight_offset.c's dense accumulate: per unit, a pass over the region's rows and pixels."""
        f[f"{family}:unit"] += output[0]
        f[f"{family}:row_unit"] += rows * output[0]
        f[f"{family}:pixel_unit"] += pixels * output[0]


_WITH_OFFSET = {Conv2D: Conv2DWeightOffset, DepthwiseConv2D: DepthwiseConv2DWeightOffset, Dense: DenseWeightOffset}


def with_weight_offset(op: Op, consts: dict) -> Op:
    """`op`, or its weight-offset form when the frontend left a "weight_zero_point" in `consts`
    (removed from them: it is an attribute of the op, not a constant tensor)."""
    if "weight_zero_point" not in consts:
        return op
    zero_point = int(consts.pop("weight_zero_point"))
    if op.window is not None and op.window.dilated:
        raise UserError(f"{op.kind}: a dilated window of uint8 (weight zero point) is not supported")
    cls = _WITH_OFFSET[type(op)]
    return cls(**{f.name: getattr(op, f.name) for f in fields(op)}, weight_zero_point=zero_point)

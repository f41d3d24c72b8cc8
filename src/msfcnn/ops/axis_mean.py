"""MEAN over H, W or both of a feature map, keeping the reduced axes (size 1), with the numerics of
TFLite's general int8 MEAN (reference QuantizedMeanOrSum: exact zero-point correction, 1/count
folded into the multiplier). What TFLite MEAN over one spatial axis becomes (MCUNet's heads take
the mean over W, then over H, each rounded), and a MEAN over H and W whose layout rules out the
interpreter's special 4-D keep_dims kernel (after a TRANSPOSE to NCHW).

It is a window op: an output position reads the whole reduced axis (a window of its extent,
stride 1, no padding), so it fuses like a pool."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import KernelContext, Op, Pattern, Shape, Window, c_struct, require_feature_map
from .global_avg_pool import _generic_params, _mean_generic
from .loop_counts import Counts, KernelRun


@dataclass(frozen=True)
class AxisMean(Op, pattern=Pattern.WINDOW, elements=frozenset({"int8", "float32"})):
    kind = "axis_mean"
    c_kernel = "msf_axis_mean"
    win: Window  # kernel (H, 1), (1, W) or (H, W): the reduced axes' extents; stride 1, no pads

    def count_region(self, run: KernelRun, f: Counts) -> None:
        """kernels/axis_mean.c: per output value, a loop over the window's rows, each over its taps."""
        f[f"{run.family}:krow_channel"] += run.krows * run.shape[2]
        f[f"{run.family}:tap_channel"] += run.taps * run.shape[2]

    @staticmethod
    def over(axes: tuple[int, ...], in_shape: Shape) -> "AxisMean":
        """The mean over `axes` (0: H, 1: W) of an (H, W, C) input."""
        h, w, _ = in_shape
        return AxisMean(Window((h if 0 in axes else 1, w if 1 in axes else 1)))

    @property
    def window(self) -> Window:
        return self.win

    @property
    def count(self) -> int:
        return self.win.kernel[0] * self.win.kernel[1]

    def summed_values(self, in_shapes: list[Shape]) -> int | None:
        return self.count

    def describe(self) -> str:
        axes = "HW" if self.win.kernel[0] > 1 and self.win.kernel[1] > 1 else "H" if self.win.kernel[0] > 1 else "W"
        return f"mean over {axes}"

    def output_shape(self, inputs: list[Shape]) -> Shape:
        h, w, c = require_feature_map(inputs[0], self.kind)
        return (*self.win.output_hw(h, w), c)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        return output[0] * output[1] * output[2] * self.count

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        kh, kw = self.win.kernel
        out_h, out_w = x.shape[0] - kh + 1, x.shape[1] - kw + 1  # a region's input: no padding
        windows = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(0, 1))[:out_h, :out_w]
        if ctx.is_float:
            return (windows.astype(np.float64).sum(axis=(-2, -1)) / self.count).astype(np.float32)
        total = windows.astype(np.int64).sum(axis=(-2, -1))
        return _mean_generic(total, self.count, ctx.input_quant[0], ctx.output_quant)

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        h, w, c = require_feature_map(in_shapes[0], self.kind)
        fields = {"in_h": h, "in_w": w, "channels": c, "kh": self.win.kernel[0], "kw": self.win.kernel[1]}
        if ctx.is_float:
            return c_struct(fields)
        in_q, out_q = ctx.input_quant[0], ctx.output_quant
        mult, shift = _generic_params(self.count, in_q, out_q)
        return c_struct({**fields, "mult": mult, "shift": shift, "input_zero_point": in_q.zero_point,
                         "output_offset": out_q.zero_point})

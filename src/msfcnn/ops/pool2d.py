"""MAX_POOL_2D and AVERAGE_POOL_2D: one MAC counted per window tap, as in the paper."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from ..errors import UserError
from .base import (C_ACTIVATION, KernelContext, Op, Pattern, Shape, Window, c_struct, require_feature_map,
                   window_fields)
from .loop_counts import Counts, KernelBuild, KernelRun, channel_blocks, count_wide_window
from .sliding import pad_hw, tap_slices, valid_tap_counts


# How far past twice its map a pool window may reach (see _Pool2D.output_shape).
WINDOW_SLACK = 64


@dataclass(frozen=True)
class _Pool2D(Op, pattern=Pattern.WINDOW):
    win: Window
    activation: str | None = None  # TFLite pools may carry a fused activation
    # One C kernel for both pools: its params say which (`max`).
    c_kernel = "msf_pool2d"
    runs_per_tap = True  # window.c gathers a run per tap

    def counts_ring(self, kernel: KernelBuild) -> bool:
        """The 16x8 loop locates every tap in its input's ring (loop_counts.count_wide_window)."""
        return kernel.wide

    def count_region(self, run: KernelRun, f: Counts) -> None:
        if run.wide:
            count_wide_window(run, f, win=self.win)
            return
        f[f"{run.family}:block"] += run.pixels * len(channel_blocks(run.shape[2]))
        f[f"{run.family}:tap"] += run.taps
        f[f"{run.family}:tap_channel"] += run.taps * run.shape[2]

    @property
    def window(self) -> Window:
        return self.win

    def output_shape(self, inputs: list[Shape]) -> Shape:
        h, w, c = require_feature_map(inputs[0], self.kind)
        kh, kw = self.win.kernel
        if kh > 2 * h + WINDOW_SLACK or kw > 2 * w + WINDOW_SLACK:
            # Past 2 x the map - 1 every window already holds the whole map: a wider one only adds
            # padding, and taps the numpy kernels would visit one by one (a filter of 2^31 - 1). The
            # slack keeps the merely oversized windows that models do hold (7x7 on a 2x13 map).
            raise UserError(f"pool window {kh}x{kw} is far wider than its {h}x{w} input: every window would "
                            "hold the whole map and mostly padding")
        return (*self.win.output_hw(h, w), c)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        kh, kw = self.win.kernel
        return output[0] * output[1] * output[2] * kh * kw

    def describe(self) -> str:
        kh, kw = self.win.kernel
        return f"{self.kind.split('_')[0]}pool {kh}x{kw}/{self.win.strides[0]}"

    def _finish(self, out: np.ndarray, ctx: KernelContext) -> np.ndarray:
        """Apply the fused activation: a clamp in int8 (input and output share their quantisation)."""
        if ctx.is_float:
            return nx.float_activation(out, self.activation)
        low, high = ctx.activation_range(self.activation)
        return np.clip(out, low, high).astype(ctx.qtype)

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        h, w, c = require_feature_map(in_shapes[0], self.kind)
        fields = {"in_h": h, "in_w": w, "channels": c, **window_fields(self.win),
                  "max": int(isinstance(self, MaxPool2D)),
                  "count_include_pad": int(getattr(self, "count_include_pad", False))}
        if ctx.is_float:
            fields["activation"] = C_ACTIVATION[self.activation]
        else:
            fields["act_min"], fields["act_max"] = ctx.activation_range(self.activation)
        return c_struct(fields)


@dataclass(frozen=True)
class MaxPool2D(_Pool2D, elements=frozenset({"int8", "int16", "float32", "uint8"})):
    kind = "max_pool2d"
    keeps_rectified = True

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        out_hw = self.win.output_hw(x.shape[0], x.shape[1])
        # Padding never wins: every window holds at least one real pixel, and the fill is the
        # smallest value of the type.
        fill = -np.inf if ctx.is_float else np.iinfo(ctx.qtype).min
        padded = pad_hw(x, self.win, fill)
        out = None
        for _, tap in tap_slices(padded, self.win, out_hw):
            out = tap.copy() if out is None else np.maximum(out, tap)
        return self._finish(out, ctx)


@dataclass(frozen=True)
class AvgPool2D(_Pool2D, elements=frozenset({"int8", "int16", "float32"})):
    kind = "avg_pool2d"
    # True: divide by the full kernel area, padding included (ONNX count_include_pad=1, PyTorch's
    # default). False, as TFLite: divide by the number of taps inside the input.
    count_include_pad: bool = False

    def summed_values(self, in_shapes: list[Shape]) -> int | None:
        return self.win.kernel[0] * self.win.kernel[1]

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        out_hw = self.win.output_hw(x.shape[0], x.shape[1])
        dtype = np.float32 if ctx.is_float else np.int32
        padded = pad_hw(x.astype(dtype), self.win, 0)
        acc = np.zeros((*out_hw, x.shape[2]), dtype=dtype)
        for _, tap in tap_slices(padded, self.win, out_hw):
            acc += tap
        if self.count_include_pad:
            counts = np.full((*out_hw, 1), self.win.kernel[0] * self.win.kernel[1])
        else:
            counts = valid_tap_counts(self.win, x.shape[:2], out_hw)[:, :, None]
        if ctx.is_float:
            return self._finish(acc / counts.astype(np.float32), ctx)
        return self._finish(self.quotient(acc, counts), ctx)

    @staticmethod
    def quotient(acc: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """int8 AVERAGE_POOL_2D works on raw quantised values and rounds the quotient half away
        from zero: (acc +- count/2) / count with C's truncating division."""
        return np.sign(acc) * ((np.abs(acc) + counts // 2) // counts)


@dataclass(frozen=True)
class AvgPool2DHalfUp(AvgPool2D, elements=frozenset({"uint8"})):
    """The AVERAGE_POOL_2D of uint8 models, on their values held as int8 (uint8 - 128): TFLite's
    uint8 kernel rounds the quotient of its non-negative sums half up, (sum + count/2) / count,
    which on the int8 sum (uint8 sum - 128 * count) is floor((sum + count/2) / count)."""

    c_kernel = "msf_avg_pool_half_up"
    kernel_family = "avg_pool_half_up"

    @staticmethod
    def quotient(acc: np.ndarray, counts: np.ndarray) -> np.ndarray:
        return (acc + counts // 2) // counts  # numpy's // is the floor

"""PAD / PADV2 / ONNX Pad on the spatial axes of a feature map: zero (the zero point) padding, or
PADV2's constant (a quantised value)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .base import AxisWindow, KernelContext, Op, Pattern, Shape, c_struct, require_feature_map
from .loop_counts import Counts, KernelRun


@dataclass(frozen=True)
class Pad(Op, pattern=Pattern.WINDOW, elements=frozenset({"int8", "int16", "float32"})):
    kind = "pad"
    c_kernel = "msf_pad"
    keeps_rectified = True  # (a PADV2 fill that is not 0 clears it: rectified_input)
    pads: tuple[int, int, int, int]  # top, left, bottom, right
    value: int | None = None  # the quantised fill (PADV2's constant); None: a real 0.0

    def count_region(self, run: KernelRun, f: Counts) -> None:
        """kernels/pad.c: a pixel in the padding is filled, the others (`inside`) copied from the input. On
        cores with unaligned word access (the DSP builds), an int8 pixel's channels move a word at
        a time and the last channels % 4 a byte at a time (msf_copy_s8, msf_fill_s8)."""
        f[f"{run.family}:clipped_channel"] += run.clipped * run.shape[2]
        f[f"{run.family}:inside"] += run.pixels - run.clipped  # (a copy: its source located first)
        if run.dsp and not run.is_float and not run.wide:  # (the 16x8 PAD: kernels/pad_s16.c)
            f[f"{run.family}:tail_value"] += run.pixels * (run.shape[2] % 4)

    def axis_window(self, axis: int) -> AxisWindow:
        """Output position i copies input position i - pad (the pad before the input on that axis)."""
        return AxisWindow(1, 1, self.pads[axis])

    def on_region(self, border: tuple[int, int, int, int]) -> "Pad":
        return replace(self, pads=border)

    def output_shape(self, inputs: list[Shape]) -> Shape:
        h, w, c = require_feature_map(inputs[0], self.kind)
        top, left, bottom, right = self.pads
        return (h + top + bottom, w + left + right, c)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        return 0

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        top, left, bottom, right = self.pads
        return np.pad(inputs[0], ((top, bottom), (left, right), (0, 0)), constant_values=self.fill(ctx))

    def fill(self, ctx: KernelContext) -> int:
        """The padding value: PADV2's constant, or a real 0.0, which is the zero point in int8
        (TFLite pads with the output zero point)."""
        if self.value is not None:
            return self.value
        return 0 if ctx.is_float else ctx.output_quant.zero_point

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        h, w, c = require_feature_map(in_shapes[0], self.kind)
        return c_struct({"in_h": h, "in_w": w, "channels": c, "pad_top": self.pads[0], "pad_left": self.pads[1],
                         "fill": self.fill(ctx)})

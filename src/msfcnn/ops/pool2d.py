"""MAX_POOL_2D and AVERAGE_POOL_2D: one MAC counted per window tap, as in the paper."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Op, Shape, Window, require_feature_map


@dataclass(frozen=True)
class _Pool2D(Op):
    win: Window

    @property
    def window(self) -> Window:
        return self.win

    def output_shape(self, inputs: list[Shape]) -> Shape:
        h, w, c = require_feature_map(inputs[0], self.kind)
        return (*self.win.output_hw(h, w), c)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        kh, kw = self.win.kernel
        return output[0] * output[1] * output[2] * kh * kw

    def describe(self) -> str:
        kh, kw = self.win.kernel
        return f"{self.kind.split('_')[0]}pool {kh}x{kw}/{self.win.strides[0]}"


@dataclass(frozen=True)
class MaxPool2D(_Pool2D):
    kind = "max_pool2d"


@dataclass(frozen=True)
class AvgPool2D(_Pool2D):
    kind = "avg_pool2d"

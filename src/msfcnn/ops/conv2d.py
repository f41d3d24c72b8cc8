"""CONV_2D / ONNX Conv: dense 2-D convolution with an optional fused activation."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Op, Shape, Window, require_feature_map


@dataclass(frozen=True)
class Conv2D(Op):
    kind = "conv2d"
    filters: int
    win: Window
    activation: str | None = None

    @property
    def window(self) -> Window:
        return self.win

    def output_shape(self, inputs: list[Shape]) -> Shape:
        h, w, _ = require_feature_map(inputs[0], self.kind)
        return (*self.win.output_hw(h, w), self.filters)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        kh, kw = self.win.kernel
        return output[0] * output[1] * output[2] * inputs[0][2] * kh * kw

    def describe(self) -> str:
        kh, kw = self.win.kernel
        return f"conv {kh}x{kw}/{self.win.strides[0]} {self.filters}"

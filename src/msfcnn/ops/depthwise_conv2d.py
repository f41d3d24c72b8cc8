"""DEPTHWISE_CONV_2D / ONNX Conv with group == channels."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Op, Shape, Window, require_feature_map


@dataclass(frozen=True)
class DepthwiseConv2D(Op):
    kind = "depthwise_conv2d"
    win: Window
    depth_multiplier: int = 1
    activation: str | None = None

    @property
    def window(self) -> Window:
        return self.win

    def output_shape(self, inputs: list[Shape]) -> Shape:
        h, w, c = require_feature_map(inputs[0], self.kind)
        return (*self.win.output_hw(h, w), c * self.depth_multiplier)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        kh, kw = self.win.kernel
        return output[0] * output[1] * output[2] * kh * kw

    def describe(self) -> str:
        kh, kw = self.win.kernel
        return f"dw {kh}x{kw}/{self.win.strides[0]}"

"""PAD / ONNX Pad on the spatial axes of a feature map (zero, i.e. the zero point, padding)."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Op, Shape, require_feature_map


@dataclass(frozen=True)
class Pad(Op):
    kind = "pad"
    pads: tuple[int, int, int, int]  # top, left, bottom, right

    def output_shape(self, inputs: list[Shape]) -> Shape:
        h, w, c = require_feature_map(inputs[0], self.kind)
        top, left, bottom, right = self.pads
        return (h + top + bottom, w + left + right, c)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        return 0

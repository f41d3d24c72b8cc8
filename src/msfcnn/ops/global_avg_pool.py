"""Global average pooling (TFLite MEAN over H and W, ONNX GlobalAveragePool): (H, W, C) -> (C,)."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Op, Shape, require_feature_map


@dataclass(frozen=True)
class GlobalAvgPool(Op):
    kind = "global_avg_pool"
    keepdims: bool = False  # True: (1, 1, C) as TFLite MEAN with keep_dims

    def output_shape(self, inputs: list[Shape]) -> Shape:
        _, _, c = require_feature_map(inputs[0], self.kind)
        return (1, 1, c) if self.keepdims else (c,)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        h, w, c = inputs[0]
        return h * w * c

"""QUANTIZE from int8 to int8 (a change of scale / zero point), as TFLite inserts between ops."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .base import KernelContext, Op, Shape

# TFLite's Requantize kernel uses its MultiplyByQuantizedMultiplier: two roundings.
ROUNDING = nx.DOUBLE


@dataclass(frozen=True)
class Requantize(Op):
    kind = "requantize"

    def output_shape(self, inputs: list[Shape]) -> Shape:
        return inputs[0]

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        return 0

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        if ctx.is_float:
            return x.astype(np.float32)
        in_q, out_q = ctx.input_quant[0], ctx.output_quant
        mult, shift = nx.quantize_multiplier(float(np.float32(in_q.scale)) / float(np.float32(out_q.scale)))
        out = nx.multiply_by_quantized_multiplier(x.astype(np.int64) - in_q.zero_point, mult, shift, ROUNDING)
        return np.clip(out + out_q.zero_point, nx.INT8_MIN, nx.INT8_MAX).astype(np.int8)

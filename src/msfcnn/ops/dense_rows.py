"""FULLY_CONNECTED applied to every row of a sequence: a Keras Dense layer on a (T, F) input.

TFLite's FULLY_CONNECTED multiplies each run of F input values by the weights, so on a (T, F)
sequence it gives (T, units), one output row per time step. That is a 1x1 convolution over the
(1, T, F) map, and runs as one (it streams and fuses like any pointwise convolution). Only the
requantisation is FULLY_CONNECTED's own: with per-tensor weights TFLite forms the rescale factor
from a float32 product of the two scales (dense.dense_multipliers), where CONV_2D forms it in
double. int8 rounds as CONV_2D does; 16x8 FULLY_CONNECTED rounds otherwise than the 16x8
convolution kernel, so only int8 and float32 are offered.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import KernelContext, Window
from .conv2d import Conv2D
from .dense import dense_multipliers


@dataclass(frozen=True)
class DenseRows(Conv2D, elements=frozenset({"int8", "float32"})):
    @classmethod
    def of_units(cls, units: int, activation: str | None) -> "DenseRows":
        return cls(units, Window((1, 1)), activation)

    def describe(self) -> str:
        return f"dense {self.filters} per row"

    def multipliers(self, ctx: KernelContext) -> tuple[np.ndarray, np.ndarray]:
        mult, shift = dense_multipliers(ctx.input_quant[0].scale, ctx.consts["weight_scales"],
                                        ctx.output_quant.scale, self.filters)
        return (np.broadcast_to(np.asarray(mult, np.int64), (self.filters,)).copy(),
                np.broadcast_to(np.asarray(shift, np.int64), (self.filters,)).copy())

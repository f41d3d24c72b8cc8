"""A standalone RELU / RELU6 (TFLite ops of those names) that could not be fused into its producer.

In int8 it requantises from the input's to the output's (scale, zero point), then clamps, as
TFLite's kernel does; frontends fold it into the producer's `activation` whenever both tensors
share their quantisation, so this op only remains where they differ or the input has other readers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .base import C_ACTIVATION, C_ROUNDING, KernelContext, Pattern, ValueMap, as_feature_map, c_struct

# TFLite's RELU kernels requantise with its MultiplyByQuantizedMultiplier: two roundings.
ROUNDING = nx.DOUBLE


@dataclass(frozen=True)
class Activation(ValueMap, pattern=Pattern.ELEMENTWISE):
    kind = "activation"
    c_kernel = "msf_activation"
    activation: str  # "relu" or "relu6", the same names as the fused `activation` of other ops

    def describe(self) -> str:
        return self.activation

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        if ctx.is_float:
            return nx.float_activation(x.astype(np.float32), self.activation)
        in_q, out_q = ctx.input_quant[0], ctx.output_quant
        mult, shift = activation_multiplier(in_q, out_q)
        out = nx.multiply_by_quantized_multiplier(x.astype(np.int64) - in_q.zero_point, mult, shift, ROUNDING)
        low, high = nx.activation_range(self.activation, out_q)
        return np.clip(out + out_q.zero_point, low, high).astype(np.int8)

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        fields = {"channels": as_feature_map(out_shape)[2]}
        if ctx.is_float:
            return c_struct({**fields, "activation": C_ACTIVATION[self.activation]})
        in_q, out_q = ctx.input_quant[0], ctx.output_quant
        mult, shift = activation_multiplier(in_q, out_q)
        low, high = nx.activation_range(self.activation, out_q)
        return c_struct({**fields, "input_offset": -in_q.zero_point, "output_offset": out_q.zero_point,
                         "mult": mult, "shift": shift, "act_min": low, "act_max": high,
                         "rounding": C_ROUNDING[ROUNDING]})


def activation_multiplier(in_q, out_q) -> tuple[int, int]:
    """TFLite's RELU Prepare divides the scales in float32 before widening to double."""
    return nx.quantize_multiplier(float(np.float32(in_q.scale) / np.float32(out_q.scale)))

"""A standalone RELU / RELU6 (TFLite ops of those names) that could not be fused into its producer,
and the TFLite operators RELU_N1_TO_1 and RELU_0_TO_1 (clamps to [-1, 1] and [0, 1], never fused;
LiteRT runs them as RELU, with those bounds; TFLite Micro has no kernel for them).

In int8 it requantises from the input's to the output's (scale, zero point), then clamps, as
TFLite's kernel does; frontends fold it into the producer's `activation` whenever both tensors
share their quantisation, so this op only remains where they differ or the input has other readers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from ..errors import UserError
from .base import C_ACTIVATION, C_ROUNDING, KernelContext, Pattern, ValueMap, as_feature_map, c_struct

# Standalone-only activations (TFLite operators that have no fused form).
UNFUSED_ONLY = ("relu_n1_to_1", "relu_0_to_1")
# TFLite's RELU kernels requantise with its MultiplyByQuantizedMultiplier: two roundings.
ROUNDING = nx.DOUBLE


@dataclass(frozen=True)
class Activation(ValueMap, pattern=Pattern.ELEMENTWISE, elements=frozenset({"int8", "float32", "uint8"})):
    kind = "activation"
    c_kernel = "msf_activation"
    activation: str  # "relu" or "relu6" (the names of fused activations), "relu_n1_to_1", "relu_0_to_1"

    def describe(self) -> str:
        return self.activation

    def refused_under(self, numerics: str) -> str | None:
        if numerics == nx.TFLM and self.activation in UNFUSED_ONLY:
            return f"TFLite Micro has no {self.activation.upper()} kernel"
        return None

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        if ctx.is_float:
            return nx.float_activation(x.astype(np.float32), self.activation)
        offset_in, offset_out, mult, shift, low, high = self.int8_stage(ctx)
        out = nx.multiply_by_quantized_multiplier(x.astype(np.int64) + offset_in, mult, shift, ROUNDING)
        return np.clip(out + offset_out, low, high).astype(np.int8)

    def int8_stage(self, ctx: KernelContext) -> tuple[int, ...]:
        """(input offset, output offset, multiplier, shift, clamp low, clamp high) of the int8 kernel.

        TFLite Micro's RELU6 does not requantise: it clamps the raw input to [input zero point,
        6.0 in the input's quantisation] and writes it out as it is (whatever the output's
        quantisation), so under its numerics the stage is the identity (multiplier 2^30, shift 1)."""
        in_q, out_q = ctx.input_quant[0], ctx.output_quant
        if self.activation == "relu6" and ctx.numerics == nx.TFLM:
            six = min(max(nx.quantize_f32(6.0, in_q.scale, in_q.zero_point), nx.INT8_MIN), nx.INT8_MAX)
            return -in_q.zero_point, in_q.zero_point, 1 << 30, 1, in_q.zero_point, six
        mult, shift = activation_multiplier(in_q, out_q)
        return (-in_q.zero_point, out_q.zero_point, mult, shift, *nx.activation_range(self.activation, out_q))

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        fields = {"channels": as_feature_map(out_shape)[2]}
        if ctx.is_float:
            if self.activation not in C_ACTIVATION:
                raise UserError(f"{self.activation} has no float32 C kernel")
            return c_struct({**fields, "activation": C_ACTIVATION[self.activation]})
        offset_in, offset_out, mult, shift, low, high = self.int8_stage(ctx)
        return c_struct({**fields, "input_offset": offset_in, "output_offset": offset_out,
                         "mult": mult, "shift": shift, "act_min": low, "act_max": high,
                         "rounding": C_ROUNDING[ROUNDING]})

    def takes_clamp(self) -> bool:
        return self.activation in ("relu", "relu6")  # a clamp after these gives the tighter one


def activation_multiplier(in_q, out_q) -> tuple[int, int]:
    """TFLite's RELU Prepare divides the scales in float32 before widening to double."""
    with np.errstate(**nx.QUIET_FLOAT32):
        ratio = np.float32(in_q.scale) / np.float32(out_q.scale)
    return nx.quantize_multiplier(float(ratio))

"""QUANTIZE from int8 to int8 (a change of scale / zero point), as TFLite inserts between ops, and
from an int16 model input to int8 (a keyword spotter's audio frames: the model's other tensors are
int8), with the same arithmetic (TFLite's reference Requantize in both runtimes)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .base import C_ROUNDING, KernelContext, Pattern, ValueMap, as_feature_map, c_struct

# TFLite's Requantize kernel uses its MultiplyByQuantizedMultiplier: two roundings.
ROUNDING = nx.DOUBLE


@dataclass(frozen=True)
class Requantize(ValueMap, pattern=Pattern.ELEMENTWISE, elements=frozenset({"int8", "int16"})):
    kind = "requantize"
    c_kernel = "msf_requantize"
    # The output's element type when it is not the input's: "int8" from an int16 input, or "int32"
    # from the int16 output of a keyword model's SOFTMAX (an int16 -> int16 rescale is refused).
    output_type: str | None = None

    @property
    def c_kernel(self) -> str:  # type: ignore[override]
        """int16 to int32 runs its own kernel (requantize_wide.c)."""
        return "msf_requantize_wide" if self.output_type == "int32" else "msf_requantize"

    def latency_family(self, kernel) -> str:
        """int16 to int32 (requantize_wide.c) is a kernel of its own: "requantize_wide_s16"."""
        return "requantize_wide_s16" if self.output_type == "int32" else super().latency_family(kernel)

    @classmethod
    def latency_families(cls, kernel) -> tuple[str, ...]:
        own = super().latency_families(kernel)
        return own + ("requantize_wide_s16",) if kernel.wide else own

    def output_element(self, input_element: str) -> str:
        return self.output_type or input_element

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        if ctx.is_float:
            return x.astype(np.float32)
        in_q, out_q = ctx.input_quant[0], ctx.output_quant
        mult, shift = requantize_multiplier(in_q, out_q)
        out = nx.multiply_by_quantized_multiplier(x.astype(np.int64) - in_q.zero_point, mult, shift, ROUNDING)
        if self.output_type == "int32":  # saturated to int32 (out + zero point: int32 in the runtimes)
            return np.clip(out + out_q.zero_point, nx.INT32_MIN, nx.INT32_MAX).astype(np.int32)
        return np.clip(out + out_q.zero_point, nx.INT8_MIN, nx.INT8_MAX).astype(np.int8)

    def describe(self) -> str:
        return "requantize" if self.output_type is None else f"requantize to {self.output_type}"

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        fields = {"channels": as_feature_map(out_shape)[2]}
        if ctx.is_float:
            return c_struct(fields)
        in_q, out_q = ctx.input_quant[0], ctx.output_quant
        mult, shift = requantize_multiplier(in_q, out_q)
        return c_struct({**fields, "input_offset": -in_q.zero_point, "output_offset": out_q.zero_point,
                         "mult": mult, "shift": shift, "rounding": C_ROUNDING[ROUNDING]})


def requantize_multiplier(in_q, out_q) -> tuple[int, int]:
    """in_scale / out_scale, both float32 widened to double before dividing (as TFLite's Prepare)."""
    return nx.quantize_multiplier(float(np.float32(in_q.scale)) / float(np.float32(out_q.scale)))

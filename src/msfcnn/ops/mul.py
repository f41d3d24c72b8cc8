"""MUL of a feature map by an int8 constant: one value, or one per channel (squeeze-and-excite
style scaling, `x * const`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .base import C_ACTIVATION, C_ROUNDING, KernelContext, Pattern, ValueMap, as_feature_map, c_struct

# TFLite's int8 MUL: (x - x_zero) * (c - c_zero) in int32, rescaled by x_scale * c_scale / out_scale
# with its MultiplyByQuantizedMultiplier, plus the output zero point, clamped to the activation.
ROUNDING = nx.DOUBLE


@dataclass(frozen=True)
class ConstOperand(ValueMap, pattern=Pattern.ELEMENTWISE):
    """An element-wise op of a feature map and a constant `consts["operand"]` of 1 or C int8 values
    (broadcast over the map's positions), quantised with (operand_scale, operand_zero_point)."""

    operand_scale: float = 1.0
    operand_zero_point: int = 0
    activation: str | None = None

    def operand(self, ctx: KernelContext) -> np.ndarray:
        """The constant as int64, broadcastable against an (..., C) array."""
        return np.asarray(ctx.consts["operand"]).reshape(-1).astype(np.int64)

    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        dtype = np.float32 if ctx.is_float else np.int8
        return {"operand": np.asarray(ctx.consts["operand"]).reshape(-1).astype(dtype)}

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        fields = {"channels": as_feature_map(out_shape)[2], "operand_size": int(np.size(ctx.consts["operand"])),
                  "operand": names["operand"] if not ctx.is_float else None,
                  "operand_f32": names["operand"] if ctx.is_float else None}
        if ctx.is_float:
            return c_struct({**fields, "activation": C_ACTIVATION[self.activation]})
        low, high = nx.activation_range(self.activation, ctx.output_quant)
        return c_struct({**fields, **self.int8_fields(ctx), "act_min": low, "act_max": high,
                         "rounding": C_ROUNDING[ROUNDING]})

    def int8_fields(self, ctx: KernelContext) -> dict[str, int]:
        raise NotImplementedError


@dataclass(frozen=True)
class MulConst(ConstOperand):
    kind = "mul_const"
    c_kernel = "msf_mul_const"

    def describe(self) -> str:
        return "mul (constant)"

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        if ctx.is_float:
            return nx.float_activation(x.astype(np.float32) * self.operand(ctx).astype(np.float32), self.activation)
        in_q, out_q = ctx.input_quant[0], ctx.output_quant
        mult, shift = mul_multiplier(in_q.scale, self.operand_scale, out_q.scale)
        product = (x.astype(np.int64) - in_q.zero_point) * (self.operand(ctx) - self.operand_zero_point)
        out = nx.multiply_by_quantized_multiplier(product, mult, shift, ROUNDING) + out_q.zero_point
        low, high = nx.activation_range(self.activation, out_q)
        return np.clip(out, low, high).astype(np.int8)

    def int8_fields(self, ctx: KernelContext) -> dict[str, int]:
        in_q, out_q = ctx.input_quant[0], ctx.output_quant
        mult, shift = mul_multiplier(in_q.scale, self.operand_scale, out_q.scale)
        return {"input_offset": -in_q.zero_point, "operand_offset": -self.operand_zero_point,
                "output_mult": mult, "output_shift": shift, "output_offset": out_q.zero_point}


def mul_multiplier(scale_a: float, scale_b: float, scale_out: float) -> tuple[int, int]:
    """TFLite's MUL Prepare: the float32 scales' product over the output scale, in double."""
    sa, sb, so = (float(np.float32(s)) for s in (scale_a, scale_b, scale_out))
    return nx.quantize_multiplier(sa * sb / so)

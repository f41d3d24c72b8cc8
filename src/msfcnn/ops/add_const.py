"""ADD of an int8 constant (one value, or one per channel) to a feature map: `x + const`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .add import LEFT_SHIFT, ROUNDING, add_params
from .base import KernelContext, in_numerics
from .mul import ConstOperand


@dataclass(frozen=True)
class AddConst(ConstOperand, elements=frozenset({"int8", "float32"})):
    """TFLite's int8 ADD (see add.py) with its second input a constant (C: kernels/const_operand.c)."""

    kind = "add_const"
    c_kernel = "msf_add_const"

    def describe(self) -> str:
        return "add (constant)"

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        if ctx.is_float:
            return nx.float_activation(x.astype(np.float32) + self.operand(ctx).astype(np.float32), self.activation)
        in_q, out_q = ctx.input_quant[0], ctx.output_quant
        (m1, s1), (m2, s2), (mo, so) = add_params(in_q.scale, self.operand_scale, out_q.scale)
        scaled_x = nx.multiply_by_quantized_multiplier((x.astype(np.int64) - in_q.zero_point) << LEFT_SHIFT,
                                                       m1, s1, ROUNDING)
        scaled_c = nx.multiply_by_quantized_multiplier((self.operand(ctx) - self.operand_zero_point) << LEFT_SHIFT,
                                                       m2, s2, ROUNDING)
        out = nx.multiply_by_quantized_multiplier(scaled_x + scaled_c, mo, so, ROUNDING) + out_q.zero_point
        low, high = nx.activation_range(self.activation, out_q)
        return np.clip(out, low, high).astype(np.int8)

    def for_numerics(self, ctx: KernelContext, shape) -> "AddConst":
        """LiteRT's int8 ADD of a constant rounds as its vector code does where that differs from
        this op's (ops/add_const_litert.py registers it); TFLite Micro's and the float one are this op's."""
        return in_numerics(AddConst, AddConst(self.operand_scale, self.operand_zero_point, self.activation), ctx, shape)

    def int8_fields(self, ctx: KernelContext, out_shape) -> dict[str, int]:
        in_q, out_q = ctx.input_quant[0], ctx.output_quant
        (m1, s1), (m2, s2), (mo, so) = add_params(in_q.scale, self.operand_scale, out_q.scale)
        return {"input_offset": -in_q.zero_point, "operand_offset": -self.operand_zero_point,
                "left_shift": LEFT_SHIFT, "input_mult": m1, "input_shift": s1, "operand_mult": m2,
                "operand_shift": s2, "output_mult": mo, "output_shift": so, "output_offset": out_q.zero_point}

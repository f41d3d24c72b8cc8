"""MUL (int8, TFLite's arithmetic): of a feature map by an int8 constant (one value, or one per
channel: `x * const`), of two activations of one shape, or of a map by a per-channel vector
activation (squeeze-and-excite: `x * sigmoid(fc(mean(x)))`)."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from ..errors import UserError
from .base import (C_ACTIVATION, C_ROUNDING, KernelContext, Pattern, SameShapeBinary, Shape, ValueMap, as_feature_map,
                   c_struct)
from .loop_counts import Counts, KernelRun, count_signed_values

# TFLite's int8 MUL: (a - a_zero) * (b - b_zero) in int32, rescaled by a_scale * b_scale / out_scale
# (see mul_multiplier) with its MultiplyByQuantizedMultiplier, plus the output zero point, clamped
# to the activation. (The interpreter's vector code rounds with vqrdmulh, which agrees with
# gemmlowp's SaturatingRoundingDoublingHighMul: both take ties up.)
ROUNDING = nx.DOUBLE

Quant = namedtuple("Quant", "scale zero_point")  # a constant operand's (the IR's Quant has the same fields)


@dataclass(frozen=True)
class ConstOperand(ValueMap, pattern=Pattern.ELEMENTWISE):
    """An element-wise op of a feature map and a constant `consts["operand"]` of 1 or C int8 values
    (broadcast over the map's positions), quantised with (operand_scale, operand_zero_point)."""

    operand_scale: float = 1.0
    operand_zero_point: int = 0
    activation: str | None = None

    def operand(self, ctx: KernelContext) -> np.ndarray:
        """The constant, broadcastable against an (..., C) array: int64 (float32 in float graphs)."""
        return np.asarray(ctx.consts["operand"]).reshape(-1).astype(np.float32 if ctx.is_float else np.int64)

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
        return c_struct({**fields, **self.int8_fields(ctx, out_shape), "act_min": low, "act_max": high,
                         "rounding": C_ROUNDING[ROUNDING]})

    def int8_fields(self, ctx: KernelContext, out_shape: Shape) -> dict[str, int]:
        raise NotImplementedError

    def value_path(self, ctx: KernelContext) -> str:
        """A float kernel's fused activation takes a few instructions a value more in
        msf_apply_activation_f32 (ADD of a constant: 24.5 a value with a RELU on cortex-m4, 19
        without): a count of its own. (The int8 kernels clamp every value alike.)"""
        return "activated" if ctx.is_float and self.activation else ""

    def count_region(self, run: KernelRun, f: Counts) -> None:
        if run.path:
            f[f"{run.family}:output_{run.path}"] += run.pixels * run.channels


def _mul_int8(a: np.ndarray, b: np.ndarray, qa, qb, out_q, activation: str | None, numerics: str) -> np.ndarray:
    """TFLite's int8 MUL of broadcastable int8 arrays a (the map) and b."""
    mult, shift = mul_multiplier(qa.scale, qb.scale, out_q.scale, numerics)
    product = (a.astype(np.int64) - qa.zero_point) * (b.astype(np.int64) - qb.zero_point)
    out = nx.multiply_by_quantized_multiplier(product, mult, shift, ROUNDING) + out_q.zero_point
    low, high = nx.activation_range(activation, out_q)
    return np.clip(out, low, high).astype(np.int8)


def _mul_fields(qa, qb, out_q, numerics: str) -> dict[str, int]:
    mult, shift = mul_multiplier(qa.scale, qb.scale, out_q.scale, numerics)
    return {"output_mult": mult, "output_shift": shift, "output_offset": out_q.zero_point,
            "rounding": C_ROUNDING[ROUNDING]}


@dataclass(frozen=True)
class MulConst(ConstOperand, elements=frozenset({"int8", "float32"})):
    kind = "mul_const"
    passes_zeros = True
    c_kernel = "msf_mul_const"

    def describe(self) -> str:
        return "mul (constant)"

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        if ctx.is_float:
            return nx.float_activation(x.astype(np.float32) * self.operand(ctx).astype(np.float32), self.activation)
        operand_q = Quant(self.operand_scale, self.operand_zero_point)
        return _mul_int8(x, self.operand(ctx), ctx.input_quant[0], operand_q, ctx.output_quant, self.activation,
                         ctx.numerics)

    def int8_fields(self, ctx: KernelContext, out_shape: Shape) -> dict[str, int]:
        in_q = ctx.input_quant[0]
        operand_q = Quant(self.operand_scale, self.operand_zero_point)
        return {"input_offset": -in_q.zero_point, "operand_offset": -self.operand_zero_point,
                **_mul_fields(in_q, operand_q, ctx.output_quant, ctx.numerics)}


@dataclass(frozen=True)
class Mul(SameShapeBinary, pattern=Pattern.ELEMENTWISE, elements=frozenset({"int8", "float32"})):
    """MUL of two activations of the same shape."""

    kind = "mul"
    passes_zeros = True
    c_kernel = "msf_mul"
    activation: str | None = None

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        a, b = inputs
        b = b.reshape(-1) if b.shape != a.shape else b  # a per-channel vector broadcasts
        if ctx.is_float:
            return nx.float_activation(a.astype(np.float32) * b.astype(np.float32), self.activation)
        (qa, qb), out_q = ctx.input_quant, ctx.output_quant
        return _mul_int8(a, b, qa, qb, out_q, self.activation, ctx.numerics)

    def count_region(self, run: KernelRun, f: Counts) -> None:
        count_signed_values(run, f)

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        fields = {"channels": as_feature_map(out_shape)[2], "broadcast": int(in_shapes[0] != in_shapes[1])}
        if ctx.is_float:
            return c_struct({**fields, "activation": C_ACTIVATION[self.activation]})
        (qa, qb), out_q = ctx.input_quant, ctx.output_quant
        low, high = nx.activation_range(self.activation, out_q)
        return c_struct({**fields, "input1_offset": -qa.zero_point, "input2_offset": -qb.zero_point,
                         **_mul_fields(qa, qb, out_q, ctx.numerics), "act_min": low, "act_max": high})


@dataclass(frozen=True)
class MulBroadcast(Mul, pattern=Pattern.OPAQUE):
    """MUL of an (H, W, C) map by a vector of C values (shape (C,) or (1, 1, C)), an activation:
    the squeeze-and-excite scaling. The vector is made from the whole map,
    so the map is held whole anyway: it runs unfused, on whole tensors."""

    kind = "mul_broadcast"

    def output_shape(self, inputs: list[Shape]) -> Shape:
        vector = inputs[1]
        if len(inputs[0]) != 3 or as_feature_map(vector) != (1, 1, inputs[0][2]):
            raise UserError(f"mul of a {list(inputs[0])} map by {list(vector)}: expected one value per channel")
        return inputs[0]


def mul_multiplier(scale_a: float, scale_b: float, scale_out: float, numerics: str = nx.LITERT) -> tuple[int, int]:
    """TFLite's MUL Prepare: `scale1 * scale2 / scale_out` of the float32 scales is evaluated in
    float32 (a C++ float expression), then widened to double for QuantizeMultiplier. TFLite Micro's
    widens each scale to double first and computes in double."""
    f32 = np.float32
    if numerics == nx.TFLM:
        return nx.quantize_multiplier(float(f32(scale_a)) * float(f32(scale_b)) / float(f32(scale_out)))
    with np.errstate(**nx.QUIET_FLOAT32):
        ratio = f32(f32(scale_a) * f32(scale_b)) / f32(scale_out)
    return nx.quantize_multiplier(float(ratio))

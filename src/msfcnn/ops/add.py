"""ADD: element-wise sum of the main path and a residual (skip) tensor."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .base import (C_ACTIVATION, C_ROUNDING, KernelContext, Pattern, SameShapeBinary, as_feature_map, c_struct,
                   in_numerics)
from .loop_counts import Counts, KernelRun, count_signed_values

# TFLite's int8 ADD: both inputs are scaled up by 2^20, brought to a common scale (twice the larger
# input scale) with their own multipliers, summed, then rescaled to the output.
LEFT_SHIFT = 20
LEFT_SHIFT_INT16 = 15  # the general (not power-of-two) int16 ADD
ROUNDING = nx.DOUBLE


@dataclass(frozen=True)
class Add(SameShapeBinary, pattern=Pattern.ELEMENTWISE, elements=frozenset({"int8", "int16", "float32"})):
    kind = "add"
    c_kernel = "msf_add"
    activation: str | None = None

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        a, b = inputs
        if ctx.is_float:
            return nx.float_activation(a.astype(np.float32) + b.astype(np.float32), self.activation)
        left_shift = left_shift_of(ctx)
        params = add_params(ctx.input_quant[0].scale, ctx.input_quant[1].scale, ctx.output_quant.scale, left_shift)
        (m1, s1), (m2, s2), (mo, so) = params
        scaled_a = nx.multiply_by_quantized_multiplier(
            (a.astype(np.int64) - ctx.input_quant[0].zero_point) << left_shift, m1, s1, ROUNDING)
        scaled_b = nx.multiply_by_quantized_multiplier(
            (b.astype(np.int64) - ctx.input_quant[1].zero_point) << left_shift, m2, s2, ROUNDING)
        out = nx.multiply_by_quantized_multiplier(scaled_a + scaled_b, mo, so, ROUNDING) + ctx.output_quant.zero_point
        low, high = ctx.activation_range(self.activation)
        return np.clip(out, low, high).astype(ctx.qtype)

    def for_numerics(self, ctx: KernelContext, shape) -> "Add":
        """LiteRT's int8 ADD rounds as its vector code does where that differs from this op's
        (ops/add_litert.py registers it); TFLite Micro's, the int16 and the float ADD are this op's."""
        return in_numerics(Add, Add(self.activation), ctx, shape)

    def value_path(self, ctx: KernelContext) -> str:
        """add.c's int8 loop (add_gemmlowp) skips a rescale's rounding shift where the multiplier
        does not shift: always the input of the larger scale's (its multiplier is 1/2), the other's
        too where the scales are equal. Else that input's shift takes five instructions a value more
        on cortex-m4: a count of its own (the output's always shifts, by 2^20)."""
        if ctx.dtype != "int8" or self.c_kernel != Add.c_kernel or ctx.output_quant is None:
            return ""
        params = add_params(ctx.input_quant[0].scale, ctx.input_quant[1].scale, ctx.output_quant.scale)
        return "shifted_input" if any(shift < 0 for _, shift in params[:2]) else ""

    def count_region(self, run: KernelRun, f: Counts) -> None:
        if run.path:
            f[f"{run.family}:output_{run.path}"] += run.pixels * run.channels
        count_signed_values(run, f)

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        fields = {"channels": as_feature_map(out_shape)[2]}
        if ctx.is_float:
            return c_struct({**fields, "activation": C_ACTIVATION[self.activation]})
        left_shift = left_shift_of(ctx)
        (m1, s1), (m2, s2), (mo, so) = add_params(ctx.input_quant[0].scale, ctx.input_quant[1].scale,
                                                  ctx.output_quant.scale, left_shift)
        low, high = ctx.activation_range(self.activation)
        return c_struct({**fields, "input1_offset": -ctx.input_quant[0].zero_point,
                         "input2_offset": -ctx.input_quant[1].zero_point, "left_shift": left_shift,
                         "input1_mult": m1, "input1_shift": s1, "input2_mult": m2, "input2_shift": s2,
                         "output_mult": mo, "output_shift": so, "output_offset": ctx.output_quant.zero_point,
                         "act_min": low, "act_max": high, "rounding": C_ROUNDING[ROUNDING]})


def left_shift_of(ctx: KernelContext) -> int:
    """How far ADD scales its inputs up: 2^20 in int8, 2^15 in int16 (TFLite's Prepare)."""
    return LEFT_SHIFT_INT16 if ctx.is_int16 else LEFT_SHIFT


def add_params(scale_a: float, scale_b: float, scale_out: float,
               left_shift: int = LEFT_SHIFT) -> tuple[tuple[int, int], ...]:
    """(multiplier, shift) for input a, input b and the output, as TFLite's ADD Prepare."""
    sa, sb, so = (float(np.float32(s)) for s in (scale_a, scale_b, scale_out))
    twice_max = 2.0 * max(sa, sb)
    return (nx.quantize_multiplier(sa / twice_max),
            nx.quantize_multiplier(sb / twice_max),
            nx.quantize_multiplier(twice_max / ((1 << left_shift) * so)))

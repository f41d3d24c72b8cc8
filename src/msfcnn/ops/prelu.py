"""PRELU: x if x >= 0 else alpha[c] * x, with one constant alpha per channel (`consts["alpha"]`:
int8, quantised with (alpha_scale, alpha_zero_point), in int8 graphs; float32 in float graphs).

int8: TFLite's reference Prelu (which LiteRT's interpreter and TFLite Micro both run): v = x -
input zero point; v >= 0 is rescaled by input scale / output scale, v < 0 times (alpha - alpha zero
point) by input scale x alpha scale / output scale, double rounding, plus the output zero point,
clamped. The two runtimes form those factors differently: LiteRT's Prepare in float32
(`input->params.scale / output->params.scale`), TFLite Micro's in double from the float32 scales.
Per channel, so not a table: C in kernels/prelu.c. 16x8 graphs: the same on int16 values."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .base import KernelContext, Pattern, ValueMap, as_feature_map, c_struct

ROUNDING = nx.DOUBLE


def prelu_multipliers(in_scale: float, alpha_scale: float, out_scale: float,
                      numerics: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """((multiplier, shift) for v >= 0, (multiplier, shift) for v < 0) under `numerics`."""
    f32 = np.float32
    if numerics == nx.TFLM:
        positive = float(f32(in_scale)) / float(f32(out_scale))
        negative = float(f32(in_scale)) * float(f32(alpha_scale)) / float(f32(out_scale))
    else:
        with np.errstate(**nx.QUIET_FLOAT32):
            positive = float(f32(in_scale) / f32(out_scale))
            negative = float(f32(f32(in_scale) * f32(alpha_scale)) / f32(out_scale))
    return nx.quantize_multiplier(positive), nx.quantize_multiplier(negative)


@dataclass(frozen=True)
class Prelu(ValueMap, pattern=Pattern.ELEMENTWISE, elements=frozenset({"int8", "int16", "float32", "uint8"})):
    kind = "prelu"
    passes_zeros = True
    c_kernel = "msf_prelu"
    alpha_scale: float = 1.0
    alpha_zero_point: int = 0

    def alpha(self, ctx: KernelContext) -> np.ndarray:
        """The per-channel alpha: int64 values (float32 in float graphs), broadcast on the last axis."""
        return np.asarray(ctx.consts["alpha"]).reshape(-1).astype(np.float32 if ctx.is_float else np.int64)

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        if ctx.is_float:
            x = x.astype(np.float32)
            return np.where(x >= 0, x, x * self.alpha(ctx)).astype(np.float32)
        (mult_pos, shift_pos), (mult_neg, shift_neg) = self.multipliers(ctx)
        v = x.astype(np.int64) - ctx.input_quant[0].zero_point
        negative = v * (self.alpha(ctx) - self.alpha_zero_point)
        out = np.where(v >= 0, nx.multiply_by_quantized_multiplier(v, mult_pos, shift_pos, ROUNDING),
                       nx.multiply_by_quantized_multiplier(negative, mult_neg, shift_neg, ROUNDING))
        info = np.iinfo(ctx.qtype)  # int8, or int16 in 16x8 graphs (int8 alphas either way)
        return np.clip(out + ctx.output_quant.zero_point, info.min, info.max).astype(ctx.qtype)

    def multipliers(self, ctx: KernelContext) -> tuple[tuple[int, int], tuple[int, int]]:
        return prelu_multipliers(ctx.input_quant[0].scale, self.alpha_scale, ctx.output_quant.scale, ctx.numerics)

    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        return {"alpha": self.alpha(ctx).astype(np.float32 if ctx.is_float else np.int8)}

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        fields = {"channels": as_feature_map(out_shape)[2],
                  "alpha": None if ctx.is_float else names["alpha"],
                  "alpha_f32": names["alpha"] if ctx.is_float else None}
        if ctx.is_float:
            return c_struct(fields)
        (mult_pos, shift_pos), (mult_neg, shift_neg) = self.multipliers(ctx)
        return c_struct({**fields, "input_offset": -ctx.input_quant[0].zero_point,
                         "alpha_offset": -self.alpha_zero_point, "output_offset": ctx.output_quant.zero_point,
                         "pos_mult": mult_pos, "pos_shift": shift_pos, "neg_mult": mult_neg, "neg_shift": shift_neg})

"""ABS (int8, and int16 in 16x8 models), as LiteRT and TFLite Micro compute it.

Both runtimes take |q - input zero point|. When the input and output scales differ, they rescale
it by input scale / output scale (TFLite's MultiplyByQuantizedMultiplier, double rounding); with
equal scales they do not. They then add the output zero point and clamp. They form the factor
differently: LiteRT divides the two float32 scales in float32, TFLite Micro in double.

C kernel: kernels/abs.c (msf_abs_s8, msf_abs_s16).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .base import KernelContext, Pattern, ValueMap, as_feature_map, c_struct
from .loop_counts import Counts, KernelRun


def rescale_factor(input_scale: float, output_scale: float, numerics: str) -> tuple[int, int] | None:
    """(multiplier, shift) of input scale / output scale as the runtime forms it; None for equal
    scales, which the runtimes do not rescale."""
    si, so = np.float32(input_scale), np.float32(output_scale)
    if si == so:
        return None
    real = float(si / so) if numerics == nx.LITERT else float(si) / float(so)
    return nx.quantize_multiplier(real)


@dataclass(frozen=True)
class Abs(ValueMap, pattern=Pattern.ELEMENTWISE, elements=frozenset({"int8", "int16"})):
    kind = "abs"
    c_kernel = "msf_abs"

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        in_q, out_q = ctx.input_quant[0], ctx.output_quant
        value = np.abs(inputs[0].astype(np.int64) - in_q.zero_point)
        factor = rescale_factor(in_q.scale, out_q.scale, ctx.numerics)
        if factor is not None:
            value = nx.multiply_by_quantized_multiplier(value, *factor)
        info = np.iinfo(ctx.qtype)
        return np.clip(value + out_q.zero_point, info.min, info.max).astype(ctx.qtype)

    def value_path(self, ctx: KernelContext) -> str:
        """The rescale per value (msf_mul_by_quantized_mult_double) is most of a rescaling ABS's cost."""
        in_q, out_q = ctx.input_quant[0], ctx.output_quant
        return "" if rescale_factor(in_q.scale, out_q.scale, ctx.numerics) is None else "rescaled"

    def count_region(self, run: KernelRun, f: Counts) -> None:
        if run.path:
            f[f"{run.family}:output_{run.path}"] += run.pixels * run.channels

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        in_q, out_q = ctx.input_quant[0], ctx.output_quant
        factor = rescale_factor(in_q.scale, out_q.scale, ctx.numerics)
        multiplier, shift = factor or (0, 0)
        return c_struct({"channels": as_feature_map(out_shape)[2], "input_zero_point": in_q.zero_point,
                         "output_zero_point": out_q.zero_point, "rescale": int(factor is not None),
                         "multiplier": multiplier, "shift": shift})

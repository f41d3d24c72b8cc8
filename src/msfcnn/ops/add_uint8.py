"""ADD of two uint8 tensors (held as int8, q - 128), as the LiteRT interpreter computes it.

TFLite's uint8 ADD (optimized_ops' AddElementwise) runs vector code (NEON, translated to SSE on
x86) on blocks of 8 values and scalar code on the rest (see numerics.EDGE_VECTOR_BLOCK), and
the two round differently. The scalar code is the int8 ADD's (ops/add.py). The vector code
rescales each input with a doubling high multiply that rounds half up (vqrdmulh) and then a
plain arithmetic shift right (rounding down), and the sum with vqrdmulh and gemmlowp's rounding
divide; the result goes through int16 (truncated, plus the output zero point, wrapping) and
saturates to uint8.

The value at a flat position depends on that position in the whole tensor, so the op is never
cut into regions by fusion (Pattern.OPAQUE): it runs on whole tensors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .add import LEFT_SHIFT, Add, add_params
from .base import KernelContext, Pattern, as_feature_map


@dataclass(frozen=True)
class AddUint8(Add, pattern=Pattern.OPAQUE, elements=frozenset({"uint8"})):
    c_kernel = "msf_add_uint8"
    kernel_family = "add_uint8"
    writes_over_input = True  # value by value (codegen/kernels/add_uint8.c)

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        out = super().reference(inputs, ctx).reshape(-1)  # the scalar code's values
        vector = vector_end(out.size)
        a, b = (x.reshape(-1)[:vector] for x in inputs)
        out[:vector] = _vector_add(a, b, ctx, nx.activation_range(self.activation, ctx.output_quant))
        return out.reshape(inputs[0].shape)

    def for_numerics(self, ctx: KernelContext, shape) -> "AddUint8":
        return self  # uint8 models follow LiteRT alone (ir.with_numerics refuses tflm)

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        _, width, channels = as_feature_map(out_shape)
        base = super().c_params(ctx, in_shapes, out_shape, names)
        return f"{{ .base = {base}, .width = {width}, .vector_end = {vector_end(int(np.prod(out_shape)))} }}"


def vector_end(size: int) -> int:
    """How many leading values of a `size`-value tensor the interpreter adds with vector code."""
    return size // nx.EDGE_VECTOR_BLOCK * nx.EDGE_VECTOR_BLOCK


def _vector_add(a: np.ndarray, b: np.ndarray, ctx: KernelContext, clamp: tuple[int, int]) -> np.ndarray:
    (m1, s1), (m2, s2), (mo, so) = add_params(ctx.input_quant[0].scale, ctx.input_quant[1].scale,
                                              ctx.output_quant.scale)
    qa, qb = ctx.input_quant
    sa = nx.high_mul_half_up((a.astype(np.int64) - qa.zero_point) << LEFT_SHIFT, m1) >> -s1
    sb = nx.high_mul_half_up((b.astype(np.int64) - qb.zero_point) << LEFT_SHIFT, m2) >> -s2
    total = nx.rounding_divide_by_pot(nx.high_mul_half_up(sa + sb, mo), -so)
    # int16 narrowing, the uint8 output zero point added in int16, saturation to uint8
    wide = total.astype(np.int16).astype(np.int64) + ctx.output_quant.zero_point + 128
    uint8 = np.clip(wide.astype(np.int16), 0, 255).astype(np.int64) - 128
    return np.clip(uint8, *clamp).astype(np.int8)

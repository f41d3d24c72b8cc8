"""ADD of two int8 or int16 tensors as the LiteRT interpreter computes it (Graph.numerics "litert").

The interpreter's optimized int8 ADD (optimized_integer_ops' AddElementwise) runs vector code
(NEON, translated to SSE on x86) on each block of 16 values of the whole flat tensor and the
scalar code of ops/add.py (TFLite's reference ADD, which TFLite Micro runs too) on the last
size % 16 values. The vector code rescales each input, minus its zero point, in one step: shifted
left by 20 plus its own (non-positive) shift, then through a doubling high multiply rounded half
up (vqrdmulh); the scalar code shifts left by 20, multiplies rounding halves away from zero and
then divides by 2^-shift, rounding again. The sum goes through vqrdmulh and gemmlowp's rounding
divide, is narrowed to int16 (wrapping), gets the output zero point in int16 (wrapping), then is
saturated to int8 and clamped. The two codes differ by one on a few value pairs (about 0.5% of
them for scales 0.05 and 0.06 into 0.08), and by more where the output scale is so fine that
the int16 wraps.

For most scale sets the two codes agree on all 65536 pairs of int8 inputs, and the ADD stays
ops/add.py's (its calibrated C kernel; element-wise). Otherwise: a tensor of a multiple of 16
values is all vector code, so its ADD is element-wise too (AddLitert) and fuses like any other;
any other size ends in scalar values whose place in the whole tensor matters: AddLitertTail is
never cut into regions (Pattern.OPAQUE), as ops/add_uint8.py.

The int16 ADD of general scales (not power-of-two: the converter's) runs the same blocks of 16
values (optimized_integer_ops' AddElementwiseInt16), with the vector arithmetic above but in int32
to the end: the output zero point added, clamped, then saturated to int16 (no wrap). Its scalar
code is TFLite's (ops/add.py, left shift 15). Whether the two codes agree on every pair of int16
inputs is too costly to check, so a 16x8 ADD under LiteRT is always AddLitert or AddLitertTail.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from .. import numerics as nx
from .add import Add, add_params, left_shift_of
from .base import KernelContext, Pattern, as_feature_map, numerics_variant
from .loop_counts import Counts, KernelRun

VECTOR_BLOCK = 16  # int8 values per iteration of the interpreter's vector loop


def litert_add(activation: str | None, ctx: KernelContext, shape) -> Add:
    """The ADD in `ctx` whose output has `shape`, as LiteRT's int8 kernel computes it: TFLite's
    own (ops/add.py, element-wise) when the vector code gives its values on every pair of int8
    inputs, as it does for most scale sets (the two roundings part only near ties); else AddLitert
    or AddLitertTail. Without quantisation (a layer list planned without weights), by size alone."""
    if ctx.output_quant is not None and codes_agree(activation, ctx):
        return Add(activation)
    return (AddLitert if prod(shape) % VECTOR_BLOCK == 0 else AddLitertTail)(activation)


@numerics_variant(Add, nx.LITERT)
def _under_litert(op: Add, ctx: KernelContext, shape) -> Add:
    """Add.for_numerics under LiteRT: its int8 kernel (litert_add), its int16 one (blocks of 16
    values of vector code, always); its float one is TFLite's."""
    if ctx.dtype == "int16":
        return (AddLitert if prod(shape) % VECTOR_BLOCK == 0 else AddLitertTail)(op.activation)
    return litert_add(op.activation, ctx, shape) if ctx.dtype == "int8" else op


def codes_agree(activation: str | None, ctx: KernelContext) -> bool:
    """True when the vector and the scalar code give the same output for all 65536 input pairs."""
    values = np.arange(-128, 128, dtype=np.int8)
    a, b = np.repeat(values, values.size), np.tile(values, values.size)
    scalar = Add(activation).reference([a, b], ctx)
    return bool(np.array_equal(vector_add(a, b, ctx, ctx.activation_range(activation)), scalar))


def vector_end(size: int) -> int:
    """How many leading values of a `size`-value tensor the interpreter adds with vector code."""
    return size // VECTOR_BLOCK * VECTOR_BLOCK


@dataclass(frozen=True)
class AddLitert(Add, pattern=Pattern.ELEMENTWISE, elements=frozenset({"int8", "int16"})):
    """LiteRT's int8 or int16 ADD of a tensor whose size is a multiple of 16: vector code on
    every value. (Its float ADD is TFLite's, _under_litert.)"""

    c_kernel = "msf_add_litert"
    kernel_family = "add_litert"
    wide_family = "add_litert"  # its int16 kernel: add_litert_s16.c

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        a, b = inputs
        return vector_add(a, b, ctx, ctx.activation_range(self.activation))

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        return self._blocks_params(ctx, in_shapes, out_shape, names, int(prod(out_shape)))

    def _blocks_params(self, ctx, in_shapes, out_shape, names, end: int) -> str:
        _, width, _ = as_feature_map(out_shape)
        base = super().c_params(ctx, in_shapes, out_shape, names)
        return f"{{ .base = {base}, .width = {width}, .vector_end = {end} }}"


@dataclass(frozen=True)
class AddLitertTail(AddLitert, pattern=Pattern.OPAQUE):
    """LiteRT's int8 or int16 ADD of a tensor whose size is not a multiple of 16: its last
    size % 16 values are the scalar code's."""

    writes_over_input = True  # value by value (codegen/kernels/add_litert.c)

    def count_region(self, run: KernelRun, f: Counts) -> None:
        """The last size % 16 values take add.c's scalar code (three rescales, each a 64-bit
        product and a rounding divide), not the vector code's: `output_scalar`. A call is
        always the whole tensor (Pattern.OPAQUE)."""
        super().count_region(run, f)
        f[f"{run.family}:output_scalar"] += prod(run.shape) - vector_end(prod(run.shape))

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        out = Add.reference(self, inputs, ctx).reshape(-1)  # the scalar code's values
        end = vector_end(out.size)
        a, b = (x.reshape(-1)[:end] for x in inputs)
        out[:end] = vector_add(a, b, ctx, ctx.activation_range(self.activation))
        return out.reshape(inputs[0].shape)

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        return self._blocks_params(ctx, in_shapes, out_shape, names, vector_end(int(prod(out_shape))))


def _shift_left(x: np.ndarray, bits: int) -> np.ndarray:
    """NEON's vshl by a signed count: a negative one shifts right, rounding down."""
    return x << bits if bits >= 0 else x >> -bits


def vector_add(a: np.ndarray, b: np.ndarray, ctx: KernelContext, clamp: tuple[int, int]) -> np.ndarray:
    """The interpreter's vector code, value by value."""
    left_shift = left_shift_of(ctx)
    (m1, s1), (m2, s2), (mo, so) = add_params(ctx.input_quant[0].scale, ctx.input_quant[1].scale,
                                              ctx.output_quant.scale, left_shift)
    qa, qb = ctx.input_quant
    sa = nx.high_mul_half_up(_shift_left(a.astype(np.int64) - qa.zero_point, left_shift + s1), m1)
    sb = nx.high_mul_half_up(_shift_left(b.astype(np.int64) - qb.zero_point, left_shift + s2), m2)
    if ctx.is_int16:  # in int32 to the end: zero point, clamp, then saturated to int16
        total = nx.rounding_divide_by_pot(nx.high_mul_half_up(sa + sb, mo), -so) + ctx.output_quant.zero_point
        return np.clip(total, *clamp).astype(np.int16)
    return vector_output(sa + sb, mo, so, ctx.output_quant.zero_point, clamp)


def vector_output(total: np.ndarray, multiplier: int, shift: int, zero_point: int,
                  clamp: tuple[int, int]) -> np.ndarray:
    """The interpreter's vector code from the sum of the rescaled inputs to the int8 output."""
    total = nx.rounding_divide_by_pot(nx.high_mul_half_up(total, multiplier), -shift)
    # narrowed to int16, the output zero point added in int16 (both wrap), saturated to int8
    wide = (total.astype(np.int16).astype(np.int64) + zero_point).astype(np.int16)
    return np.clip(np.clip(wide, nx.INT8_MIN, nx.INT8_MAX), *clamp).astype(np.int8)

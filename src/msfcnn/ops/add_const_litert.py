"""ADD of an int8 constant as the LiteRT interpreter computes it (Graph.numerics "litert").

The interpreter broadcasts the constant (ops/add_const.py: one value, or one per channel) in one
of two ways, each with vector code that rounds unlike its scalar code (TFLite's reference ADD):

* one value per channel: pixel by pixel, an element-wise ADD of the pixel's C values each time,
  so ops/add_litert.py's vector code runs on the first C // 16 * 16 channels of every pixel and
  the scalar code on the others. A value's rounding depends on its channel alone: the op stays
  element-wise (AddConstLitert).
* one value: vector code on the blocks of 8 values of the whole flat tensor, the scalar code on
  the rest. That vector code rescales each operand as the uint8 ADD's does (shifted left by 20,
  vqrdmulh, then shifted right rounding down), and the sum as ops/add_litert.py's (vqrdmulh, a
  rounding divide, int16 narrowing, the output zero point in int16, int8 saturation). A map of a
  multiple of 8 values is all vector code (AddConstLitert, element-wise); any other ends in
  scalar values (AddConstLitertTail, never cut into regions: Pattern.OPAQUE).

As for two maps, the constant stays ops/add_const.py's ADD when both codes give the same output
for every int8 input and each value of the constant, as they do for most scale sets.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod

import numpy as np

from .. import numerics as nx
from .add import LEFT_SHIFT, Add, add_params
from .add_const import AddConst
from .add_litert import VECTOR_BLOCK, vector_add, vector_output
from .base import KernelContext, Pattern, as_feature_map, numerics_variant
from .loop_counts import Counts, KernelRun

SCALAR_VECTOR_BLOCK = 8  # values per iteration of the interpreter's vector loop for one constant value


def vector_channels(channels: int) -> int:
    """How many leading channels of each pixel the interpreter adds a per-channel constant to
    with vector code."""
    return channels // VECTOR_BLOCK * VECTOR_BLOCK


def litert_add_const(op: AddConst, ctx: KernelContext, shape) -> AddConst:
    """`op` in `ctx`, with output `shape`, as LiteRT's int8 kernel computes it. Without
    quantisation (a layer list planned without weights), one that fusion may cut only where
    LiteRT's would be cut whatever the weights."""
    fields = {"operand_scale": op.operand_scale, "operand_zero_point": op.operand_zero_point,
              "activation": op.activation}
    position_free = np.size(ctx.consts["operand"]) > 1 or prod(shape) % SCALAR_VECTOR_BLOCK == 0
    if ctx.output_quant is None:
        return op if position_free else AddConstLitertTail(**fields)
    if _codes_agree(op, ctx):
        return op
    return (AddConstLitert if position_free else AddConstLitertTail)(**fields)


@numerics_variant(AddConst, nx.LITERT)
def _under_litert(op: AddConst, ctx: KernelContext, shape) -> AddConst:
    """AddConst.for_numerics under LiteRT: its int8 kernel (litert_add_const); its float one is TFLite's."""
    return litert_add_const(op, ctx, shape) if ctx.dtype == "int8" else op


def _pair_context(op: AddConst, ctx: KernelContext) -> KernelContext:
    """The context of the ADD of two maps that this ADD is, the constant as the second input."""
    operand_quant = replace(ctx.input_quant[0], scale=op.operand_scale, zero_point=op.operand_zero_point)
    return replace(ctx, input_quant=(ctx.input_quant[0], operand_quant))


def _vector_values(op: AddConst, x: np.ndarray, operand: np.ndarray, ctx: KernelContext) -> np.ndarray:
    """The interpreter's vector code for this constant (one value, or per channel), value by value."""
    clamp = nx.activation_range(op.activation, ctx.output_quant)
    pair = _pair_context(op, ctx)
    operand = np.broadcast_to(operand, x.shape)
    if np.size(ctx.consts["operand"]) > 1:
        return vector_add(x, operand, pair, clamp)
    (m1, s1), (m2, s2), (mo, so) = add_params(ctx.input_quant[0].scale, op.operand_scale, ctx.output_quant.scale)
    qx, qc = pair.input_quant
    sx = nx.high_mul_half_up((x.astype(np.int64) - qx.zero_point) << LEFT_SHIFT, m1) >> -s1
    sc = nx.high_mul_half_up((operand.astype(np.int64) - qc.zero_point) << LEFT_SHIFT, m2) >> -s2
    return vector_output(sx + sc, mo, so, ctx.output_quant.zero_point, clamp)


def _codes_agree(op: AddConst, ctx: KernelContext) -> bool:
    """True when the vector and the scalar code agree on every int8 input, for each constant value."""
    operand = op.operand(ctx)
    x = np.repeat(np.arange(-128, 128, dtype=np.int8)[:, None], operand.size, axis=1)
    return bool(np.array_equal(_vector_values(op, x, operand, ctx), AddConst.reference(op, [x], ctx)))


@dataclass(frozen=True)
class AddConstLitert(AddConst, pattern=Pattern.ELEMENTWISE, elements=frozenset({"int8"})):
    """LiteRT's int8 ADD of a constant per channel, or of one value to a map of a multiple of 8
    values: vector code on the first C // 16 * 16 channels of every pixel, or on every value.
    (Its float ADD is TFLite's, _under_litert: an int8 kernel only.)"""

    c_kernel = "msf_add_const_litert"
    kernel_family = "add_const_litert"

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        out = AddConst.reference(self, inputs, ctx)  # the scalar code's values
        operand = self.operand(ctx)
        ends = vector_channels(x.shape[-1]) if operand.size > 1 else x.shape[-1]
        out[..., :ends] = _vector_values(self, x[..., :ends], operand[:ends] if operand.size > 1 else operand, ctx)
        return out

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        return self._litert_params(ctx, in_shapes, out_shape, names, int(prod(out_shape)))

    def value_path(self, ctx: KernelContext) -> str:
        """"per_channel" for a constant per channel, whose channels past C // 16 * 16 take the
        scalar code at every pixel; "" for one value."""
        return "per_channel" if np.size(ctx.consts["operand"]) > 1 else ""

    def count_region(self, run: KernelRun, f: Counts) -> None:
        """Each value takes one of three codes: add_litert.c's vector code (a constant per
        channel, its first C // 16 * 16 channels), add.c's scalar code (three rescales, each a
        64-bit product and a rounding divide: `output_scalar`) or, for one value, the broadcast
        vector code, whose rescales shift right after the product (`output_broadcast`)."""
        if run.path == "per_channel":
            f[f"{run.family}:output_scalar"] += run.pixels * (run.channels - vector_channels(run.channels))
        else:
            f[f"{run.family}:output_broadcast"] += run.pixels * run.channels

    def _litert_params(self, ctx, in_shapes, out_shape, names, vector_end: int) -> str:
        _, width, channels = as_feature_map(out_shape)
        add = Add(self.activation).c_params(_pair_context(self, ctx), in_shapes, out_shape, names)
        per_channel = np.size(ctx.consts["operand"]) > 1
        return (f"{{ .add = {add}, .operand = {names['operand']}, .per_channel = {int(per_channel)}, "
                f".width = {width}, .vector_end = {vector_end}, "
                f".vector_channels = {vector_channels(channels) if per_channel else channels} }}")


@dataclass(frozen=True)
class AddConstLitertTail(AddConstLitert, pattern=Pattern.OPAQUE):
    """LiteRT's int8 ADD of one constant value to a map whose size is not a multiple of 8: its last
    size % 8 values are the scalar code's."""

    writes_over_input = True  # value by value (codegen/kernels/add_const_litert.c)

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        out = AddConst.reference(self, inputs, ctx).reshape(-1)
        end = x.size // SCALAR_VECTOR_BLOCK * SCALAR_VECTOR_BLOCK
        out[:end] = _vector_values(self, x.reshape(-1)[:end], self.operand(ctx), ctx)
        return out.reshape(x.shape)

    def count_region(self, run: KernelRun, f: Counts) -> None:
        """Its last size % 8 values take the scalar code, the others the broadcast vector code
        (a call is always the whole map)."""
        scalar = prod(run.shape) % SCALAR_VECTOR_BLOCK
        f[f"{run.family}:output_scalar"] += scalar
        f[f"{run.family}:output_broadcast"] += prod(run.shape) - scalar

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        size = int(prod(out_shape))
        return self._litert_params(ctx, in_shapes, out_shape, names, size // SCALAR_VECTOR_BLOCK * SCALAR_VECTOR_BLOCK)

"""SUB: the element-wise difference of two maps of one shape, or of a map and an int8 constant (one
value, or one per channel) on either side.

TFLite's int8 SUB is ADD's arithmetic (ops/add.py: both inputs, minus their zero points, scaled up
by 2^20 and rescaled to twice the larger input scale, combined, rescaled to the output) with the
second input's rescaled value (the subtrahend's) subtracted, in the LiteRT interpreter and in
TFLite Micro alike. (Older TFLite interpreters negated the subtrahend's multiplier and ran the ADD
kernel instead, which differs where the rescale lands on a rounding tie: gemmlowp's doubling high
multiply rounds ties up whatever the sign, so rounding -v is not negating the rounding of v. The
fixture bin_sub_ties meets such ties on about one value in eight, and both interpreters subtract.)
The C kernel takes each input's multiplier and sign, so either rule fits it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .add import LEFT_SHIFT, ROUNDING, add_params
from .base import C_ACTIVATION, C_ROUNDING, KernelContext, Pattern, SameShapeBinary, as_feature_map, c_struct
from .mul import ConstOperand, Quant


@dataclass(frozen=True)
class Sub(SameShapeBinary, pattern=Pattern.ELEMENTWISE):
    """inputs[0] - inputs[1]; `reversed`: inputs[1] - inputs[0] (the importers put the main path
    first, as for ADD, whichever side of the minus it is on)."""

    kind = "sub"
    c_kernel = "msf_sub"
    activation: str | None = None
    reversed: bool = False

    def describe(self) -> str:
        return "sub (reversed)" if self.reversed else "sub"

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        (a, qa), (b, qb) = self._ordered(list(zip(inputs, ctx.input_quant or (None, None))))
        if ctx.is_float:
            return nx.float_activation(a.astype(np.float32) - b.astype(np.float32), self.activation)
        return sub_int8(a, b, qa, qb, ctx.output_quant, self.activation)

    def _ordered(self, pair: list) -> list:
        """(minuend, subtrahend) of a pair given in the IR's input order."""
        return pair[::-1] if self.reversed else pair

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        fields = {"channels": as_feature_map(out_shape)[2], "reversed": int(self.reversed), "operand_size": 0}
        if ctx.is_float:
            return c_struct({**fields, "activation": C_ACTIVATION[self.activation]})
        qa, qb = self._ordered(list(ctx.input_quant))
        first, second, output = sub_terms(qa, qb, ctx.output_quant)
        return c_struct({**fields, **term_fields(*self._ordered([first, second])),
                         **output_fields(output, ctx, self.activation)})


@dataclass(frozen=True)
class SubConst(ConstOperand):
    """x - const, or const - x (`reversed`), the constant an int8 scalar or one value per channel.
    The C kernel takes the constant's scaled value (with its sign) from a table computed here."""

    kind = "sub_const"
    c_kernel = "msf_sub_const"
    reversed: bool = False

    def describe(self) -> str:
        return "sub (constant - x)" if self.reversed else "sub (constant)"

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x, c = inputs[0], self.operand(ctx)
        if ctx.is_float:
            diff = c - x.astype(np.float32) if self.reversed else x.astype(np.float32) - c
            return nx.float_activation(diff, self.activation)
        (a, qa), (b, qb) = self._ordered(ctx)
        return sub_int8(a(x), b(x), qa, qb, ctx.output_quant, self.activation)

    def _ordered(self, ctx: KernelContext) -> list:
        """(value of x, quantisation) of the minuend and the subtrahend: x's, or the constant's."""
        const = (lambda x: self.operand(ctx)), Quant(self.operand_scale, self.operand_zero_point)
        data = (lambda x: x), ctx.input_quant[0]
        return [const, data] if self.reversed else [data, const]

    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        if ctx.is_float:
            return super().c_consts(ctx)
        (_, qa), (_, qb) = self._ordered(ctx)
        first, second, _ = sub_terms(qa, qb, ctx.output_quant)
        const = first if self.reversed else second
        values = self.operand(ctx) - self.operand_zero_point
        scaled = nx.multiply_by_quantized_multiplier(values << LEFT_SHIFT, const.mult, const.shift, ROUNDING)
        return {"operand": (const.sign * scaled).astype(np.int32)}

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        fields = {"channels": as_feature_map(out_shape)[2], "reversed": int(self.reversed),
                  "operand_size": int(np.size(ctx.consts["operand"]))}
        if ctx.is_float:
            return c_struct({**fields, "operand_f32": names["operand"], "activation": C_ACTIVATION[self.activation]})
        (_, qa), (_, qb) = self._ordered(ctx)
        first, second, output = sub_terms(qa, qb, ctx.output_quant)
        return c_struct({**fields, **term_fields(second if self.reversed else first), "operand": names["operand"],
                         **output_fields(output, ctx, self.activation)})


@dataclass(frozen=True)
class Term:
    """How one input enters the difference: sign x rescale((q - offset) << 20, mult, shift)."""

    offset: int  # the input's zero point
    mult: int
    shift: int
    sign: int  # -1 for the subtrahend

    def scaled(self, q: np.ndarray) -> np.ndarray:
        shifted = (np.asarray(q).astype(np.int64) - self.offset) << LEFT_SHIFT
        return self.sign * nx.multiply_by_quantized_multiplier(shifted, self.mult, self.shift, ROUNDING)


def sub_terms(qa, qb, out_q) -> tuple[Term, Term, tuple[int, int]]:
    """The minuend's and the subtrahend's terms and the output's (multiplier, shift), as TFLite's
    SUB Prepare makes them (ADD's)."""
    (m1, s1), (m2, s2), output = add_params(qa.scale, qb.scale, out_q.scale)
    return Term(qa.zero_point, m1, s1, 1), Term(qb.zero_point, m2, s2, -1), output


def sub_int8(a: np.ndarray, b: np.ndarray, qa, qb, out_q, activation: str | None) -> np.ndarray:
    """TFLite's int8 SUB of broadcastable int8 arrays a - b."""
    first, second, (mult, shift) = sub_terms(qa, qb, out_q)
    total = first.scaled(a) + second.scaled(b)
    out = nx.multiply_by_quantized_multiplier(total, mult, shift, ROUNDING) + out_q.zero_point
    low, high = nx.activation_range(activation, out_q)
    return np.clip(out, low, high).astype(np.int8)


def term_fields(first: Term, second: Term | None = None) -> dict[str, int]:
    """The C params of the input terms (in the IR's input order; a constant's term is a table)."""
    fields = {}
    for i, term in ((1, first), (2, second)):
        if term is not None:
            fields.update({f"input{i}_offset": -term.offset, f"input{i}_mult": term.mult,
                           f"input{i}_shift": term.shift, f"input{i}_sign": term.sign})
    return fields


def output_fields(output: tuple[int, int], ctx: KernelContext, activation: str | None) -> dict:
    low, high = ctx.activation_range(activation)
    return {"left_shift": LEFT_SHIFT, "output_mult": output[0], "output_shift": output[1],
            "output_offset": ctx.output_quant.zero_point, "act_min": low, "act_max": high,
            "rounding": C_ROUNDING[ROUNDING]}

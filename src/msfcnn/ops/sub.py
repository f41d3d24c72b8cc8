"""SUB and SQUARED_DIFFERENCE: the element-wise difference (or its square) of two maps of one shape,
or of a map and an int8 constant (one value, or one per channel) on either side.

TFLite's int8 SUB is ADD's arithmetic (ops/add.py: both inputs, minus their zero points, scaled up
by 2^20 and rescaled to twice the larger input scale, combined, rescaled to the output) with the
second input's rescaled value (the subtrahend's) subtracted, in the LiteRT interpreter and in
TFLite Micro alike. (Older TFLite interpreters negated the subtrahend's multiplier and ran the ADD
kernel instead, which differs where the rescale lands on a rounding tie: gemmlowp's doubling high
multiply rounds ties up whatever the sign, so rounding -v is not negating the rounding of v. The
fixture bin_sub_ties meets such ties on about one value in eight, and both interpreters subtract.)
The C kernel takes each input's multiplier and sign, so either rule fits it.

SQUARED_DIFFERENCE (int8) is the same difference with the inputs shifted left by 7 instead of 20,
squared in int32 (at most (255 x 2^7)^2), then rescaled by (twice the larger input scale)^2 /
(2^14 x the output scale); no activation. LiteRT and TFLite Micro prepare the same multipliers
(TFLite Micro accepts an output factor of 1 or more, which LiteRT refuses).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .. import numerics as nx
from .add import LEFT_SHIFT, ROUNDING, add_params
from .base import C_ACTIVATION, C_ROUNDING, KernelContext, Pattern, SameShapeBinary, as_feature_map, c_struct
from .mul import ConstOperand, Quant

SQUARED_LEFT_SHIFT = 7


@dataclass(frozen=True)
class Term:
    """How one input enters the difference: sign x rescale((q - offset) << left_shift, mult, shift)."""

    offset: int  # the input's zero point
    mult: int
    shift: int
    sign: int  # -1 for the subtrahend
    left_shift: int = LEFT_SHIFT

    def scaled(self, q: np.ndarray) -> np.ndarray:
        shifted = (np.asarray(q).astype(np.int64) - self.offset) << self.left_shift
        return self.sign * nx.multiply_by_quantized_multiplier(shifted, self.mult, self.shift, ROUNDING)


@dataclass(frozen=True)
class Rule:
    """The minuend's and the subtrahend's terms and the output's (multiplier, shift), and whether
    the difference is squared before the output rescale."""

    first: Term
    second: Term
    output: tuple[int, int]
    square: bool = False

    def apply(self, a: np.ndarray, b: np.ndarray, out_q, low: int, high: int) -> np.ndarray:
        """The int8 result of broadcastable int8 arrays a (minuend) and b (subtrahend)."""
        diff = self.first.scaled(a) + self.second.scaled(b)
        if self.square:
            diff = diff * diff
        out = nx.multiply_by_quantized_multiplier(diff, *self.output, ROUNDING) + out_q.zero_point
        return np.clip(out, low, high).astype(np.int8)

    def c_fields(self, terms: list[Term], ctx: KernelContext, activation: str | None) -> dict:
        """The C params: the input terms in the IR's input order (a constant's is a table), the output."""
        fields = {}
        for i, term in enumerate(terms, start=1):
            fields.update({f"input{i}_offset": -term.offset, f"input{i}_mult": term.mult,
                           f"input{i}_shift": term.shift, f"input{i}_sign": term.sign})
        low, high = ctx.activation_range(activation)
        return {**fields, "left_shift": self.first.left_shift, "square": int(self.square),
                "output_mult": self.output[0], "output_shift": self.output[1],
                "output_offset": ctx.output_quant.zero_point, "act_min": low, "act_max": high,
                "rounding": C_ROUNDING[ROUNDING]}


def sub_rule(qa, qb, out_q) -> Rule:
    """TFLite's SUB Prepare (ADD's multipliers)."""
    (m1, s1), (m2, s2), output = add_params(qa.scale, qb.scale, out_q.scale)
    return Rule(Term(qa.zero_point, m1, s1, 1), Term(qb.zero_point, m2, s2, -1), output)


def squared_difference_rule(qa, qb, out_q) -> Rule:
    """TFLite's SQUARED_DIFFERENCE Prepare: the scales read as float32, the factors in double."""
    sa, sb, so = (float(np.float32(s)) for s in (qa.scale, qb.scale, out_q.scale))
    twice_max = 2.0 * max(sa, sb)
    (m1, s1), (m2, s2) = nx.quantize_multiplier(sa / twice_max), nx.quantize_multiplier(sb / twice_max)
    output = nx.quantize_multiplier(twice_max * twice_max / ((1 << 2 * SQUARED_LEFT_SHIFT) * so))
    return Rule(Term(qa.zero_point, m1, s1, 1, SQUARED_LEFT_SHIFT), Term(qb.zero_point, m2, s2, -1, SQUARED_LEFT_SHIFT),
                output, square=True)


@dataclass(frozen=True)
class Sub(SameShapeBinary, pattern=Pattern.ELEMENTWISE, elements=frozenset({"int8", "float32"})):
    """inputs[0] - inputs[1]; `reversed`: inputs[1] - inputs[0] (the importers put the main path
    first, as for ADD, whichever side of the minus it is on)."""

    kind = "sub"
    c_kernel = "msf_sub"
    rule: ClassVar = staticmethod(sub_rule)
    activation: str | None = None
    reversed: bool = False

    def describe(self) -> str:
        return f"{self.kind} (reversed)" if self.reversed else self.kind

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        (a, qa), (b, qb) = self._ordered(list(zip(inputs, ctx.input_quant or (None, None))))
        if ctx.is_float:
            return float_difference(a, b, self.rule is squared_difference_rule, self.activation)
        return self.rule(qa, qb, ctx.output_quant).apply(a, b, ctx.output_quant, *ctx.activation_range(self.activation))

    def _ordered(self, pair: list) -> list:
        """(minuend, subtrahend) of a pair given in the IR's input order."""
        return pair[::-1] if self.reversed else pair

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        fields = {"channels": as_feature_map(out_shape)[2], "reversed": int(self.reversed), "operand_size": 0}
        if ctx.is_float:
            return c_struct({**fields, "square": int(self.rule is squared_difference_rule),
                             "activation": C_ACTIVATION[self.activation]})
        qa, qb = self._ordered(list(ctx.input_quant))
        rule = self.rule(qa, qb, ctx.output_quant)
        return c_struct({**fields, **rule.c_fields(self._ordered([rule.first, rule.second]), ctx, self.activation)})


@dataclass(frozen=True)
class SquaredDifference(Sub):
    """(inputs[0] - inputs[1])^2 (symmetric: `reversed` changes nothing); no activation."""

    kind = "squared_difference"
    rule: ClassVar = staticmethod(squared_difference_rule)


@dataclass(frozen=True)
class SubConst(ConstOperand, elements=frozenset({"int8", "float32"})):
    """x - const, or const - x (`reversed`), the constant an int8 scalar or one value per channel.
    The C kernel takes the constant's scaled value (with its sign) from a table computed here."""

    kind = "sub_const"
    c_kernel = "msf_sub_const"
    rule: ClassVar = staticmethod(sub_rule)
    reversed: bool = False

    def describe(self) -> str:
        name = self.kind.removesuffix("_const").replace("_", " ")
        return f"{name} (constant - x)" if self.reversed else f"{name} (constant)"

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x, c = inputs[0], self.operand(ctx)
        a, b = (c, x) if self.reversed else (x, c)
        if ctx.is_float:
            return float_difference(a, b, self.rule is squared_difference_rule, self.activation)
        rule = self._rule(ctx)
        return rule.apply(a, b, ctx.output_quant, *ctx.activation_range(self.activation))

    def _rule(self, ctx: KernelContext) -> Rule:
        const, data = Quant(self.operand_scale, self.operand_zero_point), ctx.input_quant[0]
        return self.rule(const, data, ctx.output_quant) if self.reversed else self.rule(data, const, ctx.output_quant)

    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        if ctx.is_float:
            return super().c_consts(ctx)
        rule = self._rule(ctx)
        const = rule.first if self.reversed else rule.second
        return {"operand": const.scaled(self.operand(ctx)).astype(np.int32)}

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        fields = {"channels": as_feature_map(out_shape)[2], "reversed": int(self.reversed),
                  "operand_size": int(np.size(ctx.consts["operand"]))}
        if ctx.is_float:
            return c_struct({**fields, "square": int(self.rule is squared_difference_rule),
                             "operand_f32": names["operand"], "activation": C_ACTIVATION[self.activation]})
        rule = self._rule(ctx)
        x = rule.second if self.reversed else rule.first
        return c_struct({**fields, **rule.c_fields([x], ctx, self.activation), "operand": names["operand"]})


@dataclass(frozen=True)
class SquaredDifferenceConst(SubConst):
    """(x - const)^2; no activation."""

    kind = "squared_difference_const"
    rule: ClassVar = staticmethod(squared_difference_rule)


def float_difference(a: np.ndarray, b: np.ndarray, square: bool, activation: str | None) -> np.ndarray:
    diff = np.asarray(a, np.float32) - np.asarray(b, np.float32)
    return nx.float_activation(diff * diff if square else diff, activation)

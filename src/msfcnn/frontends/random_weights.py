"""Deterministic random int8 weights and quantisation for graphs that come without any
(built-in models and JSON layer lists), so that they can be run and compiled.

Scales are chosen analytically to keep activations in a useful int8 range: weights are drawn so
that each layer roughly preserves the standard deviation of its input (variance-preserving
fan-in scaling), and each output's scale covers about three standard deviations.
"""

from __future__ import annotations

import math

import numpy as np

from dataclasses import replace

from ..errors import UserError
from ..ir import NETWORK_INPUT, Graph, Quant
from ..ops import Add, Conv2D, Dense, DepthwiseConv2D, Softmax
from ..ops.activation import Activation
from ..ops.transpose_conv import TransposeConv
from ..ops.concat import Concat
from ..ops.elu import Elu
from ..ops.hard_swish import HardSwish
from ..ops.leaky_relu import LeakyRelu
from ..ops.logistic import Logistic
from ..ops.prelu import Prelu
from ..ops.tanh import OUTPUT_QUANT as TANH_OUTPUT_QUANT, Tanh
from ..ops.min_max import Maximum, MaximumConst
from ..ops.mul import ConstOperand, Mul, MulConst
from ..ops.sub import SquaredDifference, SquaredDifferenceConst, Sub

INPUT_QUANT = Quant(1 / 128, 0)  # real input in [-1, 1)
SOFTMAX_QUANT = Quant(1 / 256, -128)  # what TFLite requires of an int8 softmax output
OPERAND_QUANT = Quant(1 / 64, 0)  # of a constant operand (MUL or ADD by a constant)
ALPHA_QUANT = Quant(1 / 256, 0)  # of a PRELU's alphas
_UNIFORM_INT8_STD = 127 / math.sqrt(3)


def _output_quant(std: float, activation: str | None) -> Quant:
    if activation in ("relu_n1_to_1", "relu_0_to_1"):  # the clamp's whole range
        return Quant(2 / 255, 0) if activation == "relu_n1_to_1" else Quant(1 / 255, -128)
    if activation in ("relu", "relu6"):
        top = 3 * std if activation == "relu" else min(6.0, 3 * std)
        return Quant(top / 255, -128)
    return Quant(6 * std / 255, 0)


def _weighted(rng, node, in_quant: Quant, in_std: float, fan_in: int, weight_shape, channels):
    """Weights, per-channel scales and bias for a conv / depthwise / dense node."""
    weights = rng.integers(-127, 128, size=weight_shape, dtype=np.int8)
    base = 1 / (_UNIFORM_INT8_STD * math.sqrt(fan_in))
    scales = (base * rng.uniform(0.7, 1.3, size=channels)).astype(np.float32)
    out_std = in_std  # variance preserving by construction
    acc_scale = in_quant.scale * scales.astype(np.float64)
    bias = np.round(rng.normal(0, 0.1 * out_std, size=channels) / acc_scale).astype(np.int32)
    return {"weights": weights, "bias": bias, "weight_scales": scales}, out_std


def with_random_weights(graph: Graph, seed: int = 0) -> Graph:
    """A copy of `graph` with int8 weights, int32 biases, constant operands and activation
    quantisation."""
    rng = np.random.default_rng(seed)
    out = Graph(graph.name, graph.input_shape, input_quant=INPUT_QUANT, layout=graph.layout,
                declared_input_shape=graph.declared_input_shape, outputs=graph.outputs)
    std = {NETWORK_INPUT: 1 / math.sqrt(3)}
    shared = _shared_quant(graph)
    for i, node in enumerate(graph.nodes):
        op, consts, std[i], quant = _node(rng, graph, out, std, i)
        if shared[i] != i:  # a tensor that must be quantised like an earlier one
            decided = out.quant_of(shared[i])
            if isinstance(op, _FIXED_QUANT) and quant != decided:
                raise UserError(f"layer {i} ({op.kind}): its fixed quantisation differs from the tensor "
                                f"{shared[i]} it is concatenated with")
            quant = decided
        out.append(op, node.inputs, consts, quant)
    return out


def _node(rng, graph: Graph, out: Graph, std: dict, i: int):
    """(op, constants, output standard deviation, output quantisation) of node i; a quantisation of
    None: the input's."""
    node = graph.nodes[i]
    op, src = node.op, node.inputs[0]
    in_quant, in_std = out.quant_of(src), std[src]
    if isinstance(op, Conv2D):
        kh, kw = op.win.kernel
        c_in = graph.shape_of(src)[2]
        consts, s = _weighted(rng, node, in_quant, in_std, kh * kw * c_in, (op.filters, kh, kw, c_in), op.filters)
        return op, consts, s, _output_quant(s, op.activation)
    if isinstance(op, DepthwiseConv2D):
        kh, kw = op.win.kernel
        c_out = node.shape[2]
        consts, s = _weighted(rng, node, in_quant, in_std, kh * kw, (1, kh, kw, c_out), c_out)
        return op, consts, s, _output_quant(s, op.activation)
    if isinstance(op, TransposeConv):  # an output pixel sums about kh x kw x c_in / (stride_h x stride_w) taps
        kh, kw = op.kernel
        c_in = graph.shape_of(src)[2]
        fan_in = max(kh * kw * c_in // (op.strides[0] * op.strides[1]), 1)
        consts, s = _weighted(rng, node, in_quant, in_std, fan_in, (op.filters, kh, kw, c_in), op.filters)
        return op, consts, s, _output_quant(s, op.activation)
    if isinstance(op, Dense):
        fan_in = math.prod(graph.shape_of(src))
        consts, s = _weighted(rng, node, in_quant, in_std, fan_in, (op.units, fan_in), op.units)
        return op, consts, s, _output_quant(s, op.activation)
    if isinstance(op, SquaredDifference):  # (a - b)^2 >= 0: the output quantised from 0 up
        s = math.hypot(in_std, std[node.inputs[1]]) ** 2
        return op, {}, s, _output_quant(s, "relu")
    if isinstance(op, (Add, Sub, Mul)):  # Mul covers the per-channel vector form too
        other = std[node.inputs[1]]
        s = in_std * other if isinstance(op, Mul) else math.hypot(in_std, other)
        return op, {}, s, _output_quant(s, op.activation)
    if isinstance(op, MaximumConst):  # a constant in the map's quantisation (which TFLite's kernel needs)
        operand = rng.integers(-127, 128, size=node.consts["operand"].shape, dtype=np.int8)
        op = replace(op, operand_scale=in_quant.scale, operand_zero_point=in_quant.zero_point)
        return op, {"operand": operand}, in_std, in_quant
    if isinstance(op, ConstOperand):  # x * c or x + c, c ~ uniform int8 at scale 1/64 (about +-2)
        operand = rng.integers(-127, 128, size=node.consts["operand"].shape, dtype=np.int8)
        op = replace(op, operand_scale=OPERAND_QUANT.scale, operand_zero_point=OPERAND_QUANT.zero_point)
        spread = OPERAND_QUANT.scale * _UNIFORM_INT8_STD
        s = in_std * spread if isinstance(op, MulConst) else math.hypot(in_std, spread)
        if isinstance(op, SquaredDifferenceConst):
            return op, {"operand": operand}, s * s, _output_quant(s * s, "relu")
        return op, {"operand": operand}, s, _output_quant(s, op.activation)
    if isinstance(op, Activation):
        return op, {}, in_std, _output_quant(in_std, op.activation)
    if isinstance(op, (HardSwish, LeakyRelu, Elu)):
        return op, {}, in_std, _output_quant(in_std, None)
    if isinstance(op, Tanh):
        return op, {}, 0.5, Quant(*TANH_OUTPUT_QUANT)
    if isinstance(op, Prelu):  # alpha ~ uniform int8 at scale 1/256 (about +-0.5)
        alpha = rng.integers(-128, 128, size=node.consts["alpha"].shape, dtype=np.int8)
        op = replace(op, alpha_scale=ALPHA_QUANT.scale, alpha_zero_point=ALPHA_QUANT.zero_point)
        return op, {"alpha": alpha}, in_std, _output_quant(in_std, None)
    if isinstance(op, Softmax):
        return op, {}, 0.25, SOFTMAX_QUANT
    if isinstance(op, Logistic):
        return op, {}, 0.25, SOFTMAX_QUANT  # TFLite's int8 LOGISTIC output, the same as SOFTMAX's
    # pooling, means, reshape, pad, transpose and concatenation keep their input's quantisation
    return op, {}, max(std[t] for t in node.inputs), in_quant


# Ops whose output quantisation TFLite fixes, and ops that choose their own.
_FIXED_QUANT = (Softmax, Logistic, Tanh)
_OWN_QUANT = (Conv2D, DepthwiseConv2D, Dense, Add, Sub, Mul, ConstOperand, Activation, HardSwish, LeakyRelu, Elu,
              Prelu, *_FIXED_QUANT)


def _shared_quant(graph: Graph) -> list[int]:
    """For each tensor, the earliest tensor that must have its quantisation: an op that keeps its
    input's (pooling, pad, ...) shares it with its input; a concatenation's inputs and output all
    share one (TFLite's int8 CONCATENATION requires it, and MAXIMUM / MINIMUM)."""
    parent = {t: t for t in range(NETWORK_INPUT, len(graph))}

    def root(t: int) -> int:
        while parent[t] != t:
            t = parent[t]
        return t

    for i, node in enumerate(graph.nodes):
        if isinstance(node.op, (Concat, Maximum)):  # MAXIMUM / MINIMUM compare raw values, as concat copies them
            tied = node.inputs
        elif isinstance(node.op, _OWN_QUANT) and not isinstance(node.op, MaximumConst):
            continue
        else:
            tied = node.inputs[:1]
        for t in tied:
            a, b = root(t), root(i)
            parent[max(a, b)] = min(a, b)
    return [root(i) for i in range(len(graph))]

"""The graph rewrite stage both frontends call: declared rules that replace what a converter is
about to append with an equal, cheaper form.

A converter does not append a node the stage may rewrite (a clamp, a channel regrouping, a batch
normalisation): it hands the stage a proposal, and `rewrite` applies the first rule that matches.
A rule answers with the IR tensor that now holds the result (a producer rewritten, or the source
itself), or with the node to append (`Append`), which the frontend appends as any other (binding
its output to the model's tensor, checking its type). The stage runs while the graph is
built, not after it: what a rule may do depends on the frontend's import state (how many readers
a tensor will have, which of the model's tensors it stands for), which only the frontend knows.
So the stage asks the frontend through `ImportState`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Mapping, Protocol

import numpy as np

from ..errors import UserError
from ..ir import NETWORK_INPUT, Graph, Quant, is_network_input
from ..ops import Conv2D, Dense, DepthwiseConv2D, GlobalAvgPool, Op, Requantize, Reshape, Window
from ..ops.activation import Activation
from ..ops.axis_mean import AxisMean
from ..ops.dequantize import Dequantize
from ..ops.quantize import Quantize
from ..ops.channel_gather import ChannelGather
from ..ops.transpose import Transpose


class ImportState(Protocol):
    """What the stage needs of a frontend's import."""

    graph: Graph

    def sole_reader(self, tensor: int) -> bool:
        """Whether the operator being converted is the only reader, now and to come, of an IR
        tensor (so that its producer may be rewritten)."""


# ---- proposals: what a converter hands the stage ------------------------------------------


@dataclass(frozen=True)
class Clamp:
    """A standalone RELU / RELU6 of `src` whose output has quantisation `quant`."""

    activation: str  # "relu" or "relu6"
    src: int
    quant: Quant | None


@dataclass(frozen=True)
class ChannelView:
    """IR tensor `src` with its channels regrouped into the trailing axes of `places`, which holds
    the source channel at each place: a channel shuffle under way (a RESHAPE that cuts the channels
    into groups, a TRANSPOSE of those axes, a RESHAPE back to one channel axis)."""

    src: int
    places: np.ndarray

    def reshaped(self, axes: tuple[int, ...]) -> "ChannelView":
        """The view with its channel axes reshaped to `axes` (the channels in the same order)."""
        return ChannelView(self.src, self.places.reshape(axes))

    def transposed(self, perm: list[int]) -> "ChannelView":
        """The view with its channel axes permuted (perm numbers the channel axes from 0)."""
        return ChannelView(self.src, self.places.transpose(perm))

    @property
    def is_open(self) -> bool:
        """Whether the channels are still in several axes (no IR tensor has that shape)."""
        return self.places.ndim > 1


@dataclass(frozen=True)
class MovedAxes:
    """IR tensor `src` seen with its axes moved, or axes of size 1 added or removed (a TRANSPOSE, a
    SQUEEZE or EXPAND_DIMS folded at import), read by an operator that needs it as a tensor of
    its own of shape `shape`. `layout` gives the IR axis of each of the view's axes; the IR axes
    it leaves out have size 1."""

    src: int
    layout: tuple[int, ...]
    shape: tuple[int, ...]


def in_byte_order(ir_shape: tuple[int, ...], layout: tuple[int, ...]) -> bool:
    """Whether a view (see MovedAxes) moves only axes of size 1: the same bytes in the same order."""
    moved = [a for a in layout if ir_shape[a] > 1]
    return moved == sorted(moved)


def unit_layout(ir_shape: tuple[int, ...], target: tuple[int, ...]) -> tuple[int, ...] | None:
    """The layout (see MovedAxes) that views an IR tensor as `target`, a shape with the IR shape's
    axes larger than 1 in their order and axes of size 1 anywhere: those larger than 1 in order,
    those of size 1 onto the IR's unused axes of size 1 in order. None if the IR tensor has too
    few axes."""
    large = [a for a, d in enumerate(ir_shape) if d != 1]
    units = [a for a, d in enumerate(ir_shape) if d == 1]
    if [ir_shape[a] for a in large] != [d for d in target if d != 1]:
        raise UserError(f"cannot view {'x'.join(map(str, ir_shape))} as {'x'.join(map(str, target)) or 'scalar'}")
    if len(target) > len(ir_shape):
        return None
    large_iter, unit_iter = iter(large), iter(units)
    return tuple(next(large_iter) if d != 1 else next(unit_iter) for d in target)


@dataclass(frozen=True)
class UnitAxes:
    """IR tensor `src` (maybe seen through a view, see MovedAxes) with axes of size 1 added or
    removed, to `shape`: a SQUEEZE / EXPAND_DIMS, an ONNX Squeeze / Unsqueeze, or a reshape that
    does no more. The axes of `shape` larger than 1 are the IR tensor's, in its order. `tensor()`
    gives the input as an IR tensor of its own shape (a view made into one first), called only by
    a rule that appends a node reading it."""

    src: int
    shape: tuple[int, ...]
    tensor: Callable[[], int]


@dataclass(frozen=True)
class Mean:
    """A MEAN over the axes `axes` of `view` (the view's own axes, batch excluded), each of them H
    or W of the IR map: the MEAN of a TRANSPOSE / SQUEEZE folded at import (or of a plain map over H
    or W alone). `keep` is keep_dims. `declared()` gives the output's declared shape; it is called
    only when a rule needs it (it may refuse a malformed tensor)."""

    view: MovedAxes
    axes: tuple[int, ...]
    keep: bool
    declared: Callable[[], tuple[int, ...]]

    @property
    def ir_axes(self) -> tuple[int, ...]:
        """The reduced axes of the IR map (0: H, 1: W)."""
        return tuple(sorted(self.view.layout[a] for a in self.axes))


@dataclass(frozen=True)
class BatchNorm:
    """An inference batch normalisation of `src`: (x - mean) * scale + beta per channel (scale =
    gamma / sqrt(var + epsilon)), in float64."""

    src: int
    scale: np.ndarray
    mean: np.ndarray
    beta: np.ndarray


@dataclass(frozen=True)
class BiasAdd:
    """An ADD of a float constant to `src`. `per_channel()` gives the constant as one float64 value
    per channel, or raises the frontend's error when the constant does not broadcast so; it is
    called only when the ADD folds."""

    src: int
    per_channel: Callable[[], np.ndarray]


@dataclass(frozen=True)
class Requantisation:
    """A QUANTIZE of `src` to the quantisation `quant`: of a quantised tensor, or of a float32 one
    inside the model (where a float island ends)."""

    src: int
    quant: Quant


@dataclass(frozen=True)
class InputQuantisation:
    """The QUANTIZE of a float32 model input `src` that nothing else reads, to `quant`."""

    src: int
    quant: Quant


@dataclass(frozen=True)
class Dequantisation:
    """A DEQUANTIZE of the quantised tensor `src`; `model_output` when its output is the model's
    only output and nothing else reads it."""

    src: int
    model_output: bool


@dataclass(frozen=True)
class Flatten:
    """The flattening of the map `src` into a vector, in the IR's (H, W, C) order."""

    src: int


Proposal = (Clamp | ChannelView | MovedAxes | UnitAxes | Mean | BatchNorm | BiasAdd | Requantisation | InputQuantisation
            | Dequantisation | Flatten)


@dataclass(frozen=True)
class Append:
    """A rule's answer: the node for the frontend to append. `layout`, when given, is a view of the
    node's output (see MovedAxes): the model's tensor is that output with its axes moved."""

    op: Op
    inputs: tuple[int, ...]
    consts: Mapping[str, np.ndarray] | None = None
    layout: tuple[int, ...] | None = None


# ---- the rules ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """A declared rewrite: its name, the proposal it matches and what it makes of it. `apply`
    answers the IR tensor that holds the proposal's result, the node to append for it, or None when
    the rule does not apply."""

    name: str
    matches: str
    produces: str
    proposal: type
    apply: Callable[[ImportState, Proposal], int | Append | MovedAxes | None]

    @property
    def doc(self) -> str:
        return self.apply.__doc__ or ""


CLAMP_ORDER = {None: 0, "relu": 1, "relu6": 2}  # a clamp after another gives the tighter one


def _producer_clamp(state: ImportState, src: int, quant: Quant | None):
    """The node producing `src` and its fused clamp, when the node's kernels apply one and its
    output has quantisation `quant` (a clamp then only bounds values, as a fused one does)."""
    if is_network_input(src):
        return None, None
    node = state.graph.nodes[src]
    if not node.op.takes_clamp() or node.quant != quant:
        return None, None
    return node, node.op.activation


def _clamp_already_applied(state: ImportState, p: Clamp) -> int | None:
    """The producer's own fused clamp is as tight (RELU after RELU6): the clamp changes no value."""
    node, current = _producer_clamp(state, p.src, p.quant)
    if node is None or CLAMP_ORDER[current] < CLAMP_ORDER[p.activation]:
        return None
    return p.src


def _fold_clamp(state: ImportState, p: Clamp) -> int | None:
    """The producer, read by nothing else, applies the clamp as its fused activation (bit-exact:
    one quantisation, so the clamp only bounds the producer's values)."""
    node, current = _producer_clamp(state, p.src, p.quant)
    if node is None or not state.sole_reader(p.src):
        return None
    combined = max(current, p.activation, key=CLAMP_ORDER.__getitem__)
    state.graph.nodes[p.src] = replace(node, op=replace(node.op, activation=combined))
    return p.src


def _standalone_clamp(state: ImportState, p: Clamp) -> Append:
    """An activation node of its own (after the network input, or on a tensor with other readers)."""
    return Append(Activation(p.activation), (p.src,))


def _shuffle_to_gather(state: ImportState, view: ChannelView) -> int | Append | None:
    """A channel shuffle regrouped back into one channel axis: one channel gather, or no node when
    the channels are back in order. (While the channels are in several axes there is no node.)"""
    if view.is_open:
        return None
    order = view.places.reshape(-1).tolist()
    if order == list(range(len(order))):
        return view.src
    return Append(ChannelGather(tuple(order)), (view.src,))


def _moved_axes_as_reshape(state: ImportState, view: MovedAxes) -> int | Append | None:
    """Only axes of size 1 moved: the tensor itself, or a reshape (no copy) to the view's shape."""
    if not in_byte_order(state.graph.shape_of(view.src), view.layout):
        return None
    return view.src if state.graph.shape_of(view.src) == view.shape else Append(Reshape(view.shape), (view.src,))


def _moved_axes_as_transpose(state: ImportState, view: MovedAxes) -> Append | None:
    """A map's H, W and C moved: a transpose node (unfused: it needs its whole input), of which the
    view is then the plain tensor. None (refused) for a view of more axes."""
    return Append(Transpose(view.layout), (view.src,)) if len(view.layout) == 3 else None


def _unit_axes_as_the_tensor(state: ImportState, p: UnitAxes) -> int | None:
    """The IR tensor has the shape already (a Squeeze undoing an Unsqueeze): no node."""
    return p.src if state.graph.shape_of(p.src) == p.shape else None


def _unit_axes_as_a_view(state: ImportState, p: UnitAxes) -> MovedAxes | None:
    """No more axes than the IR tensor: a view of it (no node), which a reader that needs a tensor
    of its own gets through the MovedAxes rules, and a window op or MEAN reads as it is."""
    layout = unit_layout(state.graph.shape_of(p.src), p.shape)
    return None if layout is None else MovedAxes(p.src, layout, p.shape)


def _unit_axes_as_reshape(state: ImportState, p: UnitAxes) -> Append:
    """More axes than the IR tensor: a reshape node (no copy) of the input."""
    return Append(Reshape(p.shape), (p.tensor(),))


def _mean_over_every_position(state: ImportState, p: Mean) -> Append | None:
    """Over every position of a map whose view moves only axes of size 1 (GlobalAveragePooling1D
    of a squeezed sequence), to the channels alone: a global average pool without keep_dims, the
    same arithmetic, which streams as a tail."""
    ir_shape = state.graph.shape_of(p.view.src)
    if not in_byte_order(ir_shape, p.view.layout):
        return None
    if set(p.ir_axes) | {a for a in (0, 1) if ir_shape[a] == 1} != {0, 1} or p.declared() != ir_shape[2:]:
        return None
    return Append(GlobalAvgPool(False), (p.view.src,))


def _mean_of_the_ir_map(state: ImportState, p: Mean) -> Append:
    """The mean over the IR axes the view's reduced axes name, on the IR map itself (no transpose
    node); the output is the mean's output seen with the view's remaining (or kept) axes."""
    layout = p.view.layout
    kept = layout if p.keep else tuple(a for i, a in enumerate(layout) if i not in p.axes)
    return Append(AxisMean.over(p.ir_axes, state.graph.shape_of(p.view.src)), (p.view.src,), layout=kept)


def _affine_producer(state: ImportState, src: int):
    """The node producing `src` when a per-channel affine map after it folds into its weights and
    bias: a conv / depthwise / dense with no activation and no other reader; else None."""
    if is_network_input(src):
        return None
    node = state.graph.nodes[src]
    if not isinstance(node.op, (Conv2D, DepthwiseConv2D, Dense)) or node.op.activation is not None:
        return None
    return node if state.sole_reader(src) else None


def _fold_batch_norm(state: ImportState, bn: BatchNorm) -> int | None:
    """Into the conv / depthwise / dense producing its input, with no activation and no other
    reader: w' = w * scale, b' = (b - mean) * scale + beta, in float64, then float32."""
    node = _affine_producer(state, bn.src)
    if node is None:
        return None
    weights, bias = node.consts["weights"].astype(np.float64), node.consts["bias"].astype(np.float64)
    out_axis = weights.ndim - 1 if isinstance(node.op, DepthwiseConv2D) else 0
    per_channel = bn.scale.reshape([-1 if a == out_axis else 1 for a in range(weights.ndim)])
    folded = float32(weights=weights * per_channel, bias=(bias - bn.mean) * bn.scale + bn.beta)
    state.graph.nodes[bn.src] = replace(node, consts={**node.consts, **folded})
    return bn.src


def _batch_norm_as_depthwise(state: ImportState, bn: BatchNorm) -> Append:
    """Standalone on a map: a 1x1 depthwise convolution computes the same affine map per channel."""
    if len(state.graph.shape_of(bn.src)) != 3:
        raise UserError("batch normalisation of a vector is only supported right after Gemm/MatMul")
    channels = bn.scale.size
    consts = float32(weights=bn.scale.reshape(1, 1, 1, channels), bias=(0.0 - bn.mean) * bn.scale + bn.beta)
    return Append(DepthwiseConv2D(Window((1, 1))), (bn.src,), consts)


def _fold_bias_add(state: ImportState, p: BiasAdd) -> int | None:
    """Into the bias of the conv / depthwise / dense producing its input, with no activation and no
    other reader: b' = b + constant, in float64, then float32."""
    node = _affine_producer(state, p.src)
    if node is None:
        return None
    bias = node.consts["bias"].astype(np.float64) + p.per_channel()
    state.graph.nodes[p.src] = replace(node, consts={**node.consts, **float32(bias=bias)})
    return p.src


def _quantise_at_the_caller(state: ImportState, p: InputQuantisation) -> int | None:
    """No node: the graph's input takes the quantisation, and the graph's caller quantises its
    float32 values (Graph.float_input)."""
    if not is_network_input(p.src) or state.graph.quant_of(p.src) is not None:
        return None
    set_input_quant(state.graph, p.src, p.quant)
    state.graph.float_input = True
    return p.src


def set_input_quant(graph: Graph, tensor: int, quant: Quant) -> None:
    """Give a model input (its IR tensor) its quantisation."""
    k = NETWORK_INPUT - tensor
    if k == 0:
        graph.input_quant = quant
    else:
        extra = list(graph.extra_inputs)
        extra[k - 1] = replace(extra[k - 1], quant=quant)
        graph.extra_inputs = tuple(extra)


def _end_float_island(state: ImportState, p: Requantisation) -> Append | None:
    """A float32 tensor inside the model: a quantize node (where a float island ends)."""
    if not state.graph.element_of(p.src).is_float:
        return None
    return Append(Quantize(state.graph.shape_of(p.src)), (p.src,))


def _dequantise_at_the_caller(state: ImportState, p: Dequantisation) -> int | None:
    """No node: the graph's caller dequantises its output (Graph.float_output)."""
    if not p.model_output or is_network_input(p.src):
        return None
    state.graph.float_output = True
    return p.src


def _dequantise(state: ImportState, p: Dequantisation) -> Append:
    """A dequantize node: a float island begins."""
    return Append(Dequantize(state.graph.shape_of(p.src)), (p.src,))


def _drop_noop_requantisation(state: ImportState, p: Requantisation) -> int | None:
    """The tensor already has the quantisation: no node."""
    return p.src if state.graph.quant_of(p.src) == p.quant else None


def _requantise(state: ImportState, p: Requantisation) -> Append:
    """A requantize node (the frontend binds its output to the quantisation asked)."""
    return Append(Requantize(), (p.src,))


def _flatten_into_mean(state: ImportState, p: Flatten) -> int | None:
    """A float32 global average pool with keep_dims, read by nothing else, drops the kept axes (a
    float mean divides the same way either way; an int8 MEAN's keep_dims picks its arithmetic)."""
    if is_network_input(p.src):
        return None
    node = state.graph.nodes[p.src]
    if (not isinstance(node.op, GlobalAvgPool) or not node.op.keepdims or node.op.pool
            or not state.graph.element_of(p.src).is_float or not state.sole_reader(p.src)):
        return None
    op = replace(node.op, keepdims=False)
    shape = tuple(int(d) for d in op.output_shape(state.graph.input_shapes(p.src)))
    state.graph.nodes[p.src] = replace(node, op=op, shape=shape)
    return p.src


def _flatten_as_reshape(state: ImportState, p: Flatten) -> Append:
    """A reshape node (no copy)."""
    return Append(Reshape((int(np.prod(state.graph.shape_of(p.src))),)), (p.src,))


def float32(**arrays: np.ndarray) -> dict[str, np.ndarray]:
    """Constants by role, as float32 (computed in float64 where folded)."""
    with np.errstate(over="ignore", invalid="ignore"):
        consts = {role: np.ascontiguousarray(a, dtype=np.float32) for role, a in arrays.items()}
    for role, array in consts.items():
        if not np.isfinite(array).all():
            raise UserError(f"the {role} overflow float32")
    return consts


RULES: tuple[Rule, ...] = (
    Rule("clamp_already_applied", "RELU / RELU6 of an op whose fused clamp is as tight, in one quantisation",
         "no node: the op's output", Clamp, _clamp_already_applied),
    Rule("fold_clamp", "RELU / RELU6 of the sole reader of an op with a fused clamp, in one quantisation",
         "the op with the tighter fused clamp", Clamp, _fold_clamp),
    Rule("standalone_clamp", "any other RELU / RELU6", "an activation node", Clamp, _standalone_clamp),
    Rule("shuffle_to_gather", "RESHAPE into channel groups, TRANSPOSE of the groups, RESHAPE back",
         "one channel_gather node (none for the identity)", ChannelView, _shuffle_to_gather),
    Rule("moved_axes_as_reshape", "a TRANSPOSE / SQUEEZE / EXPAND_DIMS folded at import, moving only axes "
         "of size 1, read by an operator that needs its own tensor", "no node, or a reshape node (no copy)",
         MovedAxes, _moved_axes_as_reshape),
    Rule("moved_axes_as_transpose", "the same, moving H, W or C", "a transpose node", MovedAxes,
         _moved_axes_as_transpose),
    Rule("unit_axes_as_the_tensor", "SQUEEZE / EXPAND_DIMS / Squeeze / Unsqueeze to the IR tensor's own shape",
         "no node: the tensor itself", UnitAxes, _unit_axes_as_the_tensor),
    Rule("unit_axes_as_a_view", "any other SQUEEZE / EXPAND_DIMS / Squeeze / Unsqueeze to no more axes than the "
         "IR tensor has", "no node: a view of the tensor (MovedAxes)", UnitAxes, _unit_axes_as_a_view),
    Rule("unit_axes_as_reshape", "SQUEEZE / EXPAND_DIMS / Squeeze / Unsqueeze to more axes than the IR tensor has",
         "a reshape node", UnitAxes, _unit_axes_as_reshape),
    Rule("mean_over_every_position", "MEAN over every position of a sequence whose SQUEEZE / EXPAND_DIMS was "
         "folded at import, to the channels alone", "a global_avg_pool node without keep_dims", Mean,
         _mean_over_every_position),
    Rule("mean_of_the_ir_map", "any other MEAN over H and / or W of a view (a TRANSPOSE, SQUEEZE or "
         "EXPAND_DIMS folded at import), or over H or W alone", "an axis_mean node of the IR map, its output "
         "seen in the view's layout", Mean, _mean_of_the_ir_map),
    Rule("fold_batch_norm", "BatchNormalization of the sole reader of a conv / depthwise / dense without "
         "activation", "the producer with scaled weights and shifted bias", BatchNorm, _fold_batch_norm),
    Rule("batch_norm_as_depthwise", "any other BatchNormalization of a map", "a 1x1 depthwise_conv2d node",
         BatchNorm, _batch_norm_as_depthwise),
    Rule("fold_bias_add", "ADD of a float constant, the sole reader of a conv / depthwise / dense without "
         "activation", "the producer with the constant added to its bias", BiasAdd, _fold_bias_add),
    Rule("quantise_at_the_caller", "QUANTIZE of a float32 model input that nothing else reads",
         "no node: the graph's quantised input, which its caller quantises", InputQuantisation,
         _quantise_at_the_caller),
    Rule("end_float_island", "QUANTIZE of a float32 tensor inside the model", "a quantize node",
         Requantisation, _end_float_island),
    Rule("dequantise_at_the_caller", "DEQUANTIZE to the model's only output, read by nothing else",
         "no node: the graph's output, which its caller dequantises", Dequantisation, _dequantise_at_the_caller),
    Rule("dequantise", "any other DEQUANTIZE", "a dequantize node", Dequantisation, _dequantise),
    Rule("drop_noop_requantisation", "QUANTIZE of a quantised tensor to its own quantisation",
         "no node: the tensor itself", Requantisation, _drop_noop_requantisation),
    Rule("requantise", "any other QUANTIZE of a quantised tensor", "a requantize node", Requantisation,
         _requantise),
    Rule("flatten_into_mean", "Flatten of the sole reader of a float32 global average pool with keep_dims",
         "the pool without keep_dims", Flatten, _flatten_into_mean),
    Rule("flatten_as_reshape", "any other Flatten of a map", "a reshape node", Flatten, _flatten_as_reshape),
)


def rewrite(state: ImportState, proposal: Proposal) -> int | Append | MovedAxes | None:
    """The IR tensor holding the proposal's result, the node to append for it, or (for UnitAxes)
    a view for the frontend to keep, from the first rule that applies to it (in RULES' order).
    None when no rule applies: an open channel view stays with the frontend, and an ADD of a
    constant that does not fold is the frontend's own."""
    for rule in RULES:
        if isinstance(proposal, rule.proposal):
            tensor = rule.apply(state, proposal)
            if tensor is not None:
                return tensor
    return None


def rules_for(proposal: type) -> Mapping[str, Rule]:
    """The rules that match one kind of proposal, by name (for tests and listings)."""
    return {rule.name: rule for rule in RULES if rule.proposal is proposal}

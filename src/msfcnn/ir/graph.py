"""The graph IR: ops in topological order, each producing one tensor.

Tensors are named by the index of the node that produces them; `NETWORK_INPUT` (-1) is the
network input, and a model with several inputs names its input k (k >= 1) -1 - k
(`Graph.input_tensor`, `Graph.extra_inputs`): every negative tensor is a network input. A node's first input is its main path; an add's second input is the residual
(skip) tensor. Cut `c` is the point between node c-1 and node c (cut 0 is before the first op,
cut N after the last); the fusion DAG's nodes are these cuts.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from math import prod
from typing import Mapping

import numpy as np

from .. import numerics as nx
from ..errors import UserError
from ..ops import KernelContext, Op, Shape
from .elements import ELEMENT_TYPES, ElementType

NETWORK_INPUT = -1


@dataclass(frozen=True)
class Quant:
    """Affine int8 quantisation of an activation tensor: real = scale * (q - zero_point)."""

    scale: float
    zero_point: int


@dataclass(frozen=True)
class GraphInput:
    """One more input of a model with several (input 0 is the Graph's own input_* fields): an
    (H, W, C) map of the graph's element type, like input 0 in everything but its shape and
    quantisation. `declared_shape` is the shape the model file gives it, batch included."""

    shape: Shape
    quant: Quant | None = None
    declared_shape: tuple[int, ...] | None = None


STATE_ALIGNMENT = 4  # bytes each state buffer starts at a multiple of (int32 states may come)


@dataclass(frozen=True, eq=False)
class StateBuffer:
    """A tensor that outlives an invocation (a TFLite variable tensor: SVDF's activation state, an
    LSTM's cell and output states): the op `owner` reads and writes it in place, and the next
    invocation sees what it left. It starts as `initial` (its element type and shape), and again
    after a reset (`msfcnn_reset_state`). It lives in the arena's persistent region, apart from the
    buffers the plan reuses (see docs/architecture.md, "State across invocations")."""

    owner: int  # the node that reads and writes it
    name: str  # its role for the owner ("activation_state", "cell_state", ...)
    initial: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(self.initial.nbytes)


def input_tensor(k: int) -> int:
    """The tensor of the model's input k (0: NETWORK_INPUT)."""
    return NETWORK_INPUT - k


def is_network_input(tensor: int) -> bool:
    return tensor < 0


@dataclass(frozen=True, eq=False)
class Node:
    op: Op
    inputs: tuple[int, ...]
    shape: Shape
    # Constant tensors the op reads, by role: "weights", "bias", "weight_scales" (per output channel).
    consts: Mapping[str, np.ndarray] = field(default_factory=dict)
    quant: Quant | None = None  # the output's quantisation; None for float32 tensors
    # The output's element type when it differs from the graph's (Graph.dtype): the tensors of a
    # float island in an int8 graph (after a DEQUANTIZE, up to its QUANTIZE). None: Graph.dtype.
    dtype: str | None = None


@dataclass
class Graph:
    """A network; the last node's tensor is the output (one of them, see `outputs`), the input
    `input_shape` (one of them, see `extra_inputs`).

    `dtype` is the network input's element type and that of every tensor whose node does not name
    another (`Node.dtype`): "int8" (TFLite, layer lists, built-ins), "int16" (16x8 TFLite) or
    "float32" (ONNX, float32 TFLite). A DEQUANTIZE or QUANTIZE node changes the type of the tensors
    after it (ops' `output_element`), so int8 and float32 tensors may share one graph.
    `input_quant` is None for float32 graphs, and for int8 graphs that have no weights yet (a
    layer list planned without running it). `layout` is the layout of the model's own input and
    output ("NHWC" for TFLite and layer lists, "NCHW" for ONNX); inside the graph every feature
    map is (H, W, C).
    """

    name: str
    input_shape: Shape
    nodes: list[Node] = field(default_factory=list)
    input_quant: Quant | None = None
    layout: str = "NHWC"
    dtype: str = "int8"
    # An int8 graph whose caller passes float32 in / gets float32 out (a TFLite model with
    # QUANTIZE / DEQUANTIZE at its edges): the input is quantised with `input_quant` and the
    # output dequantised with `output_quant` outside the graph's nodes.
    float_input: bool = False
    float_output: bool = False
    # A uint8 TFLite model (TF1-era asymmetric quantisation): its uint8 tensors are int8 inside the
    # graph (q - 128, zero point - 128: the same real values), and the caller passes uint8 in /
    # gets uint8 out, shifted by 128 at the edges (executor.to_internal / to_model_layout).
    uint8_input: bool = False
    uint8_output: bool = False
    # The input shape the model file declares, batch included (a TFLite model's [1, 490] that the
    # graph takes as the 49 x 10 x 1 map it reshapes it to): callers may pass inputs in it too.
    declared_input_shape: tuple[int, ...] | None = None
    # Whose int8 kernels the graph's arithmetic is bit-exact with: "litert" (the TFLite
    # interpreter's optimized x86-64 kernels) or "tflm" (TFLite Micro, TFLite's reference kernels);
    # see numerics.NUMERICS. Every kernel reads it from its KernelContext.
    numerics: str = "litert"
    # The model's outputs in the model's own order, when it has several (a detector's heads):
    # tensors (node indices) that the last node's is one of. Empty: the last node's tensor alone.
    # The last node's tensor is `output`, the one the caller's buffer receives; the others stay
    # in the arena until the network ends (see docs/c-api.md).
    outputs: tuple[int, ...] = ()
    # The model's inputs after the first, in the model's order: input k is tensor -1 - k. They
    # are the caller's buffers, like input 0 (arena buffers under --count-io), and follow input
    # 0's edge conversions (float_input, uint8_input, layout). Empty: a single-input model.
    extra_inputs: tuple[GraphInput, ...] = ()
    # The state buffers (variable tensors) of the stateful ops, in the order the persistent region
    # holds them: see StateBuffer. Empty: every invocation starts afresh.
    states: tuple[StateBuffer, ...] = ()
    # numerics -> why that runtime cannot run the model at all (a graph-wide fact a frontend saw:
    # TFLite Micro allocates no dynamic tensor); with_numerics refuses it in one line.
    refused_numerics: dict[str, str] = field(default_factory=dict)

    def add_state(self, owner: int, name: str, initial: np.ndarray) -> int:
        """Give node `owner` a state buffer starting as `initial`; returns its index in `states`."""
        self.states += (StateBuffer(owner, name, np.array(initial)),)
        return len(self.states) - 1

    def states_of(self, owner: int) -> tuple[int, ...]:
        """The indices (in `states`) of node `owner`'s state buffers, in the order it added them."""
        return tuple(i for i, s in enumerate(self.states) if s.owner == owner)

    def state_offsets(self) -> tuple[int, ...]:
        """Each state buffer's offset in the persistent region (every one at a multiple of
        STATE_ALIGNMENT)."""
        offsets, at = [], 0
        for state in self.states:
            offsets.append(at)
            at += aligned(state.nbytes, STATE_ALIGNMENT)
        return tuple(offsets)

    @property
    def state_bytes(self) -> int:
        """Bytes of the persistent region: every state buffer, each rounded up to STATE_ALIGNMENT.
        Every RAM figure counts them: they are at the start of the arena for the whole run."""
        return sum(aligned(s.nbytes, STATE_ALIGNMENT) for s in self.states)

    @property
    def input_tensors(self) -> tuple[int, ...]:
        """Every input's tensor, in the model's order (NETWORK_INPUT first)."""
        return tuple(input_tensor(k) for k in range(1 + len(self.extra_inputs)))

    def input_spec(self, k: int) -> GraphInput:
        """Input k's shape, quantisation and declared shape."""
        if k == 0:
            return GraphInput(self.input_shape, self.input_quant, self.declared_input_shape)
        return self.extra_inputs[k - 1]

    # (number of nodes, alignment) when `alignment` was last worked out: nodes are only appended.
    _alignment: tuple[int, int] = field(default=(-1, 1), init=False, repr=False, compare=False)

    @property
    def output_quant(self) -> Quant | None:
        return self.nodes[-1].quant

    @property
    def output_tensors(self) -> tuple[int, ...]:
        """Every output's tensor, in the model's order."""
        return self.outputs or (len(self.nodes) - 1,)

    @property
    def extra_outputs(self) -> tuple[int, ...]:
        """The outputs besides `output`: arena tensors that live until the end."""
        return tuple(t for t in self.output_tensors if t != self.output)

    def quant_of(self, tensor: int) -> Quant | None:
        return self.input_spec(NETWORK_INPUT - tensor).quant if tensor < 0 else self.nodes[tensor].quant

    def __len__(self) -> int:
        return len(self.nodes)

    def shape_of(self, tensor: int) -> Shape:
        return self.input_spec(NETWORK_INPUT - tensor).shape if tensor < 0 else self.nodes[tensor].shape

    @property
    def element(self) -> ElementType:
        """The network input's element type (numpy type, bytes, C type, kernel suffix), which is
        every tensor's unless the graph mixes types (see `element_of`)."""
        return ELEMENT_TYPES[self.dtype]

    def dtype_of(self, tensor: int) -> str:
        """The element type's name of a tensor (the network input's is `dtype`)."""
        return self.dtype if is_network_input(tensor) else self.nodes[tensor].dtype or self.dtype

    def element_of(self, tensor: int) -> ElementType:
        return ELEMENT_TYPES[self.dtype_of(tensor)]

    def kernel_element(self, index: int) -> ElementType:
        """The element type whose kernel runs node `index` (its C suffix): its first input's, which
        is its output's except for a type conversion (DEQUANTIZE runs an int8 kernel)."""
        node = self.nodes[index]
        return self.element_of(node.inputs[0]) if node.inputs else self.element_of(index)

    @property
    def mixed(self) -> bool:
        """True when tensors of more than one element type share the graph (a float island)."""
        return any(node.dtype is not None for node in self.nodes)

    @property
    def alignment(self) -> int:
        """Bytes every arena buffer is a multiple of, so that each lies at an offset its element
        type may be read from: the widest element's size. A no-op for a graph of one type, whose
        sizes are multiples of its element's already; a mixed graph's int8 tensors are rounded up."""
        known, alignment = self._alignment
        if known != len(self.nodes):
            alignment = max(self.element_of(t).nbytes for t in range(NETWORK_INPUT, len(self.nodes))) \
                if self.mixed else 1
            self._alignment = (len(self.nodes), alignment)
        return alignment

    @property
    def output(self) -> int:
        """The network output's tensor (the last node's)."""
        return len(self.nodes) - 1

    def elements(self, tensor: int) -> int:
        """Number of elements of a tensor."""
        return prod(self.shape_of(tensor))

    def nbytes(self, tensor: int) -> int:
        """Bytes of a tensor's values (elements x its element's size)."""
        return self.elements(tensor) * self.element_of(tensor).nbytes

    def arena_bytes(self, tensor: int) -> int:
        """Bytes a tensor takes in the arena: `nbytes` rounded up to the graph's `alignment`."""
        return aligned(self.nbytes(tensor), self.alignment)

    def last_use(self) -> dict[int, int]:
        """The index of each tensor's last reader; the network outputs outlive every op (len(self))."""
        last = {t: i for i, node in enumerate(self.nodes) for t in node.inputs}
        for t in self.output_tensors:
            last[t] = len(self.nodes)
        return last

    def kernel_context(self, index: int) -> KernelContext:
        """What node `index`'s kernels need besides their inputs: constants and quantisation."""
        node = self.nodes[index]
        return KernelContext(node.consts, tuple(self.quant_of(t) for t in node.inputs), node.quant, self.numerics,
                             self.kernel_element(index).name)

    def input_shapes(self, index: int) -> list[Shape]:
        return [self.shape_of(t) for t in self.nodes[index].inputs]

    def macs(self, index: int) -> int:
        node = self.nodes[index]
        return node.op.macs(self.input_shapes(index), node.shape)

    def is_chain(self) -> bool:
        """True when every op reads only the output of the op before it."""
        return all(node.inputs == (i - 1,) for i, node in enumerate(self.nodes))

    def append(self, op: Op, inputs: tuple[int, ...], consts: Mapping[str, np.ndarray] | None = None,
               quant: Quant | None = None) -> int:
        """Add a node reading `inputs`; infer its shape. Returns the new tensor's index."""
        index = len(self.nodes)
        for t in inputs:
            if not -len(self.input_tensors) <= t < index:
                raise UserError(f"layer {index} ({op.kind}) reads tensor {t}, which is not an earlier layer")
        try:
            shape = op.output_shape([self.shape_of(t) for t in inputs])
        except UserError as err:
            raise UserError(f"layer {index} ({op.kind}): {err}") from None
        if min(shape, default=1) <= 0:
            raise UserError(f"layer {index} ({op.kind}) has an empty output {list(shape)}")
        kinds = {self.dtype_of(t) for t in inputs}
        if len(kinds) > 1:
            raise UserError(f"layer {index} ({op.kind}) reads tensors of different element types "
                            f"({', '.join(sorted(kinds))})")
        dtype = op.output_element(self.dtype_of(inputs[0]) if inputs else self.dtype)
        self.nodes.append(Node(op, tuple(inputs), tuple(int(d) for d in shape), dict(consts or {}), quant,
                               None if dtype == self.dtype else dtype))
        return index


def aligned(size: int, alignment: int) -> int:
    """`size` rounded up to a multiple of `alignment`."""
    return -(-size // alignment) * alignment


def check_numerics(numerics: str) -> None:
    """A UserError unless `numerics` is one of numerics.NUMERICS."""
    if numerics not in nx.NUMERICS:
        raise UserError(f"unknown numerics {numerics!r}: expected one of {', '.join(nx.NUMERICS)}")


def with_numerics(graph: Graph, numerics: str) -> Graph:
    """`graph` (freshly loaded) set to follow `numerics`' int8 kernels (numerics.NUMERICS)."""
    check_numerics(numerics)
    if numerics == nx.TFLM and (graph.uint8_input or graph.uint8_output):
        # TFLite Micro has no uint8 kernels: it refuses such models when it allocates them.
        raise UserError(f"{graph.name} is a uint8 model, which TFLite Micro does not run: it has no tflm "
                        "numerics to follow (use the default, litert)")
    if numerics in graph.refused_numerics:
        raise UserError(f"{graph.name}: {graph.refused_numerics[numerics]}: it has no {numerics} numerics to follow "
                        "(use the default, litert)")
    for index, node in enumerate(graph.nodes):
        reason = node.op.refused_under(numerics)
        if reason:
            other = "the default, litert" if numerics != nx.LITERT else "--numerics tflm"
            raise UserError(f"{graph.name}: op {index} ({node.op.describe()}): {reason}: it has no {numerics} "
                            f"numerics to follow (use {other})")
    graph.numerics = numerics
    graph.nodes = [replace(node, op=node.op.for_numerics(graph.kernel_context(i), node.shape))
                   for i, node in enumerate(graph.nodes)]
    return graph

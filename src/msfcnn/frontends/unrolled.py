"""Unrolled recurrent layers (Keras' GRU with `unroll=True`) run one time step at a time.

TensorFlow's converter writes each step of such a layer out: an UNPACK gives the input's steps,
each step's FULLY_CONNECTED, gates and element-wise ops compute its hidden state, and a PACK
stacks the hidden states in time. Imported in the file's order, every layer runs all its steps
before the next layer starts, so a stack holds each inner sequence whole.

Two rewrites make the same ops run step-major, their numerics unchanged (every op is the file's):

- a step of a PACK that an UNPACK reads again (the next layer of a stack) is the packed hidden
  state itself (`UnrolledSteps.unpacked`): the stacked sequence is then read by no op, and pruned;
- the nodes are reordered by the latest input step each depends on (`step_major`). Step t of
  every layer then runs before step t + 1 of any, and between steps only the hidden states and
  the output's stack are live. A pack step runs right after the hidden state it stores.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from math import prod

from .. import numerics as nx
from ..ir import Graph, Node
from ..ops.add import Add
from ..ops.add_litert import VECTOR_BLOCK
from ..ops.channel_slice import ChannelSlice
from ..ops.conv2d import Conv2D
from ..ops.dequantize import Dequantize
from ..ops.pack_step import PackStep
from ..ops.reshape import Reshape


@dataclass
class UnrolledSteps:
    """What the importer saw of unrolled steps: the IR tensors a PACK stacked, by the IR tensor of
    its stack, and the step of each UNPACK output (TFLite tensor -> step). A model with a
    REVERSE_V2 (Keras' Bidirectional) keeps the file's order and concatenations: its backward
    layer reads the steps from the last, so interleaving it with the forward one (or filling its
    stack from the first step) holds more than the file's order does."""

    bidirectional: bool = False
    maps: bool = False  # the steps are maps (a ConvLSTM written step by step): see step_major's `late`
    packed: dict[int, tuple[int, ...]] = field(default_factory=dict)
    step_of: dict[int, int] = field(default_factory=dict)

    def unpacked(self, graph: Graph, source: int, steps: int) -> tuple[int, ...] | None:
        """The packed steps an UNPACK of IR tensor `source` into `steps` parts gives: the PACK's
        inputs, when `source` is that PACK's stack seen through reshapes (the same bytes)."""
        while source >= 0 and source not in self.packed and isinstance(graph.nodes[source].op, Reshape):
            source = graph.nodes[source].inputs[0]
        parts = self.packed.get(source)
        return parts if parts is not None and len(parts) == steps else None


def step_major(graph: Graph, steps: dict[int, int], late: bool = False) -> Graph:
    """The graph without the nodes no output reads, its nodes in the order of the latest step
    (`steps`: IR tensor -> the input step it is) each depends on, then of the file. A node
    depends on no later step than its inputs' latest, so the order stays topological.

    `late` (steps that are maps): a node runs in the step of its first reader, as a recurrent
    convolution of the last step's state joins its step's input convolution. A step's input slice
    opens its step, so that nothing between the two convolutions breaks their stream."""
    live = _live(graph)
    latest: dict[int, int] = {}
    at: dict[int, float] = {}  # the place in the file a node's order follows
    for t, node in enumerate(graph.nodes):
        latest[t] = max([steps.get(t, 0)] + [latest.get(u, 0) for u in node.inputs])
        # a pack step right after its step's hidden state, which it frees (a PACK comes after all of them)
        at[t] = max(at[u] for u in node.inputs) + 0.5 if isinstance(node.op, PackStep) else t
    opening = _step_inputs(graph, steps) if late else set()
    group = _as_late_as_read(graph, live, latest) if late else latest
    order = sorted((t for t in range(len(graph.nodes)) if t in live),
                   key=lambda t: (group[t], t not in opening, at[t]))
    if late:
        order = [t for step in sorted(set(group[t] for t in order))
                 for t in _depth_first(graph, [t for t in order if group[t] == step], opening)]
    if order == list(range(len(graph.nodes))):
        return graph
    new = {old: k for k, old in enumerate(order)}
    new.update({t: t for t in graph.input_tensors})
    graph.nodes = [replace(graph.nodes[old], inputs=tuple(new[u] for u in graph.nodes[old].inputs)) for old in order]
    graph.outputs = tuple(new[t] for t in graph.outputs)
    graph.states = tuple(replace(s, owner=new[s.owner]) for s in graph.states)
    return graph


def _depth_first(graph: Graph, members: list[int], opening: set[int]) -> list[int]:
    """One step's nodes: its input slices first, then each node just before the first that reads
    it, from each node no other of the step reads, its inputs depth first, the input with more of
    the step behind it first. A gate's convolutions, their sum, its activation and the product
    that reads it are then neighbours that one stream can take."""
    inside = set(members)
    behind: dict[int, set[int]] = {}  # the step's nodes each node depends on, itself included
    for t in members:  # in a topological order
        behind[t] = {t}.union(*(behind[u] for u in graph.nodes[t].inputs if u in inside))
    read_inside = {u for t in members for u in graph.nodes[t].inputs}
    order: list[int] = []
    done: set[int] = set()
    for root in [t for t in members if t in opening] + [t for t in members if t not in read_inside]:
        stack = [(root, False)]
        while stack:
            t, expanded = stack.pop()
            if t in done or t not in inside:
                continue
            if expanded:
                done.add(t)
                order.append(t)
                continue
            stack.append((t, True))
            inputs = sorted((u for u in graph.nodes[t].inputs if u in inside), key=lambda u: len(behind[u]))
            stack.extend((u, False) for u in inputs)  # the largest is popped first
    return order + [t for t in members if t not in done]


def _step_inputs(graph: Graph, steps: dict[int, int]) -> set[int]:
    """The step nodes made of the network input alone (its slice, the view of it as a map)."""
    found: set[int] = set()
    for t in sorted(steps):
        if t >= 0 and all(u < 0 or u in found for u in graph.nodes[t].inputs):
            found.add(t)
    return found


def _as_late_as_read(graph: Graph, live: set[int], latest: dict[int, int]) -> dict[int, int]:
    """Each node's step: the earliest latest step of its readers (its own latest for an output, and
    for a pack step, which frees the state it stores). Never before its own, nor after any reader's."""
    read: dict[int, int] = {}
    for t, node in enumerate(graph.nodes):
        for u in node.inputs:
            if t in live:
                read[u] = min(read.get(u, latest[t]), latest[t])
    outputs = set(graph.output_tensors)
    return {t: latest[t] if t in outputs or t not in read or isinstance(graph.nodes[t].op, PackStep) else read[t]
            for t in range(len(graph.nodes))}


def split_gates(graph: Graph) -> dict[int, int]:
    """A ConvLSTM cell written with one convolution for its four gates (or one of its input and
    one of its state, added) slices the gates' channels apart: each slice becomes the convolutions
    of its own channels (and their sum), so that no op holds all four gates at once and each gate
    streams from the convolutions to its activation. Each output value is computed as before:
    a convolution's output channel reads only its own weights, and an ADD is element-wise (of
    whole blocks of 16 values, before and after, in LiteRT's vector code). Returns old node ->
    new node, for the nodes kept."""
    readers: dict[int, list[int]] = {}
    for t, node in enumerate(graph.nodes):
        for u in node.inputs:
            readers.setdefault(u, []).append(t)
    parts = {t: _gate_parts(graph, t, readers) for t, node in enumerate(graph.nodes)
             if isinstance(node.op, ChannelSlice) and node.inputs[0] >= 0}
    # the gates whose every slice is made on its own (a slice that cannot be keeps them all whole)
    whole = {graph.nodes[t].inputs[0] for t in parts} - {graph.nodes[t].inputs[0] for t, made in parts.items() if made is None}
    parts = {t: made for t, made in parts.items() if graph.nodes[t].inputs[0] in whole}
    dropped = {u for t in whole for u in (t, *_per_value_inputs(graph, t))}
    nodes: list[Node] = []
    moved = {t: t for t in graph.input_tensors}
    for t, node in enumerate(graph.nodes):
        if t in dropped:
            continue
        convs, total = parts.get(t) or ([node], None)
        for conv in convs:
            nodes.append(replace(conv, inputs=tuple(moved[u] for u in conv.inputs)))
        if total is not None:  # it reads the convolutions just made
            nodes.append(replace(total, inputs=tuple(range(len(nodes) - len(convs), len(nodes)))))
        moved[t] = len(nodes) - 1
    if not dropped:
        return {t: t for t in range(len(graph.nodes))}
    graph.nodes = nodes
    graph.outputs = tuple(moved[t] for t in graph.outputs)
    return {t: k for t, k in moved.items() if t >= 0}


def _per_value_inputs(graph: Graph, t: int) -> tuple[int, ...]:
    """The inputs of an op that computes each value from the same value of its inputs (a sum, a
    float island's DEQUANTIZE), whose slices are then its inputs' slices; () for another op."""
    node = graph.nodes[t]
    return node.inputs if type(node.op) in (Add, Dequantize) else ()


def _gate_parts(graph: Graph, s: int, readers: dict[int, list[int]]) -> tuple[list[Node], Node | None] | None:
    """The nodes that compute slice `s` of the gates' convolution (or the sum of two, or its
    DEQUANTIZE) on its own: the convolutions of its channels, then the sum or DEQUANTIZE of them
    (None for a convolution alone), or None when the slice stays as it is."""
    gates = graph.nodes[s].inputs[0]
    if gates in graph.output_tensors or not all(isinstance(graph.nodes[r].op, ChannelSlice) for r in readers[gates]):
        return None
    begin, channels = graph.nodes[s].op.begin, graph.nodes[s].op.channels
    slices = sorted((graph.nodes[r].op.begin, graph.nodes[r].op.channels) for r in readers[gates])
    if any(b0 + c0 > b1 for (b0, c0), (b1, _) in zip(slices, slices[1:])):
        return None  # overlapping slices would compute some channels twice
    convs = _per_value_inputs(graph, gates) or (gates,)
    if len(convs) > 2 or not all(c >= 0 and type(graph.nodes[c].op) is Conv2D and c not in graph.output_tensors
                                 and (c == gates or readers[c] == [gates]) for c in convs):
        return None
    if not all(_vector_only(graph.nodes[gates], prod(shape)) for shape in (graph.nodes[gates].shape, graph.nodes[s].shape)):
        return None  # LiteRT rounds the values after its vector code's last block apart: their places would move
    total = _total_part(graph.nodes[gates], graph.nodes[s].shape) if convs != (gates,) else None
    return [_conv_part(graph.nodes[c], begin, channels) for c in convs], total


def _vector_only(node: Node, size: int) -> bool:
    """Whether LiteRT's kernel of `node` (an ADD, a DEQUANTIZE) takes its vector code for every
    value of a tensor of `size` values: int8 ADDs run blocks of 16, conversions blocks of 8."""
    if type(node.op) is Dequantize:
        return nx.vector_part(size, nx.LITERT) == size
    return node.quant is None or size % VECTOR_BLOCK == 0


def _total_part(node: Node, shape: tuple[int, ...]) -> Node:
    """The sum or DEQUANTIZE `node` of a slice of its inputs' channels, of output `shape`."""
    op = replace(node.op, shape=shape) if type(node.op) is Dequantize else node.op  # it records its tensor's shape
    return replace(node, op=op, shape=shape)


def _conv_part(node: Node, begin: int, channels: int) -> Node:
    """Output channels [begin, begin + channels) of a convolution node: its weights, bias and
    scales of those channels."""
    filters = node.op.filters
    consts = {k: v[begin:begin + channels] if v.ndim and v.shape[0] == filters else v for k, v in node.consts.items()}
    return replace(node, op=replace(node.op, filters=channels), consts=consts, shape=(*node.shape[:-1], channels))


def _live(graph: Graph) -> set[int]:
    """The nodes an output or a state reads (a state's owner counts as read)."""
    todo = list(graph.output_tensors) + [s.owner for s in graph.states]
    live: set[int] = set()
    while todo:
        t = todo.pop()
        if t < 0 or t in live:
            continue
        live.add(t)
        todo.extend(graph.nodes[t].inputs)
    return live

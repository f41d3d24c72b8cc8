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

from ..ir import Graph
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
    packed: dict[int, tuple[int, ...]] = field(default_factory=dict)
    step_of: dict[int, int] = field(default_factory=dict)

    def unpacked(self, graph: Graph, source: int, steps: int) -> tuple[int, ...] | None:
        """The packed steps an UNPACK of IR tensor `source` into `steps` parts gives: the PACK's
        inputs, when `source` is that PACK's stack seen through reshapes (the same bytes)."""
        while source >= 0 and source not in self.packed and isinstance(graph.nodes[source].op, Reshape):
            source = graph.nodes[source].inputs[0]
        parts = self.packed.get(source)
        return parts if parts is not None and len(parts) == steps else None


def step_major(graph: Graph, steps: dict[int, int]) -> Graph:
    """The graph without the nodes no output reads, its nodes in the order of the latest step
    (`steps`: IR tensor -> the input step it is) each depends on, then of the file. A node
    depends on no later step than its inputs' latest, so the order stays topological."""
    live = _live(graph)
    latest: dict[int, int] = {}
    at: dict[int, float] = {}  # the place in the file a node's order follows
    for t, node in enumerate(graph.nodes):
        latest[t] = max([steps.get(t, 0)] + [latest.get(u, 0) for u in node.inputs])
        # a pack step right after its step's hidden state, which it frees (a PACK comes after all of them)
        at[t] = max(at[u] for u in node.inputs) + 0.5 if isinstance(node.op, PackStep) else t
    order = sorted((t for t in range(len(graph.nodes)) if t in live), key=lambda t: (latest[t], at[t]))
    if order == list(range(len(graph.nodes))):
        return graph
    new = {old: k for k, old in enumerate(order)}
    new.update({t: t for t in graph.input_tensors})
    graph.nodes = [replace(graph.nodes[old], inputs=tuple(new[u] for u in graph.nodes[old].inputs)) for old in order]
    graph.outputs = tuple(new[t] for t in graph.outputs)
    graph.states = tuple(replace(s, owner=new[s.owner]) for s in graph.states)
    return graph


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

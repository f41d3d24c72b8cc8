"""Lowering one block (ops first..last under one scheme) into what it allocates and computes.

This is the single source of truth for the `exact` cost model, the arena layout and the fused
executor: a LoweredBlock lists the full tensors the block reads and writes, its scratch buffers
(with shapes, so the executor allocates exactly them) and the MACs it performs.

Schemes implemented here:

- `single`: one op on whole tensors. An element-wise op (add, activation, requantize) or a
  reshape writes over an input that dies with it, as TFLite Micro does, so its output costs nothing.
- `linebuffer`: rows stream top to bottom through the block. Every tensor inside the block lives
  in a ring of the rows its readers still need (k rows for a k x k window, more for the source of
  a skip that waits for its add); nothing is recomputed. A global-average-pool tail consumes rows
  into a per-channel accumulator, so the last feature map is never whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from ..ir import NETWORK_INPUT, Graph
from ..ops import Add, AvgPool2D, Conv2D, Dense, DepthwiseConv2D, GlobalAvgPool, MaxPool2D, Reshape, Softmax
from ..ops.activation import Activation
from ..ops.requantize import Requantize

WINDOW_OPS = (Conv2D, DepthwiseConv2D, MaxPool2D, AvgPool2D)
POINTWISE_OPS = (Add, Activation, Requantize)
VECTOR_OPS = (Dense, Softmax, Reshape)
ELEMENT_BYTES = {"int8": 1, "int32": 4, "float32": 4}


@dataclass(frozen=True)
class Scratch:
    """A buffer that lives only while its block runs."""

    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def nbytes(self) -> int:
        return prod(self.shape) * ELEMENT_BYTES[self.dtype]


@dataclass(frozen=True)
class LoweredBlock:
    first: int
    last: int
    scheme: str
    rows: int
    reads: tuple[int, ...]  # tensors produced before `first` that the block reads (whole)
    alias: int | None  # the output is written over this input, which dies here
    scratch: tuple[Scratch, ...]
    macs: int
    rings: dict[int, int] = field(default_factory=dict)  # linebuffer: tensor -> rows kept
    stream_end: int | None = None  # linebuffer: last row-streamed op (a tail follows it)

    @property
    def output(self) -> int:
        return self.last

    @property
    def scratch_bytes(self) -> int:
        return sum(s.nbytes for s in self.scratch)


class Liveness:
    """Last reader of every tensor, and the bytes each tensor takes."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.element_bytes = 4 if graph.dtype == "float32" else 1
        self.last_use = {t: i for i, node in enumerate(graph.nodes) for t in node.inputs}
        self.last_use[len(graph) - 1] = len(graph)  # the network output outlives every op

    def nbytes(self, tensor: int) -> int:
        return prod(self.graph.shape_of(tensor)) * self.element_bytes

    def in_arena(self, tensor: int) -> bool:
        """The network input and output are the caller's buffers, not the arena's."""
        return tensor != NETWORK_INPUT and tensor != len(self.graph) - 1

    def waiting(self, first: int, last: int, reads) -> list[int]:
        """Tensors made before `first`, not read by ops first..last, still read after `last`."""
        return [t for t in range(first) if t not in reads and self.last_use.get(t, -1) > last]

    def block_ram(self, block: LoweredBlock) -> int:
        """Arena bytes while the block runs: what it reads, writes, keeps waiting and scratches."""
        live = [t for t in block.reads if self.in_arena(t)]
        if block.alias is None and self.in_arena(block.output):
            live.append(block.output)
        live += [t for t in self.waiting(block.first, block.last, block.reads) if self.in_arena(t)]
        return sum(self.nbytes(t) for t in live) + block.scratch_bytes


def _reads(graph: Graph, first: int, last: int) -> tuple[int, ...]:
    return tuple(sorted({t for node in graph.nodes[first:last + 1] for t in node.inputs if t < first}))


def lower_single(graph: Graph, live: Liveness, i: int) -> LoweredBlock:
    node = graph.nodes[i]
    alias = None
    if isinstance(node.op, POINTWISE_OPS + (Reshape,)) and live.in_arena(i):
        # Prefer the skip (second) input: writing over it ends its wait in the arena.
        for t in reversed(node.inputs):
            if live.in_arena(t) and live.last_use[t] == i and live.nbytes(t) == live.nbytes(i):
                alias = t
                break
    return LoweredBlock(i, i, "single", 1, _reads(graph, i, i), alias, (), graph.macs(i))


# ---- linebuffer ------------------------------------------------------------------------------

def _is_feature_map(graph: Graph, t: int) -> bool:
    return len(graph.shape_of(t)) == 3


def _stream_end(graph: Graph, first: int, last: int) -> int | None:
    """The last row-streamed op of a linebuffer block over first..last, or None if the ops do not
    form one: row ops (windows, element-wise) optionally followed by a global-pool tail and
    vector ops (dense, softmax, reshape) that each read the op before them."""
    end = first - 1
    for i in range(first, last + 1):
        op = graph.nodes[i].op
        if isinstance(op, WINDOW_OPS + POINTWISE_OPS) and _is_feature_map(graph, i):
            if end != i - 1:
                return None  # a row op after the tail started
            end = i
        elif isinstance(op, GlobalAvgPool) and end == i - 1 and end >= first:
            continue
        elif isinstance(op, VECTOR_OPS) and end < i - 1 and graph.nodes[i].inputs == (i - 1,):
            continue
        else:
            return None
    if end < first or (end < last and not isinstance(graph.nodes[end + 1].op, GlobalAvgPool)):
        return None
    return end


def _window_ring(graph: Graph, tensor: int, consumer: int) -> int:
    """Rows of `tensor` a window op must see at once: the largest clipped window over all its
    output rows (k rows inside the map, fewer at padded borders)."""
    win = graph.nodes[consumer].op.window
    h = graph.shape_of(tensor)[0]
    (kh, _), (sh, _), top = win.kernel, win.strides, win.pads[0]
    rows = graph.nodes[consumer].shape[0]
    return max(min(h, r * sh - top + kh) - max(0, r * sh - top) for r in range(rows))


def needed_rows(graph: Graph, consumer: int, tensor: int, row: int) -> tuple[int, int]:
    """Rows [lo, hi) of `tensor` that output row `row` of `consumer` reads."""
    op = graph.nodes[consumer].op
    if isinstance(op, WINDOW_OPS):
        (kh, _), (sh, _), top = op.window.kernel, op.window.strides, op.window.pads[0]
        h = graph.shape_of(tensor)[0]
        return max(0, row * sh - top), min(h, row * sh - top + kh)
    return row, row + 1


def simulate_ring(graph: Graph, tensor: int, consumers: tuple[int, ...]) -> int:
    """Rows of `tensor` kept at once when several ops of one linebuffer block read it (the source
    of a skip inside the block): replays the executor's pull order symbolically.

    The executor produces rows on demand: the last consumer pulls its rows in order, each row
    pulling the rows it needs from its inputs first (main input, then skip). A row can be
    dropped once every consumer's next row starts after it.
    """
    last = max(consumers)
    produced = {t: 0 for t in range(tensor, last)}
    next_row = {c: 0 for c in consumers}
    ring = 0

    def lowest_needed() -> int:
        return min(needed_rows(graph, c, tensor, next_row[c])[0] if next_row[c] < graph.nodes[c].shape[0]
                   else graph.shape_of(tensor)[0] for c in consumers)

    def pull(t: int, upto: int) -> None:
        nonlocal ring
        while produced[t] < upto:
            r = produced[t]
            for u in graph.nodes[t].inputs if t != tensor else ():
                if u in produced:
                    pull(u, needed_rows(graph, t, u, r)[1])
            if t in next_row:
                ring = max(ring, produced[tensor] - lowest_needed())
                next_row[t] += 1
            produced[t] += 1

    def pull_last(upto: int) -> None:
        nonlocal ring
        for r in range(upto):
            for u in graph.nodes[last].inputs:
                if u in produced:
                    pull(u, needed_rows(graph, last, u, r)[1])
            ring = max(ring, produced[tensor] - lowest_needed())
            next_row[last] += 1

    pull_last(graph.nodes[last].shape[0])
    return max(ring, 1)


def lower_linebuffer(graph: Graph, live: Liveness, first: int, last: int,
                     ring_cache: dict | None = None) -> LoweredBlock | None:
    """A linebuffer block over first..last, or None if those ops cannot stream rows together.
    `ring_cache` memoises ring sizes across the blocks of one graph (they depend only on a
    tensor and its readers)."""
    ring_cache = {} if ring_cache is None else ring_cache
    end = _stream_end(graph, first, last)
    if end is None or last == first:
        return None
    for t in range(first, last):  # only the block's output may be read after the block
        if live.last_use[t] > last:
            return None
    act = "float32" if graph.dtype == "float32" else "int8"
    rings: dict[int, int] = {}
    scratch: list[Scratch] = []
    for t in range(first, end + 1 if end < last else end):
        consumers = tuple(sorted({i for i in range(t + 1, last + 1) if t in graph.nodes[i].inputs}))
        if (t, consumers) not in ring_cache:
            c = consumers[0]
            if len(consumers) > 1:
                ring_cache[t, consumers] = simulate_ring(graph, t, consumers)
            elif isinstance(graph.nodes[c].op, WINDOW_OPS):
                ring_cache[t, consumers] = _window_ring(graph, t, c)
            else:
                ring_cache[t, consumers] = 1
        rows = rings[t] = ring_cache[t, consumers]
        h, w, c = graph.shape_of(t)
        scratch.append(Scratch(f"ring{t}", (rows, w, c), act))
    if end < last:  # the tail: a per-channel accumulator, then the small vectors after it
        channels = graph.shape_of(end)[2]
        scratch.append(Scratch(f"acc{end + 1}", (channels,), "float32" if act == "float32" else "int32"))
        for t in range(end + 1, last):
            scratch.append(Scratch(f"vec{t}", graph.shape_of(t), act))
    macs = sum(graph.macs(i) for i in range(first, last + 1))
    return LoweredBlock(first, last, "linebuffer", 1, _reads(graph, first, last), None, tuple(scratch), macs,
                        rings, end)

"""What lowering one block yields: the complete program that the cost model weighs, the arena
layout places, the fused numpy executor runs and the C generator prints.

A `LoweredBlock` lists the whole tensors the block reads and writes, its scratch buffers (with
shapes, so the executor allocates exactly them), the MACs it performs and its loop nest (`loops`):

- `Whole`: one op on whole tensors.
- `Stream`: positions stream along one axis (rows, or columns band by band); every inner tensor
  lives in a ring of the positions its readers still need, each op computes a position when a
  reader pulls it (`pulls`), and a tail may accumulate the streamed map into a vector.
- `Patches`: output tiles, each computed from scratch through the block into per-tensor tile
  buffers;
- `Channels`: one op over its own input, channel by channel through a plane buffer.
- `TimeScan`: sequence layers one time step at a time, holding states and rings of steps.
- `Chains`: rows stream through chains of three ops, each chain made pixel by pixel.

Each is a loop kind (`loop_kinds`): the executor, the emitter, the latency model and the cost
model each register a handler for it, and fail naming the kind when they have none.

The tables a walker needs (bands, per-band spans) are computed on first use and kept, so the cost
model can lower thousands of candidate blocks cheaply and the chosen ones are not lowered again.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from functools import cached_property
from math import prod

from ..ir import ELEMENT_TYPES, NETWORK_INPUT, Graph, is_network_input
from ..ir.graph import aligned
from ..ops import AxisWindow
from . import streaming
from .loop_kinds import loop_kind

Span = tuple[int, int]


@dataclass(frozen=True)
class Scratch:
    """A buffer that lives only while its block runs; its bytes are rounded up to `alignment` (the
    graph's: see Graph.alignment)."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    alignment: int = 1
    # the tensor whose values it holds (a ring's, a tile's), None for an op's own (a workspace, an
    # accumulator, a cell's state): the placement over RAM regions counts its accesses by it
    tensor: int | None = field(default=None, compare=False)

    @staticmethod
    def of(graph: Graph, name: str, shape: tuple[int, ...], tensor: int) -> "Scratch":
        """A buffer holding values of `tensor` (its element type), in `graph`'s arena."""
        return Scratch(name, shape, graph.dtype_of(tensor), graph.alignment, tensor)

    @cached_property
    def nbytes(self) -> int:
        return aligned(prod(self.shape) * ELEMENT_TYPES[self.dtype].nbytes, self.alignment)


WORKSPACE = "workspace"  # the scratch buffer of an op's own workspace (Op.workspace_bytes)


@dataclass(frozen=True)
class Tail:
    """The ops after a stream end: `consumer` accumulates the streamed map (a global pool, or a
    dense layer, after a flattening reshape or not) into `acc`; then `consumer`..`last` run on
    vectors, each into `vectors[op]` (the block's last op writes the block output)."""

    consumer: int
    last: int
    acc: Scratch
    vectors: dict[int, Scratch]


@dataclass(frozen=True)
class Pull:
    """Inside a stream: position i of `consumer` needs positions [.., end(i)) of `tensor`."""

    consumer: int
    tensor: int
    window: AxisWindow
    size: int  # the tensor's extent along the streamed axis

    def end(self, i: int) -> int:
        return self.window.span(i, i + 1, self.size)[1]


@loop_kind
@dataclass(frozen=True)
class Whole:
    """One op on whole tensors."""


@loop_kind
@dataclass(frozen=True, eq=False)
class Stream:
    """Ops first..end stream along `axis` (0: rows, top to bottom; 1: columns, left to right,
    once per band of `band_rows` output rows of the stream end); `tail` follows the stream end."""

    graph: Graph = field(repr=False)
    first: int
    end: int
    axis: int
    band_rows: int  # axis 1: output rows of the stream end per band (axis 0: its height)
    tail: Tail | None
    # The cost model's geometry cache (one dict per graph): the pull orders of streams sharing a
    # stream end are derived from one another there (see `order`).
    shared: dict | None = field(default=None, repr=False, compare=False)
    # The network input is pulled from the caller row by row (--input-stream, `stream_input`),
    # each row once, top to bottom, into a ring of rows (`LoweredBlock.rings[NETWORK_INPUT]`). A
    # row stream pulls them as positions of the input (NETWORK_INPUT, i) in `order`; a column
    # stream reads, before each band, the rows up to the last its band reads (`sweeps`).
    source: bool = False

    def streamed(self, u: int) -> bool:
        """Tensor u's positions are pulled inside the stream: made by one of its ops, or the network
        input that a row stream pulls."""
        return u >= self.first or (self.source and self.axis == 0 and u == NETWORK_INPUT)

    @cached_property
    def pulls(self) -> tuple[Pull, ...]:
        """Every read of an inner tensor by an op of the stream, in op and input order."""
        graph = self.graph
        return tuple(Pull(t, u, graph.nodes[t].op.axis_window(self.axis), graph.shape_of(u)[self.axis])
                     for t in range(self.first, self.end + 1) for u in graph.nodes[t].inputs if self.streamed(u))

    @cached_property
    def order(self) -> tuple[tuple[int, int], ...]:
        """(op, position) in the order one sweep computes them: each position of the stream end in
        turn, each op computing a position when a reader needs it, after pulling what it needs from
        its own inputs (main input first). The generated C's pull functions follow the same order.

        With `shared`, a stream with the same end and axis starting at or below `first` may have
        computed its order already: this stream's order is that one's restricted to ops >= first.
        Pulling an op's inputs below `first` only inserts computations of ops below `first`
        (those inputs' own inputs are lower still) and changes no op's produced count, so the
        computations of ops >= first come in the same order in both."""
        if self.shared is None or self.source:
            return self._order()
        key = ("order", self.end, self.axis)
        base_first, base = self.shared.get(key, (None, None))
        if base_first is None or base_first > self.first:
            order = self._order()
            self.shared[key] = (self.first, order)
            return order
        if base_first == self.first:
            return base
        first = self.first
        return tuple([e for e in base if e[0] >= first])

    def order_of(self, ops) -> list[tuple[int, int]]:
        """`order` restricted to `ops` (ops of the stream). With `shared`, taken from the order of a
        stream with the same end starting at or below `first` (the same restriction, see
        `order`) through an index of where each op comes in it: neither this stream's whole
        order is made nor a walk over it (each block of a long chain would take time and memory
        in proportion to its length times its height)."""
        if self.shared is None or self.source:
            ops = set(ops)
            return [e for e in self.order if e[0] in ops]
        key = ("order", self.end, self.axis)
        base_first, base = self.shared.get(key, (None, None))
        if base_first is None or base_first > self.first:
            base_first, base = self.first, self._order()
            self.shared[key] = (base_first, base)
        index_key = ("order index", self.end, self.axis)
        indexed_first, index = self.shared.get(index_key, (None, None))
        if indexed_first != base_first:
            index = {}
            for k, (op, _) in enumerate(base):
                index.setdefault(op, []).append(k)
            self.shared[index_key] = (base_first, index)
        return [base[k] for k in heapq.merge(*(index.get(op, ()) for op in set(ops)))]

    def _order(self) -> tuple[tuple[int, int], ...]:
        cache = {} if self.shared is None else self.shared
        # per op: (input, the end of the input positions each of its positions reads: Pull.end)
        reads = {t: [(p.tensor, [b for _, b in streaming.position_spans(self.graph, t, p.tensor, self.axis, cache)])
                     for p in self.pulls if p.consumer == t] for t in range(self.first, self.end + 1)}
        pulled_input = self.streamed(NETWORK_INPUT)
        if pulled_input:  # the caller's rows: read, never computed from anything
            reads[NETWORK_INPUT] = []
        produced = dict.fromkeys(reads, 0)
        order = []

        def pull(t: int, upto: int) -> None:
            while produced[t] < upto:
                i = produced[t]
                for tensor, ends in reads[t]:
                    pull(tensor, ends[i])
                order.append((t, i))
                produced[t] += 1

        pull(self.end, self.graph.shape_of(self.end)[self.axis])
        if pulled_input:  # rows no window reads (below a strided VALID window's last) are read too:
            pull(NETWORK_INPUT, self.graph.shape_of(NETWORK_INPUT)[0])  # the caller gives every row once
        return tuple(order)

    @cached_property
    def sweeps(self) -> tuple[dict[int, Span], ...]:
        """One sweep of the streamed axis per band: each streamed tensor's extent on the other axis."""
        graph, first, end = self.graph, self.first, self.end
        if self.axis == 0:
            streamed = [NETWORK_INPUT] * self.source + list(range(first, end + 1))
            return ({t: (0, graph.shape_of(t)[1]) for t in streamed},)
        sweeps = tuple({t: span for t, span in streaming.band_ranges(graph, first, end, lo, hi).items() if t >= first}
                       for lo, hi in streaming.bands(graph.shape_of(end)[0], self.band_rows))
        if self.source:  # the input's rows each band reads: the hull of its readers' windows
            readers = [t for t in range(first, end + 1) if NETWORK_INPUT in graph.nodes[t].inputs]
            for sweep in sweeps:
                spans = [streaming.needed_range(graph, t, NETWORK_INPUT, *sweep[t])[:2] for t in readers]
                sweep[NETWORK_INPUT] = (min(a for a, _ in spans), max(b for _, b in spans))
        return sweeps


@loop_kind
@dataclass(frozen=True, eq=False)
class Patches:
    """The stream end's output in tiles of `tile` (rows, columns), each computed from scratch."""

    graph: Graph = field(repr=False)
    first: int
    end: int
    tile: tuple[int, int]
    tail: Tail | None

    def _spans(self, axis: int) -> tuple[dict[int, Span], ...]:
        graph, first, end = self.graph, self.first, self.end
        return tuple(streaming.band_ranges(graph, first, end, lo, hi, axis)
                     for lo, hi in streaming.bands(graph.shape_of(end)[axis], self.tile[axis]))

    @cached_property
    def row_spans(self) -> tuple[dict[int, Span], ...]:
        """Per band of tile rows: the rows of every tensor first..end it needs."""
        return self._spans(0)

    @cached_property
    def col_spans(self) -> tuple[dict[int, Span], ...]:
        return self._spans(1)


@loop_kind
@dataclass(frozen=True)
class Channels:
    """One op written over its own input a channel at a time: each output channel is computed
    into the `plane` scratch buffer, then copied over the input channel it read."""

    plane: Scratch


@loop_kind
@dataclass(frozen=True, eq=False)
class TimeScan:
    """Ops first..end run one time step at a time (schemes/timescan.py): at global step s each op
    t, in order, computes its position s - lags[t - first] when that lies in [0, positions[...]).
    An inner sequence lives in a ring of the steps its reader still needs (`LoweredBlock.rings`,
    keyed by the tensor holding the bytes: `storage`), or, a recurrent cell's output read a step
    at a time, in the cell's state (`in_state`). Each cell keeps its state in scratch `state<t>`
    and shares the step temporaries `temp`. A cell that keeps only its last step may end the
    scan; ops end+1..last then run once on vectors (scratch `vec<t>`, the last op the output).
    Or a `tail` accumulates each step of `end` as it is made (a dense layer over the flattened
    sequence, a mean over time), then its vector ops run once."""

    first: int
    end: int
    steps: int
    lags: tuple[int, ...]
    positions: tuple[int, ...]
    storage: dict[int, int]
    in_state: frozenset[int]
    cells: tuple[int, ...]
    tail: Tail | None = None  # an op accumulating the steps of `end` (a dense layer, a mean), then vectors

    def lag(self, t: int) -> int:
        return self.lags[t - self.first]

    def count(self, t: int) -> int:
        return self.positions[t - self.first]


@loop_kind
@dataclass(frozen=True, eq=False)
class Chains:
    """Ops first..last as chains of three (schemes/chains.py: a region op, a depthwise conv, a 1x1
    op), rows streaming through them top to bottom in `order`; a chain's input lives in a ring of
    rows (`LoweredBlock.rings`) but the first chain's when it is a tensor made before the block
    (read whole)."""

    graph: Graph = field(repr=False)
    first: int
    last: int
    source: bool = False  # the first chain pulls the network input from the caller (--input-stream)

    @property
    def starts(self) -> range:
        """The first op of each chain."""
        return range(self.first, self.last + 1, 3)

    def input_of(self, start: int) -> int:
        """The tensor the chain starting at op `start` reads."""
        return self.graph.nodes[start].inputs[0]

    def rows_read(self, start: int, i: int) -> tuple[int, int]:
        """Rows [lo, hi) of its input that output row i of the chain from op `start` reads."""
        graph = self.graph
        ya, yb = streaming.needed_range(graph, start + 1, start, i, i + 1)[:2]
        return streaming.needed_range(graph, start, self.input_of(start), ya, yb)[:2]

    def ring(self, start: int) -> int:
        """Rows of the chain's input kept at once: the most its output rows read."""
        spans = [self.rows_read(start, i) for i in range(self.graph.shape_of(start + 2)[0])]
        return max(1, max(hi - lo for lo, hi in spans))

    @cached_property
    def order(self) -> tuple[tuple[int, int], ...]:
        """(chain index, row) in the order the block computes them, each row of a chain when the
        next chain needs it (first the rows of its own input it reads); index -1 is a row of the
        network input read from the caller (every row, once, top to bottom)."""
        starts = list(self.starts)
        ends = [[self.rows_read(s, i)[1] for i in range(self.graph.shape_of(s + 2)[0])] for s in starts]
        produced = dict.fromkeys(range(-1, len(starts)), 0)
        order: list[tuple[int, int]] = []

        def pull(k: int, upto: int) -> None:
            while produced[k] < upto:
                i = produced[k]
                if k > 0 or (k == 0 and self.source):
                    pull(k - 1, ends[k][i])
                order.append((k, i))
                produced[k] += 1

        pull(len(starts) - 1, self.graph.shape_of(self.last)[0])
        if self.source:  # the rows no window reads: the caller gives every row once
            pull(-1, self.graph.shape_of(NETWORK_INPUT)[0])
        return tuple(order)

    def tap_positions(self, start: int) -> int:
        """Output positions the chain's first op computes: for every output pixel of the chain, each
        in-bounds tap of the depthwise window (the kernel rows in bounds times the columns)."""
        graph, b = self.graph, start + 1
        rows = sum(hi - lo for lo, hi in graph.nodes[b].op.axis_window(0).position_spans(
            graph.shape_of(b)[0], graph.shape_of(start)[0]))
        cols = sum(hi - lo for lo, hi in graph.nodes[b].op.axis_window(1).position_spans(
            graph.shape_of(b)[1], graph.shape_of(start)[1]))
        return rows * cols


def time_axis(shape: tuple[int, ...]) -> int | None:
    """The time axis of a sequence tensor: 0 of (T, F), 1 of a one-row map (1, T, C); None for a
    vector or a map of several rows."""
    if len(shape) == 2:
        return 0
    if len(shape) == 3 and shape[0] == 1:
        return 1
    return None


def as_time_map(shape: tuple[int, ...]) -> tuple[int, ...]:
    """A sequence as the one-row map whose columns are its steps ((T, F) -> (1, T, F)), the shape
    an accumulating tail indexes; a map as it is."""
    return (1, *shape) if len(shape) == 2 else tuple(shape)


def step_elements(shape: tuple[int, ...]) -> int:
    """Values of one time step of a sequence tensor."""
    return prod(shape) // shape[time_axis(shape)]


Loops = Whole | Stream | Patches | Channels | TimeScan | Chains


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
    loops: Loops = Whole()
    rings: dict[int, int] = field(default_factory=dict)  # streamed tensor -> positions kept
    # per op first..last: output positions computed / positions in the output (> 1: recomputed)
    recompute: tuple[float, ...] = ()
    # (source, delta): the output starts `delta` bytes after the start of the block's input
    # `source`, over the bytes of it already consumed (vMCU); the two count as their union.
    placed_on: tuple[int, int] | None = None
    # Inside a row stream, tensor -> (host, shift): its row i is stored in slot (i + shift) % k of
    # the host's ring of k rows, over a host row that no computation reads any more (an in-place
    # depthwise row, the `inplace` scheme); such a tensor has no ring of its own.
    homes: dict[int, tuple[int, int]] = field(default_factory=dict)
    # Host ring tensor -> pixels of gap at the start of each of its slots, where the in-place rows
    # it hosts begin (they are written that many pixels to the left of its rows).
    gaps: dict[int, int] = field(default_factory=dict)

    @property
    def output(self) -> int:
        return self.last

    @property
    def stream_end(self) -> int | None:
        """The last op computed position by position (a tail may follow it), or None."""
        return getattr(self.loops, "end", None)

    @property
    def tail(self) -> Tail | None:
        return getattr(self.loops, "tail", None)

    @property
    def scratch_bytes(self) -> int:
        return sum(s.nbytes for s in self.scratch)

    def scratch_named(self, name: str) -> Scratch:
        return next(s for s in self.scratch if s.name == name)


class Liveness:
    """Last reader of every tensor, the bytes each tensor takes, and which tensors the arena holds:
    all but the network inputs and output, which are the caller's buffers unless `count_io` puts
    them in the arena too (live from the start to their last reader, and from their producer)."""

    def __init__(self, graph: Graph, count_io: bool = False, input_stream: bool = False):
        self.graph = graph
        # --input-stream counts the whole RAM as --count-io does, but a block that streams rows
        # may pull the network input from the caller instead of reading it whole (`stream_input`).
        self.count_io = count_io or input_stream
        self.input_stream = input_stream
        self.last_use = graph.last_use()
        self._nbytes: dict[int, int] = {}  # like last_use, taken from the graph as it is now
        # Only a tensor read at least two ops after it is made can wait across a block.
        self._may_wait = [t for t in range(-len(graph.input_tensors), len(graph)) if self.last_use.get(t, -1) >= t + 2]

    def nbytes(self, tensor: int) -> int:
        size = self._nbytes.get(tensor)
        if size is None:
            size = self._nbytes[tensor] = self.graph.arena_bytes(tensor)
        return size

    def in_arena(self, tensor: int) -> bool:
        return self.count_io or (not is_network_input(tensor) and tensor != self.graph.output)

    def waiting(self, first: int, last: int, reads) -> list[int]:
        """Tensors made before `first` (the network inputs included), not read by ops first..last,
        still read after `last`."""
        # t < first <= last < last_use[t] means last_use[t] >= t + 2: only those are looked at.
        return [t for t in self._may_wait if t < first and t not in reads and self.last_use[t] > last]

    def block_ram(self, block: LoweredBlock) -> int:
        """Arena bytes while the block runs: what it reads, writes, keeps waiting and scratches, and
        the persistent region of the graph's state buffers (Graph.state_bytes), which every block keeps."""
        live = [t for t in block.reads if self.in_arena(t)]
        if block.alias is None and self.in_arena(block.output):
            live.append(block.output)
        live += [t for t in self.waiting(block.first, block.last, block.reads) if self.in_arena(t)]
        total = sum(self.nbytes(t) for t in live) + block.scratch_bytes + self.graph.state_bytes
        if block.placed_on is not None:  # the output and its input share bytes: count their union
            source, delta = block.placed_on
            size_in, size_out = self.nbytes(source), self.nbytes(block.output)
            total += max(size_in, delta + size_out) - min(0, delta) - size_in - size_out
        return total


def block_reads(graph: Graph, first: int, last: int) -> tuple[int, ...]:
    """Tensors made before `first` that ops first..last read."""
    return tuple(sorted({t for node in graph.nodes[first:last + 1] for t in node.inputs if t < first}))


def stream_input(graph: Graph, live: Liveness, block: LoweredBlock) -> LoweredBlock:
    """The block as it runs under --input-stream (`live.input_stream`): a row stream from op 0
    that reads the network input, and in which every reader of it lies, pulls the input's rows
    from the caller in order, once each, into a ring of the rows its readers still need
    (`Stream.source`, scratch `ring-1`). Any other block that reads the input reads it whole
    from the arena, where the caller's rows are copied before the first block (counted as
    --count-io counts it)."""
    loops = block.loops
    if (not live.input_stream or NETWORK_INPUT not in block.reads or not isinstance(loops, Stream)
            or block.first != 0 or live.last_use[NETWORK_INPUT] > block.last
            or block.placed_on is not None and block.placed_on[0] == NETWORK_INPUT  # (placement.may_place)
            or len(graph.input_tensors) != 1 or len(graph.shape_of(NETWORK_INPUT)) != 3):
        return block
    readers = tuple(t for t in range(block.first, loops.end + 1) if NETWORK_INPUT in graph.nodes[t].inputs)
    if len(readers) != sum(NETWORK_INPUT in node.inputs for node in graph.nodes):
        return block  # a reader after the stream end (its tail) reads the input whole
    source = Stream(graph, loops.first, loops.end, loops.axis, loops.band_rows, loops.tail, source=True)
    if loops.axis == 0:
        kept = (streaming.window_ring(graph, NETWORK_INPUT, readers[0], 0) if len(readers) == 1
                else streaming.simulate_ring(graph, NETWORK_INPUT, readers))
    else:  # the rows of the widest band: bands read rows in order (a band overlaps the one before)
        kept = max(hi - lo for lo, hi in (sweep[NETWORK_INPUT] for sweep in source.sweeps))
    h, w, c = graph.shape_of(NETWORK_INPUT)
    ring = Scratch.of(graph, f"ring{NETWORK_INPUT}", (kept, w, c), NETWORK_INPUT)
    reads = tuple(t for t in block.reads if t != NETWORK_INPUT)
    return LoweredBlock(block.first, block.last, block.scheme, block.rows, reads, block.alias, (ring, *block.scratch),
                        block.macs, source, {NETWORK_INPUT: kept, **block.rings}, block.recompute, block.placed_on,
                        block.homes, block.gaps)

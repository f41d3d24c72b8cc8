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
- `hcache` (the paper's scheme, with R output rows per step): bands of R output rows; within a
  band, columns stream left to right and each inner tensor keeps a ring of k columns over the
  band's rows. Vertical overlap between bands is recomputed (counted in MACs).
- `recompute` (MCUNetV2 patches, `rows` = the patch side): square output patches, each computed
  from scratch through the block; overlap is recomputed in both directions.
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
    # per op first..last: output positions computed / positions in the output (> 1: recomputed)
    recompute: tuple[float, ...] = ()

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
    return LoweredBlock(i, i, "single", 1, _reads(graph, i, i), alias, (), graph.macs(i), recompute=(1.0,))


# ---- linebuffer ------------------------------------------------------------------------------

def _is_feature_map(graph: Graph, t: int) -> bool:
    return len(graph.shape_of(t)) == 3


def stream_end(graph: Graph, first: int, last: int) -> int | None:
    """The last row-streamed op of a fused block over first..last, or None if the ops do not
    form one: row ops (windows, element-wise) optionally followed by a tail that consumes the
    streamed map (a global pool, or a dense layer, after a flattening reshape or not) and then
    vector ops (dense, softmax, reshape), each reading the op before it."""
    end = first - 1
    for i in range(first, last + 1):
        op = graph.nodes[i].op
        if isinstance(op, WINDOW_OPS + POINTWISE_OPS) and _is_feature_map(graph, i):
            if end != i - 1:
                return None  # a row op after the tail started
            end = i
        elif end == i - 1 and end >= first and isinstance(op, (GlobalAvgPool, Dense, Reshape)):
            continue  # the tail starts: it reads the whole streamed map
        elif isinstance(op, VECTOR_OPS) and end < i - 1 and graph.nodes[i].inputs == (i - 1,):
            continue
        else:
            return None
    if end < first:
        return None
    if end < last and (tail_consumer(graph, end) > last or graph.nodes[end + 1].inputs != (end,)):
        return None
    return end


def tail_consumer(graph: Graph, end: int) -> int:
    """The op that accumulates the streamed map ending at `end`: a global pool or a dense layer
    (a flattening reshape before a dense layer is only a view of the same bytes). Returns an
    index past the graph if the op after `end` cannot accumulate."""
    i = end + 1
    op = graph.nodes[i].op
    if isinstance(op, Reshape):
        nxt = i + 1
        ok = nxt < len(graph) and isinstance(graph.nodes[nxt].op, Dense) and graph.nodes[nxt].inputs == (i,)
        return nxt if ok else len(graph)
    return i if isinstance(op, (GlobalAvgPool, Dense)) else len(graph)


def needed_range(graph: Graph, consumer: int, tensor: int, lo: int, hi: int, axis: int = 0):
    """Positions [a, b) of `tensor` along `axis` (0 rows, 1 columns) that positions [lo, hi) of
    `consumer`'s output read, and the padding (before, after) the window has outside the tensor."""
    op = graph.nodes[consumer].op
    if isinstance(op, WINDOW_OPS):
        k, s, p = op.window.kernel[axis], op.window.strides[axis], op.window.pads[axis]
        size = graph.shape_of(tensor)[axis]
        y0, y1 = lo * s - p, (hi - 1) * s - p + k
        a, b = max(0, y0), min(size, y1)
        return a, b, a - y0, y1 - b
    return lo, hi, 0, 0


def needed_rows(graph: Graph, consumer: int, tensor: int, index: int, axis: int = 0) -> tuple[int, int]:
    """Positions [lo, hi) of `tensor` along `axis` that position `index` of `consumer` reads."""
    return needed_range(graph, consumer, tensor, index, index + 1, axis)[:2]


def _window_ring(graph: Graph, tensor: int, consumer: int, axis: int) -> int:
    """Positions of `tensor` a window op must see at once along `axis`: the largest clipped
    window over all its outputs (k inside the map, fewer at padded borders)."""
    outputs = graph.nodes[consumer].shape[axis]
    return max(b - a for a, b in (needed_rows(graph, consumer, tensor, i, axis) for i in range(outputs)))


def simulate_ring(graph: Graph, tensor: int, consumers: tuple[int, ...], axis: int = 0) -> int:
    """Positions of `tensor` kept at once along the streamed axis when several ops of one block
    read it (the source of a skip inside the block): replays the executor's pull order.

    The executor produces positions on demand: the last consumer pulls its positions in order,
    each pulling what it needs from its inputs first (main input, then skip). A position can be
    dropped once every consumer's next position starts after it.
    """
    last = max(consumers)
    produced = {t: 0 for t in range(tensor, last)}
    next_pos = {c: 0 for c in consumers}
    extent = graph.shape_of(tensor)[axis]
    ring = 0

    def lowest_needed() -> int:
        return min(needed_rows(graph, c, tensor, next_pos[c], axis)[0] if next_pos[c] < graph.nodes[c].shape[axis]
                   else extent for c in consumers)

    def pull(t: int, upto: int) -> None:
        nonlocal ring
        while produced[t] < upto:
            i = produced[t]
            for u in graph.nodes[t].inputs if t != tensor else ():
                if u in produced:
                    pull(u, needed_rows(graph, t, u, i, axis)[1])
            if t in next_pos:
                ring = max(ring, produced[tensor] - lowest_needed())
                next_pos[t] += 1
            produced[t] += 1

    for i in range(graph.nodes[last].shape[axis]):
        for u in graph.nodes[last].inputs:
            if u in produced:
                pull(u, needed_rows(graph, last, u, i, axis)[1])
        ring = max(ring, produced[tensor] - lowest_needed())
        next_pos[last] += 1
    return max(ring, 1)


def _stream_layout(graph: Graph, live: Liveness, first: int, last: int, axis: int, ring_cache: dict):
    """What streaming ops first..last along `axis` needs: (stream end, ring sizes per inner
    tensor), or None when the ops cannot stream together. Only the block's output may be read
    after the block; ring sizes depend only on a tensor and its readers, so they are memoised in
    `ring_cache` (one dict per graph)."""
    end = stream_end(graph, first, last)
    if end is None or last == first:
        return None
    if any(live.last_use[t] > last for t in range(first, last)):
        return None
    rings = {}
    for t in range(first, end + 1 if end < last else end):
        # The stream end writes the block output directly, or, with a tail, one position at a
        # time into a buffer of its own that the tail's accumulator then reads.
        if t == end:
            rings[t] = 1
            continue
        consumers = tuple(sorted({i for i in range(t + 1, last + 1) if t in graph.nodes[i].inputs}))
        key = (t, consumers, axis)
        if key not in ring_cache:
            c = consumers[0]
            if len(consumers) > 1:
                ring_cache[key] = simulate_ring(graph, t, consumers, axis)
            elif isinstance(graph.nodes[c].op, WINDOW_OPS):
                ring_cache[key] = _window_ring(graph, t, c, axis)
            else:
                ring_cache[key] = 1
        rings[t] = ring_cache[key]
    return end, rings


def _tail_scratch(graph: Graph, end: int, last: int, act: str) -> list[Scratch]:
    """A tail: the consumer's accumulator (per channel or per unit), then the vectors after it."""
    if end == last:
        return []
    consumer = tail_consumer(graph, end)
    width = graph.shape_of(consumer)[-1]
    scratch = [Scratch(f"acc{consumer}", (width,), "float32" if act == "float32" else "int32")]
    return scratch + [Scratch(f"vec{t}", graph.shape_of(t), act) for t in range(consumer, last)]


def _pixel_macs(graph: Graph, t: int) -> int:
    """MACs of one output pixel (all channels) of feature map t."""
    h, w = graph.shape_of(t)[:2]
    return graph.macs(t) // (h * w)


def _streamed_work(graph: Graph, first: int, end: int, last: int,
                   computed: dict[int, int]) -> tuple[int, tuple[float, ...]]:
    """(MACs, recompute factors) of a block whose ops first..end compute `computed[t]` output
    positions (pixels) each, and whose tail ops end+1..last run once."""
    macs = sum(graph.macs(i) for i in range(end + 1, last + 1))
    macs += sum(_pixel_macs(graph, t) * computed[t] for t in range(first, end + 1))
    factors = [computed[t] / prod(graph.shape_of(t)[:2]) for t in range(first, end + 1)]
    return macs, tuple(factors) + (1.0,) * (last - end)


def _activation_type(graph: Graph) -> str:
    return "float32" if graph.dtype == "float32" else "int8"


def lower_linebuffer(graph: Graph, live: Liveness, first: int, last: int,
                     ring_cache: dict | None = None) -> LoweredBlock | None:
    """A linebuffer block over first..last, or None if those ops cannot stream rows together.
    `ring_cache` memoises ring sizes across the blocks of one graph."""
    ring_cache = {} if ring_cache is None else ring_cache
    layout = _stream_layout(graph, live, first, last, 0, ring_cache)
    if layout is None:
        return None
    end, rings = layout
    act = _activation_type(graph)
    scratch = [Scratch(f"ring{t}", (rows, graph.shape_of(t)[1], graph.shape_of(t)[2]), act)
               for t, rows in rings.items()]
    scratch += _tail_scratch(graph, end, last, act)
    # Rows are pulled only as far as a reader needs them (a strided VALID window may never read
    # the last rows); each pulled row is computed at full width.
    pulled = _band_profile(graph, end, graph.shape_of(end)[0], ring_cache, 0)
    macs, factors = _streamed_work(graph, first, end, last,
                                   {t: pulled[t][0] * graph.shape_of(t)[1] for t in range(first, end + 1)})
    return LoweredBlock(first, last, "linebuffer", 1, _reads(graph, first, last), None, tuple(scratch), macs,
                        rings, end, factors)


# ---- hcache ----------------------------------------------------------------------------------

def band_ranges(graph: Graph, first: int, end: int, lo: int, hi: int, axis: int = 0) -> dict[int, tuple[int, int]]:
    """Rows (axis 0) or columns (axis 1) of every streamed tensor first..end that positions
    [lo, hi) of `end` need: the hull of what each tensor's readers up to `end` read."""
    ranges = {end: (lo, hi)}
    for t in range(end - 1, first - 1, -1):
        spans = [needed_range(graph, c, t, *ranges[c], axis)[:2] for c in range(t + 1, end + 1)
                 if t in graph.nodes[c].inputs]
        if not spans:
            break
        ranges[t] = (min(a for a, _ in spans), max(b for _, b in spans))
    return ranges


def bands(height: int, rows: int) -> list[tuple[int, int]]:
    return [(lo, min(lo + rows, height)) for lo in range(0, height, rows)]


def hcache_rows_options(graph: Graph, end: int) -> list[int]:
    """Output rows per step to try: 1, 2, 4, ... below the stream end's height, and the height."""
    height = graph.shape_of(end)[0]
    options, rows = [], 1
    while rows < height:
        options.append(rows)
        rows *= 2
    return options + [height]


def _band_profile(graph: Graph, end: int, rows: int, cache: dict, axis: int = 0) -> dict[int, tuple[int, int]]:
    """For every tensor t that `end` depends on, cutting `end` into bands of `rows` positions
    along `axis`: (positions of t computed over all bands, widest band). These depend only on
    t's readers up to `end`, not on where a block starts, so one profile serves every block
    ending at `end`."""
    key = ("bands", end, rows, axis)
    if key not in cache:
        profile: dict[int, list[int]] = {}
        for lo, hi in bands(graph.shape_of(end)[axis], rows):
            for t, (a, b) in band_ranges(graph, 0, end, lo, hi, axis).items():
                total, tallest = profile.setdefault(t, [0, 0])
                profile[t] = [total + b - a, max(tallest, b - a)]
        cache[key] = {t: (total, tallest) for t, (total, tallest) in profile.items()}
    return cache[key]


def lower_hcache(graph: Graph, live: Liveness, first: int, last: int, rows: int,
                 cache: dict | None = None) -> LoweredBlock | None:
    """An H-cache block: the stream end's output is made `rows` rows at a time; for each band,
    columns stream left to right and every inner tensor keeps a ring of the columns its readers
    still need, over the band's rows (tile rows x k columns x C). Rows shared by two bands are
    recomputed, columns never are."""
    cache = {} if cache is None else cache
    layout = _stream_layout(graph, live, first, last, 1, cache)
    if layout is None:
        return None
    end, rings = layout
    if rows < 1 or rows > graph.shape_of(end)[0]:
        return None
    profile = _band_profile(graph, end, rows, cache)
    # Within a band, columns are pulled only as far as a reader needs them.
    pulled = _band_profile(graph, end, graph.shape_of(end)[1], cache, 1)
    macs, factors = _streamed_work(graph, first, end, last,
                                   {t: profile[t][0] * pulled[t][0] for t in range(first, end + 1)})
    act = _activation_type(graph)
    scratch = [Scratch(f"ring{t}", (profile[t][1], cols, graph.shape_of(t)[2]), act) for t, cols in rings.items()]
    scratch += _tail_scratch(graph, end, last, act)
    return LoweredBlock(first, last, "hcache", rows, _reads(graph, first, last), None, tuple(scratch), macs,
                        rings, end, factors)


# ---- recompute -------------------------------------------------------------------------------

def lower_recompute(graph: Graph, live: Liveness, first: int, last: int, tile: int,
                    cache: dict | None = None) -> LoweredBlock | None:
    """MCUNetV2-style patches: the stream end's output is made in tile x tile squares; for each,
    every inner tensor's whole receptive region is computed into a buffer of its own, so overlap
    is recomputed in both directions and nothing is cached between patches."""
    cache = {} if cache is None else cache
    layout = _stream_layout(graph, live, first, last, 0, cache)
    if layout is None:
        return None
    end = layout[0]
    if tile < 1 or tile > max(graph.shape_of(end)[:2]):
        return None
    rows = _band_profile(graph, end, tile, cache, 0)
    cols = _band_profile(graph, end, tile, cache, 1)
    # Regions are products of a row band and a column band, so totals and maxima separate.
    macs, factors = _streamed_work(graph, first, end, last,
                                   {t: rows[t][0] * cols[t][0] for t in range(first, end + 1)})
    act = _activation_type(graph)
    inner = range(first, end + 1 if end < last else end)  # with a tail, the end's patch is kept too
    scratch = [Scratch(f"tile{t}", (rows[t][1], cols[t][1], graph.shape_of(t)[2]), act) for t in inner]
    scratch += _tail_scratch(graph, end, last, act)
    return LoweredBlock(first, last, "recompute", tile, _reads(graph, first, last), None, tuple(scratch), macs,
                        {}, end, factors)

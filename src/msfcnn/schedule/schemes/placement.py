"""Output over consumed input (vMCU): where a block may write its output on the bytes of its input
that it has already consumed, and the placement that saves the most.

A block that consumes its input top to bottom and writes its output top to bottom can start its
output `delta` bytes from the start of its input (negative: before it) as long as no output row is
ever written over an input row that the block still reads then or later. The two tensors then
take their union instead of their sum. `overlap` streams one op or a row-streamed block this way;
`hcache` and `recompute` blocks get the placement whenever it lowers their RAM, since it costs
them neither MACs nor instructions (the same loops, with the output pointer moved).

The input must be the tensor made just before the block, read by nothing after it, and not made by
an op that could have written it over another tensor (an element-wise op or a reshape run alone):
then it is on top of its end of the arena, where the union can grow.
"""

from __future__ import annotations

from dataclasses import replace

from ...ir import NETWORK_INPUT, Graph
from .. import streaming
from ..lowered import Liveness, LoweredBlock, Patches, Stream


def on_top(graph: Graph, source: int) -> bool:
    """The tensor is certainly pushed on top of its end when made: the network input (of a
    single-input model: several share the arena's ends from the start), or the output of an op
    that never writes over its input."""
    if source == NETWORK_INPUT:
        return len(graph.input_tensors) == 1
    op = graph.nodes[source].op
    return not op.writes_over_input


def may_place(graph: Graph, live: Liveness, first: int, last: int) -> bool:
    """Whether ops first..last may write their output over their input at all (not over the
    network input under --input-stream: the block pulls its rows instead, `stream_input`)."""
    source = first - 1
    return (graph.nodes[first].inputs[:1] == (source,) and on_top(graph, source) and live.in_arena(source)
            and live.in_arena(last) and live.last_use[source] <= last
            and not (live.input_stream and source == NETWORK_INPUT))


def place_over_input(graph: Graph, live: Liveness, block: LoweredBlock, cache: dict) -> LoweredBlock | None:
    """`block` with its output placed over its consumed input, or None when that is not allowed or
    saves nothing. The block's loops must write the block output row by row (no tail). `cache`
    memoises band tables across the blocks of one graph."""
    source = block.first - 1
    if not may_place(graph, live, block.first, block.last) or block.tail is not None:
        return None
    delta = consumed_delta(graph, block.loops, source, cache)
    size_in, size_out = live.nbytes(source), live.nbytes(block.last)
    if max(size_in, delta + size_out) - min(0, delta) >= size_in + size_out:
        return None  # nothing to share
    return replace(block, placed_on=(source, delta))


def consumed_delta(graph: Graph, loops: Stream | Patches, source: int, cache: dict) -> int:
    """The largest byte offset of the output's start from the input's start at which every output
    row is written only over input rows that no computation from then on reads."""
    # The steps depend only on the block's first op (its input is the op before it), its stream
    # end and its step: blocks of several schemes that share them (linebuffer, overlap and inplace
    # rows; hcache bands and recompute rows of patches of one height) share the delta.
    rows = loops.band_rows if isinstance(loops, Stream) else loops.tile[0]
    kind = "rows" if isinstance(loops, Stream) and loops.axis == 0 else "bands"
    key = ("delta", kind, loops.first, loops.end, source, rows)
    if key not in cache:
        cache[key] = _consumed_delta(graph, loops, source, cache)
    return cache[key]


def _consumed_delta(graph: Graph, loops: Stream | Patches, source: int, cache: dict) -> int:
    height, width, channels = graph.shape_of(source)
    row_in = width * channels * graph.element_of(source).nbytes
    _, out_width, out_channels = graph.shape_of(loops.end)
    row_out = out_width * out_channels * graph.element_of(loops.end).nbytes
    steps = _row_steps(graph, loops, source) if isinstance(loops, Stream) and loops.axis == 0 \
        else _band_steps(graph, loops, source, cache)
    lowest = height  # the lowest input row read from this step on (suffix minimum)
    delta = None
    for first_read, rows_written in reversed(steps):
        lowest = min(lowest, first_read)
        if rows_written:
            bound = lowest * row_in - rows_written * row_out
            delta = bound if delta is None else min(delta, bound)
    # Rounded down (an earlier start is as safe) to keep the output, and what goes on top of the
    # union, at offsets its element type may be read from (a no-op unless the graph mixes types).
    return delta // graph.alignment * graph.alignment


def _row_steps(graph: Graph, loops: Stream, source: int) -> list[tuple[int, int]]:
    """Rows streamed one at a time: per computation of the stream's pull order, the first input
    row it reads (the input's height if none) and, for the stream end's row i, i + 1 output rows
    written by then (else 0)."""
    height = graph.shape_of(source)[0]
    spans = {} if loops.shared is None else loops.shared
    windows = {t: streaming.position_spans(graph, t, source, 0, spans) for t in range(loops.first, loops.end + 1)
               if source in graph.nodes[t].inputs}
    # A computation that neither reads the input nor writes output rows would be a step
    # (height, 0), which changes neither the suffix minimum nor any bound: it is left out.
    end = loops.end
    relevant = set(windows) | {end}
    steps = []
    for t, i in loops.order_of(relevant):
        first_read = height
        if t in windows:
            a, b = windows[t][i]
            if b > a:
                first_read = a
        steps.append((first_read, i + 1 if t == end else 0))
    return steps


def _band_steps(graph: Graph, loops: Stream | Patches, source: int, cache: dict) -> list[tuple[int, int]]:
    """Bands of output rows computed one after another (hcache's bands, recompute's rows of
    patches): per band, the first input row any op of it reads, and the output rows written by its
    end. Within a band, any of its input rows may still be read while any of its output is
    written, so the band counts as one step."""
    height = graph.shape_of(source)[0]
    rows = loops.band_rows if isinstance(loops, Stream) else loops.tile[0]
    spans = streaming.band_table(graph, loops.first, loops.end, rows, cache)  # each tensor's rows, band by band
    written = spans[loops.end][1]
    # AxisWindow.span's first row, band by band, for each reader of the input
    reads = [[min(max(lo * window.stride - window.pad, 0), height) for lo in spans[t][0]]
             for t, window in ((t, graph.nodes[t].op.axis_window(0)) for t in range(loops.first, loops.end + 1)
                               if source in graph.nodes[t].inputs)]
    first_reads = [height] * len(written) if not reads else reads[0] if len(reads) == 1 else list(map(min, *reads))
    return list(zip(first_reads, written))

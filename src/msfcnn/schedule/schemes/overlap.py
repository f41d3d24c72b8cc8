"""`overlap` (vMCU): rows stream top to bottom as in linebuffer, and the block's output is written
over the bytes of its input that the block has already consumed.

The output starts `delta` bytes after the start of the input: the largest delta at which no
output row is ever written over an input row that a later (or the current) computation still
reads, found by replaying the stream's pull order. The two then take their union, e.g. for a 1x1
conv over H rows, max(input + one output row, output + one input row), instead of input +
output. For the network's first block under --count-io this puts the first feature map into the
image's own buffer.

The input must be the tensor made just before the block, and not by an op that could have
written it over another tensor (an element-wise op or a reshape run alone): then it is on top of
its end of the arena, where the union can grow.
"""

from __future__ import annotations

from dataclasses import replace

from ...ir import NETWORK_INPUT
from ...ops import Pattern
from ..lowered import Stream
from .base import Scheme
from .linebuffer import lower_rows


class Overlap(Scheme, name="overlap", template="stream", order=15, time_rank=1):
    """linebuffer whose output overwrites the input rows already consumed (vMCU); one op too"""

    def lower(self, graph, live, first, last, rows, cache):
        source = first - 1
        if graph.nodes[first].inputs[:1] != (source,) or not on_top(graph, source):
            return None
        if not (live.in_arena(source) and live.in_arena(last) and live.last_use[source] <= last):
            return None
        block = lower_rows(graph, live, first, last, cache, self.name, single=True)
        if block is None or block.tail is not None:
            return None
        delta = consumed_delta(graph, block.loops, source)
        size_in, size_out = live.nbytes(source), live.nbytes(last)
        if max(size_in, delta + size_out) - min(0, delta) >= size_in + size_out:
            return None  # nothing to share
        return replace(block, placed_on=(source, delta))

    def explain(self, block):
        source, delta = block.placed_on
        where = f"{delta} B after" if delta >= 0 else f"{-delta} B before"
        return (f"overlap: rows stream top to bottom as in linebuffer; the output starts {where} the input "
                f"(tensor {source}) and only overwrites input rows no longer read.")


def on_top(graph, source: int) -> bool:
    """The tensor is certainly pushed on top of its end when made: the network input, or the
    output of an op that never writes over its input."""
    if source == NETWORK_INPUT:
        return True
    op = graph.nodes[source].op
    return op.pattern is not Pattern.ELEMENTWISE and not op.is_view


def consumed_delta(graph, loops: Stream, source: int) -> int:
    """The largest byte offset of the output's start from the input's start at which every output
    row is written only over input rows that no computation from then on reads."""
    order = loops.order
    height, width, channels = graph.shape_of(source)
    row_in = width * channels * graph.element.nbytes
    _, out_width, out_channels = graph.shape_of(loops.end)
    row_out = out_width * out_channels * graph.element.nbytes
    lowest = height  # the lowest input row read from this computation on (suffix minimum)
    delta = None
    for t, i in reversed(order):
        for u in graph.nodes[t].inputs:
            if u == source:
                a, b, _, _ = graph.nodes[t].op.axis_window(0).span(i, i + 1, height)
                if b > a:
                    lowest = min(lowest, a)
        if t == loops.end:
            bound = lowest * row_in - (i + 1) * row_out
            delta = bound if delta is None else min(delta, bound)
    return delta


SCHEME = Overlap()

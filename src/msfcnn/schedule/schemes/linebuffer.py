"""`linebuffer`: rows stream top to bottom through the block.

Every tensor inside the block lives in a ring of the rows its readers still need (k rows for a
k x k window, more for the source of a skip that waits for its add); nothing is recomputed. A
tail (global pool or dense) consumes rows into an accumulator, so the last feature map is never
whole.
"""

from __future__ import annotations

from .. import streaming
from ..lowered import LoweredBlock, Scratch, Stream, block_reads
from .base import Scheme
from .tails import tail_of, tail_scratch


class Linebuffer(Scheme, name="linebuffer", template="stream", order=10, floor="rows"):
    """rows stream top to bottom through rings of k rows; nothing recomputed"""

    def lower(self, graph, live, first, last, rows, cache):
        return lower_rows(graph, live, first, last, cache, self.name)

    def explain(self, block):
        return ("linebuffer: rows stream top to bottom; each inner tensor keeps a ring of the rows its readers still "
                "need. Nothing is recomputed.")


def lower_rows(graph, live, first: int, last: int, cache: dict, scheme: str, single: bool = False) -> LoweredBlock | None:
    """Ops first..last (one op too, if `single`) streamed row by row, as `scheme`; None when they
    cannot stream together. linebuffer, overlap and inplace lower the same rows: the lowering is
    memoised in `cache` and only the scheme's name differs (the loops, and so their pull order, are
    shared)."""
    if first == last and not single:
        return None
    key = ("rows", first, last)
    if key not in cache:
        cache[key] = _lower_rows(graph, live, first, last, cache)
    block = cache[key]
    if block is None:
        return None
    return LoweredBlock(first, last, scheme, 1, block.reads, None, block.scratch, block.macs, block.loops,
                        dict(block.rings), block.recompute)


def _lower_rows(graph, live, first: int, last: int, cache: dict) -> LoweredBlock | None:
    layout = streaming.stream_layout(graph, live.last_use, first, last, 0, cache, True)
    if layout is None:
        return None
    end, rings = layout
    scratch = [Scratch.of(graph, f"ring{t}", (n, graph.shape_of(t)[1], graph.shape_of(t)[2]), t)
               for t, n in rings.items()]
    tail = tail_of(graph, end, last)
    scratch += tail_scratch(tail)
    # Rows are pulled only as far as a reader needs them (a strided VALID window may never read
    # the last rows); each pulled row is computed at full width.
    height = graph.shape_of(end)[0]
    pulled = streaming.band_profile(graph, end, height, cache, 0, first)
    table = streaming.work_table(graph, end, ("rows", height), lambda t: pulled[t][0] * graph.shape_of(t)[1]
                                 if t in pulled else None, cache, first)
    macs, factors = streaming.table_work(graph, table, first, end, last)
    loops = Stream(graph, first, end, 0, height, tail, cache)
    return LoweredBlock(first, last, "", 1, block_reads(graph, first, last), None, tuple(scratch), macs,
                        loops, rings, factors)


SCHEME = Linebuffer()

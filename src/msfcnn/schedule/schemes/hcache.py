"""`hcache` (the paper's scheme, with R output rows per step).

The stream end's output is made in bands of R rows; within a band, columns stream left to right
and every inner tensor keeps a ring of the columns its readers still need, over the band's rows
(tile rows x k columns x C). Rows shared by two bands are recomputed (counted in MACs), columns
never are. Where it lowers RAM, the output is written over the input rows earlier bands consumed
(`placement`).
"""

from __future__ import annotations

from .. import streaming
from ...ir.graph import aligned
from ..lowered import LoweredBlock, Scratch, Stream, block_reads
from .base import Scheme
from .overlap import placed_words
from .placement import place_over_input
from .tails import tail_of, tail_scratch


class HCache(Scheme, name="hcache", template="stream", order=20, floor="patches", growing=(0,)):
    """bands of R output rows; columns stream through rings of k columns; band overlap recomputed"""

    def rows_options(self, graph, first, last, cache=None):
        return streaming.step_options(graph, first, last, lambda shape: shape[0], cache)  # rows of the stream end

    def _tables(self, graph, end, rows, first, cache):
        """The band profile and the work table of the blocks with stream end `end`, down to op
        `first` at least (memoised, grown down as blocks starting lower ask)."""
        key = ("hcache tables", end, rows)
        floor, profile, table = cache.get(key, (end + 1, None, None))
        if floor > first:
            profile = streaming.band_profile(graph, end, rows, cache, 0, first)
            # Within a band, columns are pulled only as far as a reader needs them.
            pulled = streaming.band_profile(graph, end, graph.shape_of(end)[1], cache, 1, first)
            table = streaming.work_table(graph, end, ("hcache", rows), lambda t: profile[t][0] * pulled[t][0]
                                         if t in profile else None, cache, first)
            cache[key] = first, profile, table
        return profile, table

    def bound(self, graph, live, first, last, rows, cache):
        end = streaming.stream_block_end(graph, live.last_use, first, last, cache)
        if end is None or rows < 1 or rows > graph.shape_of(end)[0]:
            return None
        profile, table = self._tables(graph, end, rows, first, cache)
        # The ring of an inner tensor t (t < end) depends only on t and the stream end: sums of
        # ring sizes from t to the stream end, one table per (end, rows) grown down as asked.
        sums = cache.setdefault(("ring sums", end, rows), [0])  # sums[end - t]
        if end - len(sums) >= first:
            rings = streaming.stream_layout(graph, live.last_use, first, last, 1, cache)[1]
            for t in range(end - len(sums), first - 1, -1):
                sums.append(sums[-1] + aligned(profile[t][1] * rings[t] * graph.shape_of(t)[2]
                                               * graph.element_of(t).nbytes, graph.alignment))
        scratch = sums[end - first]
        if end < last:  # and one column of the stream end
            scratch += aligned(profile[end][1] * graph.shape_of(end)[2] * graph.element_of(end).nbytes, graph.alignment)
        return streaming.table_macs(graph, table, first, end, last), scratch

    def lower(self, graph, live, first, last, rows, cache):
        layout = streaming.stream_layout(graph, live.last_use, first, last, 1, cache)
        if layout is None:
            return None
        end, rings = layout
        if rows < 1 or rows > graph.shape_of(end)[0]:
            return None
        profile, table = self._tables(graph, end, rows, first, cache)
        macs, factors = streaming.table_work(graph, table, first, end, last)
        tail = tail_of(graph, end, last)
        made = cache.setdefault(("column rings", end, rows), {})  # the same rings recur across blocks
        scratch = []
        for t, cols in rings.items():
            ring = made.get((t, cols))
            if ring is None:
                ring = made[(t, cols)] = Scratch.of(graph, f"ring{t}", (profile[t][1], cols, graph.shape_of(t)[2]), t)
            scratch.append(ring)
        scratch += tail_scratch(tail)
        loops = Stream(graph, first, end, 1, rows, tail)
        block = LoweredBlock(first, last, self.name, rows, block_reads(graph, first, last), None, tuple(scratch),
                             macs, loops, rings, factors)
        return place_over_input(graph, live, block, cache) or block

    def explain(self, block):
        return (f"hcache: {block.rows} output row(s) per band; within a band columns stream left to right and each "
                "inner tensor keeps a ring of the columns its readers still need. Rows shared by two bands are "
                "recomputed." + (" Band by band, " + placed_words(block) + "." if block.placed_on else ""))


SCHEME = HCache()

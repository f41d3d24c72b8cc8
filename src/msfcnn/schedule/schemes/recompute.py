"""`recompute` (MCUNetV2 patches, `rows` = the patch side).

The stream end's output is made in square patches; for each, every inner tensor's whole receptive
region is computed into a tile buffer of its own, so overlap is recomputed in both directions and
nothing is cached between patches. Where it lowers RAM, the output is written over the input rows
earlier rows of patches consumed (`placement`).
"""

from __future__ import annotations


from .. import streaming
from ..lowered import LoweredBlock, Patches, Scratch, block_reads
from .base import Scheme
from .overlap import placed_words
from .placement import place_over_input
from .tails import tail_of, tail_scratch


class Recompute(Scheme, name="recompute", template="patches", order=30, floor="patches", growing=(0, 1)):
    """square output patches, each computed from scratch (overlap recomputed both ways)"""

    def rows_options(self, graph, first, last, cache=None):
        return streaming.step_options(graph, first, last, lambda shape: max(shape[:2]), cache)  # its larger side

    def _end(self, graph, live, first, last, rows, cache) -> int | None:
        end = streaming.stream_block_end(graph, live.last_use, first, last, cache)
        return None if end is None or rows < 1 or rows > max(graph.shape_of(end)[:2]) else end

    def bound(self, graph, live, first, last, rows, cache):
        end = self._end(graph, live, first, last, rows, cache)
        if end is None:
            return None
        tables = _patch_tables(graph, end, (rows, rows), first, cache)
        scratch = tables.scratch_bytes(first, end + 1 if end < last else end)
        return streaming.table_macs(graph, tables.work, first, end, last), scratch

    def lower(self, graph, live, first, last, rows, cache):
        end = self._end(graph, live, first, last, rows, cache)
        if end is None:
            return None
        block = lower_patches(graph, first, last, end, (rows, rows), self.name, rows, cache)
        return place_over_input(graph, live, block, cache) or block

    def explain(self, block):
        return (f"recompute: {block.rows}x{block.rows} output patches, each computed from scratch through the block "
                "into per-tensor patch buffers (overlap recomputed both ways)."
                + (" Row of patches by row of patches, " + placed_words(block) + "." if block.placed_on else ""))


def lower_patches(graph, first: int, last: int, end: int, tile: tuple[int, int], scheme: str, rows: int,
                  cache: dict) -> LoweredBlock:
    """Ops first..last computed tile by tile (stream end `end`): each inner tensor's region of a
    tile goes to a buffer of its own; with a tail, the stream end's tile is kept too."""
    tables = _patch_tables(graph, end, tile, first, cache)
    macs, factors = streaming.table_work(graph, tables.work, first, end, last)
    tail = tail_of(graph, end, last)
    scratch = tables.tiles(graph, first, end + 1 if end < last else end)
    scratch += tail_scratch(tail)
    loops = Patches(graph, first, end, tile, tail)
    return LoweredBlock(first, last, scheme, rows, block_reads(graph, first, last), None, tuple(scratch), macs,
                        loops, {}, factors)


class _PatchTables:
    """What the blocks with one stream end and tile share, from the stream end down as far as
    blocks start: the work table, each tensor's tile buffer shape (None for those the stream
    end does not depend on; shapes[end - t]), the suffix sums of their bytes (sums[end + 1 - t]:
    tensors t..end) and the buffers made from them (made once, shared by the blocks)."""

    __slots__ = ("end", "tile", "work", "shapes", "sums", "buffers")

    def __init__(self, end: int, tile: tuple[int, int]):
        self.end, self.tile = end, tile
        self.work, self.shapes, self.sums, self.buffers = None, [], [0], {}

    def extend(self, graph, first: int, cache: dict) -> None:
        end, tile = self.end, self.tile
        row_profile = streaming.band_profile(graph, end, tile[0], cache, 0, first)
        col_profile = streaming.band_profile(graph, end, tile[1], cache, 1, first)
        # Regions are products of a row band and a column band, so totals and maxima separate.
        self.work = streaming.work_table(graph, end, ("patches", tile), lambda t: row_profile[t][0]
                                         * col_profile[t][0] if t in row_profile else None, cache, first)
        for t in range(end - len(self.shapes), first - 1, -1):
            shape = (row_profile[t][1], col_profile[t][1], graph.shape_of(t)[2]) if t in row_profile else None
            self.shapes.append(shape)
            self.sums.append(self.sums[-1] + (0 if shape is None else Scratch.of(graph, "", shape, t).nbytes))

    def scratch_bytes(self, first: int, stop: int) -> int:
        """Bytes of the tile buffers of tensors first..stop-1."""
        return self.sums[self.end + 1 - first] - self.sums[self.end + 1 - stop]

    def tiles(self, graph, first: int, stop: int) -> list[Scratch | None]:
        """The tile buffers of tensors first..stop-1."""
        made = self.buffers
        for t in range(first, stop):
            if t not in made:
                shape = self.shapes[self.end - t]
                made[t] = None if shape is None else Scratch.of(graph, f"tile{t}", shape, t)
        return [made[t] for t in range(first, stop)]


def _patch_tables(graph, end: int, tile: tuple[int, int], first: int, cache: dict) -> _PatchTables:
    """The `_PatchTables` of the blocks with stream end `end` in tiles of `tile`, down to op
    `first` at least: they depend only on the stream end and the tile, so one per pair, sliced
    per block."""
    key = ("tiles", end, tile)
    tables = cache.get(key)
    if tables is None:
        tables = cache[key] = _PatchTables(end, tile)
    if end - len(tables.shapes) >= first:
        tables.extend(graph, first, cache)
    return tables


SCHEME = Recompute()

"""`recompute` (MCUNetV2 patches, `rows` = the patch side).

The stream end's output is made in square patches; for each, every inner tensor's whole receptive
region is computed into a tile buffer of its own, so overlap is recomputed in both directions and
nothing is cached between patches. Where it lowers RAM, the output is written over the input rows
earlier rows of patches consumed (`placement`).
"""

from __future__ import annotations

from itertools import accumulate
from math import prod

from .. import streaming
from ..lowered import LoweredBlock, Patches, Scratch, block_reads
from .base import Scheme
from .overlap import placed_words
from .placement import place_over_input
from .tails import tail_of, tail_scratch


class Recompute(Scheme, name="recompute", template="patches", order=30):
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
        table, _, sums = _patch_tables(graph, end, (rows, rows), cache)
        scratch = sums[end + 1 if end < last else end] - sums[first]
        return streaming.table_macs(graph, table, first, end, last), scratch

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
    table = _patch_tables(graph, end, tile, cache)[0]
    macs, factors = streaming.table_work(graph, table, first, end, last)
    tail = tail_of(graph, end, last)
    scratch = _tiles(graph, end, tile, cache)[first:end + 1 if end < last else end]
    scratch += tail_scratch(tail)
    loops = Patches(graph, first, end, tile, tail)
    return LoweredBlock(first, last, scheme, rows, block_reads(graph, first, last), None, tuple(scratch), macs,
                        loops, {}, factors)


def _patch_tables(graph, end: int, tile: tuple[int, int], cache: dict):
    """The work table of the blocks with stream end `end` in tiles of `tile`, each tensor's tile
    buffer shape (None for those `end` does not depend on), and the prefix sums of their bytes:
    they depend only on the stream end and the tile, so one of each per pair, sliced per block."""
    key = ("tiles", end, tile)
    if key not in cache:
        row_profile = streaming.band_profile(graph, end, tile[0], cache, 0)
        col_profile = streaming.band_profile(graph, end, tile[1], cache, 1)
        # Regions are products of a row band and a column band, so totals and maxima separate.
        table = streaming.work_table(graph, end, ("patches", tile), lambda t: row_profile[t][0] * col_profile[t][0]
                                     if t in row_profile else None, cache)
        shapes = [(row_profile[t][1], col_profile[t][1], graph.shape_of(t)[2]) if t in row_profile else None
                  for t in range(end + 1)]
        nbytes = graph.element.nbytes
        cache[key] = table, shapes, [0, *accumulate(0 if s is None else prod(s) * nbytes for s in shapes)]
    return cache[key]


def _tiles(graph, end: int, tile: tuple[int, int], cache: dict) -> list[Scratch | None]:
    """The tile buffers of `_patch_tables`' shapes, made once per (end, tile) a block lowers with."""
    key = ("tile buffers", end, tile)
    if key not in cache:
        cache[key] = [None if shape is None else Scratch(f"tile{t}", shape, graph.dtype)
                      for t, shape in enumerate(_patch_tables(graph, end, tile, cache)[1])]
    return cache[key]


SCHEME = Recompute()

"""The `exact` cost model: the bytes the runtime really holds in its arena.

Every candidate block is lowered by its scheme (`schedule.schemes`), with the same code the fused
executor and the C generator walk, and its RAM is the arena bytes live while it runs: the tensors
it reads and writes, the skip tensors waiting across it, and its scratch buffers. The network
input and output are the caller's buffers and not counted, unless `count_io` puts them in the
arena too (then each counts while it is live). Each edge keeps its lowering, so the chosen plan
is scheduled without lowering it again.
"""

from __future__ import annotations

import gc

from .. import progress
from ..fusion.dag import Block, FusionDAG
from ..ir import Graph
from ..schedule import Liveness, LoweredBlock, streaming
from ..schedule import schemes as registry

NAME = "exact"
SCHEMES = registry.FUSED_SCHEMES  # every fused scheme of the registry


def _edge(live: Liveness, lowered: LoweredBlock) -> Block:
    return Block(lowered.first, lowered.last, lowered.scheme, live.block_ram(lowered), lowered.macs, lowered.rows,
                 lowered, registry.SCHEMES[lowered.scheme].time_rank)


def build_dag(graph: Graph, schemes=SCHEMES, count_io: bool = False) -> FusionDAG:
    # The build allocates hundreds of thousands of objects and frees almost none: the cyclic
    # collector would walk the growing heap again and again for nothing (a quarter of the time).
    # Paused while it runs; anything cyclic it leaves is collected afterwards as usual.
    paused = gc.isenabled()
    gc.disable()
    try:
        return _build_dag(graph, schemes, count_io)
    finally:
        if paused:
            gc.enable()


def _build_dag(graph: Graph, schemes, count_io: bool) -> FusionDAG:
    live = Liveness(graph, count_io)
    n = len(graph)
    blocks = vanilla_blocks(graph, live)
    cache: dict = {}
    # Every fused scheme lowers a block of several ops only as a stream (streaming.stream_layout,
    # which needs streaming.stream_end), and stream_end is None for every block first..last that
    # reaches stream_break(first): its walk stops at that op whatever follows. So no block from
    # `first` reaching it has an edge, and the search stops there (the block of op `first` alone
    # is still tried: `inplace` writes one op over its input without streaming).
    reach = [max(first + 1, streaming.stream_break(graph, first)) for first in range(n)]
    fused = registry.check_fused(schemes)
    progress.count(len(fused) * n)  # first ops, scheme by scheme
    for scheme in (registry.SCHEMES[name] for name in fused):
        for first in range(n):
            progress.advance()
            for last in range(first, reach[first]):  # one op too, for the schemes that take one
                for rows in scheme.rows_options(graph, first, last):
                    lowered = scheme.lower(graph, live, first, last, rows, cache)
                    if lowered is None:
                        break  # the ops cannot stream together: no setting of rows changes that
                    blocks.append(_edge(live, lowered))
    return FusionDAG(n, tuple(blocks))


def vanilla_blocks(graph: Graph, live: Liveness | None = None, count_io: bool = False) -> list[Block]:
    live = live or Liveness(graph, count_io)
    return [_edge(live, registry.SINGLE.lower(graph, live, i, i, 1, {})) for i in range(len(graph))]

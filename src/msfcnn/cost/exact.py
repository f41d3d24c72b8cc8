"""The `exact` cost model (SPEC 3.2): the bytes the runtime really holds in its arena.

Every candidate block is lowered with the same code the fused executor and the C generator
consume (`schedule.blocks`), and its RAM is the arena bytes live while it runs: the tensors it
reads and writes, the skip tensors waiting across it, and its scratch buffers. The network input
and output are the caller's buffers and not counted.
"""

from __future__ import annotations

from ..errors import UserError
from ..fusion.dag import Block, FusionDAG
from ..ir import Graph
from ..schedule import SCHEMES as FUSED_SCHEMES
from ..schedule import Liveness, hcache_rows_options, lower_block
from ..schedule.blocks import stream_end

NAME = "exact"
SCHEMES = FUSED_SCHEMES


def _edge(live: Liveness, lowered) -> Block:
    return Block(lowered.first, lowered.last, lowered.scheme, live.block_ram(lowered), lowered.macs, lowered.rows)


def build_dag(graph: Graph, schemes=SCHEMES) -> FusionDAG:
    unknown = set(schemes) - set(SCHEMES)
    if unknown:
        raise UserError(f"unknown fusion scheme(s) {', '.join(sorted(unknown))} (available: {', '.join(SCHEMES)})")
    live = Liveness(graph)
    n = len(graph)
    blocks = [_edge(live, lower_block(graph, live, i, i, "single")) for i in range(n)]
    cache: dict = {}
    for scheme in schemes:
        for first in range(n):
            for last in range(first + 1, n):
                for rows in _rows_options(graph, scheme, first, last):
                    lowered = lower_block(graph, live, first, last, scheme, rows, cache)
                    if lowered is None:
                        break  # the ops cannot stream together: no setting of rows changes that
                    blocks.append(_edge(live, lowered))
    return FusionDAG(n, tuple(blocks))


def _rows_options(graph: Graph, scheme: str, first: int, last: int) -> list[int]:
    """Rows per step to try for a block: hcache sweeps R; other schemes have one setting."""
    end = stream_end(graph, first, last)
    if end is None or scheme == "linebuffer":
        return [1]
    if scheme == "recompute":  # square patches: 1, 2, 4, ... up to the map's larger side
        side = max(graph.shape_of(end)[:2])
        return [1 << i for i in range(side.bit_length()) if 1 << i < side] + [side]
    return hcache_rows_options(graph, end)  # rows of the streamed map (a tail may follow it)


def vanilla_blocks(graph: Graph) -> list[Block]:
    live = Liveness(graph)
    return [_edge(live, lower_block(graph, live, i, i, "single")) for i in range(len(graph))]

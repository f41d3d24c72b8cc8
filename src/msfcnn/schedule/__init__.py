"""Plans lowered into schedules: what each block allocates and computes, and where in the arena."""

from __future__ import annotations

from ..errors import UserError
from ..fusion.dag import Block
from ..ir import Graph
from .blocks import (Liveness, LoweredBlock, hcache_rows_options, lower_hcache, lower_linebuffer, lower_recompute,
                     lower_single)
from .layout import Schedule, lower_plan

SCHEMES = ("linebuffer", "hcache", "recompute")


def lower_block(graph: Graph, live: Liveness, first: int, last: int, scheme: str, rows: int = 1,
                ring_cache: dict | None = None) -> LoweredBlock | None:
    """The lowering of one candidate block, or None if the scheme cannot run those ops."""
    if scheme == "single":
        return lower_single(graph, live, first) if first == last else None
    if scheme == "linebuffer":
        return lower_linebuffer(graph, live, first, last, ring_cache)
    if scheme == "hcache":
        return lower_hcache(graph, live, first, last, rows, ring_cache)
    if scheme == "recompute":
        return lower_recompute(graph, live, first, last, rows, ring_cache)
    raise UserError(f"unknown fusion scheme {scheme!r} (available: {', '.join(SCHEMES)})")


def schedule_plan(graph: Graph, blocks: list[Block]) -> Schedule:
    """Lower a plan's blocks (a complete path through the fusion DAG) into a schedule."""
    live = Liveness(graph)
    lowered = []
    for b in blocks:
        block = lower_block(graph, live, b.first, b.last, b.scheme, b.rows)
        if block is None:
            raise UserError(f"ops {b.first}..{b.last} cannot run as one {b.scheme} block")
        lowered.append(block)
    return lower_plan(graph, lowered)


__all__ = ["SCHEMES", "hcache_rows_options", "Liveness", "LoweredBlock", "Schedule", "lower_block", "lower_plan", "schedule_plan"]

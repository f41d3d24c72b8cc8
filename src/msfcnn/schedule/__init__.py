"""Plans lowered into schedules: what each block allocates and computes, and where in the arena."""

from __future__ import annotations

from ..errors import UserError
from ..fusion.dag import Block
from ..ir import Graph
from .layout import Schedule, lower_plan
from .lowered import Liveness, LoweredBlock, stream_input
from .schemes import FUSED_SCHEMES, SCHEMES, get_scheme


def lower_block(graph: Graph, live: Liveness, first: int, last: int, scheme: str, rows: int = 1,
                cache: dict | None = None) -> LoweredBlock | None:
    """The lowering of one candidate block, or None if the scheme cannot run those ops."""
    block = get_scheme(scheme).lower(graph, live, first, last, rows, {} if cache is None else cache)
    return None if block is None else stream_input(graph, live, block)


def schedule_plan(graph: Graph, blocks: list[Block], count_io: bool = False, input_stream: bool = False) -> Schedule:
    """Lower a plan's blocks (a complete path through the fusion DAG) into a schedule; with
    `count_io` the network input and output are arena buffers too. Blocks that come from the
    exact cost model carry their lowering already; others (a plan read from a file) are lowered
    here. With `input_stream` the blocks that can pull the input row by row do (`stream_input`)."""
    live = Liveness(graph, count_io, input_stream)
    cache: dict = {}
    lowered = []
    for b in blocks:
        block = b.lowered or lower_block(graph, live, b.first, b.last, b.scheme, b.rows, cache)
        if block is None:
            raise UserError(f"ops {b.first}..{b.last} cannot run as one {b.scheme} block")
        lowered.append(block)
    return lower_plan(graph, lowered, live)


__all__ = ["FUSED_SCHEMES", "SCHEMES", "Liveness", "LoweredBlock", "Schedule", "lower_block", "lower_plan",
           "schedule_plan"]

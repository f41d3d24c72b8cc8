"""A plan lowered into a schedule: its blocks in order, and one static arena holding every tensor
and scratch buffer at a fixed offset.

Layout rule (why the arena is exactly the largest block's live bytes): live tensors are packed
against the two ends of the arena, some growing up from offset 0, some down from the top. Each
block writes its output against the end opposite to its input and puts its scratch in between,
so while it runs its live bytes are contiguous from both ends and the arena needs no more than
the largest block. A tensor that waits (a skip source) stays where it is; only when it is freed
below another live tensor does it leave a hole, and then the arena is honestly larger than that
bound and the schedule says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import NETWORK_INPUT, Graph
from .blocks import Liveness, LoweredBlock

LOW, HIGH, CALLER = "low", "high", "caller"


@dataclass(frozen=True)
class Schedule:
    graph: Graph
    blocks: tuple[LoweredBlock, ...]
    arena_bytes: int
    tensor_offsets: dict[int, int]  # arena offset of each tensor that lives in the arena
    scratch_offsets: tuple[dict[str, int], ...]  # per block: scratch name -> offset
    block_ram: tuple[int, ...]  # live bytes of each block (the exact cost model's edge weights)

    @property
    def predicted_peak_ram_bytes(self) -> int:
        return self.arena_bytes


def lower_plan(graph: Graph, blocks: list[LoweredBlock]) -> Schedule:
    """Place every tensor and scratch buffer of `blocks` (a complete path, in order)."""
    live = Liveness(graph)
    # Each side lists the live arena tensors packed against it, with their distance from that
    # side's end; HIGH distances become offsets once the arena size is known.
    sides: dict[str, dict[int, int]] = {LOW: {}, HIGH: {}}
    where: dict[int, tuple[str, int]] = {}
    scratch_at: list[dict[str, tuple[str, int]]] = []
    arena = 0
    ram = []

    def extent(side: str) -> int:
        return max((d + live.nbytes(t) for t, d in sides[side].items()), default=0)

    for block in blocks:
        main = graph.nodes[block.first].inputs[0]
        main_side = where[main][0] if main in where and main in sides[where[main][0]] else CALLER
        out = block.output
        if block.alias is not None and live.in_arena(out):
            side, distance = where[block.alias]
            del sides[side][block.alias]
            sides[side][out] = distance
            where[out] = (side, distance)
        elif live.in_arena(out):
            side = HIGH if main_side == LOW else LOW
            where[out] = (side, extent(side))
            sides[side][out] = where[out][1]
        cursor, placed = extent(LOW), {}
        for buffer in block.scratch:
            placed[buffer.name] = (LOW, cursor)
            cursor += buffer.nbytes
        scratch_at.append(placed)
        arena = max(arena, cursor + extent(HIGH))
        ram.append(live.block_ram(block))
        for t in block.reads:  # tensors read for the last time leave the arena
            if live.last_use[t] <= block.last and t in where:
                sides[where[t][0]].pop(t, None)
    offsets = {t: _offset(pos, live.nbytes(t), arena) for t, pos in where.items()}
    scratch_offsets = tuple({name: _offset(pos, 0, arena) for name, pos in placed.items()} for placed in scratch_at)
    return Schedule(graph, tuple(blocks), arena, offsets, scratch_offsets, tuple(ram))


def _offset(position: tuple[str, int], size: int, arena: int) -> int:
    side, distance = position
    return distance if side == LOW else arena - distance - size

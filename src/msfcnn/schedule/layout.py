"""A plan lowered into a schedule: its blocks in order, and one static arena holding every tensor
and scratch buffer at a fixed offset.

Layout rule (why the arena is exactly the largest block's live bytes): live tensors are packed
against the two ends of the arena, some growing up from offset 0, some down from the top. Each
block writes its output against the end opposite to its input and puts its scratch in between,
so while it runs its live bytes are contiguous from both ends and the arena needs no more than
the largest block. When a tensor that waited (a skip source) is freed below another live tensor,
the live ones slide against their end (a memmove between blocks, recorded in the schedule), so
no hole survives into the next block.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import NETWORK_INPUT, Graph
from .lowered import Liveness, LoweredBlock

LOW, HIGH, CALLER = "low", "high", "caller"


@dataclass(frozen=True)
class Schedule:
    graph: Graph
    blocks: tuple[LoweredBlock, ...]
    arena_bytes: int
    tensor_offsets: tuple[dict[int, int], ...]  # per block: arena offset of each live arena tensor
    scratch_offsets: tuple[dict[str, int], ...]  # per block: scratch name -> offset
    moves: tuple[tuple[tuple[int, int, int], ...], ...]  # per block, run after it: (from, to, bytes)
    block_ram: tuple[int, ...]  # live bytes of each block (the exact cost model's edge weights)

    @property
    def predicted_peak_ram_bytes(self) -> int:
        return self.arena_bytes


def lower_plan(graph: Graph, blocks: list[LoweredBlock]) -> Schedule:
    """Place every tensor and scratch buffer of `blocks` (a complete path, in order)."""
    live = Liveness(graph)
    # Each side maps the live arena tensors packed against it to their distance from that
    # side's end; HIGH distances become offsets once the arena size is known.
    sides: dict[str, dict[int, int]] = {LOW: {}, HIGH: {}}
    positions, scratch_at, moves, ram = [], [], [], []
    arena = 0

    def extent(side: str) -> int:
        return sum(live.nbytes(t) for t in sides[side])  # sides are kept compact

    def side_of(t: int) -> str:
        return next((side for side in (LOW, HIGH) if t in sides[side]), CALLER)

    for block in blocks:
        main_side = side_of(graph.nodes[block.first].inputs[0])
        out = block.output
        if block.alias is not None and live.in_arena(out):
            side = side_of(block.alias)
            sides[side][out] = sides[side].pop(block.alias)
        elif live.in_arena(out):
            side = HIGH if main_side == LOW else LOW
            sides[side][out] = extent(side)
        cursor, placed = extent(LOW), {}
        for buffer in block.scratch:
            placed[buffer.name] = (LOW, cursor)
            cursor += buffer.nbytes
        arena = max(arena, cursor + extent(HIGH))
        placed_now = {t: (side, d) for side in (LOW, HIGH) for t, d in sides[side].items()}
        if block.alias is not None and out in placed_now:
            placed_now[block.alias] = placed_now[out]  # the op reads its input where it writes
        positions.append(placed_now)
        scratch_at.append(placed)
        ram.append(live.block_ram(block))
        for t in block.reads:  # tensors read for the last time leave the arena
            if live.last_use[t] <= block.last and side_of(t) != CALLER:
                del sides[side_of(t)][t]
        moves.append(_compact(sides, live))
    offsets = tuple({t: _offset(pos, live.nbytes(t), arena) for t, pos in placed.items()} for placed in positions)
    scratch_offsets = tuple({name: _offset(pos, 0, arena) for name, pos in placed.items()} for placed in scratch_at)
    byte_moves = tuple(tuple((_offset((side, old), n, arena), _offset((side, new), n, arena), n)
                             for side, old, new, n in block_moves) for block_moves in moves)
    return Schedule(graph, tuple(blocks), arena, offsets, scratch_offsets, byte_moves, tuple(ram))


def _compact(sides: dict[str, dict[int, int]], live: Liveness) -> list[tuple[str, int, int, int]]:
    """Slide the tensors left on each side against its end, nearest first, closing the holes that
    tensors freed below them leave. A move never overwrites a live byte it has not yet copied
    (memmove semantics), so it needs no extra memory. Returns (side, old, new distance, bytes)."""
    moved = []
    for side, tensors in sides.items():
        distance = 0
        for t, old in sorted(tensors.items(), key=lambda item: item[1]):
            if old != distance:
                moved.append((side, old, distance, live.nbytes(t)))
                tensors[t] = distance
            distance += live.nbytes(t)
    return moved


def _offset(position: tuple[str, int], size: int, arena: int) -> int:
    side, distance = position
    return distance if side == LOW else arena - distance - size

"""A schedule's buffers over a board's RAM regions: what `regions.place` is given, and what it
gave back, region by region.

The buffers are the arena's (`layout`: tensors, rings and scratch, the network input and output
under --count-io) and those live through every step: the persistent state, the caller's input
and output, and the program's stack, static data and reserve. Accesses are bytes touched, an
estimate: a tensor is written once and read whole by each block that reads it; a scratch buffer
(a ring, a cache of rows) is read once per MAC of its block, shared among the block's scratch
buffers. The stack is touched by every call, so it counts as more than everything else together.
The network input goes only where DMA reaches (a camera or a microphone fills it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..ir import Graph
from .arena import Buffer
from .layout import arena_buffers
from .lowered import Liveness, LoweredBlock
from .regions import Placement, RegionLike, place

STATE, INPUT, OUTPUT, PROGRAM = "state", "input", "output", "stack, static data and reserve"


@dataclass(frozen=True)
class Whole:
    """A buffer live through every step (not an arena buffer of the schedule)."""

    name: str
    size: int
    accesses: float
    needs_dma: bool = False


@dataclass(frozen=True)
class RegionUse:
    """One region as a placement uses it: its arena (every buffer placed there, packed) and the
    buffers live through every step that it holds."""

    name: str
    size: int
    kind: str
    cost: float
    arena_bytes: int
    holds: tuple[str, ...]  # the Whole buffers placed here

    def to_dict(self) -> dict:
        return {"region": self.name, "size": self.size, "kind": self.kind, "cost": self.cost,
                "arena_bytes": self.arena_bytes, "free_bytes": self.size - self.arena_bytes, "holds": list(self.holds)}


def wholes(graph: Graph, live: Liveness, blocks: Sequence[LoweredBlock], program_bytes: int,
           input_in_ram: bool = True) -> list[Whole]:
    """The buffers live through every step: state, the caller's io (unless counted in the arena;
    the input unless it is in flash) and the program's bytes (stack bound, static data, reserve)."""
    readers = _readers(blocks)
    found = []
    if graph.state_bytes:
        found.append(Whole(STATE, graph.state_bytes, 2.0 * graph.state_bytes))
    if not live.count_io:
        if input_in_ram:
            size = sum(graph.nbytes(t) for t in graph.input_tensors)
            found.append(Whole(INPUT, size, size * (1.0 + sum(readers.get(t, 0) for t in graph.input_tensors)), True))
        found.append(Whole(OUTPUT, graph.nbytes(graph.output), 2.0 * graph.nbytes(graph.output)))
    if program_bytes:
        found.append(Whole(PROGRAM, program_bytes, 0.0))
    return found


def place_schedule(graph: Graph, live: Liveness, blocks: Sequence[LoweredBlock], extra: Sequence[Whole],
                   regions: Sequence[RegionLike]) -> tuple[Placement, list[Buffer], list] | None:
    """The schedule's buffers and `extra` placed over `regions` (regions.place); None when none
    fits. Returns the placement, the buffers and what each holds (a tensor, a scratch name, or a
    Whole's name)."""
    if not blocks:
        return None
    buffers, keys = arena_buffers(graph, list(blocks), live)
    accesses = _accesses(buffers, keys, blocks)
    needs_dma = [False] * len(buffers)
    last = len(blocks) - 1
    hottest = sum(accesses) + sum(w.accesses for w in extra) + 1.0
    for whole in extra:
        buffers.append(Buffer(whole.size, 0, last))
        keys.append(whole.name)
        accesses.append(hottest if whole.name == PROGRAM else whole.accesses)
        needs_dma.append(whole.needs_dma)
    placement = place(buffers, len(blocks), regions, accesses, needs_dma)
    return None if placement is None else (placement, buffers, keys)


def region_uses(placement: Placement, keys: Sequence, regions: Sequence) -> tuple[RegionUse, ...]:
    names = {STATE, INPUT, OUTPUT, PROGRAM}
    return tuple(RegionUse(region.name, region.size, getattr(region, "kind", "sram"), region.cost, arena,
                           tuple(k for i, k in enumerate(keys) if k in names and placement.region_of[i] == r))
                 for r, (region, arena) in enumerate(zip(regions, placement.arena_bytes)))


def _readers(blocks: Sequence[LoweredBlock]) -> dict[int, int]:
    count: dict[int, int] = {}
    for block in blocks:
        for t in block.reads:
            count[t] = count.get(t, 0) + 1
    return count


def _accesses(buffers: list[Buffer], keys: list, blocks: Sequence[LoweredBlock]) -> list[float]:
    readers = _readers(blocks)
    scratch_count = [len(block.scratch) for block in blocks]
    found = []
    for b, key in zip(buffers, keys):
        if b.scratch:
            found.append(max(float(b.size), blocks[b.first].macs / scratch_count[b.first]))
        else:
            found.append(b.size * (1.0 + readers.get(key, 0)))
    return found

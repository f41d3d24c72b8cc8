"""A schedule's buffers over a board's RAM regions: what `regions.place` is given, and what it
gave back, region by region.

The buffers are the arena's (`layout`: tensors, rings and scratch, the network input and output
under --count-io) and those live through every step: the persistent state, the caller's input
and output, and the program's stack, static data and reserve. A buffer's accesses come from the
latency model's loop counts (`LoopRuns`, latency/accesses.py): in each block, the loop-body runs
of the kernel that writes the tensor it holds, and of each kernel that reads it (an op's reads
shared among its inputs); a scratch buffer of no tensor (a workspace, an accumulator) shares the
block's own loops. Every buffer counts at least its bytes, written once. Without loop counts,
accesses are bytes touched: a tensor written once and read whole by each reader, a scratch buffer
once per MAC of its block, shared among the block's scratch buffers. The stack is touched by every
call, so it counts as more than everything else together. The network input goes only where DMA
reaches (a camera or a microphone fills it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..ir import Graph
from .arena import Buffer, check_arena, peak_live_bytes
from .layout import Schedule, arena_buffers, schedule_of
from .lowered import Liveness, LoweredBlock
from .regions import Placement, RegionLike, pack, place, region_members, relinked

REGION_ALIGNMENT = 16  # each region's arena starts at a multiple of it in the schedule's offsets

STATE, INPUT, OUTPUT, PROGRAM = "state", "input", "output", "stack, static data and reserve"


@dataclass(frozen=True)
class LoopRuns:
    """One block's loop-body runs, from the latency model's counts (latency/accesses.py): per op,
    those of its kernel that read its inputs and those that write its output; and the block's own
    (its walk's loops, a tail's accumulate)."""

    reads: dict[int, int]
    writes: dict[int, int]
    own: int


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
           input_in_ram: bool = True, runs: Sequence[LoopRuns] | None = None) -> list[Whole]:
    """The buffers live through every step: state, the caller's io (unless counted in the arena;
    the input unless it is in flash) and the program's bytes (stack bound, static data, reserve).
    `runs`: the blocks' loop counts, which the io's accesses are taken from (else bytes touched)."""
    readers = {} if runs else _readers(blocks)
    found = []
    if graph.state_bytes:
        found.append(Whole(STATE, graph.state_bytes, 2.0 * graph.state_bytes))
    if not live.count_io:
        output = graph.nbytes(graph.output)
        if input_in_ram:
            size = sum(graph.nbytes(t) for t in graph.input_tensors)
            touched = (sum(_touches(graph, block, run, t) for block, run in zip(blocks, runs) for t in graph.input_tensors)
                       if runs else size * sum(readers.get(t, 0) for t in graph.input_tensors))
            found.append(Whole(INPUT, size, size + touched, True))
        touched = (sum(_touches(graph, block, run, graph.output) for block, run in zip(blocks, runs))
                   if runs else output)
        found.append(Whole(OUTPUT, output, output + touched))
    if program_bytes:
        found.append(Whole(PROGRAM, program_bytes, 0.0))
    return found


def place_schedule(graph: Graph, live: Liveness, blocks: Sequence[LoweredBlock], extra: Sequence[Whole],
                   regions: Sequence[RegionLike], input_region: int | None = None,
                   runs: Sequence[LoopRuns] | None = None) -> tuple[Placement, list[Buffer], list] | None:
    """The schedule's buffers and `extra` placed over `regions` (regions.place); None when none
    fits. Returns the placement, the buffers and what each holds (a tensor, a scratch name, or a
    Whole's name). `input_region`: the network inputs go to that region only (--input-in).
    `runs`: each block's loop counts, the buffers' accesses (else bytes touched)."""
    if not blocks:
        return None
    tensors, tensor_keys = arena_buffers(graph, list(blocks), live)
    tensor_accesses = (loop_accesses(graph, tensors, tensor_keys, blocks, runs) if runs is not None
                       else _accesses(tensors, tensor_keys, blocks))
    hottest = sum(tensor_accesses) + sum(w.accesses for w in extra) + 1.0
    # The buffers live throughout come first, so that each lies at the bottom of its region's
    # arena and the others pack above them as they would alone.
    shift = {i: i + len(extra) for i in range(len(tensors))}
    buffers = [Buffer(whole.size, 0, len(blocks) - 1) for whole in extra] + [relinked(b, shift) for b in tensors]
    keys = [whole.name for whole in extra] + tensor_keys
    accesses = [hottest if whole.name == PROGRAM else whole.accesses for whole in extra] + tensor_accesses
    needs_dma = [whole.needs_dma for whole in extra] + [key in graph.input_tensors for key in tensor_keys]
    inputs = {INPUT, *graph.input_tensors}  # the caller's input, or the arena's input buffers
    pinned = {} if input_region is None else {i: input_region for i, key in enumerate(keys) if key in inputs}
    placement = place(buffers, len(blocks), regions, accesses, needs_dma, pinned)
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


def loop_accesses(graph: Graph, buffers: list[Buffer], keys: list, blocks: Sequence[LoweredBlock],
                  runs: Sequence[LoopRuns]) -> list[float]:
    """Each arena buffer's accesses from the blocks' loop counts (the module's docstring)."""
    found = []
    for b, key in zip(buffers, keys):
        if not b.scratch:  # a whole tensor: touched by the blocks of its lifetime that make or read it
            touched = sum(_touches(graph, blocks[step], runs[step], key) for step in range(b.first, b.last + 1))
        else:
            block, run = blocks[b.first], runs[b.first]
            scratch = block.scratch_named(key)
            if scratch.tensor is None:
                own = [s for s in block.scratch if s.tensor is None]
                touched = run.own / len(own)
            else:
                hosted = [scratch.tensor] + [v for v, (host, _) in block.homes.items() if host == scratch.tensor]
                touched = sum(_touches(graph, block, run, t) for t in hosted)
        found.append(max(float(b.size), touched))
    return found


def _touches(graph: Graph, block: LoweredBlock, run: LoopRuns, tensor: int) -> float:
    """The loop-body runs of `block` that write `tensor` or read it (an op's reads shared among
    its inputs)."""
    total = float(run.writes.get(tensor, 0))
    for t in range(block.first, block.last + 1):
        inputs = graph.nodes[t].inputs
        if tensor in inputs:
            total += run.reads.get(t, 0) * inputs.count(tensor) / len(inputs)
    return total


def placed_schedule(graph: Graph, live: Liveness, blocks: Sequence[LoweredBlock], placement: Placement,
                    keys: Sequence, regions: Sequence[RegionLike], state_apart: bool = False) -> Schedule:
    """The schedule whose arena is one per region, as `placement` put the buffers (the buffers
    live throughout other than the state only reserved room: the C keeps its own stack and io).
    Its offsets run over the regions one after the other, each region from a base aligned to
    REGION_ALIGNMENT, so the numpy executor runs it in one array; the C maps them back (ARENA).
    `state_apart`: the state is a buffer of its own (a shared arena's network, codegen/shared.py)
    at offsets [0, state bytes), below the regions, whatever `placement` did with it."""
    buffers, arena_keys = arena_buffers(graph, list(blocks), live)
    region_of = list(placement.region_of[len(keys) - len(buffers):])  # (the buffers live throughout come first)
    state = [] if state_apart else [i for i, key in enumerate(keys) if key == STATE]
    if state:  # first in its region, so that it lies at the region's start and never moves
        buffers.insert(0, Buffer(graph.state_bytes, 0, len(blocks) - 1))
        region_of.insert(0, placement.region_of[state[0]])
    packed = pack(buffers, len(blocks), len(regions), region_of)
    bases, end = [], graph.state_bytes if state_apart else 0
    for arena in packed.arenas:
        end = -(-end // REGION_ALIGNMENT) * REGION_ALIGNMENT
        bases.append(end)
        end += arena.size
    offsets = tuple({i: bases[region_of[i]] + packed.offset(i, step) for i in range(len(buffers))
                     if buffers[i].first <= step <= buffers[i].last} for step in range(len(blocks)))
    moves = tuple(tuple((bases[r] + a, bases[r] + b, n) for r, arena in enumerate(packed.arenas)
                        for a, b, n in arena.moves[step]) for step in range(len(blocks)))
    for arena, (_, local) in zip(packed.arenas, region_members(buffers, region_of, len(regions))):
        check_arena(local, arena)  # a broken layout fails here, not as wrong numbers on a board
    state_offsets = graph.state_offsets() if state_apart else ()
    if state:
        start = bases[region_of[0]] + packed.offset(0, 0)
        state_offsets = tuple(start + offset for offset in graph.state_offsets())
        buffers, offsets = buffers[1:], tuple({i - 1: o for i, o in step.items() if i} for step in offsets)
    spans = tuple((region.name, base, arena.size) for region, base, arena in zip(regions, bases, packed.arenas))
    return schedule_of(graph, list(blocks), live, buffers, arena_keys, offsets, moves, end, state_offsets, spans)


def declared_bytes(schedule: Schedule) -> int:
    """The bytes the generated C declares for a schedule over several regions: each region's
    arena rounded up to a whole number of 4-byte words (model.c aligns each so)."""
    return sum(-(-size // 4) * 4 for _, _, size in schedule.regions)


@dataclass(frozen=True)
class SharedNetwork:
    """One of several networks sharing the arenas (graph, liveness, blocks) and what it keeps of
    its own through every step (`wholes`: its state, the caller's io)."""

    name: str
    graph: Graph
    live: Liveness
    blocks: tuple[LoweredBlock, ...]
    own: tuple[Whole, ...]
    runs: tuple[LoopRuns, ...] | None = None  # its blocks' loop counts (place_schedule)


def place_shared(networks: Sequence[SharedNetwork], program_bytes: int, regions: Sequence[RegionLike]):
    """Networks that run one at a time over `regions`, sharing one arena per region (each as large
    as the largest network's arena there), with what each keeps of its own and the program's bytes
    (one stack: one call at a time) in the regions beside. Returns the schedule of each network
    (its state apart, `placed_schedule`), the shared arena of each region and the RegionUses
    (arena_bytes: shared arena plus what is kept there), or None when no placement is found.

    The kept buffers go where a placement of the network of the largest arena puts them, beside
    its own buffers. Every network is then placed in what they leave of each region, so the
    largest of their arenas there fits too: a placement, not the least one (each network's
    placement is its own least cost one in that room)."""
    kept = [Whole(f"{n.name}: {w.name}", w.size, w.accesses, w.needs_dma) for n in networks for w in n.own]
    kept.append(Whole(PROGRAM, program_bytes, 0.0))
    kept = [w for w in kept if w.size]
    largest = max(networks, key=lambda n: peak_live_bytes(arena_buffers(n.graph, list(n.blocks), n.live)[0], len(n.blocks)))
    found = place_schedule(largest.graph, largest.live, largest.blocks, kept, regions, runs=largest.runs)
    if found is None:
        return None
    placement, _, _ = found
    held = [[w.name for k, w in enumerate(kept) if placement.region_of[k] == r] for r in range(len(regions))]
    held_bytes = [sum(w.size for k, w in enumerate(kept) if placement.region_of[k] == r) for r in range(len(regions))]
    room = [replace(region, size=region.size - used) for region, used in zip(regions, held_bytes)]
    schedules = []
    for n in networks:
        mine = place_schedule(n.graph, n.live, n.blocks, [], room, runs=n.runs)
        if mine is None:
            return None
        schedules.append(placed_schedule(n.graph, n.live, n.blocks, mine[0], mine[2], room, state_apart=True))
    shared = [max(s.regions[r][2] for s in schedules) for r in range(len(regions))]
    uses = tuple(RegionUse(region.name, region.size, getattr(region, "kind", "sram"), region.cost,
                           arena + used, tuple(names))
                 for region, arena, used, names in zip(regions, shared, held_bytes, held))
    return schedules, shared, uses

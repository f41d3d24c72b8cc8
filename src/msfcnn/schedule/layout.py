"""A plan lowered into a schedule: its blocks in order, and one static arena holding every tensor
and scratch buffer, at an offset per block.

This module only says what the arena holds: each block is a step, each arena tensor a buffer
from the block writing it to the last block reading it (placed away from the block's main input,
or on the bytes of the input it overwrites), each scratch buffer a buffer of its block's step.
`arena.plan_arena` places them (two-ended packing with memmoves between blocks, so the arena is
exactly the largest block's live bytes) and `arena.check_arena` proves no two live buffers overlap.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import NETWORK_INPUT, Graph
from .arena import Buffer, check_arena, plan_arena
from .lowered import Liveness, LoweredBlock


@dataclass(frozen=True)
class Schedule:
    graph: Graph
    blocks: tuple[LoweredBlock, ...]
    arena_bytes: int
    tensor_offsets: tuple[dict[int, int], ...]  # per block: arena offset of each live arena tensor
    scratch_offsets: tuple[dict[str, int], ...]  # per block: scratch name -> offset
    moves: tuple[tuple[tuple[int, int, int], ...], ...]  # per block, run after it: (from, to, bytes)
    block_ram: tuple[int, ...]  # live bytes of each block (the exact cost model's edge weights)
    # Where the network input (before the first block) and output (after the last) are, when
    # they are arena buffers (--count-io); None: they are the caller's.
    input_offset: int | None = None
    output_offset: int | None = None
    # Where each of the other outputs of a model with several (`Graph.extra_outputs`) is in the
    # arena once the network has run (always arena buffers, live from their block to the end).
    extra_output_offsets: tuple[tuple[int, int], ...] = ()
    # Where each of the other inputs of a model with several (`Graph.extra_inputs`) is before the
    # first block, when the arena holds them (--count-io); empty: they are the caller's.
    extra_input_offsets: tuple[int, ...] = ()
    # Where each state buffer (Graph.states) is: the persistent region, bytes [0, Graph.state_bytes)
    # of the arena, which no block reuses; everything else lies above it.
    state_offsets: tuple[int, ...] = ()
    # --input-stream: the C takes the input from the caller's read_rows (<prefix>_invoke_stream),
    # into the rings of the blocks that pull it, or row by row into `input_offset` before the first.
    input_stream: bool = False
    # On a board of several RAM regions: (name, base, bytes) of each region's arena, one after the
    # other in the offsets above (bases aligned to 16); () for one arena (schedule/placement.py).
    regions: tuple[tuple[str, int, int], ...] = ()

    def input_offset_of(self, k: int) -> int | None:
        """The arena offset of input k before the run; None: the caller's buffer."""
        if k == 0:
            return self.input_offset
        return self.extra_input_offsets[k - 1] if self.extra_input_offsets else None

    def output_offset_of(self, tensor: int) -> int | None:
        """The arena offset of an output tensor after the run; None: the caller's buffer."""
        if tensor == self.graph.output:
            return self.output_offset
        return dict(self.extra_output_offsets)[tensor]

    @property
    def predicted_peak_ram_bytes(self) -> int:
        return self.arena_bytes

    @property
    def recompute_factors(self) -> dict[int, float]:
        """How often the schedule computes each output position of each op (1.0: once, as unfused)."""
        return {op: factor for b in self.blocks for op, factor in zip(range(b.first, b.last + 1), b.recompute)}


def lower_plan(graph: Graph, blocks: list[LoweredBlock], live: Liveness | None = None) -> Schedule:
    """Place every tensor and scratch buffer of `blocks` (a complete path, in order): one step
    per block, one buffer per arena tensor and per scratch buffer."""
    live = live or Liveness(graph)
    buffers, keys = arena_buffers(graph, blocks, live)
    plan = plan_arena(buffers, len(blocks))
    check_arena(buffers, plan)  # a broken layout fails here, not as wrong numbers on a board
    base = graph.state_bytes  # the persistent region comes first: every other buffer lies above it
    offsets = tuple({i: base + offset for i, offset in step.items()} for step in plan.offsets)
    moves = tuple(tuple((source + base, target + base, size) for source, target, size in step_moves)
                  for step_moves in plan.moves)
    return schedule_of(graph, blocks, live, buffers, keys, offsets, moves, base + plan.size, graph.state_offsets())


def schedule_of(graph: Graph, blocks: list[LoweredBlock], live: Liveness, buffers: list[Buffer], keys: list,
                offsets: tuple[dict[int, int], ...], moves: tuple[tuple[tuple[int, int, int], ...], ...],
                arena: int, state_offsets: tuple[int, ...], regions: tuple = ()) -> Schedule:
    """The schedule of `blocks` whose buffers (`arena_buffers`) are at `offsets` (per step: buffer
    index -> arena offset), with `moves` (per step: from, to, bytes) after each step."""
    tensor_offsets = tuple({keys[i]: offset for i, offset in step.items() if not buffers[i].scratch}
                           for step in offsets)
    scratch_offsets = tuple({keys[i]: offset for i, offset in step.items() if buffers[i].scratch}
                            for step in offsets)
    ram = tuple(live.block_ram(block) for block in blocks)
    io = (tensor_offsets[0].get(NETWORK_INPUT), tensor_offsets[-1].get(graph.output)) if blocks else (None, None)
    extra = tuple((t, _after_moves(tensor_offsets[-1][t], moves[-1])) for t in graph.extra_outputs) if blocks else ()
    extra_inputs = tuple(tensor_offsets[0][t] for t in graph.input_tensors[1:]) if blocks and live.count_io else ()
    return Schedule(graph, tuple(blocks), arena, tensor_offsets, scratch_offsets, moves, ram, *io, extra,
                    extra_inputs, state_offsets, live.input_stream, regions)


def _after_moves(offset: int, moves: tuple[tuple[int, int, int], ...]) -> int:
    """Where a tensor at `offset` is after `moves` (from, to, bytes), which slide whole tensors."""
    for source, target, size in moves:
        if source <= offset < source + size:
            return offset + target - source
    return offset


def arena_buffers(graph: Graph, blocks: list[LoweredBlock], live: Liveness) -> tuple[list[Buffer], list[int | str]]:
    """The arena's buffers and what each holds (a tensor, or a scratch name). A block's output
    lives from its block to the last block reading it; the network inputs, when the arena holds
    them, from the start. Otherwise they are the caller's, and a block reading one writes low."""
    last_read = {t: step for step, block in enumerate(blocks) for t in block.reads}  # later steps win
    last_read.update(dict.fromkeys(graph.extra_outputs, len(blocks) - 1))  # read by the caller at the end
    buffer_of: dict[int, int] = {}  # arena tensor -> its buffer
    buffers: list[Buffer] = []
    keys: list[int | str] = []
    for t in graph.input_tensors:
        if live.in_arena(t) and t in last_read:  # (a block that pulls the input's rows holds them itself)
            buffer_of[t] = len(buffers)
            buffers.append(Buffer(live.nbytes(t), 0, last_read[t]))
            keys.append(t)
    for step, block in enumerate(blocks):
        out = block.output
        if live.in_arena(out):
            main_input = graph.nodes[block.first].inputs[0]
            alias = buffer_of[block.alias] if block.alias is not None else None
            placed = (buffer_of[block.placed_on[0]], block.placed_on[1]) if block.placed_on else None
            away_from = buffer_of.get(main_input) if alias is None and placed is None else None
            buffer_of[out] = len(buffers)
            buffers.append(Buffer(live.nbytes(out), step, last_read.get(out, step), away_from=away_from,
                                  alias_of=alias, placed_at=placed))
            keys.append(out)
        for scratch in block.scratch:
            buffers.append(Buffer(scratch.nbytes, step, step, scratch=True))
            keys.append(scratch.name)
    return buffers, keys

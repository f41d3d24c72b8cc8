"""The numpy executor for fused plans: runs a Schedule inside one arena of the planned size.

Every tensor and scratch buffer the schedule places in the arena is a numpy view at its planned
offset, so what the executor touches is what the plan predicted. The measured peak is read off the
arena itself: it is filled with a sentinel byte before the run, and the highest byte that changed
marks the high-water mark (two runs with different sentinels, so a written value that happens to
equal the sentinel cannot hide a byte).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from math import prod

import numpy as np

from . import executor
from .ir import ELEMENT_TYPES, NETWORK_INPUT, Graph, input_tensor, is_network_input
from .ir.graph import aligned
from .schedule import LoweredBlock, Schedule, loop_kinds
from .schedule.loop_kinds import WALKER, handles
from .schedule.lowered import WORKSPACE, Channels, Patches, Stream, TimeScan, Whole, as_time_map, time_axis
from .schedule import streaming
from .schedule.lowered import Chains
from .schedule.streaming import needed_range

SENTINELS = (0x5A, 0xA5)


@dataclass(frozen=True)
class FusedRun:
    output: np.ndarray  # the model's first output (all of them: `outputs`)
    measured_peak_ram_bytes: int
    predicted_peak_ram_bytes: int
    macs: int  # MACs actually performed, recomputation included (counted as the executor computes)
    # streamed ops: output positions computed / positions in the output (as counted while running)
    recompute: dict[int, float]
    outputs: tuple[np.ndarray, ...] = ()  # every output, in the model's order
    input_rows: tuple[int, ...] = ()  # the input rows blocks pulled from the caller (--input-stream), in order

    @property
    def raw_bytes(self) -> bytes:
        """Every output's bytes one after the other, in the model's order (raw runs: what the
        generated C's harness writes)."""
        return b"".join(np.ascontiguousarray(y).tobytes() for y in self.outputs)


def run_fused(schedule: Schedule, x: executor.Inputs, raw: bool = False,
              states: executor.States | None = None) -> FusedRun:
    """Run the schedule on one input (the model's own layout, batch optional), measuring the arena.
    raw=True returns the network's outputs as the generated C writes them: (H, W, C) order, no
    dequantisation at a float-edged model's output. A stateful model starts from `states` (its
    initial state without them) and leaves its new state there (executor.States)."""
    start = executor.initial_states(schedule.graph) if states is None else states
    runs, ends, high_water = [], [], 0
    for sentinel in SENTINELS:
        arena = np.full(schedule.arena_bytes, sentinel, dtype=np.uint8)
        ys, runner = _run(schedule, x, arena, raw, [s.copy() for s in start])
        runs.append(ys)
        ends.append(runner.states_out())
        changed = np.flatnonzero(arena != sentinel)
        high_water = max(high_water, int(changed[-1]) + 1 if changed.size else 0)
    # Bit for bit: an overflowing float model's NaN outputs are equal too when nothing reads the arena early.
    if [(y.shape, y.tobytes()) for y in runs[0]] != [(y.shape, y.tobytes()) for y in runs[1]] \
            or any(a.tobytes() != b.tobytes() for a, b in zip(*ends)):
        raise AssertionError("the result depends on the arena's initial contents: a buffer is read before written")
    start[:] = ends[0]
    # A mixed graph's buffers are rounded up to its alignment (Graph.alignment): the padding after
    # the last written byte is still part of the buffer.
    high_water = aligned(high_water, schedule.graph.alignment) if high_water else 0
    recompute = {t: n / prod(schedule.graph.shape_of(t)[:2]) for t, n in runner.positions.items()}
    return FusedRun(runs[0][0], high_water, schedule.arena_bytes, runner.macs, recompute, tuple(runs[0]),
                    tuple(runner.rows_read))


def _run(schedule: Schedule, x: executor.Inputs, arena: np.ndarray,
         raw: bool = False, states: executor.States = ()) -> tuple[list[np.ndarray], _BlockRunner]:
    graph = schedule.graph
    internal, batched = executor.internal_inputs(graph, x)
    # the caller's output buffer
    result = np.zeros(graph.nodes[graph.output].shape, dtype=graph.element_of(graph.output).numpy)
    inputs = {input_tensor(k): value for k, value in enumerate(internal)}
    run = _BlockRunner(graph, schedule, arena, inputs, result)
    for view, value in zip(run.states, states):  # what the invocations before left in the persistent region
        view[...] = value
    for k, value in enumerate(internal):
        offset = schedule.input_offset_of(k)
        if offset is not None:  # the caller writes its input into the arena
            run.view(offset, value.shape, graph.element_of(input_tensor(k)).numpy)[...] = value
    for index, block in enumerate(schedule.blocks):
        run.offsets = schedule.tensor_offsets[index]
        run.block(block, schedule.scratch_offsets[index])
        for source, target, size in schedule.moves[index]:  # close the holes freed tensors left
            arena[target:target + size] = arena[source:source + size].copy()
    outputs = []
    for t in graph.output_tensors:  # the caller reads the arena's outputs at the end (copies)
        offset = schedule.output_offset_of(t)
        outputs.append(result if offset is None else run.view(offset, graph.shape_of(t), run.dtype(t)).copy())
    if raw:
        return outputs, run
    return [executor.to_model_layout(graph, y, batched) for y in outputs], run


class _BlockRunner:
    def __init__(self, graph: Graph, schedule: Schedule, arena, inputs, result):
        self.graph, self.schedule, self.arena = graph, schedule, arena
        self.inputs, self.result = inputs, result  # inputs: tensor -> the caller's array
        self.macs = 0
        self.positions: Counter[int] = Counter()  # streamed op -> output positions computed
        self.rows_read: list[int] = []  # the input rows blocks pulled from the caller (--input-stream), in order
        # the state buffers: views of the persistent region at the arena's start
        self.states = [self.view(offset, state.initial.shape, state.initial.dtype)
                       for offset, state in zip(schedule.state_offsets, graph.states)]

    def states_out(self) -> executor.States:
        """The state buffers' values as this invocation leaves them."""
        return [view.copy() for view in self.states]

    def count(self, t: int, region: np.ndarray) -> None:
        """MACs of computing `region` (rows x cols x C) of feature map t: its share of t's MACs."""
        h, w = self.graph.shape_of(t)[:2]
        self.macs += self.graph.macs(t) // (h * w) * region.shape[0] * region.shape[1]
        self.positions[t] += region.shape[0] * region.shape[1]

    # ---- buffers ---------------------------------------------------------------------------
    def dtype(self, t: int) -> type:
        """Tensor t's numpy element type."""
        return self.graph.element_of(t).numpy

    def view(self, offset: int, shape, dtype) -> np.ndarray:
        itemsize = np.dtype(dtype).itemsize
        size = int(np.prod(shape)) * itemsize
        if offset < 0 or offset + size > self.arena.size:
            raise AssertionError(f"buffer [{offset}, {offset + size}) outside the {self.arena.size}-byte arena")
        # The C reads a buffer as its element type: a mixed graph's buffers lie at multiples of its
        # alignment (Graph.alignment), which is each tensor's element size or more.
        if offset % min(itemsize, self.graph.alignment):
            raise AssertionError(f"{np.dtype(dtype).name} buffer at offset {offset}, not a multiple of {itemsize}")
        return self.arena[offset:offset + size].view(dtype).reshape(shape)

    def read_row(self, row: int) -> np.ndarray:
        """Row `row` of the network input, as the caller's read_rows gives it (--input-stream)."""
        self.rows_read.append(row)
        return self.inputs[NETWORK_INPUT][row]

    def tensor(self, t: int) -> np.ndarray:
        if t in self.offsets:
            return self.view(self.offsets[t], self.graph.shape_of(t), self.dtype(t))
        if is_network_input(t):
            return self.inputs[t]
        if t == self.graph.output:
            return self.result
        raise AssertionError(f"tensor {t} is not live in this block")

    # ---- blocks ----------------------------------------------------------------------------
    def block(self, block: LoweredBlock, scratch: dict[str, int]) -> None:
        """Walk the block's loop nest (whichever scheme lowered it): its loop kind's walker."""
        loop_kinds.handler(WALKER, block.loops)(self, block, scratch)

    @handles(WALKER, Whole)
    def whole(self, block: LoweredBlock, scratch: dict[str, int]) -> None:
        node = self.graph.nodes[block.first]
        workspace = self.view(scratch[WORKSPACE], (block.scratch_named(WORKSPACE).nbytes,), np.uint8) \
            if WORKSPACE in scratch else None
        out = node.op.run_whole([self.tensor(t) for t in node.inputs],
                                executor.with_states(self.graph, block.first, self.states), workspace)
        self.macs += self.graph.macs(block.first)
        self.tensor(block.first)[...] = out  # computed whole first, so writing over an alias is safe

    @handles(WALKER, Channels)
    def channels(self, block: LoweredBlock, scratch: dict[str, int]) -> None:
        """An op over its own input, channel by channel through the plane (in the arena, so a
        channel overwritten too early would show in the result)."""
        t = block.first
        node = self.graph.nodes[t]
        x, out = self.tensor(node.inputs[0]), self.tensor(t)
        plane = self.view(scratch[block.loops.plane.name], block.loops.plane.shape, self.dtype(t))
        ctx = self.graph.kernel_context(t)
        for c in range(node.shape[2]):
            plane[...] = node.op.reference([x[..., c:c + 1]], node.op.channel(ctx, c))[..., 0]
            out[..., c] = plane
        self.macs += self.graph.macs(t)


class _Stream:
    """Streams a block along one axis: rows for linebuffer, columns (band by band) for hcache.

    Every inner tensor lives in a ring over the streamed axis; each op computes one position
    (a row, or a column of the band's rows) when a reader pulls it, after pulling what it needs
    from its own inputs. The ring's slot tags catch any read of a position already overwritten.
    """

    def __init__(self, runner: _BlockRunner, block: LoweredBlock, scratch: dict[str, int]):
        self.r, self.block, self.graph = runner, block, runner.graph
        self.loops = block.loops
        self.axis = getattr(self.loops, "axis", 0)
        self.buffers = {s.name: runner.view(scratch[s.name], s.shape, ELEMENT_TYPES[s.dtype].numpy)
                        for s in block.scratch}
        # A column stream pulling the network input keeps a ring of its rows, filled band by band
        # (`source_rows`); a row stream pulls them in its order, as rows of any ring tensor.
        self.banded_source = getattr(self.loops, "source", False) and self.axis == 1
        # Each ring tensor's storage: its own ring, or (an in-place row) slots of its host's ring.
        self.homes = {t: block.homes.get(t, (t, 0)) for t in block.rings
                      if not (self.banded_source and t == NETWORK_INPUT)}
        # A host ring's slots start with a gap of pixels, where its in-place tensor's rows start.
        self.gap = {t: block.gaps.get(t, 0) for t in block.rings}
        self.rings = {t: self.buffers[f"ring{t}"] for t in block.rings if t not in block.homes}
        self.end = self.loops.end
        self.tail = self.loops.tail
        self.acc = self.buffers[self.tail.acc.name] if self.tail else None

    # ---- storage -----------------------------------------------------------------------------
    def fetch(self, t: int, rows: tuple[int, int], cols: tuple[int, int]) -> np.ndarray:
        """Rows x columns of tensor t, from its ring or from the whole tensor."""
        if self.banded_source and t == NETWORK_INPUT:
            ring, tags = self.rings[t], self.tags[t]
            slots = [i % len(tags) for i in range(*rows)]
            if any(tags[s] != (t, i) for s, i in zip(slots, range(*rows))):
                raise AssertionError(f"the input's ring no longer holds rows {rows[0]}..{rows[1] - 1}")
            return ring[slots, cols[0]:cols[1]]
        if t not in self.homes:
            return self.r.tensor(t)[rows[0]:rows[1], cols[0]:cols[1]]
        stream, fixed = (rows, cols) if self.axis == 0 else (cols, rows)
        host = self.homes[t][0]
        ring, tags = self.rings[host], self.tags[host]
        slots = [self.slot(t, i) for i in range(*stream)]
        if any(tags[s] != (t, i) for s, i in zip(slots, range(*stream))):
            raise AssertionError(f"ring of tensor {t} no longer holds positions {stream[0]}..{stream[1] - 1}")
        offset = self.span[t][0] - self.gap[t]
        if self.axis == 0:
            return ring[slots, fixed[0] - offset:fixed[1] - offset]
        return ring[fixed[0] - offset:fixed[1] - offset][:, slots]

    def accumulate(self, value: np.ndarray, rows: tuple[int, int], cols: tuple[int, int]) -> None:
        """The tail: its consumer (global pool or dense) accumulates what streams out of the map."""
        consumer = self.tail.consumer
        op = self.graph.nodes[consumer].op
        self.acc[...] = op.accumulate(self.acc, value, rows, cols, self.graph.shape_of(self.end),
                                      self.graph.kernel_context(consumer))

    def store(self, t: int, index: int, value: np.ndarray) -> None:
        if t in self.homes:
            host, slot = self.homes[t][0], self.slot(t, index)
            if self.axis == 0:
                gap = self.gap[t]
                self.rings[host][slot, gap:gap + value.shape[1]] = value[0]
            else:
                self.rings[host][:value.shape[0], slot] = value[:, 0]
            self.tags[host][slot] = (t, index)
            if t == self.end:  # a tail follows: its accumulator reads the stored position
                self.accumulate(self.fetch(t, *self.ranges(t, index)), *self.ranges(t, index))
        elif self.axis == 0:
            self.r.tensor(t)[index] = value[0]
        else:
            rows = self.span[t]
            self.r.tensor(t)[rows[0]:rows[1], index] = value[:, 0]

    def slot(self, t: int, index: int) -> int:
        """The slot of its host's ring that holds position `index` of ring tensor t."""
        host, shift = self.homes[t]
        return (index + shift) % len(self.tags[host])

    # ---- computing -------------------------------------------------------------------------
    def ranges(self, t: int, index: int) -> tuple[tuple[int, int], tuple[int, int]]:
        """(rows, cols) of tensor t at one streamed position."""
        return ((index, index + 1), self.span[t]) if self.axis == 0 else (self.span[t], (index, index + 1))

    def compute(self, t: int, index: int) -> np.ndarray:
        if t == NETWORK_INPUT:  # the caller's row (a row stream pulling the input)
            return self.r.read_row(index)[None]
        return self.compute_region(t, *self.ranges(t, index))

    def source_rows(self, upto: int) -> None:
        """A column stream's input ring: the caller's rows up to `upto`, in order, once each."""
        ring, tags = self.rings[NETWORK_INPUT], self.tags[NETWORK_INPUT]
        while self.read < upto:
            ring[self.read % len(tags)] = self.r.read_row(self.read)
            tags[self.read % len(tags)] = (NETWORK_INPUT, self.read)
            self.read += 1

    def compute_region(self, t: int, rows: tuple[int, int], cols: tuple[int, int]) -> np.ndarray:
        """Rows x columns of tensor t's output, from the inputs' buffers."""
        out = region_value(self.graph, t, rows, cols, self.fetch)
        if out.size:
            self.r.count(t, out)
        return out

    def sweep(self, span: dict[int, tuple[int, int]]) -> None:
        """Stream every position of the stream end, with each tensor's fixed-axis extent, in the
        lowered pull order."""
        self.span = span
        # Per ring, the (tensor, position) each slot holds: a read of anything else is a bug.
        self.tags.update({t: [None] * n for t, n in self.block.rings.items()
                          if t not in self.block.homes and not (self.banded_source and t == NETWORK_INPUT)})
        if self.banded_source:  # the rows of the input this band reads
            self.source_rows(span[NETWORK_INPUT][1])
        for t, index in self.loops.order:
            self.store(t, index, self.compute(t, index))

    def run(self) -> None:
        if self.tail:
            self.acc[...] = 0
        self.tags, self.read = {}, 0
        if self.banded_source:
            self.tags[NETWORK_INPUT] = [None] * self.block.rings[NETWORK_INPUT]
        for span in self.loops.sweeps:
            self.sweep(span)
        if self.banded_source:  # the rows no band reads: the caller gives every row once
            self.source_rows(self.graph.shape_of(NETWORK_INPUT)[0])
        if self.tail:
            self.finish_tail()

    def finish_tail(self) -> None:
        _finish_tail(self.r, self.tail, self.acc, self.buffers, self.end, self.graph.shape_of(self.end))
        self.r.macs += sum(self.graph.macs(t) for t in range(self.end + 1, self.tail.last + 1))


def region_value(graph: Graph, t: int, rows: tuple[int, int], cols: tuple[int, int], fetch) -> np.ndarray:
    """Rows x columns of tensor t's output from its op's numpy kernel, each input's positions the
    region reads given by `fetch(u, rows, cols)`."""
    node = graph.nodes[t]
    if rows[1] <= rows[0] or cols[1] <= cols[0]:
        # A band that reads only padding of this tensor (a pad's border rows) needs none of it.
        return np.zeros((max(rows[1] - rows[0], 0), max(cols[1] - cols[0], 0), node.shape[2]), graph.element_of(t).numpy)
    inputs, border = [], (0, 0, 0, 0)
    for u in node.inputs:  # each input's positions the region reads, and the padding beyond them
        r0, r1, top, bottom = needed_range(graph, t, u, *rows, axis=0)
        c0, c1, left, right = needed_range(graph, t, u, *cols, axis=1)
        inputs.append(fetch(u, (r0, r1), (c0, c1)))
        border = (top, left, bottom, right)
    return node.op.on_region(border).in_region(rows, cols).reference(inputs, graph.kernel_context(t))


def _finish_tail(runner: _BlockRunner, tail, acc: np.ndarray, buffers: dict, end: int, end_shape) -> None:
    """The tail consumer's vector from its accumulator (of the map `end`, of `end_shape`), then
    the vector ops after it (dense, softmax, reshape)."""
    graph = runner.graph
    acc = acc.astype(np.int64) if acc.dtype == np.int32 else acc.copy()  # float32: C's accumulator
    value = graph.nodes[tail.consumer].op.finish(acc, end_shape, graph.kernel_context(tail.consumer))
    for t in range(tail.consumer, tail.last + 1):
        if t > tail.consumer:
            value = graph.nodes[t].op.reference([value], graph.kernel_context(t))
        target = runner.tensor(t) if t == tail.last else buffers[tail.vectors[t].name]
        target[...] = value
        value = target


@handles(WALKER, Stream)
def _walk_stream(runner: _BlockRunner, block: LoweredBlock, scratch: dict[str, int]) -> None:
    _Stream(runner, block, scratch).run()


class _Patches(_Stream):
    """MCUNetV2 patches: each square patch of the stream end is computed from scratch, every
    inner tensor's region into its own tile buffer (recomputing overlap in both directions)."""

    def fetch(self, t: int, rows: tuple[int, int], cols: tuple[int, int]) -> np.ndarray:
        if t not in self.region:
            return self.r.tensor(t)[rows[0]:rows[1], cols[0]:cols[1]]
        (r0, _), (c0, _) = self.region[t]
        return self.buffers[f"tile{t}"][rows[0] - r0:rows[1] - r0, cols[0] - c0:cols[1] - c0]

    def run(self) -> None:
        first, end = self.block.first, self.end
        if self.tail:
            self.acc[...] = 0
        for row_spans in self.loops.row_spans:
            for col_spans in self.loops.col_spans:
                self.region = {}
                for t in range(first, end + 1):
                    rows, cols = row_spans[t], col_spans[t]
                    value = self.compute_region(t, rows, cols)
                    if t < end or self.tail:
                        self.region[t] = (rows, cols)
                        self.buffers[f"tile{t}"][:rows[1] - rows[0], :cols[1] - cols[0]] = value
                        if t == end:  # a tail follows: its accumulator reads the stored patch
                            self.accumulate(self.fetch(t, rows, cols), rows, cols)
                    else:
                        self.r.tensor(t)[rows[0]:rows[1], cols[0]:cols[1]] = value
        if self.tail:
            self.finish_tail()


@handles(WALKER, Patches)
def _walk_patches(runner: _BlockRunner, block: LoweredBlock, scratch: dict[str, int]) -> None:
    _Patches(runner, block, scratch).run()


class _TimeScan:
    """A time scan (schemes/timescan.py): every op computes its positions one global step at a
    time, in op order. An inner sequence's steps are read from their ring (whose slot tags catch
    a read of a step already overwritten) or from the state of the cell that made them."""

    def __init__(self, runner: _BlockRunner, block: LoweredBlock, scratch: dict[str, int]):
        self.r, self.block, self.graph, self.loops = runner, block, runner.graph, block.loops
        self.buffers = {s.name: runner.view(scratch[s.name], s.shape, ELEMENT_TYPES[s.dtype].numpy)
                        for s in block.scratch}
        self.element = self.graph.kernel_element(self.loops.cells[0]).name
        self.tags = {t: [None] * k for t, k in block.rings.items()}
        self.held = {}  # cell -> the position its state holds as output
        self.views = {t: self.graph.nodes[t].op.cell_views(self.buffers[f"state{t}"], self.buffers["temp"], self.element)
                      for t in self.loops.cells}

    def step_of(self, u: int, p: int) -> np.ndarray:
        """Position p of tensor u, flat: from a whole tensor, a ring or a cell's state."""
        owner = self.loops.storage.get(u)
        if owner is None:  # a tensor made before the block
            x = self.r.tensor(u)
            return np.take(x, p, axis=time_axis(x.shape)).reshape(-1)
        if owner in self.loops.in_state:
            if self.held.get(owner) != p:
                raise AssertionError(f"the state of op {owner} no longer holds step {p}")
            return self.views[owner][0]
        k = self.block.rings[owner]
        if self.tags[owner][p % k] != p:
            raise AssertionError(f"ring of tensor {owner} no longer holds step {p}")
        return self.buffers[f"ring{owner}"][p % k]

    def store(self, t: int, p: int, value: np.ndarray) -> None:
        owner = self.loops.storage.get(t)
        if owner is None:  # the block's output, whole
            out = self.r.tensor(t)
            index = [slice(None)] * out.ndim
            index[time_axis(out.shape)] = p
            out[tuple(index)] = value.reshape(out[tuple(index)].shape)
        elif owner in self.block.rings and owner == t:
            k = self.block.rings[t]
            self.buffers[f"ring{t}"][p % k] = value.reshape(-1)
            self.tags[t][p % k] = p

    def accumulate(self, p: int) -> None:
        """The tail's consumer adds step p of the scan's last sequence, a column of its map."""
        graph, tail, end = self.graph, self.loops.tail, self.loops.end
        end_map = as_time_map(graph.shape_of(end))
        acc = self.buffers[tail.acc.name]
        value = self.step_of(end, p).reshape(1, 1, end_map[2])
        acc[...] = graph.nodes[tail.consumer].op.accumulate(acc, value, (0, 1), (p, p + 1), end_map,
                                                            graph.kernel_context(tail.consumer))

    def compute(self, t: int, p: int) -> np.ndarray | None:
        node = self.graph.nodes[t]
        op, u = node.op, node.inputs[0]
        ctx = self.graph.kernel_context(t)
        if op.recurrent:
            h = op.cell_step(self.step_of(u, p), self.views[t], ctx)
            self.held[t] = p
            return h if time_axis(node.shape) is not None else None
        if op.is_view:
            return None  # its steps are its source's bytes
        if len(node.inputs) > 1:  # an element-wise op of two sequences: step p of each
            return op.reference([self.step_of(v, p).reshape(1, 1, -1) for v in node.inputs], ctx)
        c0, c1, left, right = streaming.needed_range(self.graph, t, u, p, p + 1, axis=1)
        window = np.stack([self.step_of(u, i).reshape(self.graph.shape_of(u)[2]) for i in range(c0, c1)])[None]
        return op.on_region((0, left, 0, right)).in_region((0, 1), (p, p + 1)).reference([window], ctx)

    def run(self) -> None:
        graph, loops, block = self.graph, self.loops, self.block
        for name in [f"state{t}" for t in loops.cells] + ["temp"]:  # every byte written: the arena measures it
            self.buffers[name][...] = 0
        for t in loops.cells:
            graph.nodes[t].op.cell_start(self.views[t], graph.kernel_context(t))
        tail = loops.tail
        if tail is not None:
            self.buffers[tail.acc.name][...] = 0
        for s in range(loops.steps):
            for t in range(block.first, loops.end + 1):
                p = s - loops.lag(t)
                if 0 <= p < loops.count(t):
                    value = self.compute(t, p)
                    if value is not None:
                        self.store(t, p, value)
                    if t == loops.end and tail is not None:
                        self.accumulate(p)
        for t in range(block.first, block.last + 1):
            self.r.macs += graph.macs(t)
        if tail is not None:
            end_map = as_time_map(graph.shape_of(loops.end))
            _finish_tail(self.r, tail, self.buffers[tail.acc.name], self.buffers, loops.end, end_map)
            return
        if loops.end == block.last and time_axis(graph.shape_of(block.last)) is None:
            self.r.tensor(block.last)[...] = self.views[loops.end][0].reshape(graph.shape_of(block.last))
            return
        value = self.views[loops.end][0] if block.last > loops.end else None
        for t in range(loops.end + 1, block.last + 1):
            value = graph.nodes[t].op.reference([value.reshape(graph.shape_of(t - 1))], graph.kernel_context(t))
            target = self.r.tensor(t) if t == block.last else self.buffers[f"vec{t}"]
            target[...] = value.reshape(target.shape)
            value = target


@handles(WALKER, TimeScan)
def _walk_time_scan(runner: _BlockRunner, block: LoweredBlock, scratch: dict[str, int]) -> None:
    _TimeScan(runner, block, scratch).run()


class _Chains:
    """Chains of three ops (schemes/chains.py), row by row in the block's order. A chain's output
    row is computed from the rows of its input it reads, through its first op's values under the
    depthwise window's rows: the numpy kernels give the same values the C makes pixel by pixel,
    and the positions counted are the C's (the first op once per depthwise tap). A ring's slot
    tags catch a read of a row already overwritten."""

    def __init__(self, runner: _BlockRunner, block: LoweredBlock, scratch: dict[str, int]):
        self.r, self.block, self.graph, self.loops = runner, block, runner.graph, block.loops
        self.rings = {t: runner.view(scratch[f"ring{t}"], s.shape, ELEMENT_TYPES[s.dtype].numpy)
                      for t, s in ((t, block.scratch_named(f"ring{t}")) for t in block.rings)}
        self.tags = {t: [None] * k for t, k in block.rings.items()}

    def fetch(self, t: int, rows: tuple[int, int], cols: tuple[int, int]) -> np.ndarray:
        if t not in self.rings:
            return self.r.tensor(t)[rows[0]:rows[1], cols[0]:cols[1]]
        k = len(self.tags[t])
        if any(self.tags[t][i % k] != i for i in range(*rows)):
            raise AssertionError(f"the ring of tensor {t} no longer holds rows {rows[0]}..{rows[1] - 1}")
        return self.rings[t][[i % k for i in range(*rows)], cols[0]:cols[1]]

    def store(self, t: int, i: int, row: np.ndarray) -> None:
        if t in self.rings:
            k = len(self.tags[t])
            self.rings[t][i % k] = row
            self.tags[t][i % k] = i
        else:
            self.r.tensor(t)[i] = row

    def chain_row(self, start: int, i: int) -> np.ndarray:
        """Row i of the output of the chain from op `start`."""
        graph, a, b, c = self.graph, start, start + 1, start + 2
        width = graph.shape_of(c)[1]
        rows, cols = needed_range(graph, b, a, i, i + 1, 0)[:2], needed_range(graph, b, a, 0, width, 1)[:2]
        first = region_value(graph, a, rows, cols, self.fetch)
        values = {a: (rows, cols, first)}

        def held(u, rows_u, cols_u):  # the region of an op inside the chain, as just computed
            (r0, _), (c0, _), value = values[u]
            return value[rows_u[0] - r0:rows_u[1] - r0, cols_u[0] - c0:cols_u[1] - c0]

        values[b] = ((i, i + 1), (0, width), region_value(graph, b, (i, i + 1), (0, width), held))
        row = region_value(graph, c, (i, i + 1), (0, width), held)
        for t, positions in ((a, (rows[1] - rows[0]) * self.tap_columns(start)), (b, width), (c, width)):
            self.r.macs += streaming.pixel_macs(graph, t) * positions
            self.r.positions[t] += positions
        return row[0]

    def tap_columns(self, start: int) -> int:
        """In-bounds columns of the depthwise window over every output column of the chain."""
        graph, b = self.graph, start + 1
        return sum(hi - lo for lo, hi in graph.nodes[b].op.axis_window(1).position_spans(
            graph.shape_of(b)[1], graph.shape_of(start)[1]))

    def run(self) -> None:
        starts = list(self.loops.starts)
        for k, i in self.loops.order:
            if k < 0:
                self.store(NETWORK_INPUT, i, self.r.read_row(i))
            else:
                self.store(starts[k] + 2, i, self.chain_row(starts[k], i))


@handles(WALKER, Chains)
def _walk_chains(runner: _BlockRunner, block: LoweredBlock, scratch: dict[str, int]) -> None:
    _Chains(runner, block, scratch).run()

"""The numpy executor for fused plans: runs a Schedule inside one arena of the planned size.

Every tensor and scratch buffer the schedule places in the arena is a numpy view at its planned
offset, so what the executor touches is what the plan predicted. The measured peak is read off the
arena itself: it is filled with a sentinel byte before the run, and the highest byte that changed
marks the high-water mark (two runs with different sentinels, so a written value that happens to
equal the sentinel cannot hide a byte).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from . import executor
from . import numerics as nx
from .ir import NETWORK_INPUT, Graph
from .ops import KernelContext, Window
from .schedule import LoweredBlock, Schedule
from .schedule.blocks import WINDOW_OPS, needed_rows

SENTINELS = (0x5A, 0xA5)
_NUMPY_TYPES = {"int8": np.int8, "int32": np.int32, "float32": np.float32}


@dataclass(frozen=True)
class FusedRun:
    output: np.ndarray
    measured_peak_ram_bytes: int
    predicted_peak_ram_bytes: int


def run_fused(schedule: Schedule, x: np.ndarray) -> FusedRun:
    """Run the schedule on one input (the model's own layout, batch optional), measuring the arena."""
    outputs, high_water = [], 0
    for sentinel in SENTINELS:
        arena = np.full(schedule.arena_bytes, sentinel, dtype=np.uint8)
        outputs.append(_run(schedule, x, arena))
        changed = np.flatnonzero(arena != sentinel)
        high_water = max(high_water, int(changed[-1]) + 1 if changed.size else 0)
    if not np.array_equal(outputs[0], outputs[1]):
        raise AssertionError("the result depends on the arena's initial contents: a buffer is read before written")
    return FusedRun(outputs[0], high_water, schedule.arena_bytes)


def _run(schedule: Schedule, x: np.ndarray, arena: np.ndarray) -> np.ndarray:
    graph = schedule.graph
    x = np.asarray(x)
    batched = x.ndim == len(graph.input_shape) + 1
    internal = executor._to_internal(graph, x[0] if batched else x)
    dtype = np.float32 if graph.dtype == "float32" else np.int8
    out_node = len(graph) - 1
    result = np.zeros(graph.nodes[out_node].shape, dtype=dtype)  # the caller's output buffer
    run = _BlockRunner(graph, schedule, arena, internal, result, dtype)
    for index, block in enumerate(schedule.blocks):
        run.block(block, schedule.scratch_offsets[index])
    y = result
    if graph.float_output:
        y = nx.dequantize(y, graph.output_quant)
    if graph.layout == "NCHW" and y.ndim == 3:
        y = y.transpose(2, 0, 1)
    return y[None] if batched else y


class _BlockRunner:
    def __init__(self, graph: Graph, schedule: Schedule, arena, x, result, dtype):
        self.graph, self.schedule, self.arena = graph, schedule, arena
        self.x, self.result, self.dtype = x, result, dtype

    # ---- buffers ---------------------------------------------------------------------------
    def view(self, offset: int, shape, dtype) -> np.ndarray:
        size = int(np.prod(shape)) * np.dtype(dtype).itemsize
        if offset < 0 or offset + size > self.arena.size:
            raise AssertionError(f"buffer [{offset}, {offset + size}) outside the {self.arena.size}-byte arena")
        return self.arena[offset:offset + size].view(dtype).reshape(shape)

    def tensor(self, t: int) -> np.ndarray:
        if t == NETWORK_INPUT:
            return self.x
        if t == len(self.graph) - 1:
            return self.result
        return self.view(self.schedule.tensor_offsets[t], self.graph.shape_of(t), self.dtype)

    def context(self, t: int) -> KernelContext:
        node = self.graph.nodes[t]
        return KernelContext(node.consts, tuple(self.graph.quant_of(u) for u in node.inputs), node.quant)

    # ---- blocks ----------------------------------------------------------------------------
    def block(self, block: LoweredBlock, scratch: dict[str, int]) -> None:
        if block.scheme == "single":
            node = self.graph.nodes[block.first]
            out = node.op.reference([self.tensor(t) for t in node.inputs], self.context(block.first))
            self.tensor(block.first)[...] = out  # computed whole first, so writing over an alias is safe
        elif block.scheme == "linebuffer":
            _LineBuffer(self, block, scratch).run()
        else:
            raise AssertionError(f"no executor for scheme {block.scheme}")


class _LineBuffer:
    """Rows stream top to bottom; each op computes a row when a reader pulls it."""

    def __init__(self, runner: _BlockRunner, block: LoweredBlock, scratch: dict[str, int]):
        self.r, self.block, self.graph = runner, block, runner.graph
        self.buffers = {s.name: runner.view(scratch[s.name], s.shape, _NUMPY_TYPES[s.dtype]) for s in block.scratch}
        self.rings = {t: self.buffers[f"ring{t}"] for t in block.rings}
        self.tags = {t: np.full(rows, -1) for t, rows in block.rings.items()}  # which row each slot holds
        self.produced = {t: 0 for t in range(block.first, block.stream_end + 1)}

    def rows_of(self, t: int, lo: int, hi: int) -> np.ndarray:
        if t not in self.rings:
            return self.r.tensor(t)[lo:hi]
        ring, tags = self.rings[t], self.tags[t]
        slots = [row % len(tags) for row in range(lo, hi)]
        if any(tags[s] != row for s, row in zip(slots, range(lo, hi))):
            raise AssertionError(f"ring of tensor {t} no longer holds rows {lo}..{hi - 1}")
        return ring[slots]

    def compute_row(self, t: int, row: int) -> np.ndarray:
        node = self.graph.nodes[t]
        ctx = self.r.context(t)
        if isinstance(node.op, WINDOW_OPS):
            src = node.inputs[0]
            win = node.op.window
            (kh, _), (sh, _) = win.kernel, win.strides
            y0 = row * sh - win.pads[0]
            lo, hi = needed_rows(self.graph, t, src, row)
            # The rows of the window that fall outside the input become explicit padding.
            pads = (lo - y0, win.pads[1], y0 + kh - hi, win.pads[3])
            op = replace(node.op, win=Window(win.kernel, win.strides, pads))
            return op.reference([self.rows_of(src, lo, hi)], ctx)[0]
        return node.op.reference([self.rows_of(u, row, row + 1) for u in node.inputs], ctx)[0]

    def pull(self, t: int, upto: int) -> None:
        while self.produced[t] < upto:
            row = self.produced[t]
            for u in self.graph.nodes[t].inputs:
                if u in self.produced:
                    self.pull(u, needed_rows(self.graph, t, u, row)[1])
            out = self.compute_row(t, row)
            if t in self.rings:
                slot = row % len(self.tags[t])
                self.rings[t][slot] = out
                self.tags[t][slot] = row
            else:
                self.r.tensor(t)[row] = out
            self.produced[t] += 1

    def run(self) -> None:
        end, last = self.block.stream_end, self.block.last
        if end == last:
            self.pull(end, self.graph.nodes[end].shape[0])
            return
        pool = end + 1  # the tail: a global average pool fed row by row, then vector ops
        acc = self.buffers[f"acc{pool}"]
        acc[...] = 0
        pool_ctx = self.r.context(pool)
        for row in range(self.graph.nodes[end].shape[0]):
            self.pull(end, row + 1)
            acc[...] = self.graph.nodes[pool].op.accumulate(acc, self.rows_of(end, row, row + 1), pool_ctx)
        value = self.graph.nodes[pool].op.finish(acc.astype(np.int64 if acc.dtype == np.int32 else np.float64),
                                                 self.graph.shape_of(end), pool_ctx)
        for t in range(pool, last + 1):
            if t > pool:
                value = self.graph.nodes[t].op.reference([value], self.r.context(t))
            target = self.r.tensor(t) if t == last else self.buffers[f"vec{t}"]
            target[...] = value
            value = target

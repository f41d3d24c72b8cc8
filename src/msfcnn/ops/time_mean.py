"""A global average pool over a sliding window, kept as running sums (`--streaming`).

A streaming model's global pool over time (frontends/sliding.py) would otherwise sum every row of
the window on every call, behind a ring of the rows earlier calls made. Integer sums are exact in
any order, so this op keeps them instead: per call, each new row is added to the per-channel sums
and the row it replaces, the window's oldest, is subtracted. Its state is a ring of the window's
rows (to know what leaves), the int32 sums and the ring's next slot. The pool's own output stage
then turns the sums into its output, as the whole-window pool does (ops/global_avg_pool.py).

Only int8 pools over the whole map run so: a float32 sum depends on its order, and a pool whose
one window leaves rows out would need them in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from .base import CCall, KernelContext, Op, Pattern, Shape, c_struct
from .global_avg_pool import GlobalAvgPool

ROWS, SUMS, SLOT = "rows", "sums", "slot"  # its state buffers, in this order


@dataclass(frozen=True)
class TimeMean(Op, pattern=Pattern.OPAQUE, c_call=CCall.VECTOR, elements=frozenset({"int8"})):
    """Never fused: its output depends on earlier calls."""

    kind = "time_mean"
    c_kernel = "msf_time_mean"
    pool: GlobalAvgPool  # the whole window's pool: its output stage and output shape
    axis: int  # the time axis of its (H, W, C) input
    window_rows: int  # rows of the whole window along time

    def describe(self) -> str:
        return f"{self.pool.describe()} (running sums over {self.window_rows} rows)"

    def window_shape(self, in_shape: Shape) -> Shape:
        shape = list(in_shape)
        shape[self.axis] = self.window_rows
        return tuple(shape)

    def output_shape(self, inputs: list[Shape]) -> Shape:
        return self.pool.output_shape([self.window_shape(inputs[0])])

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        return prod(inputs[0])  # each new value added (and the value it replaces subtracted)

    def initial_states(self, in_shape: Shape, zero_point: int) -> dict[str, np.ndarray]:
        """A window of real zeros, as a time ring's first calls see (ops/time_ring.py)."""
        row = prod(in_shape) // in_shape[self.axis]
        rows = np.full((self.window_rows, row), zero_point, np.int8)
        sums = np.full(in_shape[-1], zero_point * self.window_rows * (row // in_shape[-1]), np.int32)
        return {ROWS: rows, SUMS: sums, SLOT: np.zeros(1, np.int32)}

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        if len(ctx.states) != 3:
            raise AssertionError("a time mean runs with its three state buffers (KernelContext.states)")
        rows, sums, slot = ctx.states
        x = inputs[0]
        channels = x.shape[-1]
        for r in range(x.shape[self.axis]):
            new = np.take(x, r, axis=self.axis).reshape(-1)
            old = rows[slot[0]]
            sums += (new.reshape(-1, channels).astype(np.int32).sum(axis=0)
                     - old.reshape(-1, channels).astype(np.int32).sum(axis=0))
            old[...] = new
            slot[0] = (slot[0] + 1) % self.window_rows
        return self.pool.finish(sums.astype(np.int64), self.window_shape(x.shape), ctx)

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        in_shape = in_shapes[0]
        row = prod(in_shape) // in_shape[self.axis]
        pool = self.pool.c_params(ctx, [self.window_shape(in_shape)], out_shape, names)
        return c_struct({"pool": pool, "rows": names[ROWS], "sums": names[SUMS], "slot": names[SLOT],
                         "row_values": row, "channels": in_shape[-1], "window": self.window_rows,
                         "new_rows": in_shape[self.axis]})

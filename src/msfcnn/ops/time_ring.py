"""A ring of the last rows along time, for incremental sliding-window inference (`--streaming`).

A streaming model computes only the newest rows of each layer per call (frontends/sliding.py). A
window along time that spans more rows than the call brings reads older rows too: this op keeps
them. Its state (a Graph.states buffer, persistent across calls) holds the last `kept` rows of its
input stream. Per call, its output is those rows followed by the call's new rows (the window's
whole input), and the state then keeps the output's last `kept` rows. Without state it only drops
the `skip` oldest of the new rows, which its reader would not read (a stride along time larger
than the window, or more new rows than the window's output has).

Rows are the slices along the time axis (`axis` 0 or 1 of an (H, W, C) map), each contiguous in
memory because every axis before the time axis has size 1 or is the time axis itself. The C
kernel is three byte copies (kernels/time_ring.c).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from .base import CCall, KernelContext, Op, Pattern, Shape, c_struct

STATE = "ring"


@dataclass(frozen=True)
class TimeRing(Op, pattern=Pattern.OPAQUE, c_call=CCall.VECTOR,
               elements=frozenset({"int8", "float32", "uint8"})):
    """Never fused: its output depends on earlier calls, not on a window of its input."""

    kind = "time_ring"
    c_kernel = "msf_time_ring"
    keeps_rectified = True  # (its rows are its input's, or the initial state's zeros)
    axis: int  # the time axis of its (H, W, C) input
    kept: int  # rows of the earlier calls it keeps (its state)
    skip: int = 0  # new rows it drops (older than any row its reader reads; only without state)

    def output_shape(self, inputs: list[Shape]) -> Shape:
        shape = list(inputs[0])
        shape[self.axis] += self.kept - self.skip
        return tuple(shape)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        return 0

    def describe(self) -> str:
        rows = self.kept or self.skip
        return f"time_ring {'of' if self.kept else 'dropping'} {rows} {'earlier ' if self.kept else ''}row" + \
            ("s" if rows > 1 else "")

    def state_shape(self, in_shape: Shape) -> Shape:
        shape = list(in_shape)
        shape[self.axis] = self.kept
        return tuple(shape)

    def initial_state(self, in_shape: Shape, dtype, zero_point: int) -> np.ndarray:
        """Rows of real zero: the first calls' windows reach back before the stream's start."""
        return np.full(self.state_shape(in_shape), zero_point, dtype)

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        if len(ctx.states) != int(self.kept > 0):
            raise AssertionError("a time ring runs with its state buffer (KernelContext.states)")
        x = inputs[0]
        fresh = np.take(x, range(self.skip, x.shape[self.axis]), axis=self.axis)
        if not self.kept:
            return fresh
        state = ctx.states[0]
        out = np.concatenate([state, fresh], axis=self.axis)
        state[...] = np.take(out, range(out.shape[self.axis] - self.kept, out.shape[self.axis]), axis=self.axis)
        return out

    def count_vector(self, family: str, kernel, shape: Shape, counts) -> None:
        """Besides its call and its values in and out (latency/features.py), the values its three
        copies move: the kept rows out, the new rows out, the output's last rows into the state."""
        row_values = prod(shape) // shape[self.axis]
        counts[f"{family}:copied"] += prod(shape) + self.kept * row_values

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        row_values = prod(out_shape) // out_shape[self.axis]
        fresh = in_shapes[0][self.axis] - self.skip
        return c_struct({"state": names[STATE] if self.kept else None, "kept_values": self.kept * row_values,
                         "skip_values": self.skip * row_values, "new_values": fresh * row_values})

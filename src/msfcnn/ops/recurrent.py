"""What the float32 recurrent ops besides the LSTM share (ONNX's GRU and RNN, gru.py and rnn.py):
a (T, F) sequence in, the hidden state of every step (T, U) out in time order, the steps taken
from the first or, in the backward direction of a bidirectional layer (`reverse`), from the last.
The hidden state starts at zero. Each step's matmuls are running sums in C order, bias first
(nx.float32_dot_in_c_order), with the host C library's expf and tanhf. The C kernels sum in the same
order but take float_math.h's exp and tanh (within 3 ulp: a time that does not depend on the
values on an MCU), so they agree within float32 rounding, as the runtimes do.

The kernel keeps the hidden state and one step's gates in its workspace (`workspace_floats`),
and runs the cell one step at a time (`step_float`; C: `msf_<kind>_step_f32`). A forward layer is
a time scan's cell (`Op.recurrent`; kernels/recurrent_cell.c): its state is h, its temporaries the
step's scratch. A reverse layer takes its steps from the last: no forward scan can run it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from .base import CCall, KernelContext, Op, Pattern, Shape
from .logistic import libm_f32
from .loop_counts import Counts
from .lstm import GatedProducts, sequence_shape
from .soft_float import nonzero_excess


@dataclass(frozen=True)
class FloatRecurrent(GatedProducts, Op, pattern=Pattern.OPAQUE, c_call=CCall.SEQUENCE, recurrent=True,
                     elements=frozenset({"float32"})):
    units: int
    reverse: bool = False  # the steps from last to first (a bidirectional layer's backward half)

    def output_shape(self, inputs: list[Shape]) -> Shape:
        steps, _ = sequence_shape(inputs[0])
        return (steps, self.units)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        steps, features = sequence_shape(inputs[0])
        return steps * self.gates * self.units * (features + self.units)

    def describe(self) -> str:
        return f"{self.kind} {self.units}" + (" (reverse)" if self.reverse else "")

    def workspace_floats(self) -> int:
        """float32 values of the workspace: the hidden state first, then one step's scratch."""
        raise NotImplementedError

    def workspace_bytes(self, element: str) -> int:
        return 4 * self.workspace_floats()

    def step_float(self, x: np.ndarray, h: np.ndarray, ctx: KernelContext) -> tuple[np.ndarray, np.ndarray]:
        """One step: the new hidden state from the step's input and the previous one, and the
        scratch values the C kernel leaves after the state in its workspace."""
        raise NotImplementedError

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        return self.run_whole(inputs, ctx, np.zeros(self.workspace_bytes("float32"), np.uint8))

    def run_whole(self, inputs: list[np.ndarray], ctx: KernelContext, workspace: np.ndarray | None) -> np.ndarray:
        """Every step from a zero state, the state kept in the workspace as the C kernel keeps it."""
        if workspace is None:
            return self.reference(inputs, ctx)
        steps, features = sequence_shape(inputs[0].shape)
        xs = inputs[0].reshape(steps, features)
        values = workspace.view(np.float32)
        h = values[:self.units]
        h[...] = 0
        out = np.zeros((steps, self.units), np.float32)
        for t in (range(steps - 1, -1, -1) if self.reverse else range(steps)):
            new, scratch = self.step_float(xs[t], h.copy(), ctx)
            h[...], values[self.units:self.units + scratch.size] = new, scratch
            out[t] = h
        return out

    # ---- one step at a time, in a time scan (schedule/schemes/timescan.py) --------------------
    def cell_bytes(self, element: str) -> tuple[int, int]:
        """(bytes of the state a time scan keeps between steps: h; bytes of one step's scratch),
        as kernels/recurrent_cell.c lays them out (cell_views)."""
        return 4 * self.units, 4 * (self.workspace_floats() - self.units)

    def cell_views(self, state: np.ndarray, temp: np.ndarray, element: str):
        """(h, the step's scratch) in the state's and the temporaries' bytes."""
        return state.view(np.float32)[:self.units], temp.view(np.float32)

    def cell_start(self, views, ctx: KernelContext) -> None:
        """The state before the first step: h zero."""
        views[0][...] = 0

    def cell_step(self, x: np.ndarray, views, ctx: KernelContext) -> np.ndarray:
        """One step from h in `views` (cell_views), which it updates: returns h."""
        h, temp = views
        new, scratch = self.step_float(x, h.copy(), ctx)
        h[...], temp[:scratch.size] = new, scratch
        return h

    def weight_fields(self, names) -> dict:
        return {"weights": names["input_weights"], "recurrent": names["recurrent_weights"],
                "bias_x": names["input_bias"], "bias_h": names["recurrent_bias"]}

    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        return {role: np.ascontiguousarray(ctx.consts[role], np.float32)
                for role in ("input_weights", "recurrent_weights", "input_bias", "recurrent_bias")}

    def sequence_fields(self, in_shape: Shape) -> dict:
        steps, features = sequence_shape(in_shape)
        return {"steps": steps, "features": features, "units": self.units, "reverse": int(self.reverse)}

    def count_sequence(self, family: str, in_shape: Shape, output: Shape, counts: Counts) -> None:
        """Per step: the matmuls' rows (a float sum each; their MACs are the op's), the gate
        functions (expf and tanhf, by far the dearest per value) and the units' state updates."""
        steps, _ = sequence_shape(in_shape)
        counts[f"{family}:step"] += steps
        counts[f"{family}:gate_row"] += steps * 2 * self.gates * self.units
        counts[f"{family}:cell"] += steps * self.units
        # the state zeroed first (run whole, or a time scan's cell start): a memset of a size the
        # compiler does not know, the C library's loop a byte at a time
        counts[f"{family}:zero_byte"] += self.units * 4
        # run whole, each step's state is copied to the output sequence (a memcpy); a time scan's
        # cell does not copy it (latency/features.py takes these counts off there)
        counts[f"{family}:output_copy"] += steps
        counts[f"{family}:output_copy_byte"] += steps * self.units * 4
        for function, per_unit in self.gate_functions().items():
            counts[f"{family}:{function}"] += steps * per_unit * self.units

    def gate_functions(self) -> dict[str, int]:
        """The gate functions one step of one unit calls: name -> how many."""
        raise NotImplementedError

    def value_counts(self, inputs: list[np.ndarray], output: np.ndarray, ctx: KernelContext) -> dict[str, float]:
        """Per step, in the order the steps run, from the h the step before left (the output's
        row; 0 first): its gate functions' exps that take their reduction (step_values), and the
        products that read a value other than 0 beyond half: the input's, and h's after the
        first step (used where a ReLU made them, features._count_signed_macs)."""
        steps, features = sequence_shape(inputs[0].shape)
        xs = inputs[0].reshape(steps, features).astype(np.float32)
        ys = output.reshape(steps, self.units)
        order = list(range(steps - 1, -1, -1) if self.reverse else range(steps))
        counts = Counter({"input_nonzero_excess": nonzero_excess(xs, self.gates * self.units),
                          "state_nonzero_excess": sum(nonzero_excess(ys[t], self.gates * self.units) for t in order[:-1])})
        h = np.zeros(self.units, np.float32)
        for t in order:
            counts.update(self.step_values(xs[t], h, ctx))
            h = ys[t]
        return dict(counts)

    def step_values(self, x: np.ndarray, h: np.ndarray, ctx: KernelContext) -> dict[str, int]:
        """One step's exps that take their reduction (soft_float.py), by count name."""
        raise NotImplementedError


def sigmoid(x: np.ndarray) -> np.ndarray:
    one = np.float32(1)
    return np.array([one / (one + libm_f32("expf", -v, np.exp)) for v in x.astype(np.float32)], np.float32)


def tanh(x: np.ndarray) -> np.ndarray:
    return np.array([libm_f32("tanhf", v, np.tanh) for v in x.astype(np.float32)], np.float32)

"""An LSTM's cell state after its last step (ONNX's output Y_c, PyTorch's c_n): the steps of
ops/lstm.py from zero states, float32, and the cell state c (units,) out instead of h. The
kernel (kernels/lstm_cell_state.c) runs lstm.c's step function, so its c is the one the LSTM that
reads the same input keeps, bit for bit; the importer gives it the same weights."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import KernelContext, Shape
from .lstm import Lstm, sequence_shape


@dataclass(frozen=True)
class LstmCellState(Lstm, recurrent=False, elements=frozenset({"float32"})):
    kind = "lstm_cell_state"
    # the LSTM's float32 loops (lstm.c's step over every step), without its per-step copy of h: the
    # latency model counts it as an LSTM of the last step
    kernel_family = "lstm"
    return_sequences: bool = False

    @property
    def c_kernel(self) -> str:  # type: ignore[override]
        return "msf_lstm_cell_state"

    def output_shape(self, inputs: list[Shape]) -> Shape:
        sequence_shape(inputs[0])
        return (self.units,)

    def describe(self) -> str:
        return f"lstm {self.units} (last cell state)"

    def run_whole(self, inputs: list[np.ndarray], ctx: KernelContext, workspace: np.ndarray | None) -> np.ndarray:
        """Every step from zero states in the workspace (h, c, gates as lstm.c lays them out): c."""
        if workspace is None:
            return self.reference(inputs, ctx)
        super().run_whole(inputs, ctx, workspace)
        return self.workspace_views(workspace, "float32")[1].copy()

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        return self.plain_c_params(ctx, in_shapes, names)

    def for_numerics(self, ctx: KernelContext, shape: Shape) -> "LstmCellState":
        return self

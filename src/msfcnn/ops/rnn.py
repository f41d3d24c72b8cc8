"""ONNX RNN (float32, as PyTorch exports nn.RNN): per step h = f(Wi x + Wbi + Ri h + Rbi), f tanh
or relu (PyTorch's `nonlinearity`). recurrent.py has the sequence loop, the direction and the
numerics (float32, in C order)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .base import KernelContext, c_struct
from .recurrent import FloatRecurrent, tanh
from .soft_float import tanh_reduced

ACTIVATIONS = ("tanh", "relu")


@dataclass(frozen=True)
class Rnn(FloatRecurrent):
    kind = "rnn"
    c_kernel = "msf_rnn"
    activation: str = "tanh"

    def workspace_floats(self) -> int:
        """h, then the new h."""
        return 2 * self.units

    def describe(self) -> str:
        return super().describe() + ("" if self.activation == "tanh" else f" {self.activation}")

    def gate_functions(self) -> dict[str, int]:
        return {"tanh": 1} if self.activation == "tanh" else {}

    @property
    def rectified_state(self) -> bool:
        return self.activation == "relu"

    def step_sum(self, x: np.ndarray, h: np.ndarray, ctx: KernelContext) -> np.ndarray:
        """The activation's argument: the input's and h's sums, each bias first, in C order."""
        w = ctx.consts
        return (nx.float32_dot_in_c_order(w["input_bias"][0], w["input_weights"][0], x)
                + nx.float32_dot_in_c_order(w["recurrent_bias"][0], w["recurrent_weights"][0], h))

    def step_float(self, x: np.ndarray, h: np.ndarray, ctx: KernelContext) -> tuple[np.ndarray, np.ndarray]:
        """The new h, twice: rnn.c computes it in the scratch and copies it over h."""
        total = self.step_sum(x, h, ctx)
        new = tanh(total) if self.activation == "tanh" else np.where(total > 0, total, np.float32(0)).astype(np.float32)
        return new, new

    def step_values(self, x: np.ndarray, h: np.ndarray, ctx: KernelContext) -> dict[str, int]:
        return {"expm1_reduced": tanh_reduced(self.step_sum(x, h, ctx))} if self.activation == "tanh" else {}

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        return c_struct({**self.sequence_fields(in_shapes[0]), "relu": int(self.activation == "relu"),
                         **self.weight_fields(names)})

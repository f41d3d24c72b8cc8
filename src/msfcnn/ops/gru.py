"""ONNX GRU (float32, as PyTorch exports nn.GRU): per step, in ONNX's gate order update z, reset
r and candidate n, each from x (W x + Wb) and the previous hidden state h (R h + Rb):

    z = sigmoid(Wz x + Wbz + Rz h + Rbz),  r = sigmoid(Wr x + Wbr + Rr h + Rbr)
    n = tanh(Wn x + Wbn + r * (Rn h + Rbn))     (linear_before_reset, PyTorch's form)
    n = tanh(Wn x + Wbn + Rn (r * h) + Rbn)     (otherwise, the original GRU)
    h = (1 - z) * n + z * h

recurrent.py has the sequence loop, the direction and the numerics (float32, in C order)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .base import KernelContext, c_struct
from .recurrent import FloatRecurrent, sigmoid, tanh
from .soft_float import logistic_reduced, tanh_reduced


@dataclass(frozen=True)
class Gru(FloatRecurrent):
    kind = "gru"
    c_kernel = "msf_gru"
    linear_before_reset: bool = True
    gates = 3

    def workspace_floats(self) -> int:
        """h, then the input's three gate sums, the hidden state's three, and r * h (only when the
        reset gate multiplies h before its matmul)."""
        return (7 if self.linear_before_reset else 8) * self.units

    def gate_functions(self) -> dict[str, int]:
        return {"sigmoid": 2, "tanh": 1}

    def gate_arguments(self, x: np.ndarray, h: np.ndarray, ctx: KernelContext):
        """The arguments of z's and r's logistics and of n's tanh, in the C kernel's order, with
        the sums and r * h the scratch keeps."""
        w = ctx.consts
        xg = [nx.float32_dot_in_c_order(w["input_bias"][g], w["input_weights"][g], x) for g in range(3)]
        hg = [nx.float32_dot_in_c_order(w["recurrent_bias"][g], w["recurrent_weights"][g], h) for g in range(2)]
        r = sigmoid(xg[1] + hg[1])
        if self.linear_before_reset:
            hn = nx.float32_dot_in_c_order(w["recurrent_bias"][2], w["recurrent_weights"][2], h)
            n_arg, tail = xg[2] + r * hn, []
        else:
            rh = (r * h).astype(np.float32)
            n_arg, tail = xg[2] + nx.float32_dot_in_c_order(w["recurrent_bias"][2], w["recurrent_weights"][2], rh), [rh]
        return xg[0] + hg[0], xg[1] + hg[1], n_arg, xg, hg, tail

    def step_float(self, x: np.ndarray, h: np.ndarray, ctx: KernelContext) -> tuple[np.ndarray, np.ndarray]:
        """The new h, and the scratch as gru.c leaves it: z, r, the input's candidate sum, the
        hidden state's z and r sums, the candidate n (and r * h)."""
        z_arg, r_arg, n_arg, xg, hg, tail = self.gate_arguments(x, h, ctx)
        z, r, n = sigmoid(z_arg), sigmoid(r_arg), tanh(n_arg)
        new = ((np.float32(1) - z) * n + z * h).astype(np.float32)
        return new, np.concatenate([z, r, xg[2], hg[0], hg[1], n, *tail]).astype(np.float32)

    def step_values(self, x: np.ndarray, h: np.ndarray, ctx: KernelContext) -> dict[str, int]:
        z_arg, r_arg, n_arg, *_ = self.gate_arguments(x, h, ctx)
        return {"exp_reduced": logistic_reduced(z_arg) + logistic_reduced(r_arg), "expm1_reduced": tanh_reduced(n_arg)}

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        return c_struct({**self.sequence_fields(in_shapes[0]), "linear_before_reset": int(self.linear_before_reset),
                         **self.weight_fields(names)})

"""ONNX's LeakyRelu, Tanh and Elu in float32 graphs: one function of each value, computed in
float32 (C: kernels/float_unary.c). int8 graphs (TFLite, layer lists) run these functions as
256-entry tables instead (leaky_relu.py, tanh.py, elu.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UserError
from .base import KernelContext, Pattern, ValueMap, as_feature_map, c_struct
from .elu import elu_f32
from .leaky_relu import leaky_relu_f32
from .loop_counts import Counts, KernelRun
from .soft_float import reduced, tanh_reduced

FUNCTIONS = {"leaky_relu": ("MSF_UNARY_LEAKY_RELU", leaky_relu_f32),
             "tanh": ("MSF_UNARY_TANH", lambda x, alpha: np.tanh(x).astype(np.float32)),
             "elu": ("MSF_UNARY_ELU", elu_f32)}


@dataclass(frozen=True)
class FloatUnary(ValueMap, pattern=Pattern.ELEMENTWISE, elements=frozenset({"float32"})):
    kind = "float_unary"
    keeps_zeros = True  # (tanh, Elu and LeakyRelu of 0 are 0, of a positive value positive)
    c_kernel = "msf_float_unary"
    function: str  # a key of FUNCTIONS
    alpha: float = 0.0  # LeakyRelu's slope below 0, Elu's scale

    def value_path(self, ctx: KernelContext) -> str:
        """Tanh and Elu run float_math.h's tanh and exp (Elu's on every value, selected below 0),
        tens of instructions a value more than LeakyRelu's compare and multiply: each names a
        count of its own."""
        return "" if self.function == "leaky_relu" else self.function

    def count_region(self, run: KernelRun, f: Counts) -> None:
        if run.path:
            f[f"{run.family}:output_{run.path}"] += run.pixels * run.channels
            if not run.rectified_values:  # (soft float: no zero among them, none of the short paths)
                f[f"{run.family}:output_{run.path}_signed"] += run.pixels * run.channels

    def value_counts(self, inputs: list[np.ndarray], output: np.ndarray, ctx: KernelContext) -> dict[str, float]:
        """Tanh's expm1 of -2|x| and Elu's exp (of x below 0, of +0 elsewhere: every value's) that
        take their reduction, and the values other than 0 (soft_float.py)."""
        x = inputs[0].astype(np.float32)
        if self.function == "tanh":
            return {"expm1_reduced": tanh_reduced(x), "input_nonzero": int(np.count_nonzero(x))}
        if self.function == "elu":
            return {"exp_reduced": reduced(np.where(x < 0, x, np.float32(0))), "input_nonzero": int(np.count_nonzero(x))}
        return {}

    def describe(self) -> str:
        return self.function if self.function == "tanh" else f"{self.function}({self.alpha:g})"

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        if not ctx.is_float:
            raise UserError(f"the float {self.function} runs in float32 graphs only")
        return FUNCTIONS[self.function][1](inputs[0].astype(np.float32), self.alpha)

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        return c_struct({"channels": as_feature_map(out_shape)[2], "function": FUNCTIONS[self.function][0],
                         "alpha": float(self.alpha)})

"""The shared form of int8 element-wise functions of one input value (LOGISTIC, HARD_SWISH): the
output is a function of the int8 input alone, so it is a 256-entry table computed once at import
(with TFLite's own arithmetic for that op) and applied by one C kernel (kernels/lookup.c)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import KernelContext, Pattern, ValueMap, as_feature_map, c_struct

# C_FUNCTIONS: the float kernel's function codes (msfcnn_kernels.h, MSF_FN_*).
C_FUNCTIONS = {"logistic": "MSF_FN_LOGISTIC", "hard_swish": "MSF_FN_HARD_SWISH"}


@dataclass(frozen=True)
class LookupOp(ValueMap, pattern=Pattern.ELEMENTWISE):
    """Subclasses give `table(in_q, out_q)`: the int8 output for inputs -128..127, and
    `float_function(x)` for float32 graphs."""

    c_kernel = "msf_lookup"

    def table(self, in_q, out_q) -> np.ndarray:
        raise NotImplementedError

    def float_function(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        if ctx.is_float:
            return self.float_function(x.astype(np.float32)).astype(np.float32)
        table = self.table(ctx.input_quant[0], ctx.output_quant)
        return table[x.astype(np.int64) + 128]

    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        if ctx.is_float:
            return {}
        return {"table": self.table(ctx.input_quant[0], ctx.output_quant).astype(np.int8)}

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        return c_struct({"channels": as_feature_map(out_shape)[2], "function": C_FUNCTIONS[self.kind],
                         "table": None if ctx.is_float else names["table"]})

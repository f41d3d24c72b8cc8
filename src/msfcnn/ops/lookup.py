"""The shared form of int8 element-wise functions of one input value (LOGISTIC, HARD_SWISH,
LEAKY_RELU, TANH, ELU): the output is a function of the int8 input alone, so it is a 256-entry
table computed once at import (with TFLite's own arithmetic for that op, under the graph's
numerics) and applied by one C kernel (kernels/lookup.c)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..errors import UserError
from .base import KernelContext, Pattern, ValueMap, as_feature_map, c_struct
from .loop_counts import Counts, KernelRun, count_signed_values

# C_FUNCTIONS: the float kernel's function codes (kernels/lookup.h, MSF_FN_*).
C_FUNCTIONS = {"logistic": "MSF_FN_LOGISTIC", "hard_swish": "MSF_FN_HARD_SWISH"}


@lru_cache(maxsize=512)
def _cached_table(op: "LookupOp", in_q, out_q, numerics: str) -> np.ndarray:
    """A table is asked for on every region the fused executor runs: made once per quantisation."""
    table = op.numerics_table(in_q, out_q, numerics)
    table.flags.writeable = False
    return table


@dataclass(frozen=True)
class LookupOp(ValueMap, pattern=Pattern.ELEMENTWISE):
    """Subclasses give `table(in_q, out_q)`: the int8 output for inputs -128..127 (or
    `numerics_table`, where LiteRT and TFLite Micro compute it differently), and
    `float_function(x)` for float32 graphs."""

    c_kernel = "msf_lookup"

    def table(self, in_q, out_q) -> np.ndarray:
        raise NotImplementedError

    def numerics_table(self, in_q, out_q, numerics: str) -> np.ndarray:
        """The table under `numerics` (numerics.LITERT or numerics.TFLM)."""
        return self.table(in_q, out_q)

    def float_function(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _table(self, ctx: KernelContext) -> np.ndarray:
        return _cached_table(self, ctx.input_quant[0], ctx.output_quant, ctx.numerics)

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        if ctx.is_float:
            return self.float_function(x.astype(np.float32)).astype(np.float32)
        return self._table(ctx)[x.astype(np.int64) + 128]

    def count_region(self, run: KernelRun, f: Counts) -> None:
        """A float function of a value no ReLU made: soft float's long path (`output_signed`);
        about half of a rectified map is 0, whose exp is short."""
        count_signed_values(run, f)

    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        if ctx.is_float:
            return {}
        return {"table": self._table(ctx).astype(np.int8)}

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        if ctx.is_float and self.kind not in C_FUNCTIONS:
            raise UserError(f"{self.kind} has no float32 C kernel in this form")
        # int8 graphs only read the table: the function code is then unused
        return c_struct({"channels": as_feature_map(out_shape)[2], "function": C_FUNCTIONS.get(self.kind, 0),
                         "table": None if ctx.is_float else names["table"]})

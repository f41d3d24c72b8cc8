"""Element types of activation tensors: everything the tools need to know about one, in one record.

Each tensor of a graph has one (`Graph.element_of`): the network input's (`Graph.element`), except
after a DEQUANTIZE or QUANTIZE node (a float island in an int8 graph). The numpy executors, the
arena layout, the cost model and the C generator ask this record instead of comparing type names.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ElementType:
    name: str  # "int8", "int16" or "float32", as in Graph.dtype and the JSON / C reports
    numpy: type  # the numpy scalar type of the activations
    nbytes: int  # bytes per element
    ctype: str  # the C type of the activations
    kernel_suffix: str  # C kernels are named <kernel><suffix>: msf_conv2d_s8, msf_conv2d_f32
    accumulator: str  # the element type name of reductions' accumulators (global pool, dense tails)

    @property
    def is_float(self) -> bool:
        return self.name == "float32"

    @property
    def params_suffix(self) -> str:
        """The C params structs are `<kernel><params_suffix>_params`: int8 and float32 kernels share
        one per op, 16x8 kernels have their own (kernels/int16.h)."""
        return self.kernel_suffix if self.name == "int16" else ""


INT8 = ElementType("int8", np.int8, 1, "int8_t", "_s8", "int32")
FLOAT32 = ElementType("float32", np.float32, 4, "float", "_f32", "float32")
INT16 = ElementType("int16", np.int16, 2, "int16_t", "_s16", "int64")  # 16x8 models
INT32 = ElementType("int32", np.int32, 4, "int32_t", "_s32", "int32")  # accumulators only
INT64 = ElementType("int64", np.int64, 8, "int64_t", "_s64", "int64")  # accumulators of 16x8 models

ELEMENT_TYPES = {t.name: t for t in (INT8, INT16, FLOAT32, INT32, INT64)}

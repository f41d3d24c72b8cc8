"""CONCATENATION of two maps along the channels: output channels [0, C1) are the first input's,
[C1, C1 + C2) the second's. int8 inputs and output share one quantisation (TFLite's int8 kernel
requires it), so the values are copied as they are. An output position reads the same position
of each input: it is element-wise for fusion."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UserError
from .base import KernelContext, Op, Pattern, Shape, as_feature_map, c_struct


@dataclass(frozen=True)
class Concat(Op, pattern=Pattern.ELEMENTWISE, elements=frozenset({"int8", "float32", "uint8"})):
    kind = "concat"
    passes_zeros = True
    arity = 2
    c_kernel = "msf_concat"

    def output_shape(self, inputs: list[Shape]) -> Shape:
        a, b = inputs
        if len(a) != len(b) or a[:-1] != b[:-1]:
            raise UserError(f"concatenation of {list(a)} and {list(b)} along the channels: the other axes differ")
        return (*a[:-1], a[-1] + b[-1])

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        return 0

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        if not ctx.is_float and any(q != ctx.output_quant for q in ctx.input_quant):
            raise ValueError("int8 concatenation of differently quantised tensors")
        return np.concatenate(inputs, axis=-1)

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        return c_struct({"channels1": as_feature_map(in_shapes[0])[2], "channels2": as_feature_map(in_shapes[1])[2]})

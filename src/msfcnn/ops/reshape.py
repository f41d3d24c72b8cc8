"""RESHAPE / Flatten: same bytes, new shape (row-major over (H, W, C))."""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod

import numpy as np

from ..errors import UserError
from .base import CCall, KernelContext, Op, Pattern, Shape


@dataclass(frozen=True)
class Reshape(Op, pattern=Pattern.VECTOR, c_call=CCall.NONE, is_view=True,
              elements=frozenset({"int8", "int16", "float32", "uint8"})):
    kind = "reshape"
    # No C kernel: the bytes do not change, so the generated code aliases the input's buffer
    # (c_kernel stays None).
    shape: tuple[int, ...]  # the output shape without the batch dimension

    def output_shape(self, inputs: list[Shape]) -> Shape:
        if prod(inputs[0]) != prod(self.shape):
            raise UserError(f"cannot reshape {list(inputs[0])} to {list(self.shape)}")
        return tuple(self.shape)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        return 0

    def with_output_shape(self, shape: Shape) -> "Reshape":
        return replace(self, shape=tuple(shape))

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        return inputs[0].reshape(self.shape)

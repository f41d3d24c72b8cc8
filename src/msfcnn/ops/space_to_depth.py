"""SPACE_TO_DEPTH with block size b: each b x b block of pixels becomes one pixel of b * b * C
channels, output channel (di * b + dj) * C + c being input channel c of the block's pixel (di, dj)
(TensorFlow's order). The values are copied as they are (input and output share one
quantisation), so int8 and float maps share one kernel that copies values of their size. A window
op of kernel b and stride b with no padding: it fuses like a pool."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UserError
from .base import KernelContext, Op, Pattern, Shape, Window, c_struct, require_feature_map


@dataclass(frozen=True)
class SpaceToDepth(Op, pattern=Pattern.WINDOW, elements=frozenset({"int8", "float32"})):
    kind = "space_to_depth"
    passes_zeros = True
    c_kernel = "msf_space_to_depth"
    block: int

    def __post_init__(self):
        if self.block < 1:
            raise UserError(f"bad block size {self.block}: must be positive")

    @property
    def window(self) -> Window:
        return Window((self.block, self.block), (self.block, self.block))

    def on_region(self, border: tuple[int, int, int, int]) -> "Op":
        """A region's window never reaches outside the input (kernel = stride, no padding)."""
        return self

    def describe(self) -> str:
        return f"space_to_depth {self.block}"

    def output_shape(self, inputs: list[Shape]) -> Shape:
        h, w, c = require_feature_map(inputs[0], self.kind)
        if h % self.block or w % self.block:
            raise UserError(f"space_to_depth with block {self.block} of a {h}x{w} map: H and W must be multiples of it")
        return (h // self.block, w // self.block, c * self.block * self.block)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        return 0

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        if not ctx.is_float and ctx.input_quant[0] != ctx.output_quant:
            raise ValueError("space_to_depth's input and output must share one quantisation")
        x, b = inputs[0], self.block
        h, w, c = x.shape
        blocks = x.reshape(h // b, b, w // b, b, c).transpose(0, 2, 1, 3, 4)
        return np.ascontiguousarray(blocks.reshape(h // b, w // b, b * b * c))

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        return c_struct({"block": self.block, "channels": require_feature_map(in_shapes[0], self.kind)[2]})

"""DEPTH_TO_SPACE with block size b, SPACE_TO_DEPTH's inverse: each pixel of b * b * C channels
becomes a b x b block of pixels, output pixel (r, c) being the input pixel (r // b, c // b)'s
channels ((r % b) * b + c % b) * C + [0, C) (TensorFlow's order). The values are copied as they are
(input and output share one quantisation). An output row reads input row r // b: an upsampling,
not a sliding window, so like RESIZE_NEAREST_NEIGHBOR the op takes its whole input and never
fuses."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UserError
from .base import KernelContext, Op, Pattern, Shape, c_struct, require_feature_map


@dataclass(frozen=True)
class DepthToSpace(Op, pattern=Pattern.OPAQUE, elements=frozenset({"int8", "float32"})):
    kind = "depth_to_space"
    passes_zeros = True
    c_kernel = "msf_depth_to_space"
    block: int

    def __post_init__(self):
        if self.block < 1:
            raise UserError(f"bad block size {self.block}: must be positive")

    def describe(self) -> str:
        return f"depth_to_space {self.block}"

    def output_shape(self, inputs: list[Shape]) -> Shape:
        h, w, c = require_feature_map(inputs[0], self.kind)
        if c % (self.block * self.block):
            raise UserError(f"depth_to_space with block {self.block} of {c} channels: C must be a multiple of "
                            f"{self.block * self.block}")
        return (h * self.block, w * self.block, c // (self.block * self.block))

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        return 0

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        if not ctx.is_float and ctx.input_quant[0] != ctx.output_quant:
            raise ValueError("depth_to_space's input and output must share one quantisation")
        x, b = inputs[0], self.block
        h, w, c = x.shape
        blocks = x.reshape(h, w, b, b, c // (b * b)).transpose(0, 2, 1, 3, 4)
        return np.ascontiguousarray(blocks.reshape(h * b, w * b, c // (b * b)))

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        return c_struct({"block": self.block, "channels": out_shape[2]})

"""TRANSPOSE of a feature map's three axes (H, W, C): what remains of a TFLite TRANSPOSE that the
importer cannot fold (into a MEAN, or into a reshape when it moves only axes of size 1). It needs
its whole input, so it never fuses."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UserError
from .base import KernelContext, Op, Pattern, Shape, c_struct, require_feature_map


@dataclass(frozen=True)
class Transpose(Op, pattern=Pattern.OPAQUE, elements=frozenset({"int8", "float32"})):
    kind = "transpose"
    passes_zeros = True
    c_kernel = "msf_transpose"
    perm: tuple[int, int, int]  # output axis k is input axis perm[k]

    def __post_init__(self):
        if sorted(self.perm) != [0, 1, 2]:
            raise UserError(f"bad transpose permutation {list(self.perm)} of (H, W, C)")

    def describe(self) -> str:
        return "transpose " + "".join("HWC"[a] for a in self.perm)

    def output_shape(self, inputs: list[Shape]) -> Shape:
        shape = require_feature_map(inputs[0], self.kind)
        return tuple(shape[a] for a in self.perm)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        return 0

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        return np.ascontiguousarray(np.transpose(inputs[0], self.perm))

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        h, w, c = require_feature_map(in_shapes[0], self.kind)
        return c_struct({"in_h": h, "in_w": w, "channels": c, "out_channels": out_shape[2],
                         "axis0": self.perm[0], "axis1": self.perm[1], "axis2": self.perm[2]})

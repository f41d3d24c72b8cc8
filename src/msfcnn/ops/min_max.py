"""MAXIMUM and MINIMUM: of two maps of one shape, or of a map and an int8 constant (one value, or
one per channel).

TFLite's int8 kernels compare the raw int8 values and requantise nothing, so the inputs and the
output share one quantisation (the TFLite converter makes them so; the importer refuses others).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import KernelContext, Pattern, SameShapeBinary, as_feature_map, c_struct
from .mul import ConstOperand


@dataclass(frozen=True)
class Maximum(SameShapeBinary, pattern=Pattern.ELEMENTWISE, elements=frozenset({"int8", "float32"})):
    kind = "maximum"
    passes_zeros = True
    c_kernel = "msf_min_max"
    pick = staticmethod(np.maximum)

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        return self.pick(inputs[0], inputs[1])

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        return c_struct({"channels": as_feature_map(out_shape)[2], "maximum": int(self.pick is np.maximum),
                         "operand_size": 0})


@dataclass(frozen=True)
class Minimum(Maximum):
    kind = "minimum"
    pick = staticmethod(np.minimum)


@dataclass(frozen=True)
class MaximumConst(ConstOperand, elements=frozenset({"int8", "float32"})):
    """The maximum of a map and a constant in its quantisation (`consts["operand"]`); the
    ConstOperand fields (the constant's scale and zero point, the map's; no activation) are kept
    for the importers' shared constant handling."""

    kind = "maximum_const"
    passes_zeros = True
    c_kernel = "msf_min_max_const"
    pick = staticmethod(np.maximum)

    def describe(self) -> str:
        return f"{self.kind.split('_')[0]} (constant)"

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        return self.pick(x, self.operand(ctx).astype(x.dtype))

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        role = "operand_f32" if ctx.is_float else "operand"
        return c_struct({"channels": as_feature_map(out_shape)[2], "maximum": int(self.pick is np.maximum),
                         "operand_size": int(np.size(ctx.consts["operand"])), role: names["operand"]})

    def takes_clamp(self) -> bool:
        return False  # its kernels apply no activation (the field is ConstOperand's)


@dataclass(frozen=True)
class MinimumConst(MaximumConst):
    kind = "minimum_const"
    pick = staticmethod(np.minimum)

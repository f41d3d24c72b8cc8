"""HardSigmoid (ONNX; float32 only): y = max(0, min(1, alpha * x + beta)), computed in float32
as onnxruntime does. PyTorch exports its Hardsigmoid (alpha 1/6, beta 1/2) so, and its Hardswish
as x * HardSigmoid(x) below opset 14. TFLite has no such operator."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UserError
from .base import KernelContext, Pattern, ValueMap, as_feature_map, c_struct


@dataclass(frozen=True)
class HardSigmoid(ValueMap, pattern=Pattern.ELEMENTWISE, elements=frozenset({"float32"})):
    kind = "hard_sigmoid"
    c_kernel = "msf_hard_sigmoid"
    alpha: float = 0.2
    beta: float = 0.5

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        if not ctx.is_float:
            raise UserError("HardSigmoid is supported in float32 models only")
        y = np.float32(self.alpha) * inputs[0].astype(np.float32) + np.float32(self.beta)
        return np.clip(y, np.float32(0), np.float32(1)).astype(np.float32)

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        return c_struct({"channels": as_feature_map(out_shape)[2], "alpha": float(self.alpha),
                         "beta": float(self.beta)})

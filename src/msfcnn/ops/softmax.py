"""SOFTMAX over the last axis; its cost is not counted in MACs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .base import CCall, KernelContext, Pattern, ValueMap, c_struct


@dataclass(frozen=True)
class Softmax(ValueMap, pattern=Pattern.VECTOR, c_call=CCall.VECTOR):
    kind = "softmax"
    c_kernel = "msf_softmax"
    beta: float = 1.0

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        if ctx.is_float:
            z = (x.astype(np.float32) - x.max(axis=-1, keepdims=True)) * np.float32(self.beta)
            e = np.exp(z)
            return e / e.sum(axis=-1, keepdims=True)
        return _softmax_int8(x, ctx.input_quant[0].scale, self.beta, ctx.output_quant)

    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        return {} if ctx.is_float else {"exp_table": _exp_table(ctx.input_quant[0].scale, self.beta)}

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        depth = int(out_shape[-1])
        outer = int(np.prod(out_shape[:-1], dtype=np.int64))
        if ctx.is_float:
            return c_struct({"depth": depth, "outer": outer, "beta": self.beta})
        return c_struct({"depth": depth, "outer": outer, "output_offset": ctx.output_quant.zero_point,
                         "output_scale": ctx.output_quant.scale, "exp_table": names["exp_table"]})


def _exp_table(input_scale: float, beta: float) -> np.ndarray:
    """table[d] = expf(-input_scale * beta * d) for d = max - x in 0..255, in float32.

    Computed in float64 and rounded once, i.e. a correctly rounded expf (as glibc's).
    """
    scale = -np.float32(input_scale) * np.float32(beta)
    arguments = scale * np.arange(256, dtype=np.float32)  # float32 products, as in C
    return np.exp(arguments.astype(np.float64)).astype(np.float32)


def _softmax_int8(x: np.ndarray, input_scale: float, beta: float, out_q) -> np.ndarray:
    """The interpreter's int8 SOFTMAX (optimized_ops::Softmax): a 256-entry float32 exp table
    indexed by max - x, a float32 sum taken element by element, and std::round to the output."""
    rows = x.reshape(-1, x.shape[-1]).astype(np.int32)
    table = _exp_table(input_scale, beta)
    exps = table[rows.max(axis=1, keepdims=True) - rows]
    # A running float32 sum, element by element as the C loop: cumsum accumulates sequentially,
    # while numpy's sum() adds pairwise and rounds differently.
    total = np.cumsum(exps, axis=1, dtype=np.float32)[:, -1]
    inv = np.float32(1.0) / (total * np.float32(out_q.scale))
    prob = exps * inv[:, None]
    out = nx.round_half_away(prob) + out_q.zero_point
    return np.clip(out, nx.INT8_MIN, nx.INT8_MAX).astype(np.int8).reshape(x.shape)

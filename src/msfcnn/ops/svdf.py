"""SVDF: a fully connected layer factored into a feature filter and a time filter, with a memory of
the last `memory` steps (TFLite's SVDF, int8; Google's keyword spotting models).

Per invocation, on one input vector x (n_input values) and the state S (filters x memory, a
variable tensor that outlives the invocation: Graph.states):

1. S shifts one step to the left (its oldest column drops out);
2. feature: S[f, memory - 1] = sat(rescale1(sum_i Wf[f, i] * (x[i] - input zero point)));
3. time: d[f] = sum_j Wt[f, j] * (S[f, j] - state zero point);
4. output: y[u] = sat8(rescale2(bias[u] + sum_r d[u * rank + r]) + output zero point).

rescale1 is input scale x feature scale / state scale, rescale2 state scale x time scale / output
scale, each formed in float32 (as both runtimes multiply float scales) and applied with TFLite's
MultiplyByQuantizedMultiplier (two roundings). sat saturates to the state's type. LiteRT and TFLite
Micro share these formulas (LiteRT shifts the state after step 4 and clears the newest column, which
gives the same outputs); neither applies the fused activation in its integer kernel. LiteRT runs
only an int16 state and time filter (and demands a RELU activation); TFLite Micro an int8 one too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .base import C_ROUNDING, CCall, KernelContext, Op, Pattern, Shape, c_pointer, c_struct

ROUNDING = nx.DOUBLE  # both runtimes' MultiplyByQuantizedMultiplier
STATE_TYPES = {"int16": np.int16, "int8": np.int8}


@dataclass(frozen=True)
class Svdf(Op, pattern=Pattern.OPAQUE, c_call=CCall.VECTOR, elements=frozenset({"int8"})):
    """Never fused: its output depends on earlier invocations, not on a window of its input."""

    kind = "svdf"
    c_kernel = "msf_svdf"
    rank: int
    units: int
    memory: int
    feature_scale: float  # the feature filter's (per-tensor) scale
    time_scale: float  # the time filter's
    state_scale: float
    state_zero_point: int = 0
    state_type: str = "int16"  # the state's and the time filter's element type
    activation: str | None = "relu"  # the model's; neither runtime's integer kernel applies it

    @property
    def filters(self) -> int:
        return self.units * self.rank

    def output_shape(self, inputs: list[Shape]) -> Shape:
        return (self.units,)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        n_input = int(np.prod(inputs[0]))
        return self.filters * (n_input + self.memory)

    def describe(self) -> str:
        return f"svdf {self.units} units, rank {self.rank}, memory {self.memory}"

    def refused_under(self, numerics: str) -> str | None:
        if numerics == nx.LITERT and self.state_type != "int16":
            return "LiteRT's int8 SVDF reads its state and time filter as int16 (TFLite Micro's runs int8 ones)"
        if numerics == nx.LITERT and self.activation != "relu":
            return "LiteRT's int8 SVDF runs only with a RELU activation"
        return None

    def count_vector(self, family: str, kernel, shape: Shape, counts) -> None:
        """The kernel's own loops besides a call's MACs, inputs and outputs (latency/features.py):
        per filter a feature dot product's rescale and state write, the time filter's MACs apart
        (a loop of its own), and the state's shift (a memmove of its bytes)."""
        counts[f"{family}:filter"] += self.filters
        counts[f"{family}:time"] += self.filters * self.memory
        counts[f"{family}:state_byte"] += self.filters * self.memory * np.dtype(STATE_TYPES[self.state_type]).itemsize

    def initial_state(self) -> np.ndarray:
        """The state a fresh model starts from (and a reset returns to): every value its zero point."""
        return np.full((self.filters, self.memory), self.state_zero_point, STATE_TYPES[self.state_type])

    def multipliers(self, ctx: KernelContext) -> tuple[tuple[int, int], tuple[int, int]]:
        """(mult, shift) of rescale1 and rescale2, from the scales multiplied in float32."""
        f32 = np.float32
        with np.errstate(**nx.QUIET_FLOAT32):
            first = f32(ctx.input_quant[0].scale) * f32(self.feature_scale) / f32(self.state_scale)
            second = f32(self.state_scale) * f32(self.time_scale) / f32(ctx.output_quant.scale)
        return nx.quantize_multiplier(float(first)), nx.quantize_multiplier(float(second))

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        if len(ctx.states) != 1:
            raise AssertionError("an SVDF runs with its state buffer (KernelContext.states)")
        state = ctx.states[0]  # (filters, memory), written in place: the next invocation reads it
        (m1, s1), (m2, s2) = self.multipliers(ctx)
        x = inputs[0].reshape(-1).astype(np.int64) - ctx.input_quant[0].zero_point
        feature = _wrap32(ctx.consts["weights"].astype(np.int64) @ x)
        info = np.iinfo(state.dtype)
        newest = np.clip(nx.multiply_by_quantized_multiplier(feature, m1, s1, ROUNDING), info.min, info.max)
        state[:, :-1] = state[:, 1:].copy()
        state[:, -1] = (newest + self.state_zero_point).astype(state.dtype)  # (wraps as the C cast does)
        time = ctx.consts["weights_time"].astype(np.int64) * (state.astype(np.int64) - self.state_zero_point)
        sums = _wrap32(time.sum(axis=1).reshape(self.units, self.rank).sum(axis=1) + ctx.consts["bias"])
        out = nx.multiply_by_quantized_multiplier(sums, m2, s2, ROUNDING) + ctx.output_quant.zero_point
        return np.clip(out, nx.INT8_MIN, nx.INT8_MAX).astype(np.int8)

    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        return {"weights": ctx.consts["weights"], "weights_time": ctx.consts["weights_time"],
                "bias": ctx.consts["bias"].astype(np.int32)}

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        (m1, s1), (m2, s2) = self.multipliers(ctx)
        consts = self.c_consts(ctx)
        return c_struct({
            "n_input": int(np.prod(in_shapes[0])), "units": self.units, "rank": self.rank, "memory": self.memory,
            "weights": c_pointer(names, consts, "weights"), "bias": c_pointer(names, consts, "bias"),
            "weights_time": f"(const void *){names['weights_time']}", "state": names["activation_state"],
            "state_int8": int(self.state_type == "int8"), "input_offset": -ctx.input_quant[0].zero_point,
            "state_zero_point": self.state_zero_point, "output_offset": ctx.output_quant.zero_point,
            "mult1": m1, "shift1": s1, "mult2": m2, "shift2": s2, "rounding": C_ROUNDING[ROUNDING]})


def _wrap32(values: np.ndarray) -> np.ndarray:
    """int64 sums as the runtimes' int32 accumulators hold them."""
    return values.astype(np.int64).astype(np.int32).astype(np.int64)

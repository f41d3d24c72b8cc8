"""LEAKY_RELU: x if x >= 0 else alpha * x. int8: TFLite's QuantizeLeakyRelu (the reference kernel,
which LiteRT's interpreter and TFLite Micro both run on int8): x - input zero point, rescaled with
one multiplier where it is >= 0 (input scale / output scale) and another where it is negative
(input scale x alpha / output scale), each formed in float32 as both Prepare functions do, double
rounding, plus the output zero point, clamped. A function of the int8 input alone: a table."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .base import KernelContext
from .lookup import LookupOp
from .prelu import Prelu


def leaky_relu_multipliers(in_q, out_q, alpha: float) -> tuple[tuple[int, int], tuple[int, int]]:
    """((identity multiplier, shift), (alpha multiplier, shift)): the real factors are float32
    expressions (`input->params.scale * params->alpha / output->params.scale`) widened to double."""
    f32 = np.float32
    with np.errstate(**nx.QUIET_FLOAT32):
        identity = f32(in_q.scale) / f32(out_q.scale)
        scaled_alpha = f32(f32(in_q.scale) * f32(alpha)) / f32(out_q.scale)
    return nx.quantize_multiplier(float(identity)), nx.quantize_multiplier(float(scaled_alpha))


@dataclass(frozen=True)
class LeakyRelu(LookupOp, elements=frozenset({"int8", "uint8"})):
    kind = "leaky_relu"
    int8_counted_as = "logistic"  # msf_lookup_s8, as LOGISTIC
    alpha: float = 0.2

    def describe(self) -> str:
        return f"leaky_relu({self.alpha:g})"

    def table(self, in_q, out_q) -> np.ndarray:
        (mult_pos, shift_pos), (mult_neg, shift_neg) = leaky_relu_multipliers(in_q, out_q, self.alpha)
        x = np.arange(-128, 128, dtype=np.int64) - in_q.zero_point
        scaled = np.where(x >= 0, nx.multiply_by_quantized_multiplier(x, mult_pos, shift_pos),
                          nx.multiply_by_quantized_multiplier(x, mult_neg, shift_neg))
        return np.clip(scaled + out_q.zero_point, nx.INT8_MIN, nx.INT8_MAX).astype(np.int8)

    def float_function(self, x: np.ndarray) -> np.ndarray:
        return leaky_relu_f32(x, self.alpha)


@dataclass(frozen=True)
class WideLeakyRelu(Prelu, elements=frozenset({"int16"})):
    """LEAKY_RELU in 16x8 graphs, where a table would have 65536 entries: PRELU's kernel with every
    alpha 1 (`consts["alpha"]`, int8 ones) and LEAKY_RELU's two factors, which both runtimes run
    with the same scalar arithmetic on int16 values (checked on LiteRT's x86 build)."""

    kind = "leaky_relu"
    slope: float = 0.2

    def describe(self) -> str:
        return f"leaky_relu({self.slope:g})"

    def multipliers(self, ctx: KernelContext) -> tuple[tuple[int, int], tuple[int, int]]:
        return leaky_relu_multipliers(ctx.input_quant[0], ctx.output_quant, self.slope)


def leaky_relu_f32(x: np.ndarray, alpha: float) -> np.ndarray:
    """The float kernels' `val > 0 ? val : val * alpha` in float32."""
    return np.where(x > 0, x, x * np.float32(alpha)).astype(np.float32)

"""ELU: x if x >= 0 else exp(x) - 1. int8: a 256-entry table filled at Prepare in float32, as
LOGISTIC's (logistic.float32_table), by a transform that differs between the runtimes: LiteRT's
interpreter calls std::expm1 (expm1f), TFLite Micro std::exp(x) - 1.0f (expf, then a float32
subtraction). The two tables can differ where a value lands near a rounding tie."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from .logistic import expf, float32_table, libm_f32
from .lookup import LookupOp


def _elu_litert(x: np.float32) -> np.float32:
    return libm_f32("expm1f", x, np.expm1) if x < 0 else x


def _elu_tflm(x: np.float32) -> np.float32:
    return np.float32(expf(x) - np.float32(1)) if x < 0 else x


@dataclass(frozen=True)
class Elu(LookupOp, elements=frozenset({"int8"})):
    kind = "elu"
    int8_counted_as = "logistic"  # msf_lookup_s8, as LOGISTIC

    def table(self, in_q, out_q) -> np.ndarray:
        return self.numerics_table(in_q, out_q, nx.LITERT)

    def numerics_table(self, in_q, out_q, numerics: str) -> np.ndarray:
        return float32_table(in_q, out_q, _elu_tflm if numerics == nx.TFLM else _elu_litert)

    def float_function(self, x: np.ndarray) -> np.ndarray:
        return elu_f32(x, 1.0)


def elu_f32(x: np.ndarray, alpha: float) -> np.ndarray:
    """alpha * (exp(x) - 1) below 0, x from 0 on, in float32 (onnxruntime's Elu)."""
    negative = np.float32(alpha) * (np.exp(np.minimum(x, 0)).astype(np.float32) - np.float32(1))
    return np.where(x >= 0, x, negative).astype(np.float32)

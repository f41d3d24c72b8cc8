"""LOGISTIC (sigmoid). int8: TFLite's interpreter (its generic optimised kernel) looks the output
up in a 256-entry table it fills at Prepare, all in float32:
table[v] = clamp(int(round(sigmoid(in_scale * (v - in_zero)) * (1 / out_scale)) + out_zero))
with std::exp on float (expf) and std::round (halves away from zero)."""

from __future__ import annotations

import ctypes
import ctypes.util
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .. import numerics as nx
from .base import KernelContext
from .lookup import LookupOp
from .soft_float import logistic_reduced


@lru_cache(maxsize=None)
def _libm(name: str):
    """The C library's float function `name` (expf, tanhf, expm1f), which the interpreters call
    (numpy's float32 versions may differ in the last place); None when there is no loadable libm."""
    library = ctypes.util.find_library("m")
    try:
        fn = getattr(ctypes.CDLL(library), name) if library else None
    except (OSError, AttributeError):
        return None
    if fn is not None:
        fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return fn


def libm_f32(name: str, x: np.float32, fallback) -> np.float32:
    """libm's `name` of a float32, or numpy's `fallback` where there is no libm."""
    fn = _libm(name)
    return np.float32(fn(float(x))) if fn is not None else np.float32(fallback(np.float32(x)))


def expf(x: np.float32) -> np.float32:
    return libm_f32("expf", x, np.exp)


def float32_table(in_q, out_q, transform) -> np.ndarray:
    """TFLite's PopulateLookupTable for int8: `transform` maps a float32 to a float32."""
    f32 = np.float32
    table = np.empty(256, np.int8)
    with np.errstate(over="ignore"):  # a scale that overflows float32 fails below, as OverflowError
        inverse_scale = f32(1) / f32(out_q.scale)
        for v in range(-128, 128):
            dequantized = f32(out_scale_product(in_q.scale, v - in_q.zero_point))
            rescaled = f32(nx.tflite_round(float(f32(transform(dequantized)) * inverse_scale)))
            quantized = int(f32(rescaled + f32(out_q.zero_point)))  # static_cast<int32_t> truncates
            table[v + 128] = min(max(quantized, nx.INT8_MIN), nx.INT8_MAX)
    return table


def out_scale_product(scale: float, offset: int) -> np.float32:
    """float32(scale) * float32(offset), as `input->params.scale * (val - zero_point)` in C++."""
    return np.float32(scale) * np.float32(offset)


def _sigmoid(x: np.float32) -> np.float32:
    return np.float32(1) / (np.float32(1) + expf(-x))


@dataclass(frozen=True)
class Logistic(LookupOp, elements=frozenset({"int8", "float32", "uint8"})):
    kind = "logistic"

    def table(self, in_q, out_q) -> np.ndarray:
        return float32_table(in_q, out_q, _sigmoid)

    def float_function(self, x: np.ndarray) -> np.ndarray:
        return np.float32(1) / (np.float32(1) + np.exp(-x))

    def value_counts(self, inputs: list[np.ndarray], output: np.ndarray, ctx: KernelContext) -> dict[str, float]:
        """The float kernel's exps of -x that take their reduction, and its values other than 0
        (of 0 every soft-float step is short; soft_float.py)."""
        if not ctx.is_float:
            return {}
        return {"exp_reduced": logistic_reduced(inputs[0]), "input_nonzero": int(np.count_nonzero(inputs[0]))}

"""The values that choose soft float's paths in float_math.h's exp (codegen/kernels/float_math.h),
for the latency model's value profile on the cores without an FPU (Op.value_counts).

msf_exp_reduced rounds x / ln 2 to n by adding and subtracting 1.5 * 2^23 in float32. Where n is
0 (|x| below about ln 2 / 2) that subtraction cancels exactly, n times ln 2's two parts multiplies
a zero, and x - 0 and r - 0 add one: each a short path of the soft-float library. Where n is not
0 every one runs in full: an exp with a reduction (`exp_reduced`; tanh's expm1 `expm1_reduced`)."""

from __future__ import annotations

import numpy as np

_LOG2E = np.float32(1.44269504)
_ROUND = np.float32(12582912.0)
_LOW, _HIGH = np.float32(-87.33), np.float32(88.37)


def reduced(x: np.ndarray) -> int:
    """How many of the exps of `x` (float_math.h's msf_exp_reduced, after its clamp) round x / ln 2
    to an n other than 0, computed as the C computes n (float32, no fused multiply-add)."""
    x = np.clip(np.asarray(x, np.float32).ravel(), _LOW, _HIGH)
    with np.errstate(invalid="ignore", over="ignore"):
        n = ((x * _LOG2E).astype(np.float32) + _ROUND).astype(np.float32) - _ROUND
    return int(np.count_nonzero(n != 0))


def logistic_reduced(x: np.ndarray) -> int:
    """msf_logisticf's exps of -x that take the reduction."""
    return reduced(-np.asarray(x, np.float32))


def tanh_reduced(x: np.ndarray) -> int:
    """msf_tanhf's expm1 of -2|x| that take the reduction (|x| above about ln 2 / 4)."""
    return reduced(np.float32(-2) * np.abs(np.asarray(x, np.float32)))


def nonzero_excess(values: np.ndarray, products_each: int) -> float:
    """Of the products that read `values` (`products_each` a value), those that read a value
    other than 0 (soft float's long path) beyond the half that a rectified value's products are
    priced at (`value_rectified`): negative where more than half are 0."""
    values = np.asarray(values)
    return products_each * (np.count_nonzero(values) - values.size / 2)

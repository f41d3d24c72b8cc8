"""QUANTIZE's value conversion without double precision (kernels/numerics.c under
MSF_QUANTIZE_WITHOUT_DOUBLE, what the LX106 builds: its libgcc has no double routines) against
the double code every other target runs: the same int8 for every value tried, on both of
LiteRT's paths (the vector one's product rounded half to even, the scalar one's quotient rounded
half away from zero), halves and their float neighbours, the clipping bounds and non-finite values."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from support.c_kernels_harness import build_library
from support.toolchains import require_tools


def _quantizer(directory, defines):
    quantize = ctypes.CDLL(str(build_library(directory, defines=defines))).msf_quantize_f32_one
    quantize.argtypes, quantize.restype = [ctypes.c_float, ctypes.c_float, ctypes.c_int32, ctypes.c_int], ctypes.c_int8
    return quantize


def _cases(rng) -> list[tuple[float, float, int]]:
    """(x, scale, zero point): random values at random scales, and values whose quotient or
    product lands on a half-integer, one float either side of it, or near the clipping bounds."""
    scales = np.float32(2.0) ** rng.uniform(-20, 10, 300).astype(np.float32)
    cases = []
    for scale in scales:
        scale = np.float32(scale)
        halves = (np.arange(-130, 131) + np.float32(0.5)).astype(np.float32)
        exact = (halves * scale).astype(np.float32)
        for x in (exact, np.nextafter(exact, np.float32(np.inf)), np.nextafter(exact, np.float32(-np.inf)),
                  (rng.normal(0, 200, 40) * scale).astype(np.float32)):
            cases += [(float(v), float(scale), int(rng.integers(-128, 128))) for v in x]
    bounds = [1e6, 1e6 + 0.5, 2.0 ** 21, 2.0 ** 25, 9.3e18, 2.0 ** 63, 3e38, np.inf, np.nan, 0.0, -0.0, 1e-45]
    cases += [(s * v, 1.0, z) for v in bounds for s in (1.0, -1.0) for z in (-5, 0, 5)]
    cases += [(1e-45, 1e-45, 0), (3e38, 1e-45, 0), (1e-40, 3e-38, 0), (2.5e-45, 1e-45, 0)]
    return cases


@pytest.mark.slow  # builds the kernel library twice (cached afterwards): about 25 s of CPU
def test_float_and_integer_quantize_equals_the_double_one(tmp_path):
    require_tools("gcc", packages=("gcc",))
    double = _quantizer(tmp_path, ())
    single = _quantizer(tmp_path, ("MSF_QUANTIZE_WITHOUT_DOUBLE",))
    for x, scale, zero in _cases(np.random.default_rng(0)):
        for vector in (0, 1):
            assert single(x, scale, zero, vector) == double(x, scale, zero, vector), (x, scale, zero, vector)

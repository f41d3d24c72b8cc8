"""TFLite's integer helpers (`msfcnn.numerics`) on hand-checked values.

The rounding test vectors marked "measured" are accumulators from the fixtures on which the TFLite
interpreter's CONV_2D (ruy on x86) and gemmlowp-style kernels disagree: they pin the three rounding
schemes apart."""

from __future__ import annotations

import numpy as np
import pytest

from msfcnn import numerics as nx
from msfcnn.ir import Quant

INT32_MIN = -(1 << 31)


@pytest.mark.parametrize("real, expected", [
    (0.5, (1 << 30, 0)),
    (1.0, (1 << 30, 1)),
    (0.75, (1610612736, 0)),
    (2.0 ** -10, (1 << 30, -9)),
    (0.0, (0, 0)),
    (1.0 - 2.0 ** -40, (1 << 30, 1)),  # the significand rounds up to 2^31: halved, shift + 1
    (2.0 ** -40, (0, 0)),  # shifts below -31 become a zero multiplier
])
def test_quantize_multiplier(real, expected):
    assert nx.quantize_multiplier(real) == expected


def test_quantize_multiplier_represents_the_real_factor():
    for real in np.random.default_rng(0).uniform(1e-6, 3.0, 200):
        m, shift = nx.quantize_multiplier(float(real))
        assert (1 << 30) <= m < (1 << 31)
        assert abs(m * 2.0 ** (shift - 31) - real) <= real * 2.0 ** -31


@pytest.mark.parametrize("x, expected", [(2.5, 3), (-2.5, -3), (0.5, 1), (-0.5, -1), (1.49, 1),
                                         (0.49999999999999994, 0), (-7.0, -7)])
def test_tflite_round_is_half_away_from_zero(x, expected):
    assert nx.tflite_round(x) == expected
    assert nx.round_half_away(np.array([x]))[0] == expected


def test_saturating_rounding_doubling_high_mul():
    half = 1 << 30  # 0.5 in Q31
    assert nx.saturating_rounding_doubling_high_mul(np.array([3]), half)[0] == 2  # 1.5 -> 2
    assert nx.saturating_rounding_doubling_high_mul(np.array([-3]), half)[0] == -1  # -1.5 -> -1
    assert nx.saturating_rounding_doubling_high_mul(np.array([INT32_MIN]), INT32_MIN)[0] == (1 << 31) - 1


def test_rounding_divide_by_pot_rounds_half_away_from_zero():
    x = np.array([3, -3, 5, -5, 4, -4, 7, -7])
    assert nx.rounding_divide_by_pot(x, 1).tolist() == [2, -2, 3, -3, 2, -2, 4, -4]
    assert nx.rounding_divide_by_pot(x, 2).tolist() == [1, -1, 1, -1, 1, -1, 2, -2]


@pytest.mark.parametrize("x, multiplier, shift, double, ruy, single", [
    (6, 1 << 30, -1, 2, 2, 2),  # 1.5: every scheme rounds up
    (-6, 1 << 30, -1, -2, -1, -1),  # -1.5: gemmlowp away from zero, ruy and single-rounding up
    (5, 1 << 30, 2, 10, 10, 10),  # a left shift (real multiplier 2.0) is exact
    (-6826, 1328819513, -8, -17, -16, -16),  # measured: exact -16.4992, gemmlowp rounds twice
    (-3583, 1381030624, -9, -5, -4, -5),  # measured: exact -4.5004, ruy rounds twice (half up)
    (-29622, 1967278232, -10, -27, -26, -27),  # measured: exact -26.5003
])
def test_multiply_by_quantized_multiplier_schemes(x, multiplier, shift, double, ruy, single):
    def run(rounding):
        return int(nx.multiply_by_quantized_multiplier(np.array([x]), multiplier, shift, rounding)[0])
    assert (run(nx.DOUBLE), run(nx.RUY), run(nx.SINGLE)) == (double, ruy, single)


def test_multiply_by_quantized_multiplier_broadcasts_per_channel():
    acc = np.array([[10, 10], [-10, -10]])
    out = nx.multiply_by_quantized_multiplier(acc, np.array([1 << 30, 1 << 30]), np.array([0, -1]), nx.DOUBLE)
    assert out.tolist() == [[5, 3], [-5, -3]]  # x 0.5 and x 0.25 (2.5 -> 3, -2.5 -> -3)


def test_activation_range():
    q = Quant(0.05, -10)
    assert nx.activation_range(None, q) == (-128, 127)
    assert nx.activation_range("relu", q) == (-10, 127)
    assert nx.activation_range("relu6", q) == (-10, 110)  # 6 / 0.05 = 120 steps
    assert nx.activation_range("relu6", Quant(0.01, -128)) == (-128, 127)  # 600 steps: clamped
    assert nx.activation_range("relu", Quant(0.1, -200)) == (-128, 127)


def test_per_channel_multipliers_broadcast_a_single_scale():
    m, s = nx.per_channel_multipliers(0.5, [0.25], 0.125, 3)
    assert m.tolist() == [1 << 30] * 3 and s.tolist() == [1] * 3  # 0.5 * 0.25 / 0.125 = 1.0


def test_quantize_float_rounds_vector_blocks_half_to_even_and_the_rest_away():
    # Scale 0.5: x = 0.25 is exactly half a step. The interpreter's vector code (the first 8
    # values) rounds it to even (0), its scalar code (the 9th) away from zero (1).
    q = Quant(0.5, 0)
    out = nx.quantize_float(np.array([0.25] * 8 + [0.25], np.float32), q)
    assert out.tolist() == [0] * 8 + [1]
    out = nx.quantize_float(np.array([1.25, -1.25, 0.75, 100.0, -100.0, 0, 0, 0, -1.25], np.float32), Quant(0.5, 3))
    assert out.tolist() == [5, 1, 5, 127, -128, 3, 3, 3, 0]  # 2.5 -> 2, -2.5 -> -2, 1.5 -> 2; -2.5 -> -3


def test_dequantize_vector_blocks_round_three_times():
    # q * s - z * s in float32 (vector code) differs from (q - z) * s (scalar code) by one ulp here.
    out = nx.dequantize(np.array([4] * 9, np.int8), Quant(0.1, 3))
    assert out.dtype == np.float32
    assert out[:8].tolist() == [np.float32(0.09999999403953552)] * 8
    assert out[8] == np.float32(0.1)


def test_exact_int_matmul():
    rng = np.random.default_rng(1)
    a = rng.integers(-255, 256, size=(7, 4000))
    b = rng.integers(-128, 128, size=(4000, 5))
    assert np.array_equal(nx.exact_int_matmul(a, b), a @ b)

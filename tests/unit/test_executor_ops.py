"""Each op's numpy reference kernel on small hand-checked cases, int8 and float32.

The int8 expectations are worked out by hand from TFLite's arithmetic (the comments show the real
values before rounding); the float ones from direct formulas."""

from __future__ import annotations

import numpy as np
import pytest

from msfcnn.ir import Quant
from msfcnn.ops import (Add, AvgPool2D, Conv2D, Dense, DepthwiseConv2D, GlobalAvgPool, KernelContext, MaxPool2D,
                        Pad, Requantize, Reshape, Softmax, Window)
from msfcnn.ops.activation import Activation
from msfcnn.ops.dense import dense_multipliers
from msfcnn import numerics as nx

ONE = Quant(1.0, 0)
X3 = np.arange(9).reshape(3, 3, 1)  # [[0 1 2] [3 4 5] [6 7 8]]


def int8(a) -> np.ndarray:
    return np.asarray(a, dtype=np.int8)


def ctx(consts=None, inputs=(ONE,), output=ONE) -> KernelContext:
    return KernelContext(consts or {}, tuple(inputs), output)


def fctx(consts=None, n_inputs=1) -> KernelContext:
    return KernelContext(consts or {}, (None,) * n_inputs, None)


def same(k, stride, hw) -> Window:
    return Window.resolve(k, stride, "same", hw)


# ---- CONV_2D ------------------------------------------------------------------------------------


def conv_consts(weights, bias, scales):
    return {"weights": np.asarray(weights, np.int8), "bias": np.asarray(bias, np.int32),
            "weight_scales": np.asarray(scales, np.float32)}


def test_conv_int8_pads_with_the_zero_point_and_rounds_ties_up():
    # All-ones 3x3 kernel, input zero point 1: each output sums (x - 1) over the in-bounds taps
    # (padding reads the zero point, i.e. contributes 0), adds bias -30, and is scaled by
    # 1 * 1 / 2 = 0.5. Sums: [[4 9 8] [15 27 21] [16 27 20]] - 30, halved, + output zero point 5.
    # ruy's output stage rounds the halves up: -10.5 -> -10, -7.5 -> -7, -1.5 -> -1, -4.5 -> -4.
    op = Conv2D(1, same(3, 1, (3, 3)))
    out = op.reference([int8(X3)], ctx(conv_consts(np.ones((1, 3, 3, 1)), [-30], [1.0]),
                                       inputs=(Quant(1.0, 1),), output=Quant(2.0, 5)))
    assert out.dtype == np.int8
    assert out[:, :, 0].tolist() == [[-8, -5, -6], [-2, 4, 1], [-2, 4, 0]]


def test_conv_int8_per_channel_scales_activation_and_stride():
    # Two filters on a 1x1 stride-2 conv: x 1 and x -1, weight scales 0.5 and 0.25 (output scale 1).
    op = Conv2D(2, Window((1, 1), (2, 2)), activation="relu6")
    x = int8([[[40], [1]], [[3], [-7]]])  # only (0, 0) is read
    out = op.reference([x], ctx(conv_consts([[[[1]]], [[[-1]]]], [0, 0], [0.5, 0.25]),
                                output=Quant(0.25, -128)))
    # relu6 clamps to [zp, zp + 6 / 0.25] = [-128, -104]: 40 * 0.5 = 20 -> 80 steps -> clamped.
    assert out.tolist() == [[[-104, -128]]]


def test_conv_float_matches_direct_sum():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 6, 3)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    win = Window((3, 3), (2, 2), (1, 1, 1, 0))
    out = Conv2D(4, win, "relu").reference([x], fctx({"weights": w, "bias": b}))
    xp = np.pad(x, ((1, 1), (1, 0), (0, 0)))
    expected = np.zeros((3, 3, 4), np.float64)
    for i in range(3):
        for j in range(3):
            patch = xp[2 * i:2 * i + 3, 2 * j:2 * j + 3]
            expected[i, j] = np.tensordot(w, patch, axes=([1, 2, 3], [0, 1, 2])) + b
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, np.maximum(expected, 0), rtol=1e-5, atol=1e-5)


# ---- DEPTHWISE_CONV_2D --------------------------------------------------------------------------


def test_depthwise_int8_multiplier_maps_output_channel_to_input_channel_over_m():
    # depth_multiplier 2: output channel o reads input channel o // 2; 1x1 kernel [1, 2, 3, 4].
    x = int8([[[1, 10], [2, 20]], [[3, 30], [4, 40]]])
    op = DepthwiseConv2D(Window((1, 1)), depth_multiplier=2)
    out = op.reference([x], ctx(conv_consts([[[[1, 2, 3, 4]]]], [0] * 4, [1.0] * 4)))
    assert out.tolist() == [[[1, 2, 30, 40], [2, 4, 60, 80]], [[3, 6, 90, 120], [4, 8, 120, 127]]]


def test_depthwise_int8_rounds_ties_away_from_zero():
    # TFLite's own MultiplyByQuantizedMultiplier: x * 0.25 with -6 -> -1.5 -> -2, 6 -> 1.5 -> 2.
    op = DepthwiseConv2D(Window((1, 1)))
    out = op.reference([int8([[[-6, 6]]])], ctx(conv_consts([[[[1, 1]]]], [0, 0], [0.25, 0.25])))
    assert out.tolist() == [[[-2, 2]]]


def test_depthwise_float_matches_direct_sum():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 4, 2)).astype(np.float32)
    w = rng.standard_normal((1, 3, 3, 4)).astype(np.float32)
    op = DepthwiseConv2D(same(3, 1, (4, 4)), depth_multiplier=2, activation="relu6")
    out = op.reference([x], fctx({"weights": w, "bias": np.zeros(4, np.float32)}))
    xp = np.pad(x, ((1, 1), (1, 1), (0, 0)))
    for o in range(4):
        for i in range(4):
            for j in range(4):
                expected = np.sum(xp[i:i + 3, j:j + 3, o // 2] * w[0, :, :, o])
                assert out[i, j, o] == pytest.approx(min(max(expected, 0), 6), abs=1e-5)


# ---- pooling --------------------------------------------------------------------------------------


def test_max_pool_int8_padding_never_wins():
    # 2x2/2 SAME on 3x3: one row and column of padding at the bottom / right.
    x = int8([[1, -5, 3], [-7, 2, -9], [-100, -120, -128]])[:, :, None]
    out = MaxPool2D(same(2, 2, (3, 3))).reference([x], ctx())
    assert out[:, :, 0].tolist() == [[2, 3], [-100, -128]]
    relu = MaxPool2D(same(2, 2, (3, 3)), activation="relu").reference([x], ctx(output=Quant(1.0, -110)))
    assert relu[:, :, 0].tolist() == [[2, 3], [-100, -110]]


def test_avg_pool_int8_divides_by_in_bounds_taps_and_rounds_half_away():
    # 3x3/1 SAME on 3x3: corners average 4 taps, edges 6, the centre 9.
    # TL 2/4 -> 1; TR -2/4 -> -1; left edge 3/6 -> 1; right edge -2/6 -> 0; BL 1/4 -> 0.
    x = int8([[2, 0, -2], [0, 0, 0], [1, 0, 0]])[:, :, None]
    out = AvgPool2D(same(3, 1, (3, 3))).reference([x], ctx())
    assert out[:, :, 0].tolist() == [[1, 0, -1], [1, 0, 0], [0, 0, 0]]


def test_avg_pool_float_count_include_pad():
    x = np.array([[2, 0, -2], [0, 0, 0], [1, 0, 0]], np.float32)[:, :, None]
    win = same(3, 1, (3, 3))
    excluded = AvgPool2D(win).reference([x], fctx())
    included = AvgPool2D(win, count_include_pad=True).reference([x], fctx())
    assert excluded[0, 0, 0] == pytest.approx(2 / 4) and included[0, 0, 0] == pytest.approx(2 / 9)
    assert excluded[1, 0, 0] == pytest.approx(3 / 6) and included[1, 0, 0] == pytest.approx(3 / 9)
    assert excluded[1, 1, 0] == included[1, 1, 0] == pytest.approx(1 / 9)


# ---- ADD ----------------------------------------------------------------------------------------


def test_add_int8_equal_scales_is_exact_and_saturates():
    a, b = int8([[[3, 100, -100]]]), int8([[[4, 100, -100]]])
    out = Add().reference([a, b], ctx(inputs=(ONE, ONE)))
    assert out.tolist() == [[[7, 127, -128]]]


def test_add_int8_rescales_each_input_and_rounds_ties_away():
    # a has scale 0.5 and zero point 10: a = 13 is 1.5, a = 7 is -1.5; b is 0; output scale 1.
    a, b = int8([[[13, 7, 14]]]), int8([[[0, 0, 0]]])
    out = Add(activation="relu").reference([a, b], ctx(inputs=(Quant(0.5, 10), ONE), output=Quant(1.0, -1)))
    assert out.tolist() == [[[1, -1, 1]]]  # 1.5 -> 2, -1.5 -> -2 (clamped to the relu floor -1), 2


# ---- MEAN ---------------------------------------------------------------------------------------


def test_mean_keepdims_and_plain_mean_differ_in_their_zero_point_correction():
    # Input zero point 3 at scale 0.5: x = 4 is 0.5 everywhere, so the mean is exactly 0.5.
    # The plain MEAN subtracts the zero point exactly and rounds 0.5 away from zero: 1. The
    # keep_dims MEAN rescales the raw sum (16 * 0.5 / 4 = 2) and subtracts a float32 bias rounded
    # half away from zero (3 * 0.5 = 1.5 -> 2): 0.
    x = np.full((2, 2, 1), 4, np.int8)
    c = ctx(inputs=(Quant(0.5, 3),))
    assert GlobalAvgPool(keepdims=False).reference([x], c).tolist() == [1]
    assert GlobalAvgPool(keepdims=True).reference([x], c).tolist() == [[[0]]]


def test_mean_keepdims_rounds_vector_channel_blocks_up():
    # Every channel averages -1.5. The interpreter's keep_dims kernel handles channels 0-15 as one
    # vector block (ties up: -1) and channel 16 with scalar code (ties away: -2).
    x = np.array([-1, -1, -2, -2], np.int8).reshape(2, 2, 1).repeat(17, axis=2)
    keep = GlobalAvgPool(keepdims=True).reference([x], ctx()).reshape(-1)
    assert keep.tolist() == [-1] * 16 + [-2]
    assert GlobalAvgPool().reference([x], ctx()).tolist() == [-2] * 17


def test_mean_float():
    x = np.random.default_rng(2).standard_normal((3, 5, 4)).astype(np.float32)
    out = GlobalAvgPool().reference([x], fctx())
    assert out.shape == (4,)
    np.testing.assert_allclose(out, x.mean(axis=(0, 1)), rtol=1e-6)
    assert GlobalAvgPool(keepdims=True).reference([x], fctx()).shape == (1, 1, 4)


# ---- FULLY_CONNECTED ----------------------------------------------------------------------------


def test_dense_int8():
    # x - zp = (2, 4); rows (1, 2) and (3, -4): 10 + 1 = 11 at scale 0.5 -> 5.5 -> 6; -10 + 2 = -8.
    op = Dense(2)
    out = op.reference([int8([[[3, 5]]])], ctx(conv_consts([[1, 2], [3, -4]], [1, 2], [0.5, 1.0]),
                                               inputs=(Quant(1.0, 1),), output=Quant(1.0, 7)))
    assert out.tolist() == [13, -1]


def test_dense_per_tensor_multiplier_uses_a_float32_product_of_scales():
    s_in, s_w, s_out = 0.0235294122248888, 0.00392156885936856, 0.0470588244497776
    float32_product = float(np.float32(s_in) * np.float32(s_w))
    expected = nx.quantize_multiplier(float32_product / float(np.float32(s_out)))
    assert tuple(int(v) for v in dense_multipliers(s_in, [s_w], s_out, 3)) == expected
    # A per-tensor scale repeated over the channels is still per-tensor.
    assert tuple(int(v) for v in dense_multipliers(s_in, [s_w] * 3, s_out, 3)) == expected


def test_dense_float():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 2, 3)).astype(np.float32)
    w = rng.standard_normal((5, 12)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    out = Dense(5).reference([x], fctx({"weights": w, "bias": b}))
    np.testing.assert_allclose(out, w @ x.reshape(-1) + b, rtol=1e-5, atol=1e-6)


# ---- SOFTMAX ------------------------------------------------------------------------------------


def test_softmax_int8():
    out_q = Quant(1 / 256, -128)
    assert Softmax().reference([int8([0, 0, 0, 0])], ctx(inputs=(Quant(0.1, 0),), output=out_q)).tolist() == [-64] * 4
    # exp(-10) / (1 + exp(-10)) * 256 = 0.0116 -> 0; the other 255.99 -> 256, clamped to 127.
    out = Softmax().reference([int8([10, 0])], ctx(inputs=(Quant(1.0, 0),), output=out_q))
    assert out.tolist() == [127, -128]


def test_softmax_float():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    out = Softmax().reference([x], fctx())
    np.testing.assert_allclose(out, np.exp(x) / np.exp(x).sum(), rtol=1e-6)


# ---- PAD, RESHAPE, requantise, standalone activation ----------------------------------------


def test_pad_fills_with_the_zero_point():
    x = int8([[[1, 2]]])
    out = Pad((1, 0, 0, 2)).reference([x], ctx(output=Quant(0.5, -7)))
    assert out.shape == (2, 3, 2)
    assert out.tolist() == [[[-7, -7]] * 3, [[1, 2], [-7, -7], [-7, -7]]]
    assert Pad((0, 1, 0, 0)).reference([np.ones((1, 1, 1), np.float32)], fctx()).tolist() == [[[0.0], [1.0]]]


def test_reshape_keeps_row_major_order():
    x = int8(np.arange(12).reshape(2, 2, 3))
    assert Reshape((12,)).reference([x], ctx()).tolist() == list(range(12))


def test_requantize_rounds_ties_away():
    # x 0.25 (a right shift of 1): 1.5 -> 2, -1.5 -> -2, 25; plus the zero point 5.
    out = Requantize().reference([int8([6, -6, 100])], ctx(output=Quant(4.0, 5)))
    assert out.tolist() == [7, 3, 30]
    # x 0.5 needs no right shift: the doubling high multiply alone rounds ties up (-1.5 -> -1).
    assert Requantize().reference([int8([3, -3])], ctx(output=Quant(2.0, 5))).tolist() == [7, 4]


def test_standalone_activation_requantises_then_clamps():
    x = int8([-3, 3, 100])
    out_q = Quant(0.5, -128)
    assert Activation("relu").reference([x], ctx(output=out_q)).tolist() == [-128, -122, 72]
    assert Activation("relu6").reference([x], ctx(output=out_q)).tolist() == [-128, -122, -116]
    assert Activation("relu6").reference([np.array([-1, 3, 7], np.float32)], fctx()).tolist() == [0, 3, 6]

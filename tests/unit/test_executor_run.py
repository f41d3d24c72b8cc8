"""`run_unfused`: its calling convention (layouts, batch dimension, element types, float edges) on
small graphs built by hand."""

from __future__ import annotations

import numpy as np
import pytest

from msfcnn.errors import UserError
from msfcnn.executor import run_unfused
from msfcnn.ir import NETWORK_INPUT, Graph, Quant
from msfcnn.ops import Add, Conv2D, Dense, Pad, Window

ONE = Quant(1.0, 0)


def int8_residual_graph() -> Graph:
    """conv 1x1 (x2) then add with the network input: y = 3x (saturating)."""
    g = Graph("residual", (2, 3, 2), input_quant=ONE)
    consts = {"weights": np.array([[[[2, 0]]], [[[0, 2]]]], np.int8), "bias": np.zeros(2, np.int32),
              "weight_scales": np.ones(2, np.float32)}
    conv = g.append(Conv2D(2, Window((1, 1))), (NETWORK_INPUT,), consts, ONE)
    g.append(Add(), (conv, NETWORK_INPUT), quant=ONE)
    return g


def test_int8_graph_with_and_without_batch_dimension():
    g = int8_residual_graph()
    x = np.arange(-6, 6, dtype=np.int8).reshape(2, 3, 2) * 10
    y = run_unfused(g, x)
    assert y.dtype == np.int8 and y.shape == (2, 3, 2)
    assert np.array_equal(y, np.clip(3 * x.astype(int), -128, 127))
    assert np.array_equal(run_unfused(g, x[None]), y[None])


def test_rejects_wrong_inputs():
    g = int8_residual_graph()
    x = np.zeros((2, 3, 2), np.int8)
    with pytest.raises(UserError, match="batch of 2"):
        run_unfused(g, np.stack([x, x]))
    with pytest.raises(UserError, match="int8 input"):
        run_unfused(g, x.astype(np.float32))
    with pytest.raises(UserError, match="does not match"):
        run_unfused(g, np.zeros((3, 2, 2), np.int8))


def test_int8_graph_needs_every_quantisation():
    g = int8_residual_graph()
    g.append(Pad((1, 1, 1, 1)), (1,))  # no quant
    with pytest.raises(UserError, match="layer 2 \\(pad\\).*no output quantisation"):
        run_unfused(g, np.zeros((2, 3, 2), np.int8))


def test_nchw_float_graph_takes_and_returns_chw():
    g = Graph("nchw", (2, 3, 4), layout="NCHW", dtype="float32")  # (H, W, C) inside
    g.append(Pad((1, 0, 0, 2)), (NETWORK_INPUT,))
    x = np.random.default_rng(0).standard_normal((1, 4, 2, 3)).astype(np.float32)  # (N, C, H, W)
    y = run_unfused(g, x)
    assert y.dtype == np.float32
    assert np.array_equal(y, np.pad(x, ((0, 0), (0, 0), (1, 0), (0, 2))))


def test_nchw_vector_output_is_not_transposed():
    g = Graph("nchw", (1, 1, 3), layout="NCHW", dtype="float32")
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    g.append(Dense(2), (NETWORK_INPUT,), {"weights": w, "bias": np.zeros(2, np.float32)})
    x = np.array([1, 2, 3], np.float32).reshape(1, 3, 1, 1)
    assert run_unfused(g, x).tolist() == [[8.0, 26.0]]


def test_float_edges_quantise_the_input_and_dequantise_the_output():
    g = int8_residual_graph()
    g.input_quant = Quant(0.5, 0)
    g.nodes = [n.__class__(n.op, n.inputs, n.shape, n.consts, Quant(0.5, 0)) for n in g.nodes]
    g.float_input = g.float_output = True
    x = np.full((2, 3, 2), 1.0, np.float32)
    y = run_unfused(g, x)
    assert y.dtype == np.float32 and np.all(y == 3.0)  # 1.0 -> q 2 -> conv 4 -> add 6 -> 3.0
    assert np.array_equal(run_unfused(g, np.full((2, 3, 2), 2, np.int8)), y)  # int8: already quantised

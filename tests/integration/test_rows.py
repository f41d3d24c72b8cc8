"""Layers on every row of a sequence (fixtures/make_row_models.py, tests/fixtures/sequence/rows_*):
Keras Dense on a (T, F) input, which TFLite writes as a FULLY_CONNECTED keeping the leading
dimensions, runs as a 1x1 convolution with FULLY_CONNECTED's requantisation (ops/dense_rows.py);
SOFTMAX over each row under both numerics, including the rows where LiteRT's float32 kernel and
TFLite Micro's fixed-point one disagree (ops/softmax_tflm.py)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from support import litert_oracle, micro_oracle
from support.c_build import check_c, kernel_library
from support.paths import FIXTURES
from support.toolchains import require_target
from msfcnn import pipeline
from msfcnn.executor import run_unfused
from msfcnn.ops.softmax import _softmax_int8, softmax_tflm, tflm_exp_table

SEQUENCES = FIXTURES / "sequence"
N_INPUTS = 12


def _inputs(graph, n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    if graph.dtype == "float32":
        return [rng.normal(0.2, 1.0, graph.declared_input_shape).astype(np.float32) for _ in range(n)]
    return [rng.integers(-128, 128, graph.declared_input_shape).astype(np.int8) for _ in range(n)]


@functools.cache
def _interpreters(name: str) -> dict[str, list[np.ndarray]]:
    """LiteRT's and TFLite Micro's outputs on _inputs, one fresh invocation per input (the LSTM's
    states start at zero each time, as run_unfused's)."""
    path = SEQUENCES / f"{name}.tflite"
    inputs = _inputs(pipeline.load(str(path)), N_INPUTS)
    litert = [run.outputs[0] for run in litert_oracle.run_jobs([(path, [x]) for x in inputs])]
    tflm = [out[0] for out in micro_oracle.run_jobs([(path, [x]) for x in inputs], "tflm")]
    return {"inputs": inputs, "litert": litert, "tflm": tflm}


def _host_c_output(graph, x: np.ndarray) -> np.ndarray:
    """The least-RAM plan's C, built and run on the host on `x`, checked bit-exact with numpy."""
    plan = pipeline.planner(graph).min_ram()
    schedule = pipeline.lower(graph, plan)
    target = require_target("host")
    check = pipeline.verify(graph, plan, schedule, x.reshape(graph.input_shape), target,
                            kernel_lib=kernel_library(graph, schedule, plan, target))
    assert check.bit_exact
    return check.output


@pytest.mark.parametrize("numerics", ["litert", "tflm"])
def test_dense_on_every_row_is_bit_exact(numerics):
    """(20, 8) -> Dense 16 relu -> Dense 6 -> Softmax: two 1x1 convolutions over the sequence, which
    give each interpreter's bytes, in numpy and in the C of the least-RAM plan."""
    name = "rows_dense_int8"
    graph = pipeline.load(str(SEQUENCES / f"{name}.tflite"), numerics=numerics)
    assert [node.op.describe() for node in graph.nodes] == ["dense 16 per row", "dense 6 per row", "softmax"]
    runs = _interpreters(name)
    for x, want in zip(runs["inputs"], runs[numerics]):
        np.testing.assert_array_equal(run_unfused(graph, x.reshape(graph.input_shape)).reshape(-1), want.reshape(-1))
    check_c(graph, pipeline.planner(graph).min_ram().blocks)


@pytest.mark.parametrize("numerics", ["litert", "tflm"])
def test_dense_on_every_pixel_of_a_map(numerics):
    """Conv2D -> Dense on each pixel -> Flatten -> Dense: the per-pixel dense is a 1x1 convolution
    over the map itself, fused with the conv before it, with each interpreter's bytes."""
    name = "map_dense_int8"
    graph = pipeline.load(str(SEQUENCES / f"{name}.tflite"), numerics=numerics)
    assert [node.op.describe() for node in graph.nodes][:2] == ["conv 3x3/1 8", "dense 6 per row"]
    runs = _interpreters(name)
    for x, want in zip(runs["inputs"], runs[numerics]):
        np.testing.assert_array_equal(run_unfused(graph, x.reshape(graph.input_shape)).reshape(-1), want.reshape(-1))


def test_float_dense_on_every_row():
    graph = pipeline.load(str(SEQUENCES / "rows_dense_float32.tflite"))
    runs = _interpreters("rows_dense_float32")
    for x, want in zip(runs["inputs"], runs["litert"]):
        got = run_unfused(graph, x.reshape(graph.input_shape)).reshape(-1)
        np.testing.assert_allclose(got, want.reshape(-1), rtol=1e-5, atol=1e-6)
    check_c(graph, pipeline.planner(graph).min_ram().blocks)


@pytest.mark.parametrize("numerics", ["litert", "tflm"])
def test_dense_after_an_lstm(numerics):
    """LSTM (every step) -> Dense 4 softmax, a label per step: each interpreter's bytes."""
    name = "lstm_rows_dense_int8"
    graph = pipeline.load(str(SEQUENCES / f"{name}.tflite"), numerics=numerics)
    assert [node.op.describe() for node in graph.nodes][-2:] == ["dense 4 per row", "softmax"]
    runs = _interpreters(name)
    for x, want in zip(runs["inputs"], runs[numerics]):
        np.testing.assert_array_equal(run_unfused(graph, x.reshape(graph.input_shape)).reshape(-1), want.reshape(-1))


def test_an_lstm_gate_rescale_on_a_near_tie_under_tflm():
    """TFLite Micro forms each LSTM matmul's multiplier from the two scales multiplied in double,
    LiteRT in float32. On this input (draw 36 of seed 2, the one of 100 draws where msfcnn's
    float32 product missed TFLite Micro's bytes, each draw on a fresh interpreter) an input matmul
    of step 3 rescales to 1.3e-8 (relative) from a rounding tie, which the two multipliers round apart:
    a cell state 2 LSB off, then 3 of the LSTM's outputs. numpy and the host C give TFLite
    Micro's bytes."""
    path = SEQUENCES / "lstm_rows_dense_int8.tflite"
    graph = pipeline.load(str(path), numerics="tflm")
    rng = np.random.default_rng(2)
    x = [rng.integers(-128, 128, graph.declared_input_shape).astype(np.int8) for _ in range(37)][-1]
    tflm = micro_oracle.run_jobs([(path, [x])], "tflm")[0][0].reshape(-1)
    np.testing.assert_array_equal(run_unfused(graph, x.reshape(graph.input_shape)).reshape(-1), tflm)
    np.testing.assert_array_equal(_host_c_output(graph, x).reshape(-1), tflm)


def test_softmax_rows_where_the_interpreters_differ():
    """LiteRT's int8 SOFTMAX rounds a float32 quotient, TFLite Micro's works in fixed point: on rows
    found where the two formulas differ, each numerics gives its interpreter's bytes (the two
    interpreters differ there), and the C agrees."""
    path = SEQUENCES / "rows_softmax_int8.tflite"
    graph, graph_tflm = pipeline.load(str(path)), pipeline.load(str(path), numerics="tflm")
    scale = graph.input_quant.scale
    rows = np.random.default_rng(1).integers(-128, 128, (300000, 10)).astype(np.int8)  # about 1 in 7,000 differ
    out_q = graph.nodes[-1].quant
    differ = np.any(_softmax_int8(rows, scale, 1.0, out_q) != softmax_tflm(rows, tflm_exp_table(scale, 1.0), np.int8),
                    axis=1)
    x = np.concatenate([rows[differ], rows[~differ]])[:64].reshape(graph.declared_input_shape)
    litert = litert_oracle.run_jobs([(path, [x])])[0].outputs[0]
    tflm = micro_oracle.run_jobs([(path, [x])], "tflm")[0][0]
    assert np.count_nonzero(np.any(litert != tflm, axis=-1)) >= 20  # rows where the interpreters differ
    for g, want in ((graph, litert), (graph_tflm, tflm)):
        np.testing.assert_array_equal(run_unfused(g, x.reshape(g.input_shape)).reshape(-1), want.reshape(-1))
    np.testing.assert_array_equal(_host_c_output(graph_tflm, x).reshape(-1), tflm.reshape(-1))

"""Dilated CONV_2D and DEPTHWISE_CONV_2D (and ONNX Conv `dilations`) on their fixtures
(`fixtures/make_dilated_models.py`) and on random layer lists:

- unfused numpy bit-exact with LiteRT (int8, 16x8) under the default numerics and with TFLite
  Micro under `tflm`; float32 within 1e-4 of LiteRT and of onnxruntime;
- the least-RAM plan, whose blocks fuse the dilated windows (their halos and rings the dilated
  extent's), equal to the same runtimes, and its C on the host equal to numpy (slow);
- random networks of dilated layers under random plans: the fused run equals the unfused one.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import cache
from support.c_build import check_c
from support.fused_cases import random_plan
from support.litert_oracle import run_jobs as litert_jobs
from support.micro_oracle import run_jobs as micro_jobs
from support.paths import FIXTURES
from msfcnn import pipeline
from msfcnn.tensors import random_input
from msfcnn.executor import run_unfused
from msfcnn.frontends.layer_list import graph_from_layer_list
from msfcnn.frontends.random_weights import with_random_weights
from msfcnn.fusion import solvers
from msfcnn.fused_executor import run_fused
from msfcnn.latency.calibration import with_random_float_weights
from msfcnn.schedule import schedule_plan

OPS = FIXTURES / "ops"
QUANTISED = [OPS / f"{name}.tflite" for name in ("dilated_conv2d_int8", "dilated_conv2d_i16", "dilated_tcn_int8",
                                                   "dilated_tcn_stack_i16")]
FLOATS = [OPS / f"{name}.tflite" for name in ("dilated_conv2d_f32", "dilated_tcn_f32")]


def random_inputs(graph, count: int, seed: int = 5) -> list[np.ndarray]:
    """`count` seeded inputs in the model's layout, without the batch."""
    return [random_input(graph, seed + k)[0] for k in range(count)]


def assert_runs(graph, schedule, inputs, expected, who: str) -> None:
    """Unfused and (with a schedule) fused runs equal the runtime's outputs."""
    for n, (x, want) in enumerate(zip(inputs, expected)):
        want = np.asarray(want).reshape(-1)
        runs = [run_unfused(graph, x[None])] + ([run_fused(schedule, x[None]).output] if schedule else [])
        for got in runs:
            if graph.dtype == "float32":
                np.testing.assert_allclose(got.reshape(-1), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
            else:
                np.testing.assert_array_equal(got.reshape(-1), want, err_msg=f"{graph.name}: {who}, input {n}")


def fused_dilated_plan(graph):
    """The least-RAM plan, which must fuse a dilated window with a neighbour."""
    blocks = solvers.min_peak_ram(cache.dag(graph)).blocks
    dilated = [t for t, node in enumerate(graph.nodes) if node.op.window is not None and node.op.window.dilated]
    assert dilated and any(b.first < b.last and b.first <= t <= b.last for b in blocks for t in dilated), blocks
    return blocks


def runtime_outputs(path, inputs) -> dict[str, list]:
    return {"litert": litert_jobs([(path, inputs)])[0].outputs,
            "tflm": micro_jobs([(path, inputs)], "tflm", arena_size=256 * 1024)[0]}


@pytest.mark.parametrize("path", QUANTISED, ids=lambda p: p.stem)
def test_quantised_fixtures_match_both_runtimes(path):
    graphs = {n: pipeline.load(str(path), numerics=n) for n in ("litert", "tflm")}
    inputs = random_inputs(graphs["litert"], 3)
    expected = runtime_outputs(path, inputs)
    for numerics, graph in graphs.items():
        assert_runs(graph, None, inputs, expected[numerics], numerics)


@pytest.mark.slow
@pytest.mark.parametrize("path", QUANTISED, ids=lambda p: p.stem)
def test_quantised_fixtures_fused_and_in_c(path):
    """The least-RAM plan, which fuses the dilated windows, equals both runtimes; its C on the host
    (both numerics) and that of a random plan equal numpy."""
    inputs = random_inputs(pipeline.load(str(path)), 2)
    expected = runtime_outputs(path, inputs)
    for numerics in ("litert", "tflm"):
        graph = pipeline.load(str(path), numerics=numerics)
        blocks = fused_dilated_plan(graph)
        assert_runs(graph, schedule_plan(graph, blocks), inputs, expected[numerics], numerics)
        check_c(graph, blocks, seed=2)
    check_c(graph, random_plan(cache.dag(graph), 11), seed=3)  # another plan: other rings and regions


@pytest.mark.parametrize("path", FLOATS, ids=lambda p: p.stem)
def test_float_fixtures_match_litert(path):
    graph = pipeline.load(str(path))
    inputs = random_inputs(graph, 2)
    assert_runs(graph, None, inputs, litert_jobs([(path, inputs)])[0].outputs, "litert")


@pytest.mark.slow
@pytest.mark.parametrize("path", FLOATS + [OPS / "dilated_conv.onnx"], ids=lambda p: p.name)
def test_float_fused_and_c_on_the_host(path):
    graph = pipeline.load(str(path))
    blocks = fused_dilated_plan(graph)
    x = random_inputs(graph, 1)[0][None]
    np.testing.assert_allclose(run_fused(schedule_plan(graph, blocks), x).output, run_unfused(graph, x), rtol=1e-5,
                               atol=1e-5)
    check_c(graph, blocks, seed=2)


def test_onnx_dilations_match_onnxruntime():
    import onnxruntime as ort

    path = OPS / "dilated_conv.onnx"
    graph = pipeline.load(str(path))
    assert [node.op.describe() for node in graph.nodes] == ["conv 3x3/1 d2 8", "dw 3x3/1 d3", "conv 3x2/1 d2x3 4"]
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for x in random_inputs(graph, 2):
        want = session.run(None, {"input": x[None]})[0]  # (the model's own layout, NCHW)
        np.testing.assert_allclose(run_unfused(graph, x[None]).reshape(want.shape), want, rtol=1e-4,
                                   atol=1e-4 * np.abs(want).max())


@st.composite
def dilated_layer_lists(draw):
    h, w, c = draw(st.integers(8, 20)), draw(st.integers(8, 20)), draw(st.integers(1, 5))
    shape = [h, w, c]
    layers = []
    for _ in range(draw(st.integers(2, 5))):
        kind = draw(st.sampled_from(["conv2d", "depthwise_conv2d", "residual"]))
        if kind == "residual" and layers:
            layers += [{"op": "depthwise_conv2d", "kernel": 3, "padding": "same", "dilation": draw(st.integers(2, 3))},
                       {"op": "add", "from": len(layers) - 1}]
            continue
        k, s = draw(st.integers(2, 4)), draw(st.integers(1, 2))
        d = [draw(st.integers(1, 3)), draw(st.integers(1, 3))]
        padding = draw(st.sampled_from(["same", "valid", 0, 1]))
        layer = {"op": "depthwise_conv2d" if kind == "residual" else kind, "kernel": k, "stride": s, "padding": padding,
                 "dilation": d}
        if layer["op"] == "conv2d":
            layer["filters"] = draw(st.integers(1, 6))
        try:
            graph_from_layer_list({"input": shape, "layers": layers + [layer]})
        except Exception:  # a window larger than its input: drawn again next round
            continue
        layers.append(layer)
    if not any(l["op"] != "add" for l in layers):
        layers.insert(0, {"op": "conv2d", "filters": 2, "kernel": 3, "padding": "same", "dilation": 2})
    return {"name": "dilated", "input": shape, "layers": layers}


@settings(max_examples=6, deadline=None, derandomize=True)
@given(doc=dilated_layer_lists(), seed=st.integers(0, 2**16), dtype=st.sampled_from(["int8", "float32"]))
def test_random_dilated_networks_fused_equal_unfused(doc, seed, dtype):
    weigh = with_random_float_weights if dtype == "float32" else with_random_weights
    graph = weigh(graph_from_layer_list(doc), seed=seed)
    x = random_inputs(graph, 1, seed)[0]
    want = run_unfused(graph, x[None])
    dag = cache.dag(graph)
    for plan_seed in range(3):
        schedule = schedule_plan(graph, random_plan(dag, seed + plan_seed))
        got = run_fused(schedule, x[None]).output
        np.testing.assert_array_equal(got, want)

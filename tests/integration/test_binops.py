"""SQUEEZE / EXPAND_DIMS (Keras' Conv1D) and the element-wise binary operators (SUB, MAXIMUM,
MINIMUM, SQUARED_DIFFERENCE) on their fixtures (`fixtures/make_binop_models.py`): the numpy executor, unfused and under
the least-RAM plan, bit-exact with the LiteRT interpreter (default numerics) and with TFLite Micro
(`--numerics tflm`) on random inputs; the generated C, under that plan and a random one, bit-exact
with numpy on the same inputs (so with the interpreters too)."""

from __future__ import annotations

import numpy as np
import pytest

import tflite_micro  # noqa: F401  (the oracle; a test dependency, never skipped)

from support import cache, litert_oracle, micro_oracle
from support.c_build import check_c
from support.fused_cases import random_plan
from support.paths import FIXTURES
from msfcnn import pipeline
from msfcnn.executor import run_unfused
from msfcnn.fusion import solvers
from msfcnn.schedule import schedule_plan
from msfcnn.fused_executor import run_fused
from msfcnn.tensors import random_input

MODELS = sorted((FIXTURES / "models").glob("bin_*.tflite"))
SEEDS = range(8)
NUMERICS = ("litert", "tflm")


@pytest.fixture(scope="module")
def expected():
    """{(numerics, path): interpreter outputs on random_input(graph, seed) for each seed}, each
    oracle in one subprocess."""
    graphs = {p: pipeline.load(str(p)) for p in MODELS}
    inputs = {p: [random_input(graphs[p], s) for s in SEEDS] for p in MODELS}
    jobs = [(p, inputs[p]) for p in MODELS]
    runs = {"litert": [run.outputs for run in litert_oracle.run_jobs(jobs)],
            "tflm": micro_oracle.run_jobs(jobs, "tflm")}
    return {(n, p): runs[n][k] for n in NUMERICS for k, p in enumerate(MODELS)}


def test_fixtures_exist():
    assert {p.stem for p in MODELS} >= {"bin_conv1d", "bin_conv1d_reshape"}


# The C under tflm numerics differs from litert's in the kernels' rounding params, which
# test_c_kernels.py checks node by node under both; the fast tier builds it for these models, and
# test_c_under_tflm_numerics (slow) for the others.
TFLM_C_FAST = ("bin_dw_conv1d", "bin_sub_ties")


def check_c_both_plans(graph, dag, least_ram):
    check_c(graph, least_ram, seed=SEEDS[0])
    check_c(graph, random_plan(dag, 1), seed=SEEDS[1])


# Three LiteRT runs of 1.3 to 2 s of CPU are slow: the fast tier runs these fixtures under tflm.
SLOW_LITERT = {"bin_conv1d_residual", "bin_conv1d", "bin_sub_maps"}


@pytest.mark.parametrize("path, numerics", [
    pytest.param(p, n, marks=pytest.mark.slow) if (p.stem in SLOW_LITERT and n == "litert") else (p, n)
    for p in MODELS for n in NUMERICS], ids=lambda v: getattr(v, "stem", v))
def test_numpy_and_c_match_the_interpreter(path, numerics, expected):
    graph = pipeline.load(str(path), numerics=numerics)
    dag = cache.dag(graph)
    least_ram = solvers.min_peak_ram(dag).blocks
    schedule = schedule_plan(graph, list(least_ram))
    for seed, want in zip(SEEDS, expected[(numerics, path)]):
        x = random_input(graph, seed)
        want = np.asarray(want).reshape(-1)
        np.testing.assert_array_equal(run_unfused(graph, x).reshape(-1), want)
        np.testing.assert_array_equal(run_fused(schedule, x).output.reshape(-1), want)
    if numerics == "litert" or path.stem in TFLM_C_FAST:
        check_c_both_plans(graph, dag, least_ram)


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in MODELS if p.stem not in TFLM_C_FAST], ids=lambda p: p.stem)
def test_c_under_tflm_numerics(path):
    """The rest of test_numpy_and_c_match_the_interpreter's C checks: its fused executor, which
    the C must equal, is checked against TFLite Micro there."""
    graph = pipeline.load(str(path), numerics="tflm")
    dag = cache.dag(graph)
    check_c_both_plans(graph, dag, solvers.min_peak_ram(dag).blocks)


def test_conv1d_stack_fuses_into_one_block():
    """Keras' Conv1D / Pooling1D layers expand the sequence at different axes (H = 1 for a conv,
    W = 1 for a pool); the import keeps one orientation, with no reshape between the layers, so
    the least-RAM plan runs every layer up to the dense head in one fused block."""
    graph = pipeline.load(str(FIXTURES / "models" / "bin_conv1d.tflite"))
    assert [node.op.kind for node in graph.nodes[:5]] == ["conv2d", "max_pool2d", "conv2d", "avg_pool2d", "conv2d"]
    assert all(graph.shape_of(t)[0] == 1 for t in range(5))
    blocks = solvers.min_peak_ram(cache.dag(graph)).blocks
    assert blocks[0].first == 0 and blocks[0].last >= 4


def test_onnx_sub_max_min_in_c():
    """The float32 kernels (the ONNX fixture's numpy run is checked against onnxruntime in
    tests/unit/test_onnx_import.py): C within tolerance of numpy under two plans."""
    graph = pipeline.load(str(FIXTURES / "models" / "onnx_sub_max_min.onnx"))
    dag = cache.dag(graph)
    check_c(graph, solvers.min_peak_ram(dag).blocks)
    check_c(graph, random_plan(dag, 2), seed=2)


LAYER_LIST = {"name": "binops", "input": [9, 7, 4], "layers": [
    {"op": "conv2d", "filters": 6, "kernel": 3, "padding": "same"},
    {"op": "conv2d", "filters": 6, "kernel": 1},
    {"op": "sub", "from": 0, "act": "relu"},
    {"op": "maximum", "from": 1},
    {"op": "sub", "const": "channel", "reversed": True},
    {"op": "minimum", "const": "scalar"},
    {"op": "depthwise_conv2d", "kernel": 3, "stride": 2, "padding": "same"},
    {"op": "sub", "const": "scalar", "act": "relu6"},
    {"op": "maximum", "const": "channel"},
    {"op": "squared_difference", "from": 7},
    {"op": "squared_difference", "const": "scalar"},
    {"op": "global_avg_pool"}, {"op": "dense", "units": 4}]}


def test_layer_list_forms_fused_and_in_c():
    """Every layer-list form (docs/models.md) with random weights: the fused executor equal to the
    unfused one under the least-RAM plan, and the C bit-exact under it and a random plan."""
    from msfcnn.frontends.layer_list import graph_from_layer_list
    from msfcnn.frontends.random_weights import with_random_weights

    graph = with_random_weights(graph_from_layer_list(LAYER_LIST))
    assert [n.op.kind for n in graph.nodes][2:11] == ["sub", "maximum", "sub_const", "minimum_const",
                                                      "depthwise_conv2d", "sub_const", "maximum_const",
                                                      "squared_difference", "squared_difference_const"]
    dag = cache.dag(graph)
    blocks = solvers.min_peak_ram(dag).blocks
    x = random_input(graph, 0)
    np.testing.assert_array_equal(run_fused(schedule_plan(graph, list(blocks)), x).output, run_unfused(graph, x))
    check_c(graph, blocks)
    check_c(graph, random_plan(dag, 3), seed=3)

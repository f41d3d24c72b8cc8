"""16x8 models on an emulated microcontroller: the generated C, built for Cortex-M4 and run under
QEMU, gives the LiteRT interpreter's bytes by default and TFLite Micro's under `--numerics tflm`,
on i16_chain (conv, depthwise, residual ADD, pooling, MEAN, FULLY_CONNECTED between float32 edges)
and i16_softmax (SOFTMAX's tables, MEAN, FULLY_CONNECTED)."""

from __future__ import annotations

import numpy as np
import pytest

from support import litert_oracle, micro_oracle
from support.c_kernels_harness import Driver, build_library
from support.edge_conversions import edge_conversions
from support.paths import FIXTURES
from support.toolchains import require_target
from msfcnn import numerics as nx
from msfcnn import pipeline
from msfcnn.ops.base import c_float
from msfcnn.tensors import random_input


@pytest.mark.slow
@pytest.mark.parametrize("numerics", ["litert", "tflm"])
@pytest.mark.parametrize("name", ["i16_chain", "i16_softmax"])
def test_c_on_cortex_m4_gives_the_interpreters_output(name, numerics):
    target = require_target("cortex-m4")
    path = FIXTURES / "models" / f"{name}.tflite"
    graph = pipeline.load(str(path), numerics=numerics)
    plan = pipeline.solve(pipeline.planner(graph), "optimal", max_overhead=1.2)
    schedule = pipeline.lower(graph, plan)
    # int16 inputs over the whole range; the harness takes the graph's int16 tensor, so a float32
    # model input gets the values that its QUANTIZE turns into those exactly
    inputs = [random_input(graph, seed).astype(np.int16) for seed in (21, 22)]
    fed = inputs
    if graph.float_input:
        fed = [(x.astype(np.float64) * graph.input_quant.scale).astype(np.float32) for x in inputs]
    if numerics == "tflm":
        expected = micro_oracle.run_jobs([(path, fed)], "tflm")[0]
    else:
        expected = litert_oracle.run_jobs([(path, fed)])[0].outputs
    for x, want in zip(inputs, expected):
        check = pipeline.verify(graph, plan, schedule, x, target)
        assert check.bit_exact and check.arena_bytes == plan.peak_ram_bytes
        got = nx.dequantize(check.output, graph.output_quant, numerics) if graph.float_output else check.output
        np.testing.assert_array_equal(np.asarray(got).reshape(-1), np.asarray(want).reshape(-1))


@pytest.mark.slow
def test_edge_conversions_on_cortex_m4_match_numerics(tmp_path):
    """cortex-m4's FPU has single precision only, so its 16x8 QUANTIZE converts without double
    (kernels/numerics.c, msf_quantize_rounded): the same int16 values as numerics' rules."""
    for got, want in edge_conversions(tmp_path, target=require_target("cortex-m4")):
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.slow
@pytest.mark.parametrize("numerics", ["litert", "tflm"])
def test_quantized_ties_on_cortex_m4_give_each_interpreters_output(tmp_path, numerics):
    """i16_chain's float32 input, mostly halves of its scale (where LiteRT's vector and scalar
    code and TFLite Micro's round differently), quantised by the C edge conversion on cortex-m4
    and run by the generated C there, gives each interpreter's output for the float input."""
    target = require_target("cortex-m4")
    path = FIXTURES / "models" / "i16_chain.tflite"
    graph = pipeline.load(str(path), numerics=numerics)
    plan = pipeline.planner(graph).min_ram()
    schedule, scale = pipeline.lower(graph, plan), graph.input_quant.scale
    rng = np.random.default_rng(12)
    shape = (2, *graph.declared_input_shape)
    ties = ((rng.integers(-2000, 2000, shape) + 0.5) * scale).astype(np.float32)
    fed = np.where(rng.random(shape) < 0.7, ties, rng.uniform(-2000, 2000, shape) * scale).astype(np.float32)
    size, driver = fed[0].size, Driver()
    call = ("msf_quantize_f32_s16({src}, {dst}, %d, %s, 0);" if numerics == "litert" else
            "{{ int32_t k; for (k = 0; k < %d; ++k) {dst}[k] = msf_quantize_f32_s16_one({src}[k] / %s, 1.0f, 0, 0); }}")
    slots = []
    for x in fed:
        src, dst = driver.buffer("x", x.reshape(-1)), driver.zeros("q", np.int16, size)
        driver.body.append("    " + (call % (size, c_float(scale))).format(src=src, dst=dst))
        slots.append(driver.dump(dst, np.int16, size))
    got = driver.run(tmp_path, build_library(tmp_path, target=target), tag="ties16", target=target)
    expected = (micro_oracle.run_jobs([(path, list(fed))], "tflm")[0] if numerics == "tflm"
                else litert_oracle.run_jobs([(path, list(fed))])[0].outputs)
    for slot, want in zip(slots, expected):
        check = pipeline.verify(graph, plan, schedule, got[slot].reshape(graph.declared_input_shape), target)
        assert check.bit_exact
        out = nx.dequantize(check.output, graph.output_quant, numerics) if graph.float_output else check.output
        np.testing.assert_array_equal(np.asarray(out).reshape(-1), np.asarray(want).reshape(-1))

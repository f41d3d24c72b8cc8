"""Float islands on an emulated microcontroller: the generated C of fi_conv_island (int8 conv,
DEQUANTIZE, float conv, ADD and LOGISTIC, QUANTIZE, int8 conv) and fi_float_head (an int8 conv,
then a float32 MEAN, FULLY_CONNECTED and SOFTMAX), built for Cortex-M4 (hardware float32) and run
under QEMU, with the least-RAM plan, which fuses across the conversions: the arena is the
predicted one and the output the interpreter's, LiteRT's or, under `--numerics tflm`, TFLite
Micro's (int8 values 1 LSB off on at most 1%, float32 within rounding: docs/numerics.md)."""

from __future__ import annotations

import numpy as np
import pytest

from support import litert_oracle, micro_oracle
from support.paths import FIXTURES
from support.toolchains import require_target
from msfcnn import pipeline


@pytest.mark.slow
@pytest.mark.parametrize("name,numerics", [("fi_conv_island", "litert"), ("fi_conv_island", "tflm"),
                                           ("fi_float_head", "litert")])
def test_c_on_cortex_m4_gives_the_interpreters_output(name, numerics):
    path = FIXTURES / "models" / f"{name}.tflite"
    graph = pipeline.load(str(path), numerics=numerics)
    plan = pipeline.planner(graph).min_ram()  # fused across the DEQUANTIZE
    schedule, target = pipeline.lower(graph, plan), require_target("cortex-m4")
    assert any(b.first < b.last and graph.nodes[b.first + 1].op.kind == "dequantize" for b in plan.blocks)
    rng = np.random.default_rng(7)
    inputs = [rng.integers(-128, 128, graph.declared_input_shape).astype(np.int8) for _ in range(2)]
    expected = (micro_oracle.run_jobs([(path, inputs)], "tflm")[0] if numerics == "tflm"
                else litert_oracle.run_jobs([(path, inputs)])[0].outputs)
    for x, want in zip(inputs, expected):
        check = pipeline.verify(graph, plan, schedule, x, target)
        assert check.passed and check.arena_bytes == plan.peak_ram_bytes
        got, want = check.output, np.asarray(want).reshape(-1)
        if np.issubdtype(want.dtype, np.floating):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        else:
            diff = np.abs(got.astype(np.int32) - want.astype(np.int32))
            assert diff.max() <= 1 and np.count_nonzero(diff) <= 0.01 * diff.size


@pytest.mark.slow
@pytest.mark.parametrize("numerics", ["litert", "tflm"])
def test_quantize_ties_on_cortex_m4_are_each_interpreters_own(numerics):
    """cortex-m4's FPU has single precision only, so its QUANTIZE converts in float and integer
    arithmetic, without double (kernels/numerics.c). Values whose quotient by the scale is a tie in
    float32 but not in double, and random ones, give LiteRT's bytes (vector code: the product
    rounded half to even; scalar code: the double quotient rounded half away) and TFLite Micro's
    (the float32 quotient rounded half away) exactly."""
    path = FIXTURES / "models" / "fi_quantize_ties.tflite"
    graph = pipeline.load(str(path), numerics=numerics)
    plan = pipeline.planner(graph).min_ram()
    schedule, target = pipeline.lower(graph, plan), require_target("cortex-m4")
    rng = np.random.default_rng(11)
    shape = (4, *graph.declared_input_shape)
    ties = ((rng.integers(-1300, 1300, shape) + 0.5) * np.float32(0.1)).astype(np.float32)
    inputs = list(np.where(rng.random(shape) < 0.7, ties, rng.uniform(-14, 14, shape).astype(np.float32)))
    expected = (micro_oracle.run_jobs([(path, inputs)], "tflm")[0] if numerics == "tflm"
                else litert_oracle.run_jobs([(path, inputs)])[0].outputs)
    for x, want in zip(inputs, expected):
        check = pipeline.verify(graph, plan, schedule, x, target)
        assert check.passed
        np.testing.assert_array_equal(check.output, np.asarray(want).reshape(-1))

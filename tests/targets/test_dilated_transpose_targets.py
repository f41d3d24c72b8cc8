"""Dilated CONV_2D / DEPTHWISE_CONV_2D and TRANSPOSE_CONV on an emulated microcontroller: the C of
their fixtures (`fixtures/make_dilated_models.py`), built for Cortex-M4 (whose DSP extension runs
a dilated CONV_2D through the portable loop, kernels/dilated.c) and run under QEMU, gives the
LiteRT interpreter's bytes under the default numerics and TFLite Micro's under `tflm`; the
dilated layers in the least-RAM plan's fused blocks."""

from __future__ import annotations

import numpy as np
import pytest

from support.litert_oracle import run_jobs as litert_jobs
from support.micro_oracle import run_jobs as micro_jobs
from support.paths import FIXTURES
from support.toolchains import require_target
from msfcnn import pipeline
from msfcnn.tensors import random_input

MODELS = FIXTURES / "ops"


@pytest.mark.parametrize("numerics", ["litert", "tflm"])
@pytest.mark.parametrize("name", ["dilated_conv2d_int8", "dilated_conv2d_i16", "transpose_conv_int8",
                                  "transpose_conv_i16"])
def test_c_on_cortex_m4_gives_the_runtimes_output(name, numerics):
    target = require_target("cortex-m4")
    path = MODELS / f"{name}.tflite"
    graph = pipeline.load(str(path), numerics=numerics)
    plan = pipeline.solve(pipeline.planner(graph), "optimal", "min-ram")
    if name.startswith("dilated"):
        assert any(b.first < b.last for b in plan.blocks), plan.blocks  # the dilated windows fused
    schedule = pipeline.lower(graph, plan)
    inputs = [random_input(graph, 11)]
    expected = litert_jobs([(path, inputs)])[0].outputs if numerics == "litert" else \
        micro_jobs([(path, inputs)], "tflm", arena_size=256 * 1024)[0]
    for x, want in zip(inputs, expected):
        check = pipeline.verify(graph, plan, schedule, x, target)
        assert check.bit_exact
        np.testing.assert_array_equal(np.asarray(check.output).reshape(-1), np.asarray(want).reshape(-1))

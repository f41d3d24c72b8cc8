"""The activation operators on an emulated microcontroller: the C of the conv -> op -> conv
fixtures (`fixtures/make_activation_models.py`), built for Cortex-M4 and run under QEMU, gives the
LiteRT interpreter's bytes under the default numerics and TFLite Micro's under `tflm` (PRELU's
kernel, kernels/prelu.c, also in its 16x8 form for LEAKY_RELU; the table ops through
kernels/lookup.c); the float32 ONNX model with
LeakyRelu, Tanh, PRelu and Elu (kernels/float_unary.c, prelu.c) stays within the float tolerance
of numpy."""

from __future__ import annotations

import numpy as np
import pytest

from support import cache
from support.c_build import check_c
from support.litert_oracle import run_jobs as litert_jobs
from support.micro_oracle import run_jobs as micro_jobs
from support.paths import FIXTURES
from support.toolchains import require_target
from msfcnn import pipeline
from msfcnn.fusion import solvers
from msfcnn.tensors import random_input

MODELS = FIXTURES / "models"


@pytest.mark.slow
@pytest.mark.parametrize("numerics", ["litert", "tflm"])
@pytest.mark.parametrize("name", ["act_prelu_scales", "act_tanh", "act_leaky_relu_yolo", "i16_leaky_relu"])
def test_c_on_cortex_m4_gives_the_runtimes_output(name, numerics):
    target = require_target("cortex-m4")
    path = MODELS / f"{name}.tflite"
    graph = pipeline.load(str(path), numerics=numerics)
    plan = pipeline.solve(pipeline.planner(graph), "optimal", max_overhead=1.2)
    schedule = pipeline.lower(graph, plan)
    inputs = [random_input(graph, seed) for seed in (11, 12)]
    expected = litert_jobs([(path, inputs)])[0].outputs if numerics == "litert" else micro_jobs([(path, inputs)], "tflm")[0]
    for x, want in zip(inputs, expected):
        check = pipeline.verify(graph, plan, schedule, x, target)
        assert check.bit_exact
        np.testing.assert_array_equal(np.asarray(check.output).reshape(-1), np.asarray(want).reshape(-1))


@pytest.mark.slow
def test_float_activations_on_cortex_m4():
    graph = pipeline.load(str(MODELS / "onnx_activations.onnx"))
    check_c(graph, solvers.min_peak_ram(cache.dag(graph)).blocks, target="cortex-m4", seed=3)

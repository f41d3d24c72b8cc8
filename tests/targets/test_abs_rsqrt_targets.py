"""ABS (int8, int16) and RSQRT (int8) on an emulated microcontroller: the C of the conv -> op ->
conv fixtures (`fixtures/make_abs_rsqrt_models.py`), built for Cortex-M4 and run under QEMU, gives
the LiteRT interpreter's bytes under the default numerics and TFLite Micro's under `tflm`
(kernels/abs.c; RSQRT through the table kernel, kernels/lookup.c)."""

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
@pytest.mark.parametrize("name", ["abs_int8", "abs_i16", "rsqrt_int8"])
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

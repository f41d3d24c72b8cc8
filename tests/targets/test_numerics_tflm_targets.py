"""`--numerics tflm` on an emulated microcontroller: the generated C, built for Cortex-M4 and run
under QEMU, gives TFLite Micro's interpreter's bytes (the `tflite-micro` package) on MLPerf Tiny's
ResNet-8 and on a squeeze-and-excite model (MEAN keep_dims, LOGISTIC, MUL)."""

from __future__ import annotations

import numpy as np
import pytest

from support.micro_oracle import run_jobs
from support.paths import FIXTURES
from support.toolchains import require_target
from msfcnn import pipeline
from msfcnn.tensors import random_input


@pytest.mark.slow
@pytest.mark.parametrize("path", [FIXTURES / "models" / "resnet8.tflite", FIXTURES / "executor" / "op14_mul_se.tflite"],
                         ids=lambda p: p.stem)
def test_c_on_cortex_m4_gives_tflite_micros_output(path):
    target = require_target("cortex-m4")
    graph = pipeline.load(str(path), numerics="tflm")
    plan = pipeline.solve(pipeline.planner(graph), "optimal", max_overhead=1.2)
    schedule = pipeline.lower(graph, plan)
    inputs = [random_input(graph, seed) for seed in (11, 12)]
    micro = run_jobs([(path, inputs)], "tflm")[0]
    for x, want in zip(inputs, micro):
        check = pipeline.verify(graph, plan, schedule, x, target)
        assert check.bit_exact
        np.testing.assert_array_equal(np.asarray(check.output).reshape(-1), np.asarray(want).reshape(-1))

"""Keras' unrolled GRU on an emulated microcontroller: the generated C of the int8 GRU with a dense
head, built for Cortex-M4 and run under QEMU, gives TFLite Micro's bytes under `--numerics tflm`
(the numpy and host C runs match LiteRT too: tests/integration/test_gru.py)."""

from __future__ import annotations

import numpy as np
import pytest

from support import micro_oracle
from support.paths import FIXTURES
from support.toolchains import require_target
from msfcnn import pipeline
from msfcnn.tensors import random_input


@pytest.mark.slow
def test_unrolled_gru_on_cortex_m4_gives_tflite_micros_output():
    target = require_target("cortex-m4")
    path = FIXTURES / "sequence" / "gru_last_dense_int8.tflite"
    graph = pipeline.load(str(path), numerics="tflm")
    plan = pipeline.solve(pipeline.planner(graph), "optimal")
    schedule = pipeline.lower(graph, plan)
    x = random_input(graph, 7)
    want = micro_oracle.run_jobs([(path, [x])], "tflm")[0][0]
    check = pipeline.verify(graph, plan, schedule, x, target)
    assert check.bit_exact and check.arena_bytes == plan.peak_ram_bytes
    np.testing.assert_array_equal(np.asarray(check.output).reshape(-1), np.asarray(want).reshape(-1))

"""The SUB, MAXIMUM / MINIMUM, SQUARED_DIFFERENCE, Conv1D (SQUEEZE / EXPAND_DIMS) and
DepthwiseConv1D fixtures (`fixtures/make_binop_models.py`) on an emulated microcontroller: their C,
built for Cortex-M4 (its DSP extension on) and run under QEMU, gives the LiteRT interpreter's
output, and under `--numerics tflm` TFLite Micro's."""

from __future__ import annotations

import numpy as np
import pytest

from support import micro_oracle
from support.litert_oracle import run_jobs
from support.paths import FIXTURES
from support.toolchains import require_target
from msfcnn import pipeline
from msfcnn.tensors import random_input

NAMES = ["bin_sub_ties", "bin_sub_maps", "bin_min_max", "bin_squared_difference", "bin_conv1d", "bin_conv1d_gap",
         "bin_conv1d_residual", "bin_conv1d_causal", "bin_i16_conv1d", "bin_dw_conv1d"]


@pytest.mark.slow
@pytest.mark.parametrize("numerics", ["litert", "tflm"])
def test_c_on_cortex_m4_gives_the_interpreters_output(numerics):
    target = require_target("cortex-m4")
    paths = [FIXTURES / "models" / f"{name}.tflite" for name in NAMES]
    graphs = [pipeline.load(str(path), numerics=numerics) for path in paths]
    inputs = [[random_input(graph, 21)] for graph in graphs]
    jobs = list(zip(paths, inputs))
    expected = ([run.outputs for run in run_jobs(jobs)] if numerics == "litert"
                else micro_oracle.run_jobs(jobs, "tflm"))
    for graph, xs, wants in zip(graphs, inputs, expected):
        plan = pipeline.solve(pipeline.planner(graph), "optimal", max_overhead=1.2)
        check = pipeline.verify(graph, plan, pipeline.lower(graph, plan), xs[0], target)
        assert check.bit_exact, graph.name
        np.testing.assert_array_equal(np.asarray(check.output).reshape(-1), np.asarray(wants[0]).reshape(-1))

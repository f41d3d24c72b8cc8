"""Time fusion (the `timescan` scheme) on the 100-step fixtures of issue 24
(fixtures/make_sequence_models.py): 3 x LSTM(64), and Conv1D -> 2 x LSTM(64) -> Dense. The least-
RAM plan runs them as one time scan; its output is bit for bit LiteRT's and, under `--numerics
tflm`, TFLite Micro's, in numpy and in C on the host, with the arena measured equal to the
prediction; so does a dense head that accumulates every step of an LSTM (20 steps). A window
that reads ahead inside a scan (a centred, dilated Conv1D between two LSTMs)
is checked against the unfused numpy run in C."""

from __future__ import annotations

import numpy as np
import pytest

from support.c_build import check_c
from support.litert_oracle import run_jobs as litert_jobs
from support.micro_oracle import run_jobs as micro_jobs
from support.paths import FIXTURES
from support.sequence_graphs import window_scan_graph
from msfcnn import pipeline
from msfcnn.cost import exact
from msfcnn.fused_executor import run_fused
from msfcnn.fusion import solvers
from msfcnn.schedule import schedule_plan
from msfcnn.tensors import random_input

SEQUENCE = FIXTURES / "sequence"
LONG = ["lstm_long_stack_int8", "lstm_long_conv_stack_int8"]


def _least_ram(graph):
    blocks = solvers.min_peak_ram(exact.build_dag(graph)).blocks
    assert [b.scheme for b in blocks] == ["timescan"]
    return blocks


def _oracle(path, numerics: str, x) -> np.ndarray:
    """The interpreter's output from zero states (a fresh interpreter)."""
    if numerics == "litert":
        return litert_jobs([(path, [x])])[0].outputs[0]
    return micro_jobs([(path, [x])], "tflm", arena_size=1 << 20)[0][0]


@pytest.mark.slow
@pytest.mark.parametrize("numerics", ["litert", "tflm"])
@pytest.mark.parametrize("name", LONG)
def test_the_time_scan_gives_the_interpreters_output(name, numerics):
    path = SEQUENCE / f"{name}.tflite"
    graph = pipeline.load(str(path), numerics=numerics)
    x = random_input(graph, 11)
    run = run_fused(schedule_plan(graph, _least_ram(graph)), x)
    assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes
    want = np.asarray(_oracle(path, numerics, x)).reshape(run.output.shape)
    np.testing.assert_array_equal(run.output, want)


@pytest.mark.parametrize("numerics", ["litert", "tflm"])
def test_a_scan_with_an_accumulating_dense_head_gives_the_interpreters_output(numerics):
    """Conv1D -> LSTM -> Flatten -> Dense over 20 steps: the dense layer sums the steps as they come."""
    path = SEQUENCE / "lstm_flatten_dense_int8.tflite"
    graph = pipeline.load(str(path), numerics=numerics)
    x = random_input(graph, 6)
    run = run_fused(schedule_plan(graph, _least_ram(graph)), x)
    assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes
    np.testing.assert_array_equal(run.output, np.asarray(_oracle(path, numerics, x)).reshape(run.output.shape))


@pytest.mark.slow
def test_an_accumulating_head_in_c_on_the_host_equals_numpy():
    graph = pipeline.load(str(SEQUENCE / "lstm_flatten_dense_int8.tflite"))
    assert check_c(graph, _least_ram(graph), seed=1) == 202


@pytest.mark.slow
@pytest.mark.parametrize("numerics", ["litert", "tflm"])
def test_the_time_scan_in_c_on_the_host_equals_numpy(numerics):
    graph = pipeline.load(str(SEQUENCE / "lstm_long_conv_stack_int8.tflite"), numerics=numerics)
    assert check_c(graph, _least_ram(graph), seed=2) == 931


@pytest.mark.slow
def test_a_window_reading_ahead_inside_a_scan_in_c():
    graph = window_scan_graph("litert", 2)
    check_c(graph, _least_ram(graph), seed=4)

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
from support.paths import FIXTURES
from support.sequence_cases import interpreter_runs, loaded
from support.sequence_graphs import residual_scan_graph, window_scan_graph
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


# the model of each interpreter test below, by its parameters, and the seed of its input
SCANS = {"test_the_time_scan_gives_the_interpreters_output": (lambda params: params["name"], 11),
         "test_a_scan_with_an_accumulating_dense_head_gives_the_interpreters_output": (lambda params: "lstm_flatten_dense_int8", 6),
         "test_a_mean_or_a_residual_add_between_scan_layers_gives_the_interpreters_output":
             (lambda params: params["name"], 10)}


@pytest.fixture(scope="module")
def interpreter_outputs(request) -> dict:
    """(model, numerics) -> the interpreter's output from zero states (an interpreter of its own),
    for every selected case of the tests in SCANS (one process per numerics)."""
    runs = {}
    for test_name, (name_of, seed) in SCANS.items():
        def jobs_of(params):
            path, numerics = SEQUENCE / f"{name_of(params)}.tflite", params["numerics"]
            return (path.stem, numerics), numerics, [(path, [random_input(loaded(path, numerics), seed)])]
        runs.update(interpreter_runs(request, test_name, jobs_of))
    return {key: each[0][0] for key, each in runs.items()}


def _check_scan(name: str, numerics: str, seed: int, interpreter_outputs: dict) -> None:
    """The least-RAM plan (one time scan) in numpy: the interpreter's output, in the predicted arena."""
    graph = loaded(SEQUENCE / f"{name}.tflite", numerics)
    run = run_fused(schedule_plan(graph, _least_ram(graph)), random_input(graph, seed))
    assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes
    np.testing.assert_array_equal(run.output, np.asarray(interpreter_outputs[(name, numerics)]).reshape(run.output.shape))


@pytest.mark.slow
@pytest.mark.parametrize("numerics", ["litert", "tflm"])
@pytest.mark.parametrize("name", LONG)
def test_the_time_scan_gives_the_interpreters_output(name, numerics, interpreter_outputs):
    _check_scan(name, numerics, 11, interpreter_outputs)


@pytest.mark.parametrize("numerics", ["litert", "tflm"])
def test_a_scan_with_an_accumulating_dense_head_gives_the_interpreters_output(numerics, interpreter_outputs):
    """Conv1D -> LSTM -> Flatten -> Dense over 20 steps: the dense layer sums the steps as they come."""
    _check_scan("lstm_flatten_dense_int8", numerics, 6, interpreter_outputs)


# name -> (the least-RAM plan's schemes, its peak RAM, layer by layer's)
BETWEEN_LAYERS = {
    # Conv1D -> LSTM -> GlobalAveragePooling1D (a MEAN of the (T, U) sequence over its steps) ->
    # Dense: the mean sums each step as it is made, in a scan that ends at the mean
    "lstm_mean_dense_int8": (["timescan", "single"], 266, 657),
    # Conv1D -> LSTM a -> LSTM b -> ADD(a, b) -> LSTM (last step) -> Dense, all one scan: the ADD
    # reads step p of a from a's state (b's step p is made before a moves on) and of b from b's
    "lstm_residual_int8": (["timescan"], 288, 817),
}


@pytest.mark.parametrize("numerics", ["litert", "tflm"])
@pytest.mark.parametrize("name", list(BETWEEN_LAYERS))
def test_a_mean_or_a_residual_add_between_scan_layers_gives_the_interpreters_output(name, numerics,
                                                                                   interpreter_outputs):
    """20 steps; the least-RAM plan against layer by layer, the same MACs."""
    schemes, least_ram, vanilla_ram = BETWEEN_LAYERS[name]
    graph = loaded(SEQUENCE / f"{name}.tflite", numerics)
    dag = exact.build_dag(graph)
    least, vanilla = solvers.min_peak_ram(dag), solvers.Path(dag.blocks[:len(graph)])
    assert [b.scheme for b in least.blocks] == schemes
    assert (least.peak_ram, vanilla.peak_ram) == (least_ram, vanilla_ram) and least.macs == vanilla.macs
    x = random_input(graph, 10)  # the interpreter's input (SCANS)
    run = run_fused(schedule_plan(graph, least.blocks), x)
    assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes == least.peak_ram
    np.testing.assert_array_equal(run.output, np.asarray(interpreter_outputs[(name, numerics)]).reshape(run.output.shape))


@pytest.mark.parametrize("name", ["lstm_mean_dense_float32", "lstm_residual_float32"])
def test_float_scans_with_a_mean_or_a_residual_add_are_within_rounding_of_litert(name):
    from support.litert_oracle import run_jobs

    path = SEQUENCE / f"{name}.tflite"
    graph = loaded(path)
    least = solvers.min_peak_ram(exact.build_dag(graph))
    assert least.blocks[0].scheme == "timescan"
    x = random_input(graph, 8)
    run = run_fused(schedule_plan(graph, least.blocks), x)
    assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes
    want = np.asarray(run_jobs([(path, [x])])[0].outputs[0]).reshape(run.output.shape)
    np.testing.assert_allclose(run.output, want, rtol=1e-5, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["lstm_flatten_dense_int8", "lstm_mean_dense_int8", "lstm_residual_int8"])
def test_an_accumulating_head_or_a_residual_add_in_c_on_the_host_equals_numpy(name):
    graph = loaded(SEQUENCE / f"{name}.tflite")
    least = solvers.min_peak_ram(exact.build_dag(graph))
    assert least.blocks[0].scheme == "timescan"
    assert check_c(graph, least.blocks, seed=1) == least.peak_ram == {"lstm_flatten_dense_int8": 202,
                                                                     "lstm_mean_dense_int8": 266,
                                                                     "lstm_residual_int8": 288}[name]


@pytest.mark.slow
@pytest.mark.parametrize("numerics", ["litert", "tflm"])
def test_the_time_scan_in_c_on_the_host_equals_numpy(numerics):
    graph = loaded(SEQUENCE / "lstm_long_conv_stack_int8.tflite", numerics)
    assert check_c(graph, _least_ram(graph), seed=2) == 931


@pytest.mark.slow
def test_a_window_reading_ahead_inside_a_scan_in_c():
    graph = window_scan_graph("litert", 2)
    check_c(graph, _least_ram(graph), seed=4)


@pytest.mark.slow
def test_a_residual_add_of_one_row_maps_inside_a_scan_in_c():
    graph = residual_scan_graph("tflm", lookahead=False)
    assert check_c(graph, _least_ram(graph), seed=3) == 145

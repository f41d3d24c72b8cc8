"""The `timescan` scheme: sequence layers run one time step at a time. Its blocks' RAM and MACs
against a count by hand, its lags and rings for a window that reads ahead, and the fused run
equal to the unfused one with the arena measured equal to the prediction."""

from __future__ import annotations

import numpy as np
import pytest

from support.paths import FIXTURES
from support.sequence_graphs import gates_bytes as _gates, lstm_state_bytes as _lstm_state, residual_scan_graph as residual_graph, window_scan_graph as _window_graph
from msfcnn import pipeline
from msfcnn.cost import exact
from msfcnn.executor import run_unfused_outputs
from msfcnn.fused_executor import run_fused
from msfcnn.fusion import solvers
from msfcnn.schedule import schedule_plan
from msfcnn.tensors import random_input

SEQUENCE = FIXTURES / "sequence"


def test_three_stacked_lstms_hold_states_not_sequences():
    """3 x LSTM(64) over 100 steps, 8 features, the last step out: the scan holds three states and
    one step's gates (each cell's output step is the next one's input, read from its state);
    layer by layer, the middle LSTM holds its input and output sequences and its workspace."""
    graph = pipeline.load(str(SEQUENCE / "lstm_long_stack_int8.tflite"))
    dag = exact.build_dag(graph)
    least = solvers.min_peak_ram(dag)
    assert [(b.first, b.last, b.scheme) for b in least.blocks] == [(0, 2, "timescan")]
    assert least.peak_ram == 3 * _lstm_state(64) + _gates(64) == 1092
    vanilla = solvers.Path(dag.blocks[:len(graph)])
    assert vanilla.peak_ram == 100 * 64 * 2 + (11 * 64 + 1) == 13505
    assert least.peak_ram * 10 <= vanilla.peak_ram
    macs = 100 * 4 * 64 * (8 + 64) + 2 * 100 * 4 * 64 * (64 + 64)
    assert least.macs == vanilla.macs == macs


def test_conv1d_two_lstms_and_a_dense_head_in_one_scan():
    """Conv1D(32, 3, same) -> 2 x LSTM(64) -> Dense(8) over 100 steps: one step of the conv's
    output (its reader, the LSTM, reads one step), two states, the gates; the dense head reads
    the last LSTM's state once after the last step."""
    graph = pipeline.load(str(SEQUENCE / "lstm_long_conv_stack_int8.tflite"))
    dag = exact.build_dag(graph)
    least = solvers.min_peak_ram(dag)
    assert [(b.first, b.last, b.scheme) for b in least.blocks] == [(0, len(graph) - 1, "timescan")]
    assert least.peak_ram == 32 + 2 * _lstm_state(64) + _gates(64) == 931
    vanilla = solvers.Path(dag.blocks[:len(graph)])
    assert least.peak_ram * 10 <= vanilla.peak_ram == 10305
    assert least.macs == vanilla.macs == sum(graph.macs(t) for t in range(len(graph)))


@pytest.mark.parametrize("numerics", ["litert", "tflm"])
@pytest.mark.parametrize("dilation", [1, 2])
def test_a_window_reading_ahead_delays_its_readers_and_keeps_a_ring(numerics, dilation):
    graph = _window_graph(numerics, dilation)
    least = solvers.min_peak_ram(exact.build_dag(graph))
    assert [(b.first, b.last, b.scheme) for b in least.blocks] == [(0, 4, "timescan")]
    block = least.blocks[0].lowered
    extent = 2 * dilation + 1
    # the conv's lookahead delays it and the LSTM after it; the first LSTM's output steps in a
    # ring of the conv's extent, the conv's one step (the LSTM reads it at once)
    assert block.loops.lags == (0, 0, dilation, dilation, dilation)
    assert block.loops.steps == 12 + dilation
    assert block.rings == {0: extent, 2: 1}
    assert least.peak_ram == extent * 8 + 6 + 2 * _lstm_state(8) + _gates(8)
    x = random_input(graph, 5)
    run = run_fused(schedule_plan(graph, least.blocks), x)
    np.testing.assert_array_equal(run.output, run_unfused_outputs(graph, x)[0])
    assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes == least.peak_ram
    assert run.macs == sum(graph.macs(t) for t in range(len(graph)))


def test_models_without_a_recurrent_cell_get_no_time_scan():
    graph = pipeline.load(str(FIXTURES / "ops" / "dilated_tcn_int8.tflite"))
    assert not [b for b in exact.build_dag(graph).blocks if b.scheme == "timescan"]


def test_a_dense_head_over_every_step_accumulates_them_in_the_scan():
    """Conv1D(8) -> LSTM(16) over 20 steps, flattened into Dense(4): the dense layer adds each
    LSTM step to its int32 accumulator as it is made, so the 320-value sequence is never held."""
    graph = pipeline.load(str(SEQUENCE / "lstm_flatten_dense_int8.tflite"))
    least = solvers.min_peak_ram(exact.build_dag(graph))
    assert [(b.first, b.last, b.scheme) for b in least.blocks] == [(0, 4, "timescan")]
    assert least.blocks[0].lowered.tail.consumer == 4
    assert least.peak_ram == 8 + _lstm_state(16) + _gates(16) + 4 * 4 == 202
    x = random_input(graph, 2)
    run = run_fused(schedule_plan(graph, least.blocks), x)
    np.testing.assert_array_equal(run.output, run_unfused_outputs(graph, x)[0])
    assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes == 202
    assert run.macs == least.macs == sum(graph.macs(t) for t in range(len(graph)))


@pytest.mark.parametrize("numerics", ["litert", "tflm"])
def test_a_residual_add_of_one_row_maps_runs_in_the_scan_when_both_steps_are_there(numerics):
    """LSTM -> Conv1D a (1 tap) -> causal Conv1D b (3 taps) -> ADD(a, b) -> LSTM over 12 steps:
    one scan, a's steps in a ring of b's extent (the ADD reads a step of it too), b's output step
    in a ring of one; fused equal to unfused in the predicted arena, the same MACs. With b
    centred, b runs a step behind a: the ADD would need a's step from before, so no scan takes
    the ADD."""
    graph = residual_graph(numerics, lookahead=False)
    least = solvers.min_peak_ram(exact.build_dag(graph))
    assert [(b.first, b.last, b.scheme) for b in least.blocks] == [(0, 6, "timescan")]
    assert least.blocks[0].lowered.rings == {2: 3, 3: 1, 4: 1}
    x = random_input(graph, 2)
    run = run_fused(schedule_plan(graph, least.blocks), x)
    np.testing.assert_array_equal(run.output, run_unfused_outputs(graph, x)[0])
    assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes == least.peak_ram
    assert run.macs == sum(graph.macs(t) for t in range(len(graph)))
    centred = residual_graph(numerics, lookahead=True)
    assert not [b for b in exact.build_dag(centred).blocks if b.scheme == "timescan" and b.first <= 4 <= b.last]

"""ONNX LSTM, GRU and RNN as PyTorch exports nn.LSTM / nn.GRU / nn.RNN (fixtures/make_recurrent_models.py):
float32, time-major or batch_first, one or two layers, bidirectional or reverse too, with the final
states Y_h / Y_c read or not. Within 1e-5 of
onnxruntime in numpy (unfused and fused) and the C on the host equal to numpy. Forward layers fuse
in time (a 2-layer GRU stack over 100 steps in one time scan)."""

from __future__ import annotations

import numpy as np
import pytest

from support.paths import FIXTURES
from support.toolchains import require_target
from support.sequence_cases import check_c_of_the_least_ram_plan, check_runs_against
from msfcnn import pipeline
from msfcnn.cost import exact
from msfcnn.executor import run_unfused_outputs
from msfcnn.fused_executor import run_fused
from msfcnn.fusion import solvers
from msfcnn.plan import Plan
from msfcnn.schedule import schedule_plan
from msfcnn.tensors import random_input

SEQUENCE = FIXTURES / "sequence"
MODELS = ["onnx_lstm", "onnx_lstm_batch_first_2", "onnx_gru", "onnx_gru_reset_before", "onnx_gru_batch_first_2", "onnx_gru_bidirectional",
          "onnx_rnn", "onnx_rnn_relu_batch_first_2", "onnx_rnn_bidirectional", "onnx_lstm_bidirectional"]


def _onnxruntime_outputs(path, inputs) -> list[np.ndarray]:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    shape = [d if isinstance(d, int) else 1 for d in session.get_inputs()[0].shape]
    return [session.run(None, {"x": x.reshape(shape)})[0] for x in inputs]


@pytest.mark.parametrize("name", MODELS)
def test_recurrent_layers_match_onnxruntime(name):
    path = SEQUENCE / f"{name}.onnx"
    graph = pipeline.load(str(path))
    rng = np.random.default_rng(5)
    inputs = [rng.normal(size=graph.input_shape).astype(np.float32)[None] for _ in range(2)]
    check_runs_against(graph, inputs, _onnxruntime_outputs(path, inputs))


def test_each_layer_and_direction_is_one_op():
    kinds = {name: [node.op.describe() for node in pipeline.load(str(SEQUENCE / f"{name}.onnx")).nodes]
             for name in ("onnx_lstm_batch_first_2", "onnx_gru_bidirectional", "onnx_rnn_relu_batch_first_2")}
    assert kinds == {"onnx_lstm_batch_first_2": ["lstm 8", "lstm 8"],
                     "onnx_gru_bidirectional": ["gru 8", "gru 8 (reverse)", "reshape", "reshape", "concat"],
                     "onnx_rnn_relu_batch_first_2": ["rnn 8 relu", "rnn 8 relu"]}


@pytest.mark.slow  # the first C build of a run compiles the kernel library (some 18 s)
@pytest.mark.parametrize("name", ["onnx_rnn_relu_batch_first_2", "onnx_gru_bidirectional", "onnx_lstm",
                                  "onnx_gru_reset_before", "onnx_lstm_bidirectional_states_2"])
def test_c_on_the_host_equals_numpy(name):
    graph = pipeline.load(str(SEQUENCE / f"{name}.onnx"))
    check_c_of_the_least_ram_plan(graph)


STATES = ["onnx_lstm_states", "onnx_lstm_reverse_states", "onnx_lstm_bidirectional_states_2",
          "onnx_gru_bidirectional_states", "onnx_lstm_last_state_2"]


def _onnxruntime_every_output(path, x) -> list[np.ndarray]:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    shape = [d if isinstance(d, int) else 1 for d in session.get_inputs()[0].shape]
    return session.run(None, {"x": x.reshape(shape)})


@pytest.mark.parametrize("name", STATES)
def test_final_states_and_reverse_lstms_match_onnxruntime(name):
    """PyTorch's (y, (h_n, c_n)) of an LSTM (forward, reverse, 2 bidirectional layers whose states
    PyTorch concatenates) and (y, h_n) of a bidirectional GRU: every output within 1e-5 of
    onnxruntime, unfused and under the least-RAM plan (its arena as predicted)."""
    path = SEQUENCE / f"{name}.onnx"
    graph = pipeline.load(str(path))
    x = random_input(graph, 6)
    wants = _onnxruntime_every_output(path, x)
    fused = run_fused(schedule_plan(graph, solvers.min_peak_ram(exact.build_dag(graph)).blocks), x)
    assert fused.measured_peak_ram_bytes == fused.predicted_peak_ram_bytes
    for gots in (run_unfused_outputs(graph, x), fused.outputs):
        assert len(gots) == len(wants)
        for got, want in zip(gots, wants):
            np.testing.assert_allclose(np.asarray(got).reshape(-1), want.reshape(-1), rtol=1e-5, atol=1e-6)


def test_a_reverse_lstm_runs_forward_on_the_steps_reversed():
    kinds = [node.op.kind for node in pipeline.load(str(SEQUENCE / "onnx_lstm_reverse_states.onnx")).nodes]
    assert kinds[:7] == ["reshape", "channel_gather", "reshape", "lstm", "reshape", "channel_gather", "reshape"]
    assert kinds.count("lstm_cell_state") == 1
def test_a_two_layer_gru_stack_runs_in_one_time_scan():
    """nn.GRU(8, 32, num_layers=2) over 100 steps: the least-RAM plan is one time scan holding two
    hidden states (32 floats each) and one step's scratch (Gru.workspace_floats less h: 6 x 32
    floats), where layer by layer the first layer's whole output sequence and a workspace are
    held; the same MACs (F = 1). Fused, it is within float32 rounding of onnxruntime, bit for bit
    the unfused numpy run, in the predicted arena."""
    path = SEQUENCE / "onnx_gru_long_stack.onnx"
    graph = pipeline.load(str(path))
    dag = exact.build_dag(graph)
    least = solvers.min_peak_ram(dag)
    assert [(b.first, b.last, b.scheme) for b in least.blocks] == [(0, 1, "timescan")]
    assert least.peak_ram == 4 * (2 * 32 + 6 * 32) == 1024
    vanilla = solvers.Path(dag.blocks[:len(graph)])
    assert vanilla.peak_ram == 4 * (100 * 32 + 7 * 32) == 13696
    assert least.macs == vanilla.macs == 100 * 3 * 32 * (8 + 32) + 100 * 3 * 32 * (32 + 32) == 998400
    x = random_input(graph, 2)
    run = run_fused(schedule_plan(graph, least.blocks), x)
    assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes == least.peak_ram
    np.testing.assert_array_equal(run.output, run_unfused_outputs(graph, x)[0])
    np.testing.assert_allclose(run.output.reshape(-1), _onnxruntime_outputs(path, [x])[0].reshape(-1),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["onnx_rnn_relu_batch_first_2", "onnx_lstm_batch_first_2"])
def test_forward_stacks_fuse_in_time_and_reverse_layers_do_not(name):
    assert [b.scheme for b in solvers.min_peak_ram(exact.build_dag(pipeline.load(str(SEQUENCE / f"{name}.onnx")))).blocks] \
        == ["timescan"]
    bidirectional = exact.build_dag(pipeline.load(str(SEQUENCE / "onnx_gru_bidirectional.onnx")))
    assert not [b for b in bidirectional.blocks if b.scheme == "timescan" and b.first <= 1 <= b.last]


@pytest.mark.slow
def test_the_gru_stacks_time_scan_in_c_on_the_host_equals_the_unfused_c_bit_for_bit():
    """The scan's C calls the same per-step function as the whole-sequence kernel (recurrent_cell.c),
    so it gives the layer-by-layer C's bits; both are within verify's tolerance of numpy (the C
    takes float_math.h's exp and tanh, numpy the C library's)."""
    graph = pipeline.load(str(SEQUENCE / "onnx_gru_long_stack.onnx"))
    least = solvers.min_peak_ram(exact.build_dag(graph))
    plan = Plan(graph.name, "exact", least.macs, tuple(least.blocks))
    schedule = schedule_plan(graph, least.blocks)
    x, host = random_input(graph, 4), require_target("host")
    check = pipeline.verify(graph, plan, schedule, x, host)
    assert check.arena_bytes == schedule.arena_bytes == 1024 and check.passed
    vanilla = pipeline.planner(graph).vanilla()
    unfused = pipeline.verify(graph, vanilla, pipeline.lower(graph, vanilla), x, host)
    assert unfused.passed and len(vanilla.blocks) > len(plan.blocks)
    np.testing.assert_array_equal(np.asarray(check.output), np.asarray(unfused.output))


@pytest.mark.slow  # the CLI builds every kernel and callgrind counts the run
def test_instructions_are_counted_for_a_model_of_several_outputs(capsys):
    """An LSTM that returns its sequence and its final states has three outputs, so the harness calls
    msfcnn_invoke_outputs, which calls msfcnn_invoke. GCC inlined msfcnn_invoke there, and
    `verify --instructions` found no call of it to count; it stays a function of its own (MSF_ENTRY)."""
    import json
    from support.cli import run_cli
    code, out, err = run_cli(capsys, "verify", str(SEQUENCE / "onnx_lstm_states.onnx"), "--instructions", "--json")
    assert code == 0, err
    doc = json.loads(out)
    counts = [b["instructions"] for b in doc["block_instructions"]]
    assert doc["pass"] and doc["instructions"] > 0 and sum(counts) == doc["instructions"]

"""UNIDIRECTIONAL_SEQUENCE_LSTM on an emulated microcontroller: the generated C, built for
Cortex-M4 and run under QEMU, gives LiteRT's bytes by default and TFLite Micro's under
`--numerics tflm` (a stacked int8 LSTM whose second layer keeps its last step), each input run
from zero states in an interpreter of its own."""

from __future__ import annotations

import numpy as np
import pytest

from support import litert_oracle, micro_oracle
from support.paths import FIXTURES
from support.toolchains import require_target
from msfcnn import pipeline
from msfcnn.tensors import random_input


@pytest.mark.slow
@pytest.mark.parametrize("numerics", ["litert", "tflm"])
def test_stacked_lstm_on_cortex_m4_gives_the_interpreters_output(numerics):
    target = require_target("cortex-m4")
    path = FIXTURES / "sequence" / "lstm_stacked_int8.tflite"
    graph = pipeline.load(str(path), numerics=numerics)
    plan = pipeline.solve(pipeline.planner(graph), "optimal")
    schedule = pipeline.lower(graph, plan)
    x = random_input(graph, 7)
    if numerics == "tflm":
        want = micro_oracle.run_jobs([(path, [x])], "tflm", arena_size=1 << 20)[0][0]
    else:
        want = litert_oracle.run_jobs([(path, [x])])[0].outputs[0]
    check = pipeline.verify(graph, plan, schedule, x, target)
    assert check.bit_exact and check.arena_bytes == plan.peak_ram_bytes
    np.testing.assert_array_equal(np.asarray(check.output).reshape(-1), np.asarray(want).reshape(-1))


@pytest.mark.qemu
@pytest.mark.parametrize("name, seed", [("lstm_conv_dense_int8", 3), ("lstm_residual_int8", 4)])
def test_a_time_scan_on_cortex_m4_gives_litert_output_in_the_predicted_arena_and_time(name, seed):
    """Conv1D -> LSTM -> Dense fused in time (one `timescan` block), and Conv1D -> LSTM a -> LSTM b
    -> ADD(a, b) -> LSTM -> Dense (a residual ADD inside the scan): LiteRT's bytes, the arena the
    plan predicted, and the instructions within 3 % of the latency model."""
    from msfcnn import latency

    target = require_target("cortex-m4")
    path = FIXTURES / "sequence" / f"{name}.tflite"
    graph = pipeline.load(str(path))
    plan = pipeline.solve(pipeline.planner(graph), "optimal")
    assert [b.scheme for b in plan.blocks] == ["timescan"]
    schedule = pipeline.lower(graph, plan)
    x = random_input(graph, seed)
    check = pipeline.verify(graph, plan, schedule, x, target, count_instructions=True)
    assert check.bit_exact and check.arena_bytes == plan.peak_ram_bytes
    want = litert_oracle.run_jobs([(path, [x])])[0].outputs[0]
    np.testing.assert_array_equal(np.asarray(check.output).reshape(-1), np.asarray(want).reshape(-1))
    predicted = sum(latency.load("cortex-m4").counter(graph).schedule(schedule))
    assert abs(predicted / check.instructions - 1) <= 0.03


@pytest.mark.qemu
def test_a_reverse_onnx_lstm_and_its_final_states_on_cortex_m4():
    """A reverse nn.LSTM's (y, h_n, c_n) (the steps gathered in reverse around a forward LSTM, the
    cell state by lstm_cell_state.c): onnxruntime's outputs within float32 rounding, in the arena
    the least-RAM plan predicted."""
    import onnxruntime as ort

    target = require_target("cortex-m4")
    path = FIXTURES / "sequence" / "onnx_lstm_reverse_states.onnx"
    graph = pipeline.load(str(path))
    plan = pipeline.solve(pipeline.planner(graph), "optimal")
    schedule = pipeline.lower(graph, plan)
    x = random_input(graph, 5)
    check = pipeline.verify(graph, plan, schedule, x, target)
    assert check.arena_bytes == plan.peak_ram_bytes
    wants = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x.reshape(6, 1, 4)})
    want = np.concatenate([w.reshape(-1) for w in wants])  # the outputs one after the other, in the model's order
    np.testing.assert_allclose(np.asarray(check.output).reshape(-1), want, rtol=1e-5, atol=1e-6)


@pytest.mark.qemu
def test_a_mean_over_the_steps_in_a_time_scan_on_cortex_m4_gives_tflite_micros_output():
    """Conv1D -> LSTM -> GlobalAveragePooling1D -> Dense, the mean accumulated in the scan: TFLite
    Micro's bytes under `--numerics tflm`, in the arena the plan predicted."""
    target = require_target("cortex-m4")
    path = FIXTURES / "sequence" / "lstm_mean_dense_int8.tflite"
    graph = pipeline.load(str(path), numerics="tflm")
    plan = pipeline.solve(pipeline.planner(graph), "optimal")
    assert plan.blocks[0].scheme == "timescan"
    schedule = pipeline.lower(graph, plan)
    x = random_input(graph, 9)
    check = pipeline.verify(graph, plan, schedule, x, target)
    assert check.bit_exact and check.arena_bytes == plan.peak_ram_bytes
    want = micro_oracle.run_jobs([(path, [x])], "tflm", arena_size=1 << 20)[0][0]
    np.testing.assert_array_equal(np.asarray(check.output).reshape(-1), np.asarray(want).reshape(-1))

"""A streaming LSTM: one step per invocation, its states kept from one invocation to the next, as
LiteRT and TFLite Micro keep an LSTM's variable tensors (fixtures/make_sequence_models.py,
`lstm_stream_*`: LSTM(16) -> Dense(4) on 8 features a step).

- 50 consecutive frames equal the interpreter run frame by frame with its variables kept: int8 bit
  for bit with LiteRT and TFLite Micro, float32 within rounding; unfused and under the least-RAM
  plan, and the generated C on the host (and on cortex-m4 under QEMU);
- the states are graph state buffers in the persistent region, counted in every RAM figure;
- a whole-sequence LSTM (more than one step a call) still starts from zero states every run.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from support.c_build import kernel_library
from support.cli import run_cli
from support.litert_oracle import run_jobs as litert_jobs
from support.micro_oracle import run_jobs as micro_jobs
from support.paths import FIXTURES
from support.toolchains import require_target
from msfcnn import pipeline
from msfcnn.executor import run_sequence, run_unfused
from msfcnn.ops.lstm import Lstm

SEQUENCE = FIXTURES / "sequence"
FRAMES = 50
UNITS = 16


def path_of(element: str):
    return SEQUENCE / f"lstm_stream_{element}.tflite"


def frames(graph, n: int = FRAMES, seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    if graph.dtype == "float32":
        return [rng.normal(0.2, 1.0, graph.input_shape).astype(np.float32) for _ in range(n)]
    return [rng.integers(-128, 128, graph.input_shape).astype(np.int8) for _ in range(n)]


_ORACLE: dict = {}


def oracle(element: str, numerics: str) -> list[np.ndarray]:
    """The interpreter's outputs for the frames, run in order by one interpreter (its variables kept).
    The first call under a numerics runs both elements' models in one process (a process costs some
    0.2 s of CPU)."""
    if (element, numerics) not in _ORACLE:
        elements = ("int8", "float32")
        jobs = [(path_of(each), frames(pipeline.load(str(path_of(each))))) for each in elements]
        if numerics == "litert":
            outputs = [run.outputs for run in litert_jobs(jobs)]
        else:
            outputs = micro_jobs(jobs, "tflm", arena_size=64 * 1024)
        _ORACLE.update({(each, numerics): [np.asarray(y).reshape(-1) for y in out]
                        for each, out in zip(elements, outputs, strict=True)})
    return _ORACLE[(element, numerics)]


def assert_equal(element: str, got: list[np.ndarray], want: list[np.ndarray], what: str) -> None:
    assert len(got) == len(want) == FRAMES
    for step, (a, b) in enumerate(zip(got, want)):
        if element == "float32":
            np.testing.assert_allclose(a.reshape(-1), b, rtol=1e-5, atol=1e-6, err_msg=f"{what}, frame {step}")
        else:
            np.testing.assert_array_equal(a.reshape(-1), b, err_msg=f"{what}, frame {step}")


@pytest.mark.parametrize("numerics", ["litert", "tflm"])
@pytest.mark.parametrize("element", ["int8", "float32"])
def test_fifty_frames_unfused_and_fused_equal_the_interpreter(element, numerics):
    graph = pipeline.load(str(path_of(element)), numerics=numerics)
    want = oracle(element, numerics)
    xs = frames(graph)
    assert_equal(element, [y[0] for y in run_sequence(graph, xs)], want, "unfused")
    # the interpreter's outputs change with the state: a test that zeroed it would fail
    fresh = [run_unfused(graph, x).reshape(-1) for x in xs]
    assert sum(not np.allclose(a, b) for a, b in zip(fresh, want)) > FRAMES // 2
    plan = pipeline.solve(pipeline.planner(graph))
    schedule = pipeline.lower(graph, plan)
    runs = pipeline.run_steps(schedule, xs)
    assert_equal(element, [r.output for r in runs], want, "fused")
    # the states are in every RAM figure: the plan's, the arena's, the measured one (an int8 LSTM's
    # workspace has a byte of padding before or after its int16 gates, not always written)
    assert plan.peak_ram_bytes == schedule.arena_bytes
    assert schedule.arena_bytes - 1 <= runs[0].measured_peak_ram_bytes <= schedule.arena_bytes
    assert plan.peak_ram_bytes >= graph.state_bytes > 0


def test_the_states_are_state_buffers_in_the_persistent_region():
    graph = pipeline.load(str(path_of("int8")))
    lstm = graph.nodes[0].op
    assert isinstance(lstm, Lstm) and lstm.stateful and lstm.describe() == "lstm 16 (last step), state kept"
    assert [(s.name, s.initial.dtype, s.initial.shape) for s in graph.states] == [
        ("hidden_state", np.int8, (UNITS,)), ("cell_state", np.int16, (UNITS,))]
    assert np.all(graph.states[0].initial == lstm.hidden_zero) and not graph.states[1].initial.any()
    assert graph.state_bytes == 16 + 32
    # the workspace holds one step's gates alone (int16, from its first even address)
    assert lstm.workspace_bytes("int8") == 8 * UNITS + 1
    assert pipeline.load(str(path_of("float32"))).state_bytes == 2 * 4 * UNITS


def test_a_whole_sequence_lstm_still_starts_from_zero_states():
    """More than one step a call: no state buffers, every run from zero, as before."""
    graph = pipeline.load(str(SEQUENCE / "lstm_seq_int8.tflite"))
    assert not graph.states and not graph.nodes[0].op.stateful
    x = frames(graph, 1)[0]
    assert np.array_equal(*[y[0] for y in run_sequence(graph, [x, x])])


def check_c_over_fifty_frames(element: str, numerics: str, target_name: str) -> None:
    target = require_target(target_name)
    graph = pipeline.load(str(path_of(element)), numerics=numerics)
    plan = pipeline.solve(pipeline.planner(graph))
    schedule = pipeline.lower(graph, plan)
    library = kernel_library(graph, schedule, plan, target)
    check = pipeline.verify(graph, plan, schedule, None, target, steps=frames(graph), kernel_lib=library)
    got = check.output.reshape(FRAMES, -1)
    assert check.passed
    assert_equal(element, list(got), oracle(element, numerics), f"C on {target_name}")
    assert check.arena_bytes == schedule.arena_bytes == plan.peak_ram_bytes


@pytest.mark.slow  # a C build each
@pytest.mark.parametrize("element,numerics", [("int8", "litert"), ("int8", "tflm"), ("float32", "litert")])
def test_the_c_on_the_host_equals_the_interpreter_over_fifty_frames(element, numerics):
    check_c_over_fifty_frames(element, numerics, "host")


@pytest.mark.qemu
def test_the_c_on_cortex_m4_equals_the_interpreter_over_fifty_frames():
    check_c_over_fifty_frames("int8", "tflm", "cortex-m4")


def test_run_takes_a_sequence_of_frames(tmp_path, capsys):
    """`msfcnn run` on the streaming LSTM: a .npy with a leading step axis runs in order, the states
    carried over, and writes the interpreter's outputs."""
    path = path_of("int8")
    xs = frames(pipeline.load(str(path)))
    np.save(tmp_path / "frames.npy", np.stack(xs))  # [50, 1, 1, 8]
    code, out, _ = run_cli(capsys, "run", str(path), "--input", str(tmp_path / "frames.npy"),
                           "-o", str(tmp_path / "y.npy"), "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["steps"] == FRAMES and doc["plan"]["state_bytes"] == 48
    got = np.load(tmp_path / "y.npy")
    assert got.shape[0] == FRAMES
    assert_equal("int8", list(got.reshape(FRAMES, -1)), oracle("int8", "litert"), "msfcnn run")


@pytest.mark.slow  # the CLI builds every kernel
def test_verify_runs_the_frames_in_c(tmp_path, capsys):
    path = str(path_of("int8"))
    np.save(tmp_path / "frames.npy", np.stack(frames(pipeline.load(path), 8)))
    code, out, _ = run_cli(capsys, "verify", path, "--input", str(tmp_path / "frames.npy"), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["pass"] and doc["arena_bytes"] == doc["predicted_peak_ram_bytes"]

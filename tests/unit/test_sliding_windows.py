"""Incremental sliding-window inference (`--streaming`, frontends/sliding.py): a model streamed a
hop at a time gives, for every window, the whole-window model's output bit for bit (float32:
within verify's tolerance): LiteRT's (without its default delegates) and the unfused numpy
executor's on the window's frames. Models
that cannot stream exactly are refused in one line naming the layer."""

from __future__ import annotations

import json

import numpy as np
import pytest

from support import litert_oracle
from support.cli import run_cli
from support.paths import FIXTURES
import msfcnn
from msfcnn import pipeline, windows
from msfcnn.frontends.sliding import window_steps

STREAMING = FIXTURES / "streaming"
# (a hop of 2 on str_ww: its last depthwise window gives one row a call, not two; op_conv_k1_s2_valid: a
# stride along time larger than its window, whose ring drops the row it would not read)
CASES = [("str_ww_int8", 1), ("str_ww_int8", 2), ("tcn_valid_int8", 1), ("tcn_valid_int8", 3), ("tcn_valid_f32", 2),
         ("../models/op_conv_k1_s2_valid", 2)]
EXTRA_FRAMES = 12  # frames past the first window: a few dozen calls per case


def _frames(whole, seed: int) -> np.ndarray:
    """A long input: the window and EXTRA_FRAMES more frames along its time axis, random int8."""
    shape = list(whole.input_shape)
    axis = 0 if shape[0] > 1 else 1
    shape[axis] += EXTRA_FRAMES
    rng = np.random.default_rng(seed)
    if whole.dtype == "float32":
        return rng.uniform(-0.5, 1.5, size=shape).astype(np.float32)
    return rng.integers(-128, 128, size=shape, dtype=np.int8)


@pytest.fixture(scope="module")
def streamed():
    """Per case: the streamed run over its long input, and LiteRT's whole-window outputs (one
    interpreter process for every case)."""
    runs, jobs = {}, []
    for seed, (name, hop) in enumerate(CASES):
        path = STREAMING / f"{name}.tflite"
        whole = pipeline.load(str(path))
        step = pipeline.load(str(path), hop=hop)
        schedule = pipeline.lower(step, pipeline.solve(pipeline.planner(step)))
        frames = _frames(whole, seed)
        result = windows.run_windows(whole, schedule, frames, hop)
        axis, size = (0, whole.input_shape[0]) if whole.input_shape[0] > 1 else (1, whole.input_shape[1])
        jobs.append((path, [np.take(frames, range(w * hop, w * hop + size), axis=axis) for w in range(result.count)]))
        runs[name, hop] = result
    oracle = litert_oracle.run_jobs(jobs)
    return {case: (runs[case], oracle[k].outputs) for k, case in enumerate(CASES)}


@pytest.mark.parametrize("name, hop", CASES)
def test_every_window_equals_the_whole_window_model(streamed, name, hop):
    result, litert = streamed[name, hop]
    assert result.count == EXTRA_FRAMES // hop + 1 > 1
    for w, (ours, theirs) in enumerate(zip(result.outputs, litert)):
        theirs = np.asarray(theirs).reshape(-1)
        if ours.dtype == np.float32:  # sums taken in another order: verify's float32 criterion
            np.testing.assert_allclose(ours.reshape(-1), theirs, rtol=0, atol=pipeline.float_tolerance(theirs))
        else:
            np.testing.assert_array_equal(ours.reshape(-1), theirs, err_msg=f"window {w}")
    assert result.equal == result.count  # and the numpy executor's whole-window runs


def test_the_rings_are_the_rows_each_window_still_needs():
    """Depthwise kernels 3, 5, 10, 15 along time on 40, 128, 64, 64 channels: each keeps k - 1 rows
    of its input between calls, counted in every RAM figure."""
    step = pipeline.load(str(STREAMING / "str_ww_int8.tflite"), hop=1)
    assert step.state_bytes == 2 * 40 + 4 * 128 + 9 * 64 + 14 * 64
    plan = pipeline.solve(pipeline.planner(step))
    assert all(block.ram_bytes >= step.state_bytes for block in plan.blocks)
    assert step.input_shape == (1, 1, 40)


def test_a_global_pool_over_time_keeps_running_sums():
    """The int8 TCN's GlobalAveragePooling1D over 18 rows adds each new row to int32 sums and takes
    the oldest away (ops/time_mean.py): its state is the 18 rows, 8 sums and the ring's slot,
    instead of a ring of 17 rows summed again every call. Float32 sums depend on their order: the
    float32 TCN keeps its ring and its pool."""
    step = pipeline.load(str(STREAMING / "tcn_valid_int8.tflite"), hop=1)
    assert [node.op.kind for node in step.nodes][-2:] == ["time_mean", "dense"]
    assert step.state_bytes == 2 * 4 + 4 * 8 + 8 * 8 + (18 * 8 + 8 * 4 + 4)
    float32 = pipeline.load(str(STREAMING / "tcn_valid_f32.tflite"), hop=1)
    assert [node.op.kind for node in float32.nodes][-3:] == ["time_ring", "global_avg_pool", "dense"]


def test_a_hop_that_does_not_divide_the_window_reaches_back_before_the_first_frame():
    whole = pipeline.load(str(STREAMING / "tcn_valid_int8.tflite"))
    steps, warm = window_steps(whole, np.zeros((1, 40, 4), np.int8), 3)
    assert warm == 10 and len(steps) == warm + 3  # windows at frames 0, 3 and 6 of 40
    assert sum(s.shape[1] for s in steps) == 3 * len(steps) == 39  # the first call's first frame is -1


@pytest.mark.parametrize("model, hop, words", [
    ("ops/dilated_tcn_int8", 1, "layer 0 (pad) pads the time axis"),
    ("models/op_conv_k3_s1_same_relu6", 1, "layer 0 (conv 3x3/1 8) pads the time axis"),
    ("models/op_conv_k3_s2_valid_relu", 1, "stride 2 along time does not divide the 1 row each call"),
    ("models/op_conv_k7_s2_valid_relu6", 2, "stride 2 along time leaves the window's last 1 row unread"),
    ("models/op_dense_relu", 1, "--streaming needs a time axis"),
    ("streaming/tcn_valid_int8", 32, "--hop 32 is not shorter than the window of 32 frames"),
])
def test_models_that_cannot_stream_exactly_are_refused_in_one_line(capsys, model, hop, words):
    code, out, err = run_cli(capsys, "plan", str(FIXTURES / f"{model}.tflite"), "--streaming", "--hop", str(hop))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and words in err, err


def test_hop_needs_streaming(capsys):
    code, _, err = run_cli(capsys, "plan", str(STREAMING / "tcn_valid_int8.tflite"), "--hop", "2")
    assert code == 2 and err == "msfcnn: error: --hop needs --streaming\n"


def test_run_writes_every_window_stacked_in_window_order(capsys, tmp_path):
    frames = _frames(pipeline.load(str(STREAMING / "tcn_valid_int8.tflite")), 5)
    np.save(tmp_path / "x.npy", frames)
    code, out, _ = run_cli(capsys, "run", str(STREAMING / "tcn_valid_int8.tflite"), "--streaming", "--hop", "2",
                           "--input", str(tmp_path / "x.npy"), "-o", str(tmp_path / "y.npy"), "--json", "-q")
    doc = json.loads(out)
    y = np.load(tmp_path / "y.npy")
    assert code == 0 and y.shape == (7, 3) and doc["windows"] == doc["windows_equal_whole_window"] == 7
    whole = pipeline.load(str(STREAMING / "tcn_valid_int8.tflite"))
    for w in (0, 6):
        np.testing.assert_array_equal(y[w], pipeline.run_reference(whole, frames[:, 2 * w:2 * w + 32]).reshape(-1))



def test_pareto_plans_one_call(capsys):
    """`pareto --streaming` plans the model of one call: every plan holds the state kept between
    calls (284 B: the rings of the TCN's three convolutions and its pool's running sums)."""
    model = str(STREAMING / "tcn_valid_int8.tflite")
    code, out, err = run_cli(capsys, "pareto", model, "--streaming", "--json", "-q")
    assert code == 0, err
    front = json.loads(out)["front"]
    assert front[0]["peak_ram_bytes"] == pipeline.solve(pipeline.planner(pipeline.load(model, hop=1))).peak_ram_bytes
    assert all(plan["state_bytes"] == 284 for plan in front)


@pytest.mark.slow  # bounds the stack of the plan: compiles C for cortex-m4
def test_fit_plans_one_call(capsys):
    model = str(STREAMING / "tcn_valid_int8.tflite")
    code, out, err = run_cli(capsys, "fit", model, "--board", "nucleo-f412zg", "--streaming", "--hop", "2", "--json", "-q")
    doc = json.loads(out)
    assert code == 0 and doc["fits"], err
    assert doc["hop"] == 2 and doc["state_bytes"] == 284 and doc["arena_bytes"] >= 284
    assert doc["plan"]["peak_ram_bytes"] == pipeline.solve(pipeline.planner(pipeline.load(model, hop=2))).peak_ram_bytes
    api = msfcnn.fit(model, "nucleo-f412zg", hop=2).to_dict()  # the Python API's fit, as the command's
    assert {k: api[k] for k in ("hop", "state_bytes", "arena_bytes", "predicted_instructions")} == \
        {k: doc[k] for k in ("hop", "state_bytes", "arena_bytes", "predicted_instructions")}


def test_an_onnx_tcn_streams_within_onnxruntimes_tolerance():
    """PyTorch's TCN as ONNX (Conv 1 x 3 at dilations 1, 2, 4 along W, float32): streamed one frame
    a call, every window is onnxruntime's on the window's frames, within verify's float32 tolerance."""
    import onnxruntime as ort

    path = FIXTURES / "models" / "onnx_tcn_conv1xk.onnx"
    whole, step = pipeline.load(str(path)), pipeline.load(str(path), hop=1)
    frames = np.random.default_rng(7).uniform(-1, 1, (4, 1, 32 + EXTRA_FRAMES)).astype(np.float32)  # NCHW
    result = windows.run_windows(whole, pipeline.lower(step, pipeline.solve(pipeline.planner(step))), frames, 1)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert result.count == EXTRA_FRAMES + 1 and result.equal == result.count
    for w, ours in enumerate(result.outputs):
        want = session.run(None, {"input": frames[None, :, :, w:w + 32]})[0].reshape(-1)
        np.testing.assert_allclose(ours.reshape(-1), want, rtol=0, atol=pipeline.float_tolerance(want))

"""PyTorch's Conv1d models as ONNX (fixtures/make_conv1d_onnx.py): rank-3 (N, C, L) maps held as the
one-row maps (1, L, C), 3-D weights as 1 x k windows. A keyword-spotting-style stack, a dilated
causal TCN with residual Adds, a Conv1d front permuted into a GRU and a 1-D squeeze-and-excite
match onnxruntime in numpy (unfused, the least-RAM plan and a random plan), and their C on the
host matches numpy; a VALID TCN streams (`--streaming`), each window within verify's tolerance of
onnxruntime on the window's frames. What stays unsupported is refused in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest
import onnx
from onnx import TensorProto, helper, numpy_helper

from support.cli import run_cli
from support.paths import FIXTURES
from support.sequence_cases import check_c_of_the_least_ram_plan, check_runs_against, refusal_line
from msfcnn import pipeline, windows
from msfcnn.ops import Window

SEQUENCE = FIXTURES / "sequence"
MODELS = ["onnx_conv1d_kws", "onnx_conv1d_tcn_causal", "onnx_conv1d_tcn_valid", "onnx_conv1d_stride", "onnx_conv1d_gru",
          "onnx_conv1d_se"]
C, CR, GAP, DENSE = ("conv2d", None), ("conv2d", "relu"), ("global_avg_pool", None), ("dense", None)
PAD, ADDR = ("pad", None), ("add", "relu")
EXPECTED_OPS = {  # BatchNorm1d folded into the Conv1d before it, ReLU fused, PyTorch's pads evaluated at import
    "onnx_conv1d_kws": [CR, ("max_pool2d", None), CR, ("depthwise_conv2d", "relu"), ("avg_pool2d", None), CR, GAP,
                        DENSE],
    "onnx_conv1d_tcn_causal": [PAD, CR, PAD, C, C, ADDR, PAD, CR, PAD, C, ADDR, PAD, CR, PAD, C, ADDR, GAP, DENSE],
    "onnx_conv1d_tcn_valid": [CR] * 6 + [GAP, DENSE],
    "onnx_conv1d_stride": [CR, C],
    # permute(2, 0, 1): the one-row map's bytes are the time-major sequence's; h_n is the last step
    "onnx_conv1d_gru": [CR, ("max_pool2d", None), ("gru", None), ("reshape", None), ("channel_slice", None),
                        ("reshape", None)],
    # the gate unsqueezed to (1, C, 1) is an (N, C, L) map of one step; the (C, 1) constants one per channel
    "onnx_conv1d_se": [CR, GAP, ("dense", "relu"), DENSE, ("logistic", None), ("reshape", None),
                       ("mul_broadcast", None), ("mul_const", None), ("add_const", None), C],
}


def _onnxruntime(path, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]


def _inputs(graph, seeds=(0, 1)) -> list[np.ndarray]:
    """Random (1, C, L) inputs of an (N, C, L) model."""
    return [np.random.default_rng(seed).standard_normal(graph.declared_input_shape).astype(np.float32)
            for seed in seeds]


@pytest.mark.parametrize("name", MODELS)
def test_conv1d_models_import_as_one_row_maps(name):
    graph = pipeline.load(str(SEQUENCE / f"{name}.onnx"))
    _, channels, length = graph.declared_input_shape
    assert graph.layout == "NCHW" and graph.input_shape == (1, length, channels)
    assert [(node.op.kind, getattr(node.op, "activation", None)) for node in graph.nodes] == EXPECTED_OPS[name]


def test_conv1d_windows_are_1_x_k():
    kws = pipeline.load(str(SEQUENCE / "onnx_conv1d_kws.onnx")).nodes
    assert kws[0].op.win == Window((1, 3), (1, 1), (0, 1, 0, 1)) and kws[0].consts["weights"].shape == (16, 1, 3, 10)
    assert kws[1].op.win == Window((1, 2), (1, 2), (0, 0, 0, 0))  # MaxPool1d(2)
    assert kws[3].consts["weights"].shape == (1, 1, 3, 24)  # Conv1d group 24: depthwise
    tcn = pipeline.load(str(SEQUENCE / "onnx_conv1d_tcn_causal.onnx")).nodes
    assert tcn[0].op.pads == (0, 2, 0, 0)  # F.pad(x, (2, 0)): two frames before the window only
    assert tcn[7].op.win == Window((1, 3), (1, 1), (0, 0, 0, 0), (1, 2))  # dilation 2
    stride = pipeline.load(str(SEQUENCE / "onnx_conv1d_stride.onnx")).nodes[0].op
    assert stride.win == Window((1, 3), (1, 2), (0, 0, 0, 0))


@pytest.mark.parametrize("name", MODELS)
def test_conv1d_models_match_onnxruntime(name):
    """Unfused, the least-RAM plan and a random plan; the arena measured as predicted."""
    path = SEQUENCE / f"{name}.onnx"
    graph = pipeline.load(str(path))
    xs = _inputs(graph)
    _, channels, length = graph.declared_input_shape
    check_runs_against(graph, [x.reshape(1, channels, 1, length) for x in xs], [_onnxruntime(path, x) for x in xs])


@pytest.mark.parametrize("name", ["onnx_conv1d_kws", "onnx_conv1d_tcn_causal", "onnx_conv1d_gru",
                                  "onnx_conv1d_se"])
def test_conv1d_c_on_the_host(name):
    check_c_of_the_least_ram_plan(pipeline.load(str(SEQUENCE / f"{name}.onnx")))


def test_run_takes_the_models_own_n_c_l_input(capsys, tmp_path):
    path = SEQUENCE / "onnx_conv1d_kws.onnx"
    x = _inputs(pipeline.load(str(path)), seeds=(5,))[0]
    np.save(tmp_path / "x.npy", x[0])  # (C, L): the batch left out
    code, _, err = run_cli(capsys, "run", str(path), "--input", str(tmp_path / "x.npy"), "-o", str(tmp_path / "y.npy"))
    assert code == 0, err
    np.testing.assert_allclose(np.load(tmp_path / "y.npy").reshape(1, 12), _onnxruntime(path, x), rtol=1e-5, atol=1e-6)


def test_a_valid_tcn_streams_within_onnxruntimes_tolerance():
    """Conv1d k3 VALID at dilations 1, 2, 4, a global pool and a dense head, streamed one frame a
    call from a (C, F) long input: every window is onnxruntime's on the window's frames."""
    path = SEQUENCE / "onnx_conv1d_tcn_valid.onnx"
    whole, step = pipeline.load(str(path)), pipeline.load(str(path), hop=1)
    frames = np.random.default_rng(7).uniform(-1, 1, (4, 40 + 12)).astype(np.float32)
    schedule = pipeline.lower(step, pipeline.solve(pipeline.planner(step)))
    result = windows.run_windows(whole, schedule, windows.model_frames(whole, frames), 1)
    assert result.count == 13 and result.equal == result.count
    for w, ours in enumerate(result.outputs):
        want = _onnxruntime(path, frames[None, :, w:w + 40]).reshape(-1)
        np.testing.assert_allclose(ours.reshape(-1), want, rtol=0, atol=pipeline.float_tolerance(want))


def test_the_streamed_tcns_c_on_the_host(capsys, tmp_path):
    """`verify --streaming` of the VALID TCN on a (C, F) long input: the C's calls equal numpy's
    within verify's tolerance, every window the whole-window model's; the arena as predicted."""
    np.save(tmp_path / "x.npy", np.random.default_rng(3).uniform(-1, 1, (4, 40 + 12)).astype(np.float32))
    code, out, err = run_cli(capsys, "verify", str(SEQUENCE / "onnx_conv1d_tcn_valid.onnx"), "--streaming",
                             "--input", str(tmp_path / "x.npy"), "--json", "-q")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["pass"] and doc["windows"] == doc["windows_equal_whole_window"] == 13
    assert doc["arena_bytes"] == doc["predicted_peak_ram_bytes"] and doc["state_bytes"] == 1216


@pytest.mark.parametrize("model, argv, why", [
    ("onnx_conv1d_tcn_causal", ["--streaming"], "layer 0 (pad) pads the time axis"),
    ("onnx_conv1d_stride", ["--streaming"], "its stride 2 along time does not divide the 1 row each call brings it"),
])
def test_what_cannot_stream_is_refused_in_one_line(capsys, model, argv, why):
    code, _, err = run_cli(capsys, "plan", str(SEQUENCE / f"{model}.onnx"), *argv)
    assert code == 2 and len(err.strip().splitlines()) == 1 and why in err


def test_a_stride_along_time_streams_with_a_hop_it_divides(capsys):
    code, out, err = run_cli(capsys, "run", str(SEQUENCE / "onnx_conv1d_stride.onnx"), "--streaming", "--hop", "2",
                           "--json", "-q")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["hop"] == 2 and doc["windows"] == doc["windows_equal_whole_window"] > 1


def _conv1d_file(tmp_path, weights: np.ndarray, group: int, input_shape=(1, 4, 10), transpose=None):
    """A Conv1d of an (N, C, L) input; then a Transpose of its output by `transpose`, if given."""
    nodes = [helper.make_node("Conv", ["input", "w"], ["conv" if transpose else "output"], group=group,
                              kernel_shape=[weights.shape[-1]])]
    if transpose:
        nodes.append(helper.make_node("Transpose", ["conv"], ["output"], perm=transpose))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("input", TensorProto.FLOAT, input_shape)],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(weights.astype(np.float32), "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = tmp_path / "conv1d.onnx"
    path.write_bytes(onnx.shape_inference.infer_shapes(model).SerializeToString())
    return path


def test_a_transpose_that_is_no_sequence_is_refused_in_one_line(capsys, tmp_path):
    path = _conv1d_file(tmp_path, np.ones((4, 4, 3)), group=1, transpose=[1, 0, 2])
    assert "Transpose [1, 0, 2] of the (N, C, L) map [1, 4, 8]: only to a sequence of its steps" in \
        refusal_line(capsys, path)


def test_grouped_conv1d_is_refused_in_one_line(capsys, tmp_path):
    line = refusal_line(capsys, _conv1d_file(tmp_path, np.ones((4, 2, 3)), group=2))
    assert "node 0 (Conv): grouped convolution (group 2 over 4 channels) is not supported" in line


def test_a_batch_of_sequences_is_refused_in_one_line(capsys, tmp_path):
    line = refusal_line(capsys, _conv1d_file(tmp_path, np.ones((4, 4, 3)), group=1, input_shape=(2, 4, 10)))
    assert "an (N, C, L) input takes batch 1" in line

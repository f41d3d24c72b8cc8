"""ONNX LSTM, GRU and RNN as PyTorch exports nn.LSTM / nn.GRU / nn.RNN (fixtures/make_recurrent_models.py):
float32, time-major or batch_first, one or two layers, GRU and RNN bidirectional too. Within 1e-5 of
onnxruntime in numpy (unfused and fused) and the C on the host equal to numpy."""

from __future__ import annotations

import numpy as np
import pytest

from support.paths import FIXTURES
from support.sequence_cases import check_c_of_the_least_ram_plan, check_runs_against, refusal_line
from msfcnn import pipeline

SEQUENCE = FIXTURES / "sequence"
MODELS = ["onnx_lstm", "onnx_lstm_batch_first_2", "onnx_gru", "onnx_gru_reset_before", "onnx_gru_batch_first_2", "onnx_gru_bidirectional",
          "onnx_rnn", "onnx_rnn_relu_batch_first_2", "onnx_rnn_bidirectional"]


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
                                  "onnx_gru_reset_before"])
def test_c_on_the_host_equals_numpy(name):
    graph = pipeline.load(str(SEQUENCE / f"{name}.onnx"))
    check_c_of_the_least_ram_plan(graph)


def test_a_bidirectional_lstm_is_refused_in_one_line(capsys):
    line = refusal_line(capsys, str(SEQUENCE / "onnx_lstm_bidirectional.onnx"))
    assert "(LSTM" in line and "bidirectional LSTM is not supported" in line

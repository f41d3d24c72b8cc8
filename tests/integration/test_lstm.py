"""UNIDIRECTIONAL_SEQUENCE_LSTM as TensorFlow's converter writes Keras' LSTM
(fixtures/make_sequence_models.py): int8 (int16 cell state) bit-exact with LiteRT and, under
`--numerics tflm`, with TFLite Micro; float32 within rounding of both. Every sequence of the
fixtures: whole sequences and the last step, stacked, after a Conv1D and before a dense head,
time-major. The interpreters keep an LSTM's states across invocations, so each input runs in an
interpreter of its own (from zero states, as msfcnn runs)."""

from __future__ import annotations

import numpy as np
import pytest

from support import cache
from support.c_build import check_c
from support.cli import run_cli
from support.paths import FIXTURES
from support.sequence_cases import check_runs_against, interpreter_runs, loaded
from msfcnn.fusion import solvers
from msfcnn.ops import lstm_fixed as fx
from msfcnn.ops.lstm import Lstm
from msfcnn.tensors import random_input

SEQUENCE = FIXTURES / "sequence"
# The whole sequence runs in the fast tier, the other forms (5 to 15 s each) in the slow one.
FORMS = ["lstm_seq"] + [pytest.param(form, marks=pytest.mark.slow)
                        for form in ("lstm_last", "lstm_stacked", "lstm_conv_dense", "lstm_time_major")]


def _inputs(graph) -> list[np.ndarray]:
    return [random_input(graph, seed) for seed in range(2)]


@pytest.fixture(scope="module")
def interpreter_outputs(request) -> dict:
    """(model, numerics) -> the interpreter's output for each input, each from a fresh interpreter
    (zero states), for every selected case of the two tests below."""
    def jobs_of(quant):
        def jobs(params):
            path = SEQUENCE / f"{params['form']}_{quant}.tflite"
            return (path, params["numerics"]), params["numerics"], \
                [(path, [x]) for x in _inputs(loaded(path, params["numerics"]))]
        return jobs

    runs = {**interpreter_runs(request, "test_int8_lstm_is_bit_exact_with_the_interpreter", jobs_of("int8")),
            **interpreter_runs(request, "test_float32_lstm_agrees_with_the_interpreter", jobs_of("float32"))}
    return {key: [outputs[0] for outputs in each] for key, each in runs.items()}


def _check_runs(path, numerics: str, interpreter_outputs: dict) -> None:
    graph = loaded(path, numerics)
    assert any(isinstance(node.op, Lstm) for node in graph.nodes)
    check_runs_against(graph, _inputs(graph), interpreter_outputs[(path, numerics)])


@pytest.mark.parametrize("numerics", ["litert", "tflm"])
@pytest.mark.parametrize("form", FORMS)
def test_int8_lstm_is_bit_exact_with_the_interpreter(form, numerics, interpreter_outputs):
    _check_runs(SEQUENCE / f"{form}_int8.tflite", numerics, interpreter_outputs)


@pytest.mark.parametrize("numerics", ["litert", "tflm"])
@pytest.mark.parametrize("form", ["lstm_seq"] + [pytest.param(form, marks=pytest.mark.slow)
                                                 for form in ("lstm_stacked", "lstm_time_major")])
def test_float32_lstm_agrees_with_the_interpreter(form, numerics, interpreter_outputs):
    _check_runs(SEQUENCE / f"{form}_float32.tflite", numerics, interpreter_outputs)


def test_the_last_step_slice_folds_into_the_lstm():
    graph = loaded(SEQUENCE / "lstm_stacked_int8.tflite")
    assert [(node.op.describe(), node.shape) for node in graph.nodes] == [("lstm 24", (20, 24)),
                                                                          ("lstm 16 (last step)", (16,))]
    assert graph.macs(0) == 20 * 4 * 24 * (8 + 24)


@pytest.mark.parametrize("numerics", ["litert", "tflm"])
@pytest.mark.parametrize("name", [pytest.param("lstm_stacked_int8", marks=pytest.mark.slow), "lstm_conv_dense_int8",
                                  "lstm_last_float32"])
def test_c_on_the_host_equals_numpy(name, numerics):
    graph = loaded(SEQUENCE / f"{name}.tflite", numerics)
    check_c(graph, solvers.min_peak_ram(cache.dag(graph)).blocks, seed=3)


@pytest.mark.parametrize("form, message", [
    ("peephole", "peephole connections are not supported"),
    ("projection", "a projection is not supported"),
    ("layer_norm", "layer normalisation is not supported"),
    ("cifg", "a coupled input and forget gate (CIFG, no input gate weights) is not supported"),
    ("relu", "only the tanh cell activation is supported"),
])
def test_unsupported_forms_are_refused_in_one_line(capsys, form, message):
    code, _, err = run_cli(capsys, "plan", str(SEQUENCE / f"lstm_refused_{form}.tflite"))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM)" in lines[0] and message in lines[0]


def test_the_int16_gate_functions_approximate_sigmoid_and_tanh():
    """On every int16 input: gemmlowp's fixed point within 2^-11, TFLite's table within 2^-13 (a
    brute-force bound against numpy's float functions, independent of either runtime)."""
    x = np.arange(-32768, 32768)
    sigmoid = 1 / (1 + np.exp(-x / 4096))
    assert np.abs(fx.gemmlowp_logistic16(x, 3) / 32768 - sigmoid).max() < 2 ** -11
    assert np.abs(fx.tflm_logistic16(x) / 32768 - sigmoid).max() < 2 ** -13
    for cell_log2 in (-14, -12, -11):
        tanh = np.tanh(x * 2.0 ** cell_log2)
        assert np.abs(fx.gemmlowp_tanh16(x, 15 + cell_log2) / 32768 - tanh).max() < 2 ** -11
        assert np.abs(fx.tflm_tanh16(x, *fx.tflm_tanh_params(cell_log2)) / 32768 - tanh).max() < 2 ** -13

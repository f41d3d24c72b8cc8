"""tf_keras' Bidirectional(LSTM) as TensorFlow's converter writes it (no BIDIRECTIONAL_SEQUENCE_LSTM:
two UNIDIRECTIONAL_SEQUENCE_LSTMs, the backward one between REVERSE_V2s, and a CONCATENATION;
fixtures/make_recurrent_models.py). int8 bit-exact with LiteRT and, under `--numerics tflm`, with
TFLite Micro; float32 within rounding; numpy unfused and fused, and C on the host. Each input runs
in an interpreter of its own (the LSTMs' states start at zero)."""

from __future__ import annotations

import pytest

from support.paths import FIXTURES
from support.sequence_cases import check_c_of_the_least_ram_plan, check_runs_against, interpreter_runs, loaded
from msfcnn.tensors import random_input

SEQUENCE = FIXTURES / "sequence"


def _path(quant: str):
    return SEQUENCE / f"lstm_bidirectional_{quant}.tflite"


def _inputs(graph) -> list:
    return [random_input(graph, seed) for seed in range(2)]


@pytest.fixture(scope="module")
def interpreter_outputs(request) -> dict:
    """(quant, numerics) -> the interpreter's output for each input, each input in an interpreter of
    its own, for every selected case of the test below (one process per numerics)."""
    def jobs_of(params):
        quant, numerics = params["quant"], params["numerics"]
        return (quant, numerics), numerics, [(_path(quant), [x]) for x in _inputs(loaded(_path(quant), numerics))]

    runs = interpreter_runs(request, "test_bidirectional_lstm_matches_the_interpreter", jobs_of)
    return {key: [outputs[0] for outputs in each] for key, each in runs.items()}


@pytest.mark.parametrize("quant, numerics", [("int8", "litert"), pytest.param("int8", "tflm", marks=pytest.mark.slow),
                                             ("float32", "litert"), pytest.param("float32", "tflm", marks=pytest.mark.slow)])
def test_bidirectional_lstm_matches_the_interpreter(quant, numerics, interpreter_outputs):
    graph = loaded(_path(quant), numerics)
    assert [node.op.kind for node in graph.nodes].count("lstm") == 2
    check_runs_against(graph, _inputs(graph), interpreter_outputs[(quant, numerics)])


@pytest.mark.slow
@pytest.mark.parametrize("numerics", ["litert", "tflm"])
def test_c_on_the_host_equals_numpy(numerics):
    check_c_of_the_least_ram_plan(loaded(_path("int8"), numerics))

"""tf_keras' Bidirectional(LSTM) as TensorFlow's converter writes it (no BIDIRECTIONAL_SEQUENCE_LSTM:
two UNIDIRECTIONAL_SEQUENCE_LSTMs, the backward one between REVERSE_V2s, and a CONCATENATION;
fixtures/make_recurrent_models.py). int8 bit-exact with LiteRT and, under `--numerics tflm`, with
TFLite Micro; float32 within rounding; numpy unfused and fused, and C on the host. Each input runs
in an interpreter of its own (the LSTMs' states start at zero)."""

from __future__ import annotations

import pytest

from support.litert_oracle import run_jobs as litert_jobs
from support.micro_oracle import run_jobs as micro_jobs
from support.paths import FIXTURES
from support.sequence_cases import check_c_of_the_least_ram_plan, check_runs_against
from msfcnn import pipeline
from msfcnn.tensors import random_input

SEQUENCE = FIXTURES / "sequence"


@pytest.mark.parametrize("quant, numerics", [("int8", "litert"), pytest.param("int8", "tflm", marks=pytest.mark.slow),
                                             ("float32", "litert"), pytest.param("float32", "tflm", marks=pytest.mark.slow)])
def test_bidirectional_lstm_matches_the_interpreter(quant, numerics):
    path = SEQUENCE / f"lstm_bidirectional_{quant}.tflite"
    graph = pipeline.load(str(path), numerics=numerics)
    assert [node.op.kind for node in graph.nodes].count("lstm") == 2
    inputs = [random_input(graph, seed) for seed in range(2)]
    jobs = [(path, [x]) for x in inputs]
    wants = [run.outputs[0] for run in litert_jobs(jobs)] if numerics == "litert" else \
        [outputs[0] for outputs in micro_jobs(jobs, "tflm", arena_size=1 << 20)]
    check_runs_against(graph, inputs, wants)


@pytest.mark.slow
@pytest.mark.parametrize("numerics", ["litert", "tflm"])
def test_c_on_the_host_equals_numpy(numerics):
    graph = pipeline.load(str(SEQUENCE / "lstm_bidirectional_int8.tflite"), numerics=numerics)
    check_c_of_the_least_ram_plan(graph)

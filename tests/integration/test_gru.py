"""Keras' GRU as TensorFlow's converter writes it with unroll=True (fixtures/make_recurrent_models.py;
tf_keras' GRU, its original form reset_after=False with int8 float islands, and Keras 3's):
an UNPACK of the time-major input into steps, per step FULLY_CONNECTED, SPLIT / SPLIT_V, LOGISTIC,
TANH, SUB from 1, MUL and ADD, and a PACK of the hidden states. int8 bit-exact with LiteRT and,
under `--numerics tflm`, with TFLite Micro; float32 within rounding of both; numpy unfused and fused,
and C on the host. The default form (a WHILE loop) is refused in one line naming unroll=True."""

from __future__ import annotations

import numpy as np
import pytest

from support.litert_oracle import run_jobs as litert_jobs
from support.micro_oracle import run_jobs as micro_jobs
from support.paths import FIXTURES
from support.sequence_cases import check_c_of_the_least_ram_plan, check_runs_against, loaded, refusal_line
from msfcnn.tensors import random_input

SEQUENCE = FIXTURES / "sequence"
FORMS = ["gru_seq", "gru_last_dense", "gru_reset_before", "gru_keras3"]
# Each int8 check lowers a DAG of some 160 nodes twice (5 to 12 s), a float32 one takes 1.5 to 3.5 s:
# the fast tier checks the float32 GRU, the slow one the rest. TFLite Micro cannot run the original
# GRU (reset_after=False): its SPLIT_V's empty part is a dynamic tensor.
CASES = [pytest.param(form, quant, numerics, marks=[] if (form, quant) == ("gru_seq", "float32") else [pytest.mark.slow])
         for form in FORMS for quant in ("int8", "float32") for numerics in ("litert", "tflm")
         if not (form == "gru_reset_before" and numerics == "tflm")]


def _oracle_outputs(path, numerics, inputs) -> list[np.ndarray]:
    jobs = [(path, list(inputs))]
    if numerics == "litert":
        return list(litert_jobs(jobs)[0].outputs)
    return list(micro_jobs(jobs, "tflm")[0])


def _check_runs(path, numerics: str) -> None:
    graph = loaded(path, numerics)
    inputs = [random_input(graph, seed) for seed in range(3)]
    check_runs_against(graph, inputs, _oracle_outputs(path, numerics, inputs))


@pytest.mark.parametrize("form, quant, numerics", CASES)
def test_unrolled_gru_matches_the_interpreter(form, quant, numerics):
    _check_runs(SEQUENCE / f"{form}_{quant}.tflite", numerics)


def test_the_steps_become_slices_and_the_stack_concatenations():
    graph = loaded(SEQUENCE / "gru_seq_int8.tflite")
    kinds = [node.op.kind for node in graph.nodes]
    assert kinds.count("dense") == 8 + 7  # the input kernel each step, the recurrent one after the first
    assert kinds.count("concat") == 7 and graph.shape_of(len(graph.nodes) - 1) == (8, 8)


@pytest.mark.slow
@pytest.mark.parametrize("numerics", ["litert", "tflm"])
@pytest.mark.parametrize("name", ["gru_seq_int8", "gru_last_dense_float32"])
def test_c_on_the_host_equals_numpy(name, numerics):
    check_c_of_the_least_ram_plan(loaded(SEQUENCE / f"{name}.tflite", numerics))


def test_the_while_loop_is_refused_in_one_line(capsys):
    line = refusal_line(capsys, str(SEQUENCE / "gru_while_float32.tflite"))
    assert "operator 1 (WHILE)" in line and "unroll=True" in line

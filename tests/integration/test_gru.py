"""Keras' GRU as TensorFlow's converter writes it with unroll=True (fixtures/make_recurrent_models.py;
tf_keras' GRU, its original form reset_after=False with int8 float islands, and Keras 3's):
an UNPACK of the time-major input into steps, per step FULLY_CONNECTED, SPLIT / SPLIT_V, LOGISTIC,
TANH, SUB from 1, MUL and ADD, and a PACK of the hidden states. int8 bit-exact with LiteRT and,
under `--numerics tflm`, with TFLite Micro; float32 within rounding of both; numpy unfused and fused,
and C on the host. The default form (a WHILE loop) is refused in one line naming unroll=True."""

from __future__ import annotations

import numpy as np
import pytest

from support.paths import FIXTURES
from support.sequence_cases import (check_c_of_the_least_ram_plan, check_runs_against, interpreter_runs, loaded,
                                    refusal_line)
from msfcnn.fusion import solvers
from msfcnn.tensors import random_input
from support import cache

SEQUENCE = FIXTURES / "sequence"
FORMS = ["gru_seq", "gru_last_dense", "gru_reset_before", "gru_keras3", "gru_stack"]
# An int8 form's import alone takes about a second of CPU (its lookup tables), a float32 one's 0.1 s:
# the fast tier checks the float32 GRU, the slow one the rest. TFLite Micro cannot run the original
# GRU (reset_after=False): its SPLIT_V's empty part is a dynamic tensor.
CASES = [pytest.param(form, quant, numerics, marks=[] if (form, quant) == ("gru_seq", "float32") else [pytest.mark.slow])
         for form in FORMS for quant in ("int8", "float32") for numerics in ("litert", "tflm")
         if not (form == "gru_reset_before" and numerics == "tflm")]
CASES += [pytest.param(form, "float32", "litert", marks=pytest.mark.slow)
          for form in ("gru_stack_reset_before", "gru_bidirectional")]


def _inputs(graph) -> list[np.ndarray]:
    return [random_input(graph, seed) for seed in range(3)]


@pytest.fixture(scope="module")
def interpreter_outputs(request) -> dict:
    """(form, quant, numerics) -> the interpreter's outputs, for every selected case of the test below."""
    def jobs_of(params):
        path = _path(params["form"], params["quant"])
        return (params["form"], params["quant"], params["numerics"]), params["numerics"], \
            [(path, _inputs(loaded(path, params["numerics"])))]

    return {key: outputs[0] for key, outputs in interpreter_runs(
        request, "test_unrolled_gru_matches_the_interpreter", jobs_of).items()}


def _path(form: str, quant: str):
    return SEQUENCE / f"{form}_{quant}.tflite"


@pytest.mark.parametrize("form, quant, numerics", CASES)
def test_unrolled_gru_matches_the_interpreter(form, quant, numerics, interpreter_outputs):
    graph = loaded(_path(form, quant), numerics)
    check_runs_against(graph, _inputs(graph), interpreter_outputs[(form, quant, numerics)])


def test_the_steps_become_slices_and_the_stack_is_filled_step_by_step():
    graph = loaded(SEQUENCE / "gru_seq_int8.tflite")
    kinds = [node.op.kind for node in graph.nodes]
    assert kinds.count("dense") == 8 + 7  # the input kernel each step, the recurrent one after the first
    assert kinds.count("pack_step") == 8 and kinds.count("concat") == 0
    assert graph.shape_of(len(graph.nodes) - 1) == (8, 8)


def test_a_bidirectional_gru_keeps_the_files_order():
    """Its backward layer reads the steps from the last: run step-major it would hold both
    layers' stacks at once, so it runs as the file lists it, its PACKs concatenated at the end."""
    kinds = [node.op.kind for node in loaded(SEQUENCE / "gru_bidirectional_float32.tflite").nodes]
    assert "pack_step" not in kinds and kinds.count("concat") == 2 * 7 + 1


@pytest.mark.parametrize("quant", ["float32", "int8"])
def test_a_stack_runs_step_major_and_never_stores_the_inner_sequence(quant):
    """Two GRUs of 8 units over 6 steps: the second reads the first's hidden states themselves (its
    UNPACK of the first's PACK is bypassed, the first's stack pruned), and every step of both runs
    before the next input step is read. The least-RAM plan's peak is below what the file's order
    holds (the first layer's whole sequence and its stack's concatenations, 176 B in int8)."""
    graph = loaded(SEQUENCE / f"gru_stack_{quant}.tflite")
    ops = [node.op for node in graph.nodes]
    packs = [t for t, op in enumerate(ops) if op.kind == "pack_step"]
    assert len(packs) == 6 and [ops[t].step for t in packs] == list(range(6))  # the output's stack only
    reads_input = [t for t, node in enumerate(graph.nodes) if node.inputs == (0,) and ops[t].kind == "channel_slice"]
    steps = sorted(reads_input, key=lambda t: ops[t].begin)
    assert len(steps) == 6 and all(packs[k] < steps[k + 1] for k in range(5))  # step k done before step k + 1 starts
    peak = solvers.min_peak_ram(cache.dag(graph)).peak_ram
    assert peak == {"int8": 168, "float32": 672}[quant]


@pytest.mark.slow
@pytest.mark.parametrize("numerics", ["litert", "tflm"])
@pytest.mark.parametrize("name", ["gru_seq_int8", "gru_last_dense_float32", "gru_stack_float32"])
def test_c_on_the_host_equals_numpy(name, numerics):
    check_c_of_the_least_ram_plan(loaded(SEQUENCE / f"{name}.tflite", numerics))


def test_the_while_loop_is_refused_in_one_line(capsys):
    line = refusal_line(capsys, str(SEQUENCE / "gru_while_float32.tflite"))
    assert "operator 1 (WHILE)" in line and "unroll=True" in line


@pytest.mark.parametrize("quant", ["float32", pytest.param("int8", marks=pytest.mark.slow)])  # int8: ~7 s
def test_the_original_gru_is_refused_under_tflm_in_one_line(capsys, quant):
    """TFLite Micro does not allocate the model (its SPLIT_V's empty part is a dynamic tensor:
    test_tflite_micro_does_not_run_the_original_gru), so it has no numerics to follow."""
    from support.cli import run_cli

    code, _, err = run_cli(capsys, "run", str(_path("gru_reset_before", quant)), "--numerics", "tflm")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1
    assert "SPLIT_V" in lines[0] and "reset_after=False" in lines[0] and "use the default, litert" in lines[0]
    assert run_cli(capsys, "plan", str(_path("gru_reset_before", quant)))[0] == 0


@pytest.mark.slow
def test_tflite_micro_does_not_run_the_original_gru():
    from support import micro_oracle

    path = _path("gru_reset_before", "float32")
    with pytest.raises(Exception, match="TFLite Micro|tflm|allocate"):
        micro_oracle.run_jobs([(path, [random_input(loaded(path), 0)])], "tflm", arena_size=1 << 20)


def test_the_steps_share_one_copy_of_the_weights(tmp_path):
    """Every unrolled step's FULLY_CONNECTED reads the same two kernels (the GRU's input kernel, 4 features
    x 24 gates, and its recurrent kernel, 8 units x 24), so weights.c holds them once, not once per step
    (8 steps): the flash of an unrolled GRU does not grow with its steps."""
    from msfcnn import api
    api.compile(str(SEQUENCE / "gru_seq_int8.tflite"), tmp_path)
    weights = (tmp_path / "weights.c").read_text()
    declared = sorted(line.split("[")[0].split()[-1] for line in weights.splitlines()
                      if line.startswith("const int8_t") and "_weights[" in line)
    assert len(declared) == 2, declared
    assert "weights [24, 4]; the same values for ops 21, 42, 63, 84, 105, 126, 147" in weights

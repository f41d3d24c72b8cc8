"""A ConvLSTM written step by step in Keras (fixtures/make_convlstm_models.py: a Python loop over
4 steps of 8 x 8 x 2 maps applying shared Conv2D layers, 4 filters, sigmoid / tanh gates, Multiply
and Add), as TensorFlow's converter writes it: an UNPACK (or a STRIDED_SLICE per step) of the
(1, T, H, W, C) input, per step CONV_2D, ADD, SPLIT, LOGISTIC, TANH and MUL, and a PACK of the
hidden states (return_sequences). int8 bit-exact with LiteRT and, under `--numerics tflm`, with
TFLite Micro; float32 within rounding of both; numpy unfused (and two forms under two fused
plans), and C on the host. Its convolutions fuse with its gates; Keras' ConvLSTM2D (a WHILE loop) is refused in one
line naming it."""

from __future__ import annotations

import numpy as np
import pytest

from support import cache
from support.paths import FIXTURES
from support.sequence_cases import (check_c_of_the_least_ram_plan, check_runs_against, interpreter_runs, loaded,
                                    refusal_line)
from msfcnn.executor import run_unfused_outputs
from msfcnn.fusion import solvers
from msfcnn.tensors import random_input

SEQUENCE = FIXTURES / "sequence"
# A fused int8 run takes about a second of CPU (its hcache blocks run pixel by pixel in numpy): one
# int8 and one float32 form, one with each oracle, run fused too (the least-RAM plan and a random
# one); every other form and oracle is checked unfused, which tests what its import made.
FUSED = {("convlstm_cell_last", "int8", "litert"), ("convlstm_cell_seq", "float32", "tflm")}
CASES = [(form, quant, numerics)
         for form, quants in (("convlstm_cell_last", ("int8", "float32")), ("convlstm_cell_seq", ("int8", "float32")),
                              ("convlstm_cell_per_gate", ("float32",)), ("convlstm_cell_stack", ("int8",)))
         for quant in quants for numerics in ("litert", "tflm")]
# TFLite Micro does not prepare a STRIDED_SLICE of a rank-5 tensor (test_a_step_sliced_by_strided_slice_...)
CASES.append(("convlstm_cell_slice", "int8", "litert"))


def _path(form: str, quant: str):
    return SEQUENCE / f"{form}_{quant}.tflite"


@pytest.fixture(scope="module")
def interpreter_outputs(request) -> dict:
    """(form, quant, numerics) -> the interpreter's output, for every selected case of the test below."""
    def jobs_of(params):
        path, case = _path(params["form"], params["quant"]), (params["form"], params["quant"], params["numerics"])
        return case, params["numerics"], [(path, [random_input(loaded(path, params["numerics"]), 0)])]

    return {key: outputs[0] for key, outputs in interpreter_runs(
        request, "test_the_cell_written_step_by_step_matches_the_interpreter", jobs_of).items()}


@pytest.mark.parametrize("form, quant, numerics", CASES)
def test_the_cell_written_step_by_step_matches_the_interpreter(form, quant, numerics, interpreter_outputs):
    graph = loaded(_path(form, quant), numerics)
    x, want = random_input(graph, 0), interpreter_outputs[(form, quant, numerics)]
    if (form, quant, numerics) in FUSED:
        check_runs_against(graph, [x], want)
        return
    got = run_unfused_outputs(graph, x)[0]
    want = np.asarray(want[0]).reshape(got.shape)
    if quant == "float32":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("form", ["convlstm_cell_last", "convlstm_cell_per_gate"])
def test_each_gate_streams_from_its_convolutions_and_the_steps_run_in_order(form):
    """The gates' convolution sliced into four gates becomes a convolution per gate (as the
    per-gate form is written), each step's input slice opens its step, and the least-RAM plan fuses
    a step's gate convolutions with their sums, activations and products (hcache blocks of up to
    six convolutions), at the same MACs as layer by layer and with two thirds of its peak RAM."""
    graph = loaded(_path(form, "float32"))
    convs = [node.op.filters for node in graph.nodes if node.op.kind == "conv2d"]
    assert set(convs) == {4} and len(convs) == 3 + 3 * 8  # the first step's unused forget gate is not computed
    steps = [t for t, node in enumerate(graph.nodes) if node.op.kind == "channel_slice" and node.inputs == (-1,)]
    assert [graph.nodes[t].op.begin for t in steps] == [0, 128, 256, 384]
    dag = cache.dag(graph)
    least, layer_by_layer = solvers.min_peak_ram(dag), solvers.Path(dag.blocks[:len(graph)])
    fused = [b for b in least.blocks if b.first != b.last]
    assert max(sum(graph.nodes[t].op.kind == "conv2d" for t in range(b.first, b.last + 1)) for b in fused) == 6
    assert least.macs == layer_by_layer.macs
    assert (least.peak_ram, layer_by_layer.peak_ram) == (3808, 5632)


def test_an_int8_cell_keeps_half_the_layer_by_layer_peak():
    """int8, its first step's gates a float island (DEQUANTIZE, SPLIT, QUANTIZE), split per gate
    too: 952 B against 1,792 B (the hidden and cell states and the step's input take 640 B)."""
    graph = loaded(_path("convlstm_cell_last", "int8"))
    dag = cache.dag(graph)
    least, layer_by_layer = solvers.min_peak_ram(dag), solvers.Path(dag.blocks[:len(graph)])
    assert (least.peak_ram, layer_by_layer.peak_ram) == (952, 1792) and least.macs == layer_by_layer.macs


def test_a_stack_reads_the_hidden_maps_below_it_step_by_step():
    """Two ConvLSTM layers, the second reading the first's PACKed sequence through an UNPACK: it
    reads the first's hidden maps themselves, the stack is never made, and step t of both layers
    runs before step t + 1 of either (1,464 B against 1,920 B layer by layer, the same MACs)."""
    graph = loaded(_path("convlstm_cell_stack", "int8"))
    kinds = [node.op.kind for node in graph.nodes]
    assert "pack_step" not in kinds and kinds.count("conv2d") == 2 * (3 + 3 * 8)
    steps = [t for t, node in enumerate(graph.nodes) if node.op.kind == "channel_slice" and node.inputs == (-1,)]
    # before step 2's input slice: steps 0 (3 convolutions: zero states) and 1 (8) of both layers
    assert kinds[:steps[2]].count("conv2d") == 2 * (3 + 8)
    dag = cache.dag(graph)
    least, layer_by_layer = solvers.min_peak_ram(dag), solvers.Path(dag.blocks[:len(graph)])
    assert (least.peak_ram, layer_by_layer.peak_ram) == (1464, 1920) and least.macs == layer_by_layer.macs


def test_c_on_the_host_equals_numpy():
    """int8 with the first step's float island, the returned sequence PACKed, under TFLite Micro's
    numerics (the float32 and LiteRT forms were checked by hand, as `msfcnn verify` does)."""
    check_c_of_the_least_ram_plan(loaded(_path("convlstm_cell_seq", "int8"), "tflm"))


def test_keras_conv_lstm_2d_is_refused_in_one_line(capsys):
    """Its WHILE loop (float32 only: the converter crashes quantising it) names ConvLSTM2D and
    what to export instead."""
    line = refusal_line(capsys, SEQUENCE / "convlstm2d_while_float32.tflite")
    assert "operator 1 (WHILE)" in line and "ConvLSTM2D" in line and "Conv2D layers" in line


def test_a_step_sliced_by_strided_slice_is_refused_under_tflm_in_one_line(capsys):
    """TFLite Micro refuses a STRIDED_SLICE of more than 4 dimensions when it prepares the model."""
    from support.cli import run_cli

    code, _, err = run_cli(capsys, "run", str(_path("convlstm_cell_slice", "int8")), "--numerics", "tflm")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "rank-5" in lines[0] and "tf.unstack" in lines[0]


@pytest.mark.slow  # the CLI builds every kernel and callgrind counts the run
def test_blocks_of_the_same_code_are_counted_apart(capsys):
    """Two steps' reshapes of the returned sequence compile to the same code (a 256-byte move between the
    same places). GCC folded such blocks into one function, so `verify --instructions` saw block 10
    called after block 15 and stopped. Each block keeps its own function (no_icf): every block's count
    is given, and they sum to the whole call's."""
    import json
    from support.cli import run_cli
    code, out, err = run_cli(capsys, "verify", str(SEQUENCE / "convlstm_cell_seq_int8.tflite"), "--instructions",
                             "--json")
    assert code == 0, err
    doc = json.loads(out)
    counts = [b["instructions"] for b in doc["block_instructions"]]
    assert doc["pass"] and len(counts) == 28 and sum(counts) == doc["instructions"]
    assert counts[10] == counts[16] > 0  # the two folded blocks, each counted


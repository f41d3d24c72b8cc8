"""Models with several inputs (`fixtures/make_multi_input_models.py`, and an ONNX model from
`fixtures/make_extra_onnx.py`): the numpy executor bit-exact with LiteRT and, under
`--numerics tflm`, with TFLite Micro; fused plans (the inputs in the caller's buffers, or in the
arena with --count-io) equal to the unfused run, with the measured arena equal to the prediction;
the generated C bit-exact on the host; and the command line's .npz inputs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from support import cache
from support.c_build import check_c
from support.cli import run_cli
from support.fused_cases import random_plan
from support.litert_oracle import run_jobs
from support.micro_oracle import run_jobs as run_micro_jobs
from support.paths import FIXTURES
from msfcnn import pipeline
from msfcnn.cost import exact
from msfcnn.executor import run_unfused
from msfcnn.frontends import load_model
from msfcnn.fusion import solvers
from msfcnn.ir import with_numerics
from msfcnn.schedule import schedule_plan
from msfcnn.tensors import random_input

MODELS = sorted((FIXTURES / "models").glob("mi_*.tflite"))
SEEDS = range(4)


def test_the_fixtures_have_several_inputs():
    assert len(MODELS) == 4
    for path in MODELS:
        assert len(cache.model(str(path)).input_tensors) == 2


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_numpy_matches_litert_and_tflite_micro(path):
    graph = cache.model(str(path))
    inputs = [random_input(graph, seed) for seed in SEEDS]
    if graph.float_input:  # float32 model inputs: the executor quantises them as the interpreter does
        inputs = [[np.random.default_rng(seed + 10 * k).standard_normal(x.shape).astype(np.float32)
                   for k, x in enumerate(xs)] for seed, xs in zip(SEEDS, inputs)]
    litert = run_jobs([(path, inputs)])[0].outputs
    micro = run_micro_jobs([(path, inputs)], "tflm")[0]
    tflm_graph = with_numerics(load_model(str(path)), "tflm")
    for xs, want, want_micro in zip(inputs, litert, micro):
        np.testing.assert_array_equal(run_unfused(graph, xs), np.asarray(want))
        np.testing.assert_array_equal(run_unfused(tflm_graph, xs), np.asarray(want_micro))


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
@pytest.mark.parametrize("count_io", [False, True], ids=["caller-io", "count-io"])
def test_fused_plans_run_in_the_predicted_arena(path, count_io):
    graph = cache.model(str(path))
    dag = exact.build_dag(graph, count_io=True) if count_io else cache.dag(graph)
    plans = [solvers.min_peak_ram(dag).blocks] + [random_plan(dag, seed) for seed in SEEDS]
    for seed, blocks in enumerate(plans):
        x = random_input(graph, seed)
        schedule = schedule_plan(graph, list(blocks), count_io)
        fused = pipeline.run(schedule, x)
        np.testing.assert_array_equal(fused.output, run_unfused(graph, x))
        assert fused.measured_peak_ram_bytes <= fused.predicted_peak_ram_bytes == schedule.arena_bytes
        if count_io:  # both inputs sit in the arena before the first block
            assert schedule.input_offset is not None and len(schedule.extra_input_offsets) == 1


def test_an_input_read_late_is_free_unless_counted():
    """mi_late_concat reads its second input (6x5x2 = 60 B) only at the concatenation: the caller's
    buffer costs the arena nothing, and --count-io keeps it there from the start, so every plan's
    peak grows by at least its size."""
    graph = cache.model(str(FIXTURES / "models" / "mi_late_concat.tflite"))
    least = solvers.min_peak_ram(cache.dag(graph)).peak_ram
    counted = solvers.min_peak_ram(exact.build_dag(graph, count_io=True)).peak_ram
    assert counted >= least + graph.nbytes(graph.input_tensors[1])


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_c_is_bit_exact(path):
    graph = cache.model(str(path))
    dag = cache.dag(graph)
    check_c(graph, solvers.min_peak_ram(dag).blocks, seed=1)
    check_c(graph, random_plan(exact.build_dag(graph, count_io=True), 2), seed=2, count_io=True)
    tflm = with_numerics(load_model(str(path)), "tflm")  # TFLite Micro's arithmetic in C too
    check_c(tflm, solvers.min_peak_ram(exact.build_dag(tflm)).blocks, seed=4)


def test_onnx_model_with_two_inputs_matches_onnxruntime():
    import onnxruntime as ort

    path = FIXTURES / "models" / "onnx_two_inputs.onnx"
    graph = cache.model(str(path))
    assert [graph.shape_of(t) for t in graph.input_tensors] == [(10, 8, 3), (10, 8, 2)]
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    xs = random_input(graph, 3)
    want = session.run(None, {"input": xs[0], "input1": xs[1]})[0]
    np.testing.assert_allclose(run_unfused(graph, xs), want, rtol=1e-4, atol=1e-5)
    check_c(graph, solvers.min_peak_ram(cache.dag(graph)).blocks, seed=3)


def test_run_reads_an_npz_of_inputs(tmp_path, capsys):
    path = FIXTURES / "models" / "mi_conditioned.tflite"
    graph = cache.model(str(path))
    xs = random_input(graph, 5)
    np.savez(tmp_path / "x.npz", input0=xs[0], input1=xs[1])
    code, out, err = run_cli(capsys, "-q", "run", str(path), "--input", str(tmp_path / "x.npz"),
                             "-o", str(tmp_path / "y.npy"), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["io_bytes"]["input"] == xs[0].nbytes + xs[1].nbytes
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), run_jobs([(path, [xs])])[0].outputs[0])


@pytest.mark.parametrize("make, message", [
    (lambda folder, xs: np.save(folder / "x.npy", xs[0]), "has 2 inputs: give an .npz file"),
    (lambda folder, xs: np.savez(folder / "x.npz", input0=xs[0]), "expected arrays input0, input1, found input0"),
    (lambda folder, xs: np.savez(folder / "x.npz", input0=xs[0], input1=xs[0]), "x.npz:input1: input shape"),
])
def test_bad_inputs_get_one_line(tmp_path, capsys, make, message):
    path = FIXTURES / "models" / "mi_conditioned.tflite"
    make(tmp_path, random_input(cache.model(str(path)), 0))
    name = next(tmp_path.iterdir()).name
    code, _, err = run_cli(capsys, "-q", "run", str(path), "--input", str(tmp_path / name))
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1, err

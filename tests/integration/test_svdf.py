"""SVDF and state across invocations, on the fixtures of `fixtures/make_svdf_models.py`:

- 50 consecutive frames through each model, its state kept, equal bit for bit to LiteRT's
  interpreter (its variables kept between invoke() calls) and to TFLite Micro's, unfused and
  under the least-RAM plan, and the generated C on the host (and on cortex-m4 under QEMU);
- the int16 input QUANTIZEd to int8 inside the model (mixed int16 / int8 activations), and the head
  of TFLite Micro's keyword models: a SOFTMAX from int8 to int16 and a QUANTIZE from int16 to int32
  (`svdf_keyword`; the runtimes round its SOFTMAX differently, and msfcnn follows each);
- the persistent region: counted in the plan's RAM, the fused executor's measured arena and the
  C's arena, at the arena's start; a reset (a fresh run) starts the sequence again.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from support.c_build import kernel_library
from support.cli import run_cli
from support.litert_oracle import run_jobs as litert_jobs
from support.micro_oracle import run_jobs as micro_jobs
from support.paths import FIXTURES
from support.toolchains import require_target
from msfcnn import pipeline
from msfcnn.errors import UserError
from msfcnn.executor import initial_states, run_sequence, run_unfused
from msfcnn.frontends.tflite import load_tflite

MODELS = FIXTURES / "sequence"
BOTH = ("svdf_rank1", "svdf_rank2", "svdf_int8", "svdf_softmax_int16", "svdf_keyword")  # LiteRT and TFLite Micro run these
TFLM_ONLY = ("svdf_int8_state",)  # an int8 state: TFLite Micro only
FRAMES = 50


def frames(graph, n: int = FRAMES, seed: int = 1) -> list[np.ndarray]:
    """n random input frames of the model's input shape: int16 within +-2000 (the range the
    fixtures' scales are picked for), int8 anywhere."""
    rng = np.random.default_rng(seed)
    if graph.dtype == "int16":
        return [rng.integers(-2000, 2001, graph.input_shape).astype(np.int16) for _ in range(n)]
    return [rng.integers(-128, 128, graph.input_shape).astype(np.int8) for _ in range(n)]


_ORACLE: dict = {}


def oracle(name: str, numerics: str) -> list[np.ndarray]:
    """The interpreter's outputs for the 50 frames, run in order by one interpreter (its state kept).
    The first call under a numerics runs every model that numerics runs, in one process (one
    interpreter each): most of the file's tests ask for them, and a process costs some 0.2 s of CPU."""
    if (name, numerics) not in _ORACLE:
        names = BOTH if numerics == "litert" else BOTH + TFLM_ONLY
        jobs = [(MODELS / f"{each}.tflite", frames(load_tflite(MODELS / f"{each}.tflite", numerics=None))) for each in names]
        if numerics == "litert":
            outputs = [run.outputs for run in litert_jobs(jobs)]
        else:
            outputs = micro_jobs(jobs, "tflm", arena_size=64 * 1024)
        _ORACLE.update({(each, numerics): out for each, out in zip(names, outputs, strict=True)})
    return _ORACLE[(name, numerics)]


def cases():
    return [(name, n) for name in BOTH for n in ("litert", "tflm")] + [(name, "tflm") for name in TFLM_ONLY]


@pytest.mark.parametrize("name,numerics", cases(), ids=lambda v: v)
def test_fifty_frames_unfused_and_fused_equal_the_interpreter(name, numerics):
    graph = pipeline.load(str(MODELS / f"{name}.tflite"), numerics=numerics)
    want = [np.asarray(y).reshape(-1) for y in oracle(name, numerics)]
    xs = frames(graph)
    unfused = [y[0].reshape(-1) for y in run_sequence(graph, xs)]
    assert all(np.array_equal(a, b) for a, b in zip(unfused, want)), f"{name}: unfused"
    assert len({a.tobytes() for a in unfused}) > FRAMES // 2  # the frames differ: the test can fail
    plan = pipeline.solve(pipeline.planner(graph))
    schedule = pipeline.lower(graph, plan)
    runs = pipeline.run_steps(schedule, xs)
    assert all(np.array_equal(r.output.reshape(-1), b) for r, b in zip(runs, want)), f"{name}: fused"
    # the state buffers are in every RAM figure: the plan's, the arena's, the measured one
    assert plan.peak_ram_bytes == schedule.arena_bytes == runs[0].measured_peak_ram_bytes
    assert graph.state_bytes > 0 and plan.peak_ram_bytes >= graph.state_bytes


def test_the_state_matters_and_a_fresh_run_starts_again():
    """A frame's output depends on the frames before it (the same frame gives another output later),
    and a run without states is the first frame of a sequence (the reset state)."""
    graph = pipeline.load(str(MODELS / "svdf_rank1.tflite"))
    xs = frames(graph, 5)
    outputs = [y[0] for y in run_sequence(graph, xs + [xs[0]])]
    assert not np.array_equal(outputs[0], outputs[-1])
    assert np.array_equal(run_unfused(graph, xs[0]), outputs[0])
    states = initial_states(graph)
    assert all(not s.any() for s in states)  # int16 states start at zero
    pipeline.run(pipeline.lower(graph, pipeline.solve(pipeline.planner(graph))), xs[0], states=states)
    assert any(s.any() for s in states)  # the run left its state


def test_the_int16_input_is_quantised_to_int8_inside_the_model():
    graph = pipeline.load(str(MODELS / "svdf_rank2.tflite"))
    assert graph.dtype == "int16" and graph.mixed
    assert [graph.dtype_of(t) for t in range(len(graph))] == ["int8"] * len(graph)
    assert graph.nodes[0].op.describe() == "requantize to int8"
    # the arena holds int16 and int8 buffers: every one at an even offset
    assert graph.alignment == 2 and graph.state_bytes % 4 == 0


def test_an_int8_state_is_refused_under_litert_in_one_line():
    with pytest.raises(UserError, match="LiteRT's int8 SVDF reads its state and time filter as int16"):
        pipeline.load(str(MODELS / "svdf_int8_state.tflite"))


def check_c_over_fifty_frames(name: str, numerics: str, target_name: str) -> None:
    """The generated C on `target_name` runs the 50 frames in order (its harness carries the state
    over) and equals the interpreter; its arena is the plan's RAM, the state buffers in it."""
    target = require_target(target_name)
    graph = pipeline.load(str(MODELS / f"{name}.tflite"), numerics=numerics)
    plan = pipeline.solve(pipeline.planner(graph))
    schedule = pipeline.lower(graph, plan)
    library = kernel_library(graph, schedule, plan, target)  # the session's kernels, built once
    check = pipeline.verify(graph, plan, schedule, None, target, steps=frames(graph), kernel_lib=library)
    want = np.concatenate([np.asarray(y).reshape(-1) for y in oracle(name, numerics)])
    assert check.passed and np.array_equal(check.output, want)
    assert check.arena_bytes == schedule.arena_bytes == plan.peak_ram_bytes


@pytest.mark.slow  # a C build each (and the session's kernel library, the first time)
@pytest.mark.parametrize("name,numerics", [("svdf_rank2", "litert"), ("svdf_int8_state", "tflm"),
                                           ("svdf_keyword", "litert"), ("svdf_keyword", "tflm")])
def test_the_c_on_the_host_equals_the_interpreter_over_fifty_frames(name, numerics):
    check_c_over_fifty_frames(name, numerics, "host")


@pytest.mark.qemu
@pytest.mark.parametrize("name,numerics", [("svdf_rank1", "tflm"), ("svdf_rank2", "litert"), ("svdf_keyword", "tflm")])
def test_the_c_on_cortex_m4_equals_the_interpreter_over_fifty_frames(name, numerics):
    check_c_over_fifty_frames(name, numerics, "cortex-m4")


def test_run_takes_a_sequence_and_writes_every_step(tmp_path, capsys):
    """`msfcnn run` on a stateful model: a .npy of frames (steps first, the file's declared shape
    per step) runs in order and writes the interpreter's outputs, steps first; an .npz of steps
    is the same sequence; a shape that is neither one input nor a sequence is one line, exit 2."""
    path = MODELS / "svdf_rank1.tflite"
    graph = pipeline.load(str(path))
    xs = frames(graph)
    np.save(tmp_path / "frames.npy", np.stack([x.reshape(1, -1) for x in xs]))  # [50, 1, 32]
    code, out, _ = run_cli(capsys, "run", str(path), "--input", str(tmp_path / "frames.npy"),
                           "-o", str(tmp_path / "y.npy"), "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["steps"] == FRAMES and doc["plan"]["state_bytes"] == graph.state_bytes
    assert doc["measured_peak_ram_bytes"] == doc["predicted_peak_ram_bytes"] == doc["plan"]["peak_ram_bytes"]
    want = np.stack([np.asarray(y) for y in oracle("svdf_rank1", "litert")])
    assert np.array_equal(np.load(tmp_path / "y.npy"), want)
    np.savez(tmp_path / "frames.npz", *[x.reshape(1, -1) for x in xs[:3]])
    code, out, _ = run_cli(capsys, "run", str(path), "--input", str(tmp_path / "frames.npz"), "-o", str(tmp_path / "z.npy"))
    assert code == 0 and "3 steps in order" in out
    assert np.array_equal(np.load(tmp_path / "z.npy"), want[:3])
    np.save(tmp_path / "bad.npy", np.zeros((5, 7), np.int16))
    code, _, err = run_cli(capsys, "run", str(path), "--input", str(tmp_path / "bad.npy"))
    assert code == 2 and err.count("\n") == 1 and "neither one input" in err


def test_the_keyword_head_widens_to_int16_and_int32():
    """The SOFTMAX of int8 writes int16 and the QUANTIZE after it int32, the model's output: the
    arena holds int16, int8 and int32 buffers, each at a multiple of 4."""
    graph = pipeline.load(str(MODELS / "svdf_keyword.tflite"))
    assert [node.op.describe() for node in graph.nodes][-2:] == ["softmax to int16", "requantize to int32"]
    assert [graph.dtype_of(t) for t in range(-1, len(graph))] == ["int16"] + ["int8"] * 5 + ["int16", "int32"]
    assert graph.alignment == 4 and graph.output_quant.zero_point == 0
    # the two runtimes' outputs differ (their SOFTMAX rounds apart): each numerics follows its own
    assert not all(np.array_equal(np.asarray(a).reshape(-1), np.asarray(b).reshape(-1))
                   for a, b in zip(oracle("svdf_keyword", "litert"), oracle("svdf_keyword", "tflm")))


def _keyword_edited(edit) -> bytes:
    """svdf_keyword with `edit(sub, schema)` applied to its subgraph."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as schema

    model = schema.ModelT.InitFromPackedBuf((MODELS / "svdf_keyword.tflite").read_bytes(), 0)
    edit(model.subgraphs[0], schema)
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def test_other_widenings_are_refused_in_one_line():
    """A SOFTMAX to int16 of another quantisation than TFLite's, and an int16 tensor elsewhere after
    the input's QUANTIZE to int8: one line each."""
    from msfcnn.frontends.tflite import graph_from_tflite

    def softmax_zero_point_0(sub, schema):
        sub.tensors[sub.operators[-2].outputs[0]].quantization.zeroPoint = [0]

    def int16_svdf_output(sub, schema):
        sub.tensors[sub.operators[1].outputs[0]].type = schema.TensorType.INT16

    with pytest.raises(UserError, match="an int8 -> int16 SOFTMAX must have the output scale 1/65536 and zero point "
                                        "-32768 .as TFLite requires., not 1.52588e-05 and 0"):
        graph_from_tflite(_keyword_edited(softmax_zero_point_0))
    with pytest.raises(UserError, match=r"tensor \d+ is int16 after the model's int16 input was quantised to int8: "
                                        "only int8 activations may follow"):
        graph_from_tflite(_keyword_edited(int16_svdf_output))


@pytest.mark.slow  # the CLI builds every kernel
def test_verify_runs_a_sequence_in_c_and_counts_only_one_call(tmp_path, capsys):
    path = str(MODELS / "svdf_int8.tflite")
    np.save(tmp_path / "frames.npy", np.stack(frames(pipeline.load(path), 6)))
    code, out, _ = run_cli(capsys, "verify", path, "--input", str(tmp_path / "frames.npy"), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["pass"] and doc["arena_bytes"] == doc["predicted_peak_ram_bytes"] == 80
    code, _, err = run_cli(capsys, "verify", path, "--input", str(tmp_path / "frames.npy"), "--instructions")
    assert code == 2 and "counting instructions measures one call of the network" in err

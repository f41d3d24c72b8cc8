"""Detection-style models (issue 14, `fixtures/make_detection_models.py`): RESIZE_NEAREST_NEIGHBOR
under each supported flag combination, and a three-output YOLO / MCUNet-detection-like network.
The numpy executor, unfused and under fused plans, bit-exact with the TFLite interpreter on every
output; the generated C on the host bit-exact with numpy, its arena the predicted one."""

from __future__ import annotations

import json

import numpy as np
import pytest

from support import cache
from support.c_build import check_c
from support.cli import run_cli as cli
from support.fused_cases import random_plan
from support.litert_oracle import run_jobs
from support.micro_oracle import run_jobs as micro_jobs
from support.paths import FIXTURES
from msfcnn import pipeline
from msfcnn.executor import run_unfused, run_unfused_outputs
from msfcnn.fused_executor import run_fused
from msfcnn.fusion import solvers
from msfcnn.plan import Plan
from msfcnn.schedule import schedule_plan
from msfcnn.ops.resize_nearest import ResizeNearest
from msfcnn.tensors import random_input

RESIZE = [FIXTURES / "models" / f"det_resize_{flags}.tflite" for flags in ("x2", "half_pixel", "align_corners")]
SEEDS = range(4)


@pytest.mark.parametrize("path", RESIZE, ids=lambda p: p.stem)
def test_resize_matches_the_interpreter(path):
    graph = cache.model(str(path))
    assert any(isinstance(node.op, ResizeNearest) for node in graph.nodes)
    inputs = [random_input(graph, seed) for seed in SEEDS]
    expected = run_jobs([(path, inputs)])[0].outputs
    for x, want in zip(inputs, expected):
        np.testing.assert_array_equal(run_unfused(graph, x).reshape(-1), np.asarray(want).reshape(-1))
    dag = cache.dag(graph)
    check_c(graph, solvers.min_peak_ram(dag).blocks, seed=SEEDS[0])
    check_c(graph, random_plan(dag, 1), seed=1)


SWEEP = FIXTURES / "models" / "det_resize_sweep.tflite"


@pytest.mark.parametrize("oracle", ["litert", "tflm"])
def test_resize_index_rule_over_many_ratios(oracle):
    """A 7x11 map resized to every (k, 25 - k), k = 1..24, under each flag combination (72 outputs
    of one model): every output equal to LiteRT's (its optimized resolver) and TFLite Micro's; the
    inputs are distinct values, so each output value names the pixel it was copied from."""
    graph = pipeline.load(str(SWEEP), numerics=oracle)
    assert len(graph.output_tensors) == 72
    ramp = np.arange(7 * 11 * 2).reshape(1, 7, 11, 2)
    inputs = [(ramp % 256 - 128).astype(np.int8), random_input(graph, 0)]
    if oracle == "litert":
        expected = run_jobs([(SWEEP, inputs)])[0].all_outputs
    else:
        expected = micro_jobs([(SWEEP, inputs)], "tflm", all_outputs=True)[0]
    for x, want in zip(inputs, expected):
        for got, ref in zip(run_unfused_outputs(graph, x), want, strict=True):
            np.testing.assert_array_equal(got, ref)


def test_resize_sweep_c_is_bit_exact_on_all_72_outputs():
    graph = cache.model(str(SWEEP))
    check_c(graph, solvers.min_peak_ram(cache.dag(graph)).blocks)


def test_resize_flags_are_read():
    """The three fixtures import with the flags they were written with (a flag read wrong would
    still often give the same indices on x2)."""
    flags = {p.stem: next((n.op.align_corners, n.op.half_pixel_centers) for n in cache.model(str(p)).nodes
                          if isinstance(n.op, ResizeNearest)) for p in RESIZE}
    assert flags == {"det_resize_x2": (False, False), "det_resize_half_pixel": (False, True),
                     "det_resize_align_corners": (True, False)}


def test_resize_with_both_flags_is_refused():
    from msfcnn.errors import UserError

    with pytest.raises(UserError, match="both align_corners and half_pixel_centers"):
        ResizeNearest((4, 4), (8, 8), align_corners=True, half_pixel_centers=True)


# ---- several outputs ---------------------------------------------------------------------------

DETECTOR = FIXTURES / "models" / "det_yolo3.tflite"


def test_detector_imports_its_three_outputs_in_the_model_order():
    """Fine to coarse, as the file lists them: the last node (the fine head) is output 0, the
    others stay arena tensors that outlive every op."""
    graph = cache.model(str(DETECTOR))
    assert [graph.shape_of(t) for t in graph.output_tensors] == [(8, 8, 6), (4, 4, 6), (2, 2, 6)]
    assert graph.output_tensors[0] == graph.output == len(graph) - 1
    assert sum(isinstance(n.op, ResizeNearest) for n in graph.nodes) == 2
    assert sum(n.op.kind == "concat" for n in graph.nodes) == 2
    last_use = graph.last_use()
    assert all(last_use[t] == len(graph) for t in graph.output_tensors)


@pytest.mark.parametrize("numerics", ["litert", pytest.param("tflm", marks=pytest.mark.slow)])  # 3 s of CPU each
def test_detector_outputs_match_the_oracle(numerics):
    """Every output of the unfused and of fused plans (least RAM, and random ones), bit-exact with
    LiteRT (`litert`) or TFLite Micro (`tflm`); the arena the fused runs touch is the predicted one."""
    graph = pipeline.load(str(DETECTOR), numerics=numerics)
    inputs = [random_input(graph, seed) for seed in SEEDS]
    if numerics == "litert":
        expected = run_jobs([(DETECTOR, inputs)])[0].all_outputs
    else:
        expected = micro_jobs([(DETECTOR, inputs)], "tflm", all_outputs=True)[0]
    dag = cache.dag(graph)  # the same for both numerics: plans depend on shapes alone
    plans = [solvers.min_peak_ram(dag).blocks] + [random_plan(dag, seed) for seed in (1, 2, 3)]
    for x, want in zip(inputs, expected):
        assert len(want) == 3
        for got, ref in zip(run_unfused_outputs(graph, x), want, strict=True):
            np.testing.assert_array_equal(got, ref)
        for blocks in plans:
            run = run_fused(schedule_plan(graph, blocks), x)
            for got, ref in zip(run.outputs, want, strict=True):
                np.testing.assert_array_equal(got, ref)
            assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes


def test_detector_fused_plans_keep_the_heads_until_the_end():
    """A head made early (the coarse one, op 6) is an arena tensor from its block to the end: every
    later block's RAM counts it, and a plan cannot fuse across it into the next op."""
    graph = cache.model(str(DETECTOR))
    coarse = graph.output_tensors[2]
    schedule = schedule_plan(graph, solvers.min_peak_ram(cache.dag(graph)).blocks)
    made = next(k for k, b in enumerate(schedule.blocks) if b.last == coarse)
    assert all(coarse in offsets for offsets in schedule.tensor_offsets[made:])
    assert all(ram >= graph.nbytes(coarse) for ram in schedule.block_ram[made + 1:])


@pytest.mark.parametrize("count_io", [False, True], ids=["caller_io", "count_io"])
def test_detector_c_on_the_host_is_bit_exact_on_every_output(count_io):
    """`verify` compares every output (the harness writes them one after the other); the arena in
    the object file is the predicted one."""
    graph = cache.model(str(DETECTOR))
    dag = cache.dag(graph)
    check_c(graph, solvers.min_peak_ram(dag).blocks, seed=0, count_io=count_io)
    check_c(graph, random_plan(dag, 5), seed=5, count_io=count_io)


def test_run_writes_every_output_to_an_npz(tmp_path, capsys):
    """`run -o Y.npz` saves output0, output1, ... (the model's order), equal to the unfused
    executor's; `-o Y.npy` on a model of several outputs is a one-line error (exit 2)."""
    graph = cache.model(str(DETECTOR))
    code, out, _ = cli(capsys, "run", str(DETECTOR), "--seed", "3", "-o", str(tmp_path / "y.npz"), "--json")
    assert code == 0
    result = json.loads(out)
    assert [o["shape"] for o in result["outputs"]] == [[1, 8, 8, 6], [1, 4, 4, 6], [1, 2, 2, 6]]
    assert result["measured_peak_ram_bytes"] == result["predicted_peak_ram_bytes"]
    with np.load(tmp_path / "y.npz") as saved:
        assert saved.files == ["output0", "output1", "output2"]
        for k, want in enumerate(run_unfused_outputs(graph, random_input(graph, 3))):
            np.testing.assert_array_equal(saved[f"output{k}"], want)
    code, _, err = cli(capsys, "run", str(DETECTOR), "-o", str(tmp_path / "y.npy"))
    assert code == 2 and "has 3 outputs: give --output a .npz file" in err and err.count("\n") == 1
    assert not (tmp_path / "y.npy").exists()


# ---- ONNX Resize (float32) -----------------------------------------------------------------------

UPSAMPLE = FIXTURES / "models" / "det_onnx_upsample.onnx"


def test_onnx_nearest_upsampling_matches_onnxruntime_and_the_c():
    """PyTorch-style Resize (nearest, asymmetric, floor, x2) imports as the resize op: the numpy
    executor within float32 rounding of onnxruntime (a copy is exact; the convs are summed in
    another order), the float32 C kernel within verify's tolerance of numpy."""
    import onnxruntime as ort

    graph = cache.model(str(UPSAMPLE))
    assert [n.op.kind for n in graph.nodes] == ["conv2d", "resize_nearest", "activation", "conv2d"]
    session = ort.InferenceSession(str(UPSAMPLE), providers=["CPUExecutionProvider"])
    for seed in SEEDS:
        x = random_input(graph, seed)
        want = session.run(None, {"input": x})[0]
        got = run_unfused(graph, x)
        assert got.shape == want.shape == (1, 4, 10, 8)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    dag = cache.dag(graph)
    check_c(graph, solvers.min_peak_ram(dag).blocks)
    check_c(graph, random_plan(dag, 2), seed=2)


@pytest.mark.parametrize("attrs, message", [
    ({"coordinate_transformation_mode": "half_pixel", "nearest_mode": "floor"}, "only nearest, asymmetric, floor"),
    ({"mode": "cubic"}, "only nearest, asymmetric, floor"),
    ({"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize"}, "is not supported (supported: asymmetric"),
])
def test_onnx_resize_modes_other_than_pytorch_nearest_are_refused(tmp_path, capsys, attrs, message):
    import onnx

    model = onnx.load(str(UPSAMPLE))
    resize = next(n for n in model.graph.node if n.op_type == "Resize")
    for attr in list(resize.attribute):
        if attr.name in attrs:
            resize.attribute.remove(attr)
    resize.attribute.extend(onnx.helper.make_attribute(k, v) for k, v in attrs.items())
    onnx.save(model, tmp_path / "edited.onnx")
    code, _, err = cli(capsys, "plan", str(tmp_path / "edited.onnx"))
    assert code == 2 and message in err and err.count("\n") == 1


def test_onnx_two_heads_match_onnxruntime_and_the_c():
    """An ONNX model with two outputs (NCHW): both within float32 rounding of onnxruntime, in the
    file's order; the C within verify's tolerance on both."""
    import onnxruntime as ort

    path = FIXTURES / "models" / "det_onnx_two_heads.onnx"
    graph = cache.model(str(path))
    assert graph.output_tensors[1] == graph.output and len(graph.output_tensors) == 2
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for seed in SEEDS:
        x = random_input(graph, seed)
        want = session.run(None, {"input": x})
        got = run_unfused_outputs(graph, x)
        assert [g.shape for g in got] == [w.shape for w in want] == [(1, 5, 5, 4), (1, 3, 10, 8)]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    dag = cache.dag(graph)
    check_c(graph, solvers.min_peak_ram(dag).blocks)
    check_c(graph, random_plan(dag, 3), seed=3, count_io=True)


APP = r"""
#include <stdio.h>
#include <string.h>

#include "model.h"

/* Every output through msfcnn_invoke_outputs, and again through msfcnn_invoke and
   msfcnn_arena_output: the same bytes. Writes the first way's outputs one after the other. */
static msfcnn_value input[MSFCNN_INPUT_SIZE], main_out[MSFCNN_OUTPUT_SIZE];
static msfcnn_value out0[MSFCNN_OUTPUT0_SIZE], out1[MSFCNN_OUTPUT1_SIZE], out2[MSFCNN_OUTPUT2_SIZE];

int main(int argc, char **argv)
{
    msfcnn_value *const outs[MSFCNN_OUTPUTS] = { out0, out1, out2 };
    const size_t bytes[MSFCNN_OUTPUTS] = { MSFCNN_OUTPUT0_BYTES, MSFCNN_OUTPUT1_BYTES, MSFCNN_OUTPUT2_BYTES };
    FILE *f = argc == 3 ? fopen(argv[1], "rb") : NULL;
    int k;
    if (MSFCNN_OUTPUTS != 3 || MSFCNN_OUTPUT_SIZE != MSFCNN_OUTPUT0_SIZE || f == NULL
        || fread(input, sizeof input, 1, f) != 1) {
        return 2;
    }
    fclose(f);
    if (msfcnn_invoke_outputs(input, outs) != MSFCNN_OK || msfcnn_invoke(input, main_out) != MSFCNN_OK) {
        return 3;
    }
    if (memcmp(main_out, outs[MSFCNN_OUTPUT_INDEX], bytes[MSFCNN_OUTPUT_INDEX]) != 0) {
        return 4;
    }
    for (k = -1; k <= MSFCNN_OUTPUTS; ++k) {
        const msfcnn_value *at = msfcnn_arena_output(k);
        int in_arena = k >= 0 && k < MSFCNN_OUTPUTS && k != MSFCNN_OUTPUT_INDEX;
        if ((at != NULL) != in_arena || (in_arena && memcmp(at, outs[k], bytes[k]) != 0)) {
            return 5;
        }
    }
    f = fopen(argv[2], "wb");
    for (k = 0; k < MSFCNN_OUTPUTS; ++k) {
        if (f == NULL || fwrite(outs[k], bytes[k], 1, f) != 1) {
            return 6;
        }
    }
    return fclose(f) == 0 ? 0 : 6;
}
"""


def test_the_several_output_c_api_in_a_program(tmp_path):
    """A program of its own (not the harness) uses model.h's several-output API: both ways give
    the same bytes, equal to the numpy executor's outputs; msfcnn_arena_output is NULL exactly
    for the output in the caller's buffer and out of range."""
    import shlex
    import subprocess

    from msfcnn.targets import TARGETS

    graph = cache.model(str(DETECTOR))
    blocks = random_plan(cache.dag(graph), 4)
    schedule = schedule_plan(graph, blocks)
    plan = Plan(graph.name, "exact", sum(graph.macs(i) for i in range(len(graph))), tuple(blocks))
    folder = tmp_path / "det"
    pipeline.write_c(folder, graph, schedule, plan)
    (folder / "app.c").write_text(APP)
    sources = [folder / "app.c", folder / "model.c", folder / "weights.c", *sorted((folder / "kernels").glob("*.c"))]
    cflags = shlex.split(TARGETS["host"].cflags)
    subprocess.run(["cc", *cflags, *map(str, sources), "-o", str(folder / "app"), "-lm"], check=True)
    x = random_input(graph, 4)
    (tmp_path / "x.bin").write_bytes(x.tobytes())
    subprocess.run([str(folder / "app"), str(tmp_path / "x.bin"), str(tmp_path / "y.bin")], check=True)
    assert (tmp_path / "y.bin").read_bytes() == run_fused(schedule, x, raw=True).raw_bytes

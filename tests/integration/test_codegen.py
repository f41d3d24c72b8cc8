"""Generated C99 against the numpy executor: bit-exact for int8, within float rounding for
float32, with a static arena of exactly the predicted size; also under ASan/UBSan."""

import json
import re
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import cache
from support.c_build import check_c
from support.paths import FIXTURE_MODELS, ROOT
from support.fused_cases import networks, op_networks, random_plan
from support.marks import SLOW_FIXTURES, slow_fixtures
from support.toolchains import require_target
from msfcnn import pipeline
from msfcnn.cli import main
from msfcnn.cost import exact
from msfcnn.errors import UserError
from msfcnn.frontends import builtin_names
from msfcnn.frontends.layer_list import graph_from_layer_list
from msfcnn.frontends.random_weights import with_random_weights
from msfcnn.plan import Plan
from msfcnn.schedule import schedule_plan
from msfcnn.fusion import solvers
from msfcnn.tensors import random_input


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(builtin_names()))
def test_builtin_models(name):
    graph = cache.model(name, weights=True)
    dag = cache.dag(graph)
    check_c(graph, solvers.min_peak_ram(dag).blocks)
    check_c(graph, random_plan(dag, 7), seed=7)


# Each fixture's whole-network C costs about 0.35 s of CPU (generate, compile, run). The fast tier
# builds these; between them they call every kernel function and use every element type, loop
# scheme and input count that any fixture's C (under the plan below) does, which
# test_the_fast_fixtures_cover_what_every_fixture_calls checks. The others run in the slow tier;
# every fixture's nodes still run through their C kernels in the fast tier (test_c_kernels.py).
FAST_C_FIXTURES = {
    "bilinear_i16_chain.tflite", "bilinear_x2.tflite", "bin_conv1d.tflite", "bin_conv1d_gap.tflite",
    "bin_dw_conv1d.tflite", "bin_min_max.tflite", "bin_sub_ties.tflite", "depth_to_space_float.tflite",
    "depth_to_space_int8.tflite", "det_onnx_upsample.onnx", "det_resize_x2.tflite",
    "extra_dense_keepdims.tflite", "extra_relu_two_readers.tflite", "fi_int8_island.tflite",
    "i16_chain.tflite", "i16_prelu.tflite", "i16_softmax.tflite", "mi_conditioned.tflite",
    "mi_late_concat.tflite", "mi_float_io.tflite", "onnx_activations.onnx", "onnx_bilinear_asymmetric.onnx",
    "onnx_bn_pool_relu_pad.onnx", "onnx_flatten_mlp.onnx", "onnx_mbv3_tiny.onnx", "onnx_sub_max_min.onnx",
    "onnx_tcn_conv1xk.onnx", "op14_add_mul_const_wide.tflite", "op14_mean_one_axis.tflite", "op14_transpose.tflite",
    "op_dw_k1_s1_same.tflite", "op_pad.tflite", "shuffle_float.tflite", "shuffle_i16.tflite",
    "shuffle_unit.tflite", "space_to_depth_float.tflite", "space_to_depth_int8.tflite", "split_i16.tflite",
    "u8_act_sweep_prelu.tflite", "u8_add_residual.tflite", "u8_fully_connected.tflite",
    "u8_mobilenet_v1.tflite",
}


def fixture_plan(graph):
    return random_plan(cache.dag(graph), 3)


@pytest.mark.parametrize("path", slow_fixtures(FIXTURE_MODELS, fast=FAST_C_FIXTURES), ids=lambda p: p.name)
def test_fixture_models(path):
    graph = cache.model(str(path))
    check_c(graph, fixture_plan(graph), seed=3)


def c_features(path, folder) -> set[str]:
    """What a fixture's generated C exercises: the kernel functions it calls, its element type,
    whether it has a float island, one input or more, and its blocks' loop schemes."""
    graph = cache.model(str(path))
    blocks = fixture_plan(graph)
    schedule = schedule_plan(graph, list(blocks))
    pipeline.write_c(folder, graph, schedule, Plan(graph.name, "exact", 0, tuple(blocks)))
    calls = set(re.findall(r"\b(msf_\w+)\s*\(", (folder / "model.c").read_text()))
    return calls | {f"element {graph.element}", f"mixed {graph.mixed}", f"inputs {min(len(graph.input_tensors), 2)}",
                    *(f"scheme {block.scheme}" for block in schedule.blocks)}


@pytest.mark.slow
def test_the_fast_fixtures_cover_what_every_fixture_calls(tmp_path):
    fast, everything = set(), set()
    for path in FIXTURE_MODELS:
        features = c_features(path, tmp_path / path.name)
        everything |= features
        if path.name in FAST_C_FIXTURES:
            fast |= features
    assert FAST_C_FIXTURES <= {p.name for p in FIXTURE_MODELS} - SLOW_FIXTURES
    assert everything - fast == set(), "add a fixture that has these to FAST_C_FIXTURES"


def random_case(doc, seed):
    try:
        graph = with_random_weights(graph_from_layer_list(doc))
    except UserError:
        return None, None
    return graph, random_plan(exact.build_dag(graph), seed)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(networks(), st.integers(0, 10_000))
def test_random_networks_and_plans(doc, seed):
    graph, plan = random_case(doc, seed)
    if graph is not None:
        check_c(graph, plan, seed=seed)


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_networks(), st.integers(0, 10_000), st.sampled_from(["host", "host-sanitize"]))
def test_random_networks_of_other_operators(doc, seed, target):
    """The other operators' C kernels, fused as the plan says, bit-exact with numpy (and clean
    under ASan / UBSan)."""
    graph, plan = random_case(doc, seed)
    if graph is not None:
        check_c(graph, plan, target=target, seed=seed)


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(networks(), st.integers(0, 10_000))
def test_sanitizers_on_random_networks_and_plans(doc, seed):
    """An arena of exactly the planned size and every buffer access checked by ASan/UBSan."""
    graph, plan = random_case(doc, seed)
    if graph is not None:
        check_c(graph, plan, target="host-sanitize", seed=seed)


@pytest.mark.slow
def test_verify_command_reports_spec_fields(capsys):
    require_target("host")
    code = main(["verify", "mcunet-vww5", "--max-overhead", "1.2", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["bit_exact"] is True and doc["max_abs_diff"] == 0
    assert doc["arena_bytes"] == doc["predicted_peak_ram_bytes"] == doc["plan"]["peak_ram_bytes"]
    assert doc["target"] == "host" and doc["model"] == "mcunet-vww5"


def test_compile_writes_a_self_contained_project(tmp_path, capsys):
    require_target("host")  # compile checks the target's tools
    assert main(["compile", "mcunet-vww-res", "--max-overhead", "1.3", "-o", str(tmp_path / "out")]) == 0
    names = {p.name for p in (tmp_path / "out").iterdir()}
    assert {"model.h", "model.c", "weights.c", "weights.h", "main.c", "Makefile", "kernels"} <= names
    model_c = (tmp_path / "out" / "model.c").read_text()
    assert "malloc" not in model_c and "static int8_t msfcnn_arena[" in model_c
    assert main(["compile", "mcunet-vww5", "--cost-model", "paper", "-o", str(tmp_path / "x")]) == 2
    assert "exact cost model" in capsys.readouterr().err


GOLDEN = ROOT / "tests" / "golden"


def test_golden_snapshot_of_emitted_c():
    """The emitted C for a small residual model is stable; regenerate with
    `python scripts/update_golden.py` after an intended change and review the diff."""
    from update_golden import render
    for name, text in render().items():
        assert (GOLDEN / name).read_text() == text, f"{name} changed: run scripts/update_golden.py and review"


@pytest.mark.slow
def test_compile_writes_only_the_kernel_sources_the_program_links(tmp_path):
    """The project's kernel sources are the ones its program needs: it links with them, and without
    any one of them the link fails (numerics.c aside: written for the caller's conversions). The
    Makefile and CMakeLists.txt list exactly those."""
    require_target("host")
    folder = tmp_path / "tiny"
    (tmp_path / "tiny.json").write_text(json.dumps(TINY_NETWORK))
    assert main(["compile", str(tmp_path / "tiny.json"), "-o", str(folder)]) == 0
    sources = sorted(p.relative_to(folder).as_posix() for p in (folder / "kernels").glob("*.c"))
    assert "kernels/conv2d.c" in sources and "kernels/resize_bilinear.c" not in sources
    makefile = (folder / "Makefile").read_text()
    assert f"KERNELS = {' '.join(sources)}\n" in makefile
    cmake = (folder / "CMakeLists.txt").read_text()
    assert sorted(set(re.findall(r"kernels/\w+\.c", cmake))) == sources
    objects = {}
    for source in ["model.c", "weights.c", "main.c", *sources]:
        objects[source] = tmp_path / (source.replace("/", "_") + ".o")
        subprocess.run(["cc", "-std=c99", "-c", "-o", str(objects[source]), source], cwd=folder, check=True)

    def links(leave_out=None) -> bool:
        linked = [str(o) for source, o in objects.items() if source != leave_out]
        return subprocess.run(["cc", "-o", str(tmp_path / "program"), *linked, "-lm"], capture_output=True).returncode == 0

    assert links()
    assert [s for s in sources if links(s)] in ([], ["kernels/numerics.c"])


def test_the_arena_goes_where_its_macros_say(tmp_path):
    """MSFCNN_ARENA_SECTION and MSFCNN_ARENA_ALIGN, defined when compiling model.c, put the arena
    in that section with that alignment; undefined, it stays in .bss."""
    require_target("host")
    (tmp_path / "tiny.json").write_text(json.dumps(TINY_NETWORK))
    assert main(["compile", str(tmp_path / "tiny.json"), "--prefix", "tiny", "-o", str(tmp_path / "c")]) == 0

    def sections(*defines) -> str:
        subprocess.run(["cc", "-std=c99", "-O2", *defines, "-c", "-o", "model.o", "model.c"], cwd=tmp_path / "c", check=True)
        return subprocess.run(["objdump", "-h", "-t", "model.o"], cwd=tmp_path / "c", capture_output=True, text=True,
                              check=True).stdout

    plain = sections()
    assert re.search(r"\s\.bss\s.*\stiny_arena$", plain, re.M)
    placed = sections("-DTINY_ARENA_SECTION=__attribute__((section(\".fast_ram\")))",
                      "-DTINY_ARENA_ALIGN=__attribute__((aligned(256)))")
    assert re.search(r"\s\.fast_ram\s.*\stiny_arena$", placed, re.M)
    assert re.search(r"\.fast_ram\s+\S+\s+\S+\s+\S+\s+\S+\s+2\*\*8$", placed, re.M)  # aligned to 2**8


# Includes model.c to reach its static arena: runs the network, then again after filling the arena
# with each byte of FILLS, and fails if an output differs from the first.
GARBAGE_DRIVER = r"""
#include <stdio.h>
#include "model.c"
int main(void)
{
    static msfcnn_value in[MSFCNN_INPUT_SIZE];
    static msfcnn_output_value first[MSFCNN_OUTPUT_SIZE], again[MSFCNN_OUTPUT_SIZE];
    static const int fills[] = { 0x5A, 0xFF, 0x81 };
    unsigned s = 1, k;
    for (k = 0; k < MSFCNN_INPUT_SIZE; ++k) {
        s = s * 1103515245u + 12345u;
        in[k] = (msfcnn_value)((int)(s >> 16) % 100 - 50);
    }
    msfcnn_invoke(in, first);
    for (k = 0; k < 3; ++k) {
        memset((void *)msfcnn_arena, fills[k], MSFCNN_ARENA_BYTES);
        msfcnn_invoke(in, again);
        if (memcmp(first, again, sizeof first) != 0) return 1;
    }
    return 0;
}
"""


@pytest.mark.slow
@pytest.mark.parametrize("model, options", [
    ("mcunet-vww-res", []), ("mcunet-vww-res", ["--max-overhead", "1.05"]), ("mcunet-vww-res", ["--count-io"]),
    ("mcunet-vww5", ["--strategy", "heuristic"]), ("resnet8.tflite", ["--max-overhead", "1.2"]),
    ("dscnn.tflite", [])])
def test_no_output_depends_on_the_arena_before_the_call(model, options, tmp_path):
    """So the arena may go in a section that start-up code does not zero (MSFCNN_ARENA_SECTION)."""
    require_target("host")
    source = str(ROOT / "tests" / "fixtures" / "models" / model) if model.endswith(".tflite") else model
    assert main(["compile", source, *options, "-o", str(tmp_path)]) == 0
    (tmp_path / "driver.c").write_text(GARBAGE_DRIVER)
    subprocess.run(["cc", "-std=c99", "-O2", "-o", "driver", "driver.c", "weights.c",
                    *sorted(f"kernels/{p.name}" for p in (tmp_path / "kernels").glob("*.c")), "-lm"],
                   cwd=tmp_path, check=True)
    assert subprocess.run([str(tmp_path / "driver")]).returncode == 0


TINY_NETWORK = {"name": "tiny", "input": [12, 10, 3], "layers": [
    {"op": "conv2d", "filters": 4, "kernel": 3, "stride": 2, "padding": "same", "act": "relu6"},
    {"op": "depthwise_conv2d", "kernel": 3, "stride": 1, "padding": 1, "act": "relu6"},
    {"op": "conv2d", "filters": 4, "kernel": 1, "stride": 1, "padding": 0},
    {"op": "add", "from": 0}, {"op": "global_avg_pool"}, {"op": "dense", "units": 3}, {"op": "softmax"}]}


@pytest.mark.slow
def test_makefile_builds_its_kernels_or_links_a_prebuilt_library(tmp_path):
    """A plain `make` compiles kernels/ itself; `make KERNEL_LIB=...` links an archive from
    `make libmsfcnn_kernels.a` instead (the tests build every network that way), and the two
    programs compute the same output."""
    require_target("host")
    own, shared = tmp_path / "own", tmp_path / "shared"
    for folder in (own, shared):
        assert main(["compile", "mcunet-vww5", "--max-overhead", "1.2", "-o", str(folder)]) == 0

    def make(folder, *arguments):
        done = subprocess.run(["make", "-s", "-C", str(folder), *arguments], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr

    make(own)
    kernels = sorted(p.stem for p in (own / "kernels").glob("*.c"))
    # every object in build/, none beside the sources
    assert kernels and sorted(p.stem for p in (own / "build" / "kernels").glob("*.o")) == kernels
    assert all(own / "build" in p.parents for p in own.rglob("*.o"))
    assert sorted(p.name for p in (own / "build").glob("*.o")) == ["main.o", "model.o", "weights.o"]
    make(own, "libmsfcnn_kernels.a")
    make(shared, f"KERNEL_LIB={own / 'build' / 'libmsfcnn_kernels.a'}")
    assert not list((shared / "build" / "kernels").glob("*.o"))
    graph = cache.model("mcunet-vww5", weights=True)
    (tmp_path / "input.bin").write_bytes(random_input(graph, 0).tobytes())
    outputs = []
    for folder in (own, shared):
        done = subprocess.run([str(folder / "build" / "msfcnn_main"), str(tmp_path / "input.bin"), str(folder / "out.bin")],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        outputs.append((folder / "out.bin").read_bytes())
    assert len(outputs[0]) == graph.elements(graph.output) and outputs[0] == outputs[1]

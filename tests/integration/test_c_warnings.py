"""The generated C builds without a single warning under the flags firmware projects turn on
(-Wconversion, -Wsign-conversion, -Wcast-align, -Wshadow, -Wundef, -Wpedantic), on the host's gcc
and clang and on every cross compiler of the targets (with each target's own flags, so that the
Arm DSP loops and 32-bit int32_t = long are compiled too).

The fast test checks every kernel source and one network's model.c, weights.c and main.c in the
compilers' front ends (where these warnings come from). The slow ones compile at -O2 (the middle
end's warnings too) every kernel, and the C of every built-in model and of a set of fixtures that
together call every kernel a least-RAM plan calls, with and without a prefix and --count-io.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from support import cache
from support.c_kernels_harness import kernel_sources as library_sources
from support.paths import FIXTURES
from support.toolchains import require_target, require_tools
from msfcnn import pipeline
from msfcnn.codegen.emit import generate, kernel_sources
from msfcnn.frontends import builtin_names
from msfcnn.frontends.layer_list import graph_from_layer_list
from msfcnn.frontends.random_weights import with_random_weights
from msfcnn.targets import STRICT

WARNINGS = ["-Wconversion", "-Wsign-conversion", "-Wcast-align", "-Wshadow", "-Wundef", "-Wpedantic"]
HOST = STRICT.split()  # -std=c99 -O2 -Wall -Wextra -Werror -pedantic
# Every target's compiler with its flags; the host's also as clang (which contracts floats unless told).
COMPILERS = ["gcc", "clang", "cortex-m4", "cortex-m7", "fe310", "xtensa-lx106", "cortex-m0plus"]

# Fixtures whose least-RAM plans call, together with the built-in models, every kernel function
# that any model's least-RAM plan calls (a greedy cover of the calls in each one's model.c).
COVER = ["models/onnx_mbv3_tiny.onnx", "models/bin_conv1d_residual.tflite", "models/i16_chain.tflite",
         "models/onnx_sub_max_min.onnx", "models/u8_fully_connected.tflite", "models/shuffle_unit.tflite",
         "models/onnx_flatten_mlp.onnx", "models/bin_conv1d.tflite", "models/bin_min_max.tflite",
         "models/fi_conv_island.tflite", "models/i16_softmax.tflite", "models/mi_conditioned.tflite",
         "models/shuffle_float.tflite", "models/u8_mobilenet_v1.tflite", "models/det_onnx_upsample.onnx",
         "models/onnx_activations.onnx", "models/onnx_bn_pool_relu_pad.onnx", "models/act_prelu.tflite",
         "models/act_relu_0_to_1.tflite", "models/bilinear_align_corners.tflite",
         "models/bilinear_i16_chain.tflite", "models/bin_conv1d_causal.tflite", "models/bin_conv1d_reshape.tflite",
         "models/bin_dw_conv1d.tflite", "models/bin_sub_ties.tflite", "models/depth_to_space_float.tflite",
         "models/depth_to_space_int8.tflite", "models/det_resize_align_corners.tflite",
         "models/i16_leaky_relu.tflite", "models/mi_float_io.tflite", "models/op14_mcunet_head.tflite",
         "models/shuffle_i16.tflite", "models/space_to_depth_float.tflite", "models/space_to_depth_int8.tflite",
         "models/split_i16.tflite", "models/u8_add_residual.tflite", "models/onnx_bilinear_align_corners.onnx",
         "models/det_yolo3.tflite", "models/fi_float_io.tflite", "ops/abs_i16.tflite", "ops/abs_int8.tflite"]

TINY = {"name": "tiny", "input": [12, 10, 3], "layers": [
    {"op": "conv2d", "filters": 4, "kernel": 3, "stride": 2, "padding": "same", "act": "relu6"},
    {"op": "depthwise_conv2d", "kernel": 3, "stride": 1, "padding": 1, "act": "relu6"},
    {"op": "conv2d", "filters": 4, "kernel": 1, "stride": 1, "padding": 0},
    {"op": "add", "from": 0}, {"op": "global_avg_pool"}, {"op": "dense", "units": 3}, {"op": "softmax"}]}


def compiler(name: str) -> list[str]:
    """The command line of compiler `name` with its flags and the warnings above (-Werror)."""
    if name in ("gcc", "clang"):
        require_tools(name, packages=(name,))
        return [name, *HOST, *WARNINGS, *(["-ffp-contract=off"] if name == "clang" else [])]
    target = require_target(name)
    return [target.cc, *shlex.split(target.cflags), *WARNINGS]


def assert_clean(command: list[str], sources, cwd: Path) -> None:
    done = subprocess.run([*command, *map(str, sources)], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0 and "warning" not in done.stderr, done.stderr[:4000]


def write_network(folder: Path, graph, count_io: bool = False, prefix: str = "msfcnn") -> Path:
    """model.c, model.h, weights.[ch] and main.c of the graph's least-RAM plan in `folder`, with the
    whole kernel library beside them."""
    plan = pipeline.solve(pipeline.planner(graph, count_io=count_io))
    files = generate(graph, pipeline.lower(graph, plan), plan, prefix=prefix)
    (folder / "kernels").mkdir(parents=True)
    for name, text in {**{f"kernels/{n}": t for n, t in kernel_sources().items()}, **files}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


NETWORK_SOURCES = ("model.c", "weights.c", "main.c")


# cortex-m7 builds what cortex-m4 does; fe310 and xtensa-lx106 cost about 1 s each: slow tier.
@pytest.mark.parametrize("name", [pytest.param(c, marks=pytest.mark.slow) if c in ("cortex-m7", "fe310", "xtensa-lx106") else c
                                  for c in COMPILERS])
def test_kernels_and_a_network_have_no_warnings_in_the_front_end(name, tmp_path):
    command = compiler(name)
    network = write_network(tmp_path, with_random_weights(graph_from_layer_list(TINY)))
    kernels = sorted((network / "kernels").glob("*.c"))
    assert_clean([*command, "-fsyntax-only"], [*NETWORK_SOURCES, *kernels], network)


@pytest.mark.slow
@pytest.mark.parametrize("name", COMPILERS)
def test_every_kernel_compiles_without_warnings(name, tmp_path):
    command = compiler(name)
    assert_clean([*command, "-c"], library_sources(), tmp_path)


MODELS = [*sorted(builtin_names()), *COVER]


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_a_network_compiles_without_warnings(model, tmp_path):
    graph = cache.model(model if model in builtin_names() else str(FIXTURES / model), weights=True)
    variants = [("least", {})]
    if model in ("mcunet-vww-res", "models/det_yolo3.tflite", "models/mi_conditioned.tflite"):
        variants.append(("io", {"count_io": True, "prefix": "net"}))
    for variant, options in variants:
        network = write_network(tmp_path / variant, graph, **options)
        for name in COMPILERS:
            assert_clean([*compiler(name), "-c"], NETWORK_SOURCES, network)

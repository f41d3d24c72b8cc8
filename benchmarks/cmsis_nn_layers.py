"""msfcnn's generated C against CMSIS-NN on the layers of issue 12's table (target_speed.LAYERS),
instructions counted the same way on the same QEMU target.

CMSIS-NN is not part of msfcnn: pass a checkout of https://github.com/ARM-software/CMSIS-NN
(issue 27 measured commit 99f736a). Its int8 convolution and depthwise sources are compiled
with the target's compiler, architecture flags and -O2 (its own wrappers pick the kernels: DSP,
Armv6-M or Helium forms by the target's macros), and a harness calls the layers in order, as
arm_convolve_wrapper_s8 and arm_depthwise_conv_wrapper_s8 with per-channel quantisation. The
count is that of one call of the harness's run_layers (codegen/icount.py's plugin), which holds
the calls and nothing else. CMSIS-NN's weights and parameters are random of the layer's shapes: its
instructions do not depend on the values beyond the clamps. msfcnn's side is target_speed.py's:
the layer's unfused plan, checked bit-exact against numpy, counted from msfcnn_invoke's entry.

    python benchmarks/cmsis_nn_layers.py --cmsis-nn DIR [--target cortex-m4] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import target_speed  # noqa: E402  (puts src/ on the path)

from msfcnn import executor  # noqa: E402
from msfcnn.codegen import icount  # noqa: E402
from msfcnn.frontends.layer_list import graph_from_layer_list  # noqa: E402
from msfcnn.frontends.random_weights import with_random_weights  # noqa: E402
from msfcnn.fused_executor import run_fused  # noqa: E402
from msfcnn.planner import Planner  # noqa: E402
from msfcnn.schedule import schedule_plan  # noqa: E402
from msfcnn.targets import STRICT, get_target  # noqa: E402
from msfcnn.tensors import random_input  # noqa: E402

SCRATCH_BYTES = 64 * 1024  # CMSIS-NN's context buffer (im2col and the like), checked at run time


def _same_pad(size: int, kernel: int, stride: int) -> tuple[int, int]:
    """(output size, leading padding) of TensorFlow's SAME padding."""
    out = -(-size // stride)
    return out, max((out - 1) * stride + kernel - size, 0) // 2


def _array(ctype: str, name: str, values) -> str:
    return f"static const {ctype} {name}[{len(values)}] = {{{', '.join(str(int(v)) for v in values)}}};\n"


def layer_calls(doc: dict, rng: np.random.Generator) -> tuple[str, str, int]:
    """The C of a layer list's data and its CMSIS-NN calls, and the largest tensor's bytes."""
    h, w, c = doc["input"]
    data, calls, largest = "", "", h * w * c
    for k, layer in enumerate(doc["layers"]):
        kernel, stride = layer["kernel"], layer.get("stride", 1)
        oh, pad_h = _same_pad(h, kernel, stride)
        ow, pad_w = _same_pad(w, kernel, stride)
        depthwise = layer["op"] == "depthwise_conv2d"
        oc = c if depthwise else layer["filters"]
        weights = rng.integers(-127, 128, size=kernel * kernel * oc * (1 if depthwise else c))
        data += _array("int8_t", f"w{k}", weights) + _array("int32_t", f"b{k}", rng.integers(-2000, 2000, size=oc))
        data += _array("int32_t", f"m{k}", rng.integers(1 << 30, (1 << 31) - 1, size=oc))
        data += _array("int32_t", f"s{k}", rng.integers(-10, -6, size=oc))
        act_max = -128 + 6 * 16 if layer.get("act") == "relu6" else 127  # an output scale of 1/16, zero point -128
        kind = "dw_conv" if depthwise else "conv"
        params = (f"{{.input_offset = 128, .output_offset = -128, {'.ch_mult = 1, ' if depthwise else ''}"
                  f".stride = {{{stride}, {stride}}}, .padding = {{{pad_w}, {pad_h}}}, .dilation = {{1, 1}}, "
                  f".activation = {{-128, {act_max}}}}}")
        filter_dims = f"{{1, {kernel}, {kernel}, {oc}}}" if depthwise else f"{{{oc}, {kernel}, {kernel}, {c}}}"
        wrapper = "arm_depthwise_conv_wrapper_s8" if depthwise else "arm_convolve_wrapper_s8"
        src, dst = ("input" if k == 0 else f"buffer{(k - 1) % 2}"), f"buffer{k % 2}"
        calls += f"""    {{
        const cmsis_nn_{kind}_params params = {params};
        const cmsis_nn_per_channel_quant_params quant = {{(int32_t *)m{k}, (int32_t *)s{k}}};
        const cmsis_nn_dims in = {{1, {h}, {w}, {c}}}, filter = {filter_dims}, bias = {{1, 1, 1, {oc}}};
        const cmsis_nn_dims out = {{1, {oh}, {ow}, {oc}}};
        cmsis_nn_context ctx = {{scratch, sizeof scratch}};
        if ({wrapper}_get_buffer_size(&params, &in, &filter, &out) > (int32_t)sizeof scratch) return 1;
        if ({wrapper}(&ctx, &params, &quant, &in, {src}, &filter, w{k}, &bias, b{k}, &out, {dst}) != ARM_CMSIS_NN_SUCCESS)
            return 2;
    }}
"""
        h, w, c = oh, ow, oc
        largest = max(largest, h * w * c)
    return data, calls, largest


def harness(doc: dict, seed: int) -> str:
    rng = np.random.default_rng(seed)
    h, w, c = doc["input"]
    data, calls, largest = layer_calls(doc, rng)
    return f"""#include <stdint.h>
#include <stdio.h>
#include "arm_nnfunctions.h"

{_array("int8_t", "input", rng.integers(-128, 128, size=h * w * c))}{data}
static int8_t buffer0[{largest}], buffer1[{largest}];
static int8_t scratch[{SCRATCH_BYTES}];

/* The layers, and nothing else: the count is one call of this function. */
__attribute__((noinline)) int run_layers(void)
{{
{calls}    return 0;
}}

int main(void)
{{
    int status = run_layers();
    printf("checksum %d %d\\n", status, buffer0[0] + buffer1[0]);
    return status;
}}
"""


def cmsis_sources(root: Path) -> list[Path]:
    """CMSIS-NN's integer convolution and depthwise sources and its support functions (the linker
    keeps what the int8 wrappers call)."""
    folders = [root / "Source" / "ConvolutionFunctions", root / "Source" / "NNSupportFunctions"]
    return sorted(p for folder in folders for p in folder.glob("*.c") if "f16" not in p.name and "f32" not in p.name)


def cmsis_instructions(doc: dict, target, root: Path, folder: Path, seed: int = 0) -> int:
    (folder / "main.c").write_text(harness(doc, seed))
    # The target's architecture and ABI flags with -O2, without msfcnn's strict C99 (CMSIS-NN is C11).
    flags = ["-std=gnu11", "-O2", *shlex.split(target.cflags.replace(STRICT, ""))]
    program = folder / "cmsis_nn.elf"
    built = subprocess.run([target.cc, *flags, f"-I{root / 'Include'}", *target.ldflags.split(), "-o", str(program),
                            "main.c", *map(str, cmsis_sources(root)), "-lm"], cwd=folder, capture_output=True, text=True)
    if built.returncode != 0:
        raise SystemExit(f"CMSIS-NN did not build for {target.name}:\n{built.stderr[-3000:]}")
    return icount.measure(program, target, folder / "none.bin", folder / "none.out", function="run_layers").total


def msfcnn_instructions(name: str, doc: dict, target) -> tuple[int, int]:
    """(instructions, MACs) of the layer list's unfused plan, checked bit-exact (target_speed.measure)."""
    graph = with_random_weights(graph_from_layer_list({"name": name, **doc}))
    plan = Planner(graph, "exact").vanilla()
    x = random_input(graph, 0)
    expected = run_fused(schedule_plan(graph, list(plan.blocks)), x, raw=True).output.reshape(-1)
    result = target_speed.measure(graph, plan, target, expected, executor.to_internal(graph, x[0]))
    return result["instructions"], plan.vanilla_macs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cmsis-nn", required=True, type=Path, help="a checkout of ARM-software/CMSIS-NN")
    parser.add_argument("--target", default="cortex-m4")
    parser.add_argument("--json", type=Path, help="default benchmarks/results/cmsis_nn_layers_TARGET.json")
    args = parser.parse_args()
    target = get_target(args.target)
    rows = []
    print(f"{'layer':42s} {'msfcnn':>12s} {'CMSIS-NN':>12s} {'ratio':>6s}   (instructions; {target.name})")
    with tempfile.TemporaryDirectory(prefix="msfcnn-cmsis-") as scratch:
        for name, (doc, _, _) in target_speed.LAYERS.items():
            ours, macs = msfcnn_instructions(name, doc, target)
            theirs = cmsis_instructions(doc, target, args.cmsis_nn.resolve(), Path(scratch))
            print(f"{name[:42]:42s} {ours:12d} {theirs:12d} {ours / theirs:6.2f}", flush=True)
            rows.append({"layer": name, "macs": macs, "msfcnn_instructions": ours, "cmsis_nn_instructions": theirs,
                         "ratio": round(ours / theirs, 3)})
    out = args.json or Path(__file__).resolve().parent / "results" / f"cmsis_nn_layers_{target.name}.json"
    out.write_text(json.dumps({"target": target.name, "method": "QEMU TCG plugin (codegen/icount.py): msfcnn_invoke "
                               "of the layer's unfused plan against one call of CMSIS-NN's wrappers; gcc -O2 with "
                               "the target's architecture flags", "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()

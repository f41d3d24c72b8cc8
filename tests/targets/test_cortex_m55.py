"""The Cortex-M55 target (QEMU's mps3-an547, Helium): its vector instructions are counted exactly
beside the instructions, and a small network of every kernel with a Helium path (CONV_2D,
DEPTHWISE_CONV_2D, FULLY_CONNECTED, LiteRT's ADD) runs bit-exact."""

import json
import subprocess
from pathlib import Path

import pytest

from msfcnn.cli import main
from msfcnn.codegen import icount
from support.toolchains import require_target, write_runtime

N = 100  # loop trips

# msfcnn_invoke: one set-up instruction, N trips of seven instructions (four of them vector: a load,
# an add, a VPST and the add it predicates; a scalar floating-point move, which is not), a return.
LOOP = """
    .syntax unified
    .thumb
    .text
    .global msfcnn_invoke
    .type msfcnn_invoke, %function
    .thumb_func
msfcnn_invoke:
    movw r3, #{n}
1:  vldrb.u8 q0, [sp]
    vadd.i8 q1, q0, q0
    vpst
    vaddt.i8 q1, q1, q0
    vmov.f32 s8, s9
    subs r3, r3, #1
    bne 1b
    bx lr
    .size msfcnn_invoke, . - msfcnn_invoke
"""

MAIN = """
void msfcnn_invoke(const void *input, void *output);

int main(void)
{
    msfcnn_invoke(0, 0);
    msfcnn_invoke(0, 0);
    return 0;
}
"""


def test_mve_instructions_are_counted_exactly(tmp_path):
    target = require_target("cortex-m55")
    (tmp_path / "main.c").write_text(MAIN)
    (tmp_path / "loop.S").write_text(LOOP.format(n=N))
    program = tmp_path / "loop.elf"
    done = subprocess.run([target.cc, *target.cflags.split(), *target.ldflags.split(), "-o", str(program),
                           "main.c", "loop.S", *write_runtime(tmp_path, target)], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    count = icount.measure(program, target)
    assert (count.total, count.vector) == (2 * (7 * N + 2), 2 * 4 * N)


# Every int8 kernel with a Helium path, with channel counts that leave a tail of a vector.
NETWORK = {"name": "helium", "input": [12, 12, 3], "layers": [
    {"op": "conv2d", "filters": 16, "kernel": 3, "stride": 2, "padding": "same", "act": "relu6"},
    {"op": "conv2d", "filters": 40, "kernel": 1, "act": "relu6"},
    {"op": "depthwise_conv2d", "kernel": 3, "stride": 1, "padding": "same", "act": "relu6"},
    {"op": "conv2d", "filters": 22, "kernel": 1},
    {"op": "conv2d", "filters": 22, "kernel": 1},
    {"op": "add", "from": 3},
    {"op": "conv2d", "filters": 13, "kernel": 1, "act": "relu"},
    {"op": "conv2d", "filters": 7, "kernel": 3, "stride": 1, "padding": "same"},
    {"op": "global_avg_pool"}, {"op": "dense", "units": 10}]}


@pytest.mark.parametrize("numerics", ["litert", "tflm"])  # ruy's rounding, gemmlowp's
def test_a_small_network_is_bit_exact_on_the_cortex_m55(numerics, tmp_path, capsys):
    require_target("cortex-m55")
    model = tmp_path / "helium.json"
    model.write_text(json.dumps(NETWORK))
    assert main(["verify", str(model), "--strategy", "vanilla", "--target", "cortex-m55", "--numerics", numerics,
                 "--instructions", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["bit_exact"] and 0 < doc["mve_instructions"] < doc["instructions"]

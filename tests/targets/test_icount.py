"""Exact instruction counts (codegen/icount.py): a hand-written loop of known length counts exactly
on every QEMU target (and on the host under callgrind), and a generated network counts the same
on every run."""

import json
import platform
import subprocess
from pathlib import Path

import pytest

from msfcnn import executor, pipeline
from msfcnn.codegen import build, icount
from support.toolchains import require_target, require_tools
from msfcnn.tensors import random_input

N = 1000  # loop trips; each loop below is one set-up instruction, N x 2 in the loop, one return

# (.size: callgrind attributes instructions to a function by its symbol's extent.)
LOOPS = {
    "thumb": """
    .syntax unified
    .thumb
    .text
    .global msfcnn_invoke
    .type msfcnn_invoke, %function
    .thumb_func
msfcnn_invoke:
    movw r3, #{n}
1:  subs r3, r3, #1
    bne 1b
    bx lr
    .size msfcnn_invoke, . - msfcnn_invoke
""",
    "riscv": """
    .text
    .globl msfcnn_invoke
    .type msfcnn_invoke, @function
msfcnn_invoke:
    li t0, {n}
1:  addi t0, t0, -1
    bnez t0, 1b
    ret
    .size msfcnn_invoke, . - msfcnn_invoke
""",
    "x86_64": """
    .text
    .globl msfcnn_invoke
    .type msfcnn_invoke, @function
msfcnn_invoke:
    movl ${n}, %ecx
1:  subl $1, %ecx
    jnz 1b
    ret
    .size msfcnn_invoke, . - msfcnn_invoke
""",
}

# Three calls (gcc may unroll them into three call sites): their counts are summed; nothing else is counted.
MAIN = """
void msfcnn_invoke(const void *input, void *output);

int main(void)
{
    int i;
    for (i = 0; i < 3; ++i) {
        msfcnn_invoke(0, 0);
    }
    return 0;
}
"""


def build_loop(tmp_path: Path, target_name: str, isa: str) -> Path:
    target = require_target(target_name)
    (tmp_path / "main.c").write_text(MAIN)
    (tmp_path / "loop.S").write_text(LOOPS[isa].format(n=N))
    program = tmp_path / "loop.elf"
    done = subprocess.run([target.cc, *target.cflags.split(), *target.ldflags.split(), "-o", str(program),
                           str(tmp_path / "main.c"), str(tmp_path / "loop.S")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return program


@pytest.mark.parametrize("target, isa", [("cortex-m4", "thumb"), ("cortex-m7", "thumb"), ("fe310", "riscv")])
def test_a_known_loop_counts_exactly_on_qemu(target, isa, tmp_path):
    program = build_loop(tmp_path, target, isa)
    assert icount.count_instructions(program, require_target(target)) == 3 * (2 * N + 2)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the loop is x86-64 assembly")
def test_a_known_loop_counts_exactly_on_the_host(tmp_path):
    require_tools("valgrind", packages=("valgrind",))
    program = build_loop(tmp_path, "host", "x86_64")
    assert icount.count_instructions(program, require_target("host")) == 3 * (2 * N + 2)


def test_marks_are_the_entry_and_the_return_address(tmp_path):
    program = build_loop(tmp_path, "cortex-m4", "thumb")
    marks = icount.find_marks(program, require_target("cortex-m4"))
    listing = subprocess.run(["arm-none-eabi-nm", str(program)], capture_output=True, text=True).stdout
    symbol = next(int(line.split()[0], 16) for line in listing.splitlines() if line.endswith(" msfcnn_invoke"))
    assert marks.entry == symbol & ~1  # a Thumb symbol's value has bit 0 set; the instruction's address not
    assert len(marks.back) >= 1 and all(a % 2 == 0 and a != marks.entry for a in marks.back)


@pytest.mark.parametrize("target", ["cortex-m4", "fe310"])
def test_a_generated_network_counts_the_same_on_every_run(target, tmp_path):
    graph = pipeline.load("mcunet-vww5", weights=True)
    plan = pipeline.planner(graph).min_ram()
    tgt = require_target(target)
    pipeline.write_c(tmp_path, graph, pipeline.lower(graph, plan), plan, tgt)
    program = build.build(tmp_path, tgt)
    build.run(program, tgt, graph, executor.to_internal(graph, random_input(graph, 0)[0]))
    counts = {icount.count_instructions(program, tgt) for _ in range(3)}
    assert len(counts) == 1 and counts.pop() > plan.vanilla_macs  # at least an instruction per MAC


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m7", "fe310", "host"])
def test_verify_reports_the_same_exact_count_on_every_run(target, capsys):
    from msfcnn.cli import main
    require_target(target)
    if target == "host":
        require_tools("valgrind", packages=("valgrind",))
    counts = []
    for _ in range(2):
        assert main(["verify", "mcunet-vww5", "--target", target, "--instructions", "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["bit_exact"] and doc["target"] == target
        counts.append(doc["instructions"])
    assert counts[0] == counts[1] > doc["plan"]["macs"]  # at least one instruction per MAC

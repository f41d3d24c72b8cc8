"""Exact instruction counts (codegen/icount.py): a hand-written loop of known length counts exactly
on every QEMU target (and on the host under callgrind), two hand-written blocks split it exactly,
and a generated network counts the same on every run, in total and block by block."""

import json
import platform
import subprocess
from pathlib import Path

import pytest

from msfcnn import executor, pipeline
from msfcnn.codegen import build, icount
from msfcnn.frontends.layer_list import graph_from_layer_list
from msfcnn.frontends.random_weights import with_random_weights
from support.c_build import kernel_library
from support.toolchains import require_target, require_tools, write_runtime
from msfcnn.tensors import random_input

N = 1000  # loop trips; each loop below is one set-up instruction, N x 2 in the loop, one return

HEADER = {"thumb": "    .syntax unified\n    .thumb\n    .text\n", "thumb-v6m": "    .syntax unified\n    .thumb\n    .text\n", "riscv": "    .text\n", "x86_64": "    .text\n",
          "xtensa": "    .text\n"}
# A function {name} that loops {n} times. (.size: callgrind attributes instructions to a function
# by its symbol's extent.)
LOOP = {
    "thumb": """
    .global {name}
    .type {name}, %function
    .thumb_func
{name}:
    movw r3, #{n}
1:  subs r3, r3, #1
    bne 1b
    bx lr
    .size {name}, . - {name}
""",
    # Armv6-M has no MOVW: the trip count comes from a literal pool, still one instruction.
    "thumb-v6m": """
    .global {name}
    .type {name}, %function
    .thumb_func
{name}:
    ldr r3, ={n}
1:  subs r3, r3, #1
    bne 1b
    bx lr
    .ltorg
    .size {name}, . - {name}
""",
    "riscv": """
    .globl {name}
    .type {name}, @function
{name}:
    li t0, {n}
1:  addi t0, t0, -1
    bnez t0, 1b
    ret
    .size {name}, . - {name}
""",
    "xtensa": """
    .align 4
    .global {name}
    .type {name}, @function
{name}:
    movi a3, {n}
1:  addi a3, a3, -1
    bnez a3, 1b
    ret
    .size {name}, . - {name}
""",
    "x86_64": """
    .globl {name}
    .type {name}, @function
{name}:
    movl ${n}, %ecx
1:  subl $1, %ecx
    jnz 1b
    ret
    .size {name}, . - {name}
""",
}

# msfcnn_invoke as the generated C shapes it: calls of two block functions (loops of N0 and N1
# trips), with a loop of NM trips between them standing for the memmoves after block 0.
N0, N1, NM = 1000, 300, 50
INVOKE_BLOCKS = {
    "thumb": """
    .global msfcnn_invoke
    .type msfcnn_invoke, %function
    .thumb_func
msfcnn_invoke:
    push {r4, lr}
    bl block0
    movw r3, #NM
1:  subs r3, r3, #1
    bne 1b
    bl block1
    pop {r4, pc}
    .size msfcnn_invoke, . - msfcnn_invoke
""",
    "x86_64": """
    .globl msfcnn_invoke
    .type msfcnn_invoke, @function
msfcnn_invoke:
    push %rbx
    call block0
    movl $NM, %ecx
1:  subl $1, %ecx
    jnz 1b
    call block1
    pop %rbx
    ret
    .size msfcnn_invoke, . - msfcnn_invoke
""",
}


def loop_source(isa: str) -> str:
    return HEADER[isa] + LOOP[isa].format(name="msfcnn_invoke", n=N)


def blocks_source(isa: str) -> str:
    return (HEADER[isa] + LOOP[isa].format(name="block0", n=N0) + LOOP[isa].format(name="block1", n=N1)
            + INVOKE_BLOCKS[isa].replace("NM", str(NM)))


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


def build_loop(tmp_path: Path, target_name: str, isa: str, source=loop_source, calls: int = 3) -> Path:
    target = require_target(target_name)
    (tmp_path / "main.c").write_text(MAIN.replace("i < 3", f"i < {calls}"))
    (tmp_path / "loop.S").write_text(source(isa))
    program = tmp_path / "loop.elf"
    done = subprocess.run([target.cc, *target.cflags.split(), *target.ldflags.split(), "-o", str(program),
                           "main.c", "loop.S", *write_runtime(tmp_path, target)], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return program


@pytest.mark.parametrize("target, isa", [("cortex-m4", "thumb"), ("cortex-m7", "thumb"), ("fe310", "riscv"),
                                         ("esp32c3", "riscv"), ("xtensa-lx106", "xtensa"),
                                         ("cortex-m33", "thumb"), ("cortex-m0plus", "thumb-v6m")])
def test_a_known_loop_counts_exactly_on_qemu(target, isa, tmp_path):
    program = build_loop(tmp_path, target, isa)
    assert icount.count_instructions(program, require_target(target)) == 3 * (2 * N + 2)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the loop is x86-64 assembly")
def test_a_known_loop_counts_exactly_on_the_host(tmp_path):
    require_tools("valgrind", packages=("valgrind",))
    program = build_loop(tmp_path, "host", "x86_64")
    assert icount.count_instructions(program, require_target("host")) == 3 * (2 * N + 2)


def test_two_blocks_split_the_count_exactly_on_qemu(tmp_path):
    """Block 0: the entry (push, call), its loop and the loop after it (the memmoves' place); block 1:
    its call, its loop and msfcnn_invoke's return (pop)."""
    program = build_loop(tmp_path, "cortex-m4", "thumb", blocks_source, calls=1)
    target = require_target("cortex-m4")
    marks = icount.find_marks(program, target)
    assert [block for _, block in marks.blocks] == [0, 1] and marks.block_names == {0: "block0", 1: "block1"}
    count = icount.measure(program, target)
    assert count.blocks == (2 + (2 * N0 + 2) + (1 + 2 * NM), 1 + (2 * N1 + 2) + 1)
    assert count.total == sum(count.blocks)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the blocks are x86-64 assembly")
def test_two_blocks_split_the_count_exactly_on_the_host(tmp_path):
    """As on QEMU, but callgrind splits at the block's entry: the call of block 1 counts in block 0."""
    require_tools("valgrind", packages=("valgrind",))
    program = build_loop(tmp_path, "host", "x86_64", blocks_source, calls=1)
    count = icount.measure(program, require_target("host"))
    assert count.blocks == (2 + (2 * N0 + 2) + (1 + 2 * NM) + 1, (2 * N1 + 2) + 2)
    assert count.total == sum(count.blocks)


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


# (On xtensa-lx106 gcc names a block's clone block3$constprop$0: its calls must still be found.)
@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m7", "fe310", "xtensa-lx106", "host"])
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
        counts.append((doc["instructions"], doc["block_instructions"]))
    assert counts[0] == counts[1] and counts[0][0] > doc["plan"]["macs"]  # at least one instruction per MAC
    total, blocks = counts[0]
    assert [{k: b[k] for k in ("first", "last", "scheme", "rows")} for b in blocks] == \
        [{k: b[k] for k in ("first", "last", "scheme", "rows")} for b in doc["plan"]["blocks"]]
    assert sum(b["instructions"] for b in blocks) == total and all(b["instructions"] > 0 for b in blocks)


@pytest.mark.slow
def test_block_counts_of_a_plan_with_copies_and_moves(capsys):
    """--count-io: the input copied in before block 0, tensors slid between blocks, the output
    copied out after the last block; still one count per block, adding up to the total."""
    from msfcnn.cli import main
    require_target("cortex-m4")
    assert main(["verify", "mcunet-vww5", "--count-io", "--max-overhead", "1.2", "--target", "cortex-m4",
                 "--instructions", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    blocks = [b["instructions"] for b in doc["block_instructions"]]
    assert doc["bit_exact"] and len(blocks) == len(doc["plan"]["blocks"]) and sum(blocks) == doc["instructions"]


def test_a_prefix_changes_names_not_instructions(capsys):
    """verify --prefix counts NAME_invoke: the same instructions, block by block, as msfcnn_invoke."""
    from msfcnn.cli import main
    require_target("cortex-m4")
    counts = []
    for prefix in (["--prefix", "vww"], []):
        assert main(["verify", "mcunet-vww5", "--target", "cortex-m4", "--instructions", "--json", *prefix]) == 0
        doc = json.loads(capsys.readouterr().out)
        counts.append((doc["instructions"], [b["instructions"] for b in doc["block_instructions"]]))
    assert counts[0] == counts[1] and counts[0][0] > 0


@pytest.mark.slow
def test_a_block_whose_call_the_compiler_removed_counts_zero(capsys):
    """ResNet-8's Flatten after its global pool only renames bytes: its block function is empty and
    GCC drops the call (no side effects). It executes nothing, and counts 0."""
    from msfcnn.cli import main
    from support.paths import FIXTURES
    require_target("cortex-m4")
    assert main(["verify", str(FIXTURES / "models" / "onnx_resnet8.onnx"), "--max-overhead", "1.2", "--target", "cortex-m4",
                 "--instructions", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    blocks = doc["block_instructions"]
    assert len(blocks) == len(doc["plan"]["blocks"]) and sum(b["instructions"] for b in blocks) == doc["instructions"]
    assert [b["instructions"] == 0 for b in blocks].count(True) == 1


@pytest.mark.slow
def test_more_blocks_than_the_old_64_marks():
    """70 small layers unfused: 70 blocks, 72 marked addresses (the plugin once took 64)."""
    graph = with_random_weights(graph_from_layer_list({"name": "deep", "input": [6, 6, 4], "layers": [
        {"op": "conv2d", "filters": 4, "kernel": 1, "stride": 1, "padding": "same", "act": "relu"}] * 70}))
    plan = pipeline.planner(graph, schemes=("inplace",)).vanilla()  # no candidate for 1x1 convs: fast
    tgt = require_target("cortex-m4")
    schedule = pipeline.lower(graph, plan)
    check = pipeline.verify(graph, plan, schedule, random_input(graph, 0), tgt, count_instructions=True,
                            kernel_lib=kernel_library(graph, schedule, plan, tgt))
    assert check.bit_exact and len(plan.blocks) == len(check.block_instructions) == 70
    assert sum(check.block_instructions) == check.instructions


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_counts_of_a_model_with_several_outputs(target, capsys):
    """The file harness of a three-output detector calls msfcnn_invoke through
    msfcnn_invoke_outputs: its calls are found there (they used to be looked for in main only)."""
    from msfcnn.cli import main
    require_target(target)
    if target == "host":
        require_tools("valgrind", packages=("valgrind",))
    model = str(Path(__file__).parents[1] / "fixtures" / "models" / "det_yolo3.tflite")
    assert main(["verify", model, "--target", target, "--instructions", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    blocks = [b["instructions"] for b in doc["block_instructions"]]
    assert doc["bit_exact"] and len(blocks) == len(doc["plan"]["blocks"]) and sum(blocks) == doc["instructions"]
    assert all(n > 0 for n in blocks)

"""The latency model's rule for the constant-size memmoves of the generated C (codegen/moves.py),
against the compiler itself: which moves arm-none-eabi-gcc leaves as a call of the C library."""

import re
import subprocess

import pytest

from support.toolchains import require_target, require_tools
from msfcnn.codegen.moves import library_memmove, library_move, overlap

# (name, source, target, size): arena offsets, None for a pointer the caller gave
CASES = [(f"apart{n}", 4, 200, n) for n in (2, 4, 6, 8, 30, 64, 65, 96)] + \
        [(f"over{n}", 4, 8, n) for n in (4, 6, 64)] + \
        [(f"odd{n}", 3, 51, n) for n in (33, 64)] + \
        [(f"input{n}", None, 8, n) for n in (4, 6, 32)] + \
        [(f"output{n}", 8, None, n) for n in (4, 12)]


def _place(offset) -> str:
    return "(void *)pointer" if offset is None else f"ARENA({offset})"


def _source() -> str:
    functions = "\n".join(f"void {name}(void *pointer);\n" for name, *_ in CASES) + "\n".join(f"void {name}(void *pointer) {{ (void)pointer; memmove({_place(target)}, {_place(source)}, {size}); }}"
                          for name, source, target, size in CASES)
    # the arena as model.c declares it (int8 activations), moves as msfcnn_invoke and the blocks make them
    return ("#include <string.h>\n#include <stdint.h>\nstatic int8_t arena[512];\n"
            "#define ARENA(offset) ((void *)(arena + (offset)))\n" + functions + "\n")


@pytest.mark.parametrize("target_name", ["cortex-m4", "cortex-m7"])
def test_the_moves_the_compiler_leaves_to_the_library_are_those_counted(tmp_path, target_name):
    target = require_target(target_name)
    require_tools("arm-none-eabi-objdump", packages=("binutils-arm-none-eabi",))
    (tmp_path / "moves.c").write_text(_source())
    subprocess.run([target.cc, *target.cflags.split(), "-c", "moves.c", "-o", "moves.o"], cwd=tmp_path, check=True)
    listing = subprocess.run(["arm-none-eabi-objdump", "-dr", "moves.o"], cwd=tmp_path, capture_output=True,
                             text=True, check=True).stdout
    # (a move between places the compiler tells apart calls memcpy)
    bodies = dict(re.findall(r"<(\w+)>:\n(.*?)(?=\n\n|\Z)", listing, re.S))
    calls = {name for name, body in bodies.items() if re.search(r"\bmem(move|cpy)\b", body)}
    memmoves = {name for name, body in bodies.items() if re.search(r"\bmemmove\b", body)}
    for name, source, target_offset, size in CASES:
        apart = source is not None and target_offset is not None and not overlap(source, target_offset, size)
        assert library_move(size, apart) == (name in calls), name
        assert library_memmove(size, apart) == (name in memmoves), name


# word-aligned arena places apart, from 2 to 24 bytes, and a caller's pointer (moves.short_library_move)
LX106_CASES = [(f"apart{n}", 8, 200, n) for n in range(2, 25)] + [(f"input{n}", None, 8, n) for n in (1, 2, 4, 32)]


def test_xtensa_lx106_leaves_more_moves_to_the_library_than_counted_for_arm(tmp_path):
    """xtensa-lx106-elf-gcc calls memcpy or memmove for the moves library_move counts, and for
    those short_library_move adds (moves the Arm compilers expand inline)."""
    from msfcnn.codegen.moves import short_library_move
    target = require_target("xtensa-lx106")
    require_tools("xtensa-lx106-elf-objdump", packages=("binutils-xtensa-lx106",))
    functions = "\n".join(f"void {name}(void *pointer);\nvoid {name}(void *pointer) {{ (void)pointer; "
                          f"memmove({_place(target_offset)}, {_place(source)}, {size}); }}"
                          for name, source, target_offset, size in LX106_CASES)
    # (the arena as model.c declares it: xtensa-lx106-elf-gcc aligns such an array to a word)
    (tmp_path / "moves.c").write_text("#include <string.h>\n#include <stdint.h>\n"
                                      "static int8_t arena[512];\n"
                                      "#define ARENA(offset) ((void *)(arena + (offset)))\n" + functions + "\n")
    subprocess.run([target.cc, *target.cflags.split(), "-c", "moves.c", "-o", "moves.o"], cwd=tmp_path, check=True)
    listing = subprocess.run(["xtensa-lx106-elf-objdump", "-dr", "moves.o"], cwd=tmp_path, capture_output=True,
                             text=True, check=True).stdout
    calls = {name for name, body in re.findall(r"<(\w+)>:\n(.*?)(?=\n\n|\Z)", listing, re.S) if re.search(r"\bmem(move|cpy)\b", body)}
    for name, source, target_offset, size in LX106_CASES:
        apart = source is not None
        assert (library_move(size, apart) or short_library_move(size, apart)) == (name in calls), name


@pytest.mark.parametrize("target_name", ["cortex-m7", "cortex-m55"])
def test_a_time_scans_step_copy_calls_the_library_past_64_bytes(tmp_path, target_name):
    """A time scan copies each step to the output (or a ring) with a memcpy of a constant size
    (codegen/emit.py) from a float state, which the compiler copies inline up to 64 bytes and
    leaves to the C library above: the scan's `library_copy` counts (latency/features.py)."""
    target = require_target(target_name)
    require_tools("arm-none-eabi-objdump", packages=("binutils-arm-none-eabi",))
    sizes = (4, 16, 32, 48, 64, 68, 96, 256)
    (tmp_path / "copies.c").write_text(
        "#include <string.h>\n" + "".join(f"void copy{n}(float *out, const float *y, int p);\n"
                                          f"void copy{n}(float *out, const float *y, int p) "
                                          f"{{ memcpy(out + p * {n // 4}, y, {n}); }}\n" for n in sizes))
    subprocess.run([target.cc, *target.cflags.split(), "-c", "copies.c", "-o", "copies.o"], cwd=tmp_path, check=True)
    listing = subprocess.run(["arm-none-eabi-objdump", "-dr", "copies.o"], cwd=tmp_path, capture_output=True,
                             text=True, check=True).stdout
    calls = {name for name, body in re.findall(r"<(\w+)>:\n(.*?)(?=\n\n|\Z)", listing, re.S) if re.search(r"\bmem(move|cpy)\b", body)}
    for n in sizes:
        assert library_move(n, apart=True) == (f"copy{n}" in calls), n

"""Several networks compiled together (`msfcnn compile A B -o out/`): one library, each network
under its own prefix, one shared arena as large as the largest of theirs. A C++ program runs
MCUNet-VWW and MLPerf Tiny's DS-CNN one after the other on that arena, each bit-exact with its
reference (DS-CNN: LiteRT; the built-in MCUNet-VWW: the numpy executor, as `verify` checks)."""

import json
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

import msfcnn
from msfcnn import pipeline
from msfcnn.cli import main
from msfcnn.codegen.emit import generate
from msfcnn.executor import to_internal
from msfcnn.tensors import random_input
from support.c_library import run
from support.litert_oracle import run_tflite
from support.paths import FIXTURES
from support.toolchains import require_target, require_tools

VWW = "mcunet-vww5"
DSCNN = FIXTURES / "models" / "dscnn.tflite"
KEYWORDS = FIXTURES / "sequence" / "svdf_keyword.tflite"
OPTIONS = ("--max-overhead", "1.2")

# Runs A, B, A, B: the second run of each network, after the other has overwritten the shared
# arena, must give the first's output; the first runs' outputs go to the files named.
PROGRAM = r"""
#include <cstdio>
#include <cstring>
#include <vector>

#include "msfcnn_arena.h"
#include "mcunet_vww5/model.h"
#include "dscnn/model.h"

template <typename T, typename O>
static bool run_twice(const char *in_path, const char *out_path, int (*invoke)(const T *, O *), size_t n_in,
                      size_t n_out, std::vector<O> &first, bool second)
{
    std::vector<T> in(n_in);
    std::vector<O> out(n_out);
    std::FILE *f = std::fopen(in_path, "rb");
    if (!f || std::fread(in.data(), sizeof(T), n_in, f) != n_in) return false;
    std::fclose(f);
    if (invoke(in.data(), out.data()) != 0) return false;
    if (second) return std::memcmp(out.data(), first.data(), n_out * sizeof(O)) == 0;
    first = out;
    f = std::fopen(out_path, "wb");
    return f && std::fwrite(out.data(), sizeof(O), n_out, f) == n_out && std::fclose(f) == 0;
}

int main(int argc, char **argv)
{
    static_assert(MSFCNN_SHARED_ARENA_BYTES == (MCUNET_VWW5_ARENA_BYTES > DSCNN_ARENA_BYTES ?
                                                MCUNET_VWW5_ARENA_BYTES : DSCNN_ARENA_BYTES), "the largest arena");
    std::vector<mcunet_vww5_output_value> a;
    std::vector<dscnn_output_value> b;
    if (argc != 5) return 2;
    for (int round = 0; round < 2; ++round) {
        if (!run_twice(argv[1], argv[2], mcunet_vww5_invoke, MCUNET_VWW5_INPUT_SIZE, MCUNET_VWW5_OUTPUT_SIZE, a, round)
            || !run_twice(argv[3], argv[4], dscnn_invoke, DSCNN_INPUT_SIZE, DSCNN_OUTPUT_SIZE, b, round)) {
            return 1;
        }
    }
    return 0;
}
"""


def _compile_objects(folder, cflags, cc="cc") -> list:
    """Every .c of the library compiled as C, with no include path (model.c finds the kernels and
    the arena by relative paths)."""
    objects = []
    for source in sorted(folder.rglob("*.c")):
        obj = source.with_suffix(".o")
        run(cc, *cflags, "-c", source, "-o", obj)
        objects.append(obj)
    return objects


def _internal_bytes(graph, x) -> bytes:
    """An input in the model's layout (batch optional) as the C takes it: (H, W, C), its bytes."""
    return np.ascontiguousarray(to_internal(graph, x[0] if x.ndim == len(graph.input_shape) + 1 else x)).tobytes()


def _single_arena(model: str) -> int:
    """The arena a compile of the model alone defines (its model.h's ARENA_BYTES)."""
    graph = pipeline.load(model, weights=True)
    plan = pipeline.solve(pipeline.planner(graph), max_overhead=1.2)
    header = generate(graph, pipeline.lower(graph, plan), plan)["model.h"]
    return int(re.search(r"#define MSFCNN_ARENA_BYTES (\d+)", header).group(1))


@pytest.mark.slow  # about 6 s of CPU: two plans, the C of both, LiteRT
def test_vww_and_dscnn_share_one_arena_bit_exact_in_one_cpp_program(tmp_path, capsys):
    target = require_target("host")
    require_tools("c++", "nm", packages=("g++", "binutils"))
    out = tmp_path / "out"
    assert main(["compile", VWW, str(DSCNN), *OPTIONS, "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    singles = {VWW: _single_arena(VWW), str(DSCNN): _single_arena(str(DSCNN))}
    assert f"shared arena {max(singles.values())} B" in printed
    assert sorted(p.name for p in out.iterdir()) == ["CMakeLists.txt", "dscnn", "kernels", "mcunet_vww5",
                                                      "msfcnn-files.txt", "msfcnn_arena.c", "msfcnn_arena.h"]
    objects = _compile_objects(out, shlex.split(target.cflags))
    # One arena in the program, of the larger single compile's size to the byte; no network has its own.
    sizes = {line.split()[3]: int(line.split()[1], 16)
             for line in run("nm", "-S", "--defined-only", *objects).splitlines() if len(line.split()) == 4}
    assert sizes["msfcnn_shared_arena"] == max(singles.values()) == 10000 > singles[str(DSCNN)]
    assert not [name for name in sizes if name.endswith("_arena") and name != "msfcnn_shared_arena"]
    # The kernels once: each msf_* function defined by one object only.
    kernels = [name for name in run("nm", "-g", "--defined-only", *objects).split() if name.startswith("msf_")]
    assert kernels and len(kernels) == len(set(kernels))
    (tmp_path / "main.cpp").write_text(PROGRAM)
    _runs_bit_exact(tmp_path, out, objects)


def _runs_bit_exact(tmp_path, out, objects) -> None:
    """main.cpp linked with the library's objects runs both networks twice, each bit-exact."""
    program = tmp_path / "two_networks"
    run("c++", "-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic", f"-I{out}", "-o", program,
        tmp_path / "main.cpp", *objects, "-lm")
    inputs, expected = _inputs_and_references()
    paths = []
    for i, x in enumerate(inputs):
        (tmp_path / f"{i}.in").write_bytes(x)
        paths += [tmp_path / f"{i}.in", tmp_path / f"{i}.out"]
    run(program, *paths)
    for i, reference in enumerate(expected):
        assert np.array_equal(np.frombuffer((tmp_path / f"{i}.out").read_bytes(), np.int8), reference)


def _inputs_and_references() -> tuple[list[bytes], list[np.ndarray]]:
    """Seeded inputs of MCUNet-VWW and DS-CNN as the C takes them, and their outputs: the numpy
    executor's for the built-in VWW (as `verify` checks), LiteRT's for DS-CNN."""
    vww, dscnn = (pipeline.load(name, weights=True) for name in (VWW, str(DSCNN)))
    x, y = random_input(vww, 7), random_input(dscnn, 7)
    schedule = pipeline.lower(vww, pipeline.solve(pipeline.planner(vww), max_overhead=1.2))
    return ([_internal_bytes(vww, x), _internal_bytes(dscnn, y)],
            [pipeline.run(schedule, x, raw=True).output.reshape(-1), run_tflite(DSCNN, y).reshape(-1).view(np.int8)])


# The same on an emulated Cortex-M4, in C: the inputs one after the other in one file, the outputs
# likewise (its semihosting harness takes two file names).
QEMU_PROGRAM = r"""
#include <stdio.h>
#include <string.h>

#include "msfcnn_arena.h"
#include "mcunet_vww5/model.h"
#include "dscnn/model.h"

static mcunet_vww5_value a_in[MCUNET_VWW5_INPUT_SIZE];
static mcunet_vww5_output_value a_out[2][MCUNET_VWW5_OUTPUT_SIZE];
static dscnn_value b_in[DSCNN_INPUT_SIZE];
static dscnn_output_value b_out[2][DSCNN_OUTPUT_SIZE];

int main(int argc, char **argv)
{
    FILE *f;
    int round, ok;
    if (argc != 3 || !(f = fopen(argv[1], "rb"))) return 2;
    ok = fread(a_in, 1, sizeof a_in, f) == sizeof a_in && fread(b_in, 1, sizeof b_in, f) == sizeof b_in;
    fclose(f);
    for (round = 0; ok && round < 2; ++round) { /* each run overwrites the other's arena */
        mcunet_vww5_invoke(a_in, a_out[round]);
        dscnn_invoke(b_in, b_out[round]);
    }
    if (!ok || memcmp(a_out[0], a_out[1], sizeof a_out[0]) || memcmp(b_out[0], b_out[1], sizeof b_out[0])) return 1;
    if (!(f = fopen(argv[2], "wb"))) return 2;
    ok = fwrite(a_out[0], 1, sizeof a_out[0], f) == sizeof a_out[0] && fwrite(b_out[0], 1, sizeof b_out[0], f) == sizeof b_out[0];
    return fclose(f) == 0 && ok ? 0 : 1;
}
"""


@pytest.mark.qemu  # about 5 s of CPU: two plans, the C of both for Cortex-M4, QEMU, LiteRT
def test_vww_and_dscnn_share_one_arena_bit_exact_on_cortex_m4(tmp_path, capsys):
    target = require_target("cortex-m4")
    out = tmp_path / "out"
    assert main(["compile", VWW, str(DSCNN), *OPTIONS, "--target", "cortex-m4", "-o", str(out)]) == 0
    capsys.readouterr()
    cflags = shlex.split(target.cflags)
    objects = _compile_objects(out, cflags, target.cc)
    (tmp_path / "main.c").write_text(QEMU_PROGRAM)
    program = tmp_path / "two_networks.elf"
    run(target.cc, *cflags, f"-I{out}", "-c", tmp_path / "main.c", "-o", tmp_path / "main.o")
    run(target.cc, *cflags, *shlex.split(target.ldflags), "-o", program, tmp_path / "main.o", *objects, "-lm")
    sizes = {line.split()[3]: int(line.split()[1], 16)
             for line in run(target.nm, "-S", program).splitlines() if len(line.split()) == 4}
    assert sizes["msfcnn_shared_arena"] == 10000
    inputs, expected = _inputs_and_references()
    (tmp_path / "in.bin").write_bytes(b"".join(inputs))
    run(*target.run_command(str(program), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")))
    assert np.array_equal(np.frombuffer((tmp_path / "out.bin").read_bytes(), np.int8), np.concatenate(expected))


STATEFUL_PROGRAM = r"""
#include <cstdio>
#include <vector>

#include "msfcnn_arena.h"
#include "svdf_keyword/model.h"
#include "beta/model.h"

template <typename T>
static bool load(const char *path, std::vector<T> &values)
{
    std::FILE *f = std::fopen(path, "rb");
    return f && std::fread(values.data(), sizeof(T), values.size(), f) == values.size() && std::fclose(f) == 0;
}

template <typename T>
static bool save(const char *path, const std::vector<T> &values)
{
    std::FILE *f = std::fopen(path, "wb");
    return f && std::fwrite(values.data(), sizeof(T), values.size(), f) == values.size() && std::fclose(f) == 0;
}

/* argv: the keyword model's steps, its outputs, beta's input, beta's outputs (one per step). */
int main(int argc, char **argv)
{
    const int steps = STEPS;
    std::vector<svdf_keyword_value> a_in(steps * SVDF_KEYWORD_INPUT_SIZE);
    std::vector<svdf_keyword_output_value> a_out(steps * SVDF_KEYWORD_OUTPUT_SIZE);
    std::vector<beta_value> b_in(BETA_INPUT_SIZE);
    std::vector<beta_output_value> b_out(steps * BETA_OUTPUT_SIZE);
    if (argc != 5 || !load(argv[1], a_in) || !load(argv[3], b_in)) return 2;
    for (int s = 0; s < steps; ++s) { /* beta's call between two steps overwrites the shared arena */
        svdf_keyword_invoke(&a_in[s * SVDF_KEYWORD_INPUT_SIZE], &a_out[s * SVDF_KEYWORD_OUTPUT_SIZE]);
        beta_invoke(b_in.data(), &b_out[s * BETA_OUTPUT_SIZE]);
    }
    return save(argv[2], a_out) && save(argv[4], b_out) ? 0 : 1;
}
"""


STEPS = 4


def _stateful_pair(tmp_path) -> tuple[Path, list, list]:
    """The SVDF keyword model and the small int8 net `beta` compiled together into tmp_path/out;
    their graphs and least-RAM schedules (those compile plans by default)."""
    from support.c_library import BETA
    beta_model = tmp_path / "beta.json"
    beta_model.write_text(json.dumps(BETA))
    out = tmp_path / "out"
    assert main(["compile", str(KEYWORDS), str(beta_model), "--prefix", "svdf_keyword,beta", "-o", str(out)]) == 0
    graphs = [pipeline.load(str(m), weights=True) for m in (KEYWORDS, beta_model)]
    return out, graphs, [pipeline.lower(g, pipeline.planner(g).min_ram()) for g in graphs]


def _check_stateful(program, tmp_path, graphs, schedules) -> None:
    """Run STATEFUL_PROGRAM: the keyword model's steps, each followed by a call of beta, every
    output the numpy executor's (the state carried from step to step)."""
    xs = [random_input(graphs[0], seed) for seed in range(STEPS)]
    (tmp_path / "a.in").write_bytes(b"".join(_internal_bytes(graphs[0], x) for x in xs))
    y = random_input(graphs[1], 3)
    (tmp_path / "b.in").write_bytes(_internal_bytes(graphs[1], y))
    run(program, tmp_path / "a.in", tmp_path / "a.out", tmp_path / "b.in", tmp_path / "b.out")
    expected = np.concatenate([r.output.reshape(-1) for r in pipeline.run_steps(schedules[0], xs, raw=True)])
    assert np.array_equal(np.frombuffer((tmp_path / "a.out").read_bytes(), expected.dtype), expected)
    once = pipeline.run(schedules[1], y, raw=True).output.reshape(-1)
    assert np.array_equal(np.frombuffer((tmp_path / "b.out").read_bytes(), once.dtype), np.tile(once, STEPS))


@pytest.mark.slow  # fast-tier budget: about 2 s of CPU
def test_a_stateful_network_keeps_its_own_state_beside_the_shared_arena(tmp_path, capsys):
    """An SVDF keyword model (int16, 416 B of state) and a small int8 net compiled together: the
    state is a buffer of the keyword model's own, outside the shared arena, so that the other
    network's calls between its steps leave it alone; the arena is aligned for int16."""
    target = require_target("host")
    require_tools("c++", "nm", packages=("g++", "binutils"))
    out, graphs, schedules = _stateful_pair(tmp_path)
    printed = capsys.readouterr().out
    own = [s.arena_bytes - g.state_bytes for g, s in zip(graphs, schedules)]
    assert graphs[0].state_bytes == 416 and f"+ own state 416 B" in printed and f"shared arena {max(own)} B" in printed
    objects = _compile_objects(out, shlex.split(target.cflags))
    sizes = {line.split()[3]: int(line.split()[1], 16)
             for line in run("nm", "-S", "--defined-only", *objects).splitlines() if len(line.split()) == 4}
    assert sizes["svdf_keyword_state_words"] == 416
    assert sizes["msfcnn_shared_arena_words"] == max(own) + max(own) % 2  # int16 words
    (tmp_path / "main.cpp").write_text(STATEFUL_PROGRAM.replace("STEPS", str(STEPS)))
    program = tmp_path / "stateful"
    run("c++", "-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic", f"-I{out}", "-o", program,
        tmp_path / "main.cpp", *objects, "-lm")
    _check_stateful(program, tmp_path, graphs, schedules)


PARENT = """cmake_minimum_required(VERSION 3.13)
project(stateful C CXX)
add_subdirectory(out)
add_executable(stateful main.cpp)
set_target_properties(stateful PROPERTIES CXX_STANDARD 11 CXX_STANDARD_REQUIRED ON)
target_link_libraries(stateful PRIVATE msfcnn_networks)
"""


@pytest.mark.slow  # about 3 s of CPU (10 s on a busy machine): CMake configures C and C++, builds the library and the program
def test_cmake_builds_the_shared_library_into_a_cpp_project(tmp_path, capsys):
    """The folder's CMakeLists.txt, added with add_subdirectory, gives the target msfcnn_networks
    (each network, the kernels once, the arena) with the folder as its include path."""
    from support.c_library import cmake
    require_target("host")
    require_tools("cmake", "c++", packages=("cmake", "g++"))
    _, graphs, schedules = _stateful_pair(tmp_path)
    capsys.readouterr()
    (tmp_path / "CMakeLists.txt").write_text(PARENT)
    (tmp_path / "main.cpp").write_text(STATEFUL_PROGRAM.replace("STEPS", str(STEPS)))
    cmake(tmp_path, tmp_path / "build")
    _check_stateful(tmp_path / "build" / "stateful", tmp_path, graphs, schedules)


@pytest.mark.parametrize("argv, message", [
    (["compile", VWW, VWW, "-o", "OUT"], "prefix clash: 'mcunet_vww5' and 'mcunet_vww5'"),
    (["compile", VWW, str(DSCNN), "--prefix", "a", "-o", "OUT"], "--prefix names 1 prefixes for 2 models"),
    (["compile", VWW, str(DSCNN), "--prefix", "net,Net", "-o", "OUT"], "prefix clash: 'net' and 'Net'"),
    (["compile", VWW, str(DSCNN), "--prefix", "net,net_kws", "-o", "OUT"], "prefix clash: 'net' and 'net_kws'"),
    (["compile", VWW, str(DSCNN), "--prefix", "kernels,kws", "-o", "OUT"], "prefix 'kernels' clashes"),
    (["compile", VWW, str(DSCNN), "--prefix", "vww,9kws", "-o", "OUT"], "--prefix '9kws' is not a C identifier"),
    (["compile", VWW, str(DSCNN), "--plan", "PLAN", "-o", "OUT"], "--plan names 1 plans for 2 models"),
    (["compile", VWW, str(DSCNN), "--board", "nucleo-f412zg", "--input-in-flash", "-o", "OUT"],
     "--input-in-flash takes one model"),
    (["fit", VWW, str(DSCNN), "--board", "nucleo-f412zg", "-o", "OUT"], "-o names 1 plan files for 2 models"),
    (["fit", VWW, str(DSCNN), "--board", "nucleo-f412zg", "-o", "OUT,-"], "-o - writes one plan to standard output"),
    (["fit", VWW, str(DSCNN), "--board", "nucleo-f412zg", "--input-stream"], "--input-stream takes one model"),
])
def test_several_models_refuse_clashes_and_one_model_options_in_one_line(tmp_path, capsys, argv, message):
    plan = tmp_path / "plan.json"
    plan.write_text("{}")
    argv = [a.replace("OUT", str(tmp_path / "out")) if "OUT" in a else str(plan) if a == "PLAN" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow  # about 19 s of CPU: both models' fronts on cortex-m4 and their stack bounds
def test_fit_answers_for_vww_and_dscnn_together_on_one_shared_arena(tmp_path, capsys):
    """`fit A B`: RAM = the largest arena + every network's io and static data + the deepest stack
    + the reserve, within the board's; each network's plan is at least as fast as the fastest one
    the solver finds under the shared arena as a RAM cap. On 56 kB the two arenas side by side
    would not fit: sharing is what makes them fit. The plans it writes compile into one library
    whose shared arena is the one fit counted."""
    from msfcnn import latency
    ram = 56000
    plans = f"{tmp_path / 'vww.json'},{tmp_path / 'dscnn.json'}"
    assert main(["fit", VWW, str(DSCNN), "--ram", "56kB", "--target", "cortex-m4", "--json", "-o", plans]) == 0
    doc = json.loads(capsys.readouterr().out)
    nets = doc["networks"]
    assert doc["models"] == ["mcunet-vww5", "dscnn"] and doc["fits"] and doc["state_bytes"] == 0
    assert doc["shared_arena_bytes"] == max(n["arena_bytes"] for n in nets)
    assert doc["io_bytes"] == sum(n["io_bytes"] for n in nets) and doc["stack_bytes"] == max(n["stack_bytes"] for n in nets)
    rest = doc["io_bytes"] + doc["stack_bytes"] + doc["static_bytes"] + doc["reserve_bytes"]
    assert doc["headroom_bytes"] == ram - doc["shared_arena_bytes"] - rest >= 0
    assert sum(n["arena_bytes"] for n in nets) + rest > ram
    model = latency.load("cortex-m4")
    for name, net in zip((VWW, str(DSCNN)), nets):
        graph = pipeline.load(name, weights=True)
        fastest = pipeline.solve(pipeline.planner(graph, latency=model), objective="min-latency",
                                 max_ram=doc["shared_arena_bytes"])
        assert net["predicted_instructions"] <= fastest.predicted_instructions
        assert net["arena_bytes"] == net["plan"]["peak_ram_bytes"] <= doc["shared_arena_bytes"]
    assert main(["compile", VWW, str(DSCNN), "--plan", plans, "-o", str(tmp_path / "out")]) == 0
    header = (tmp_path / "out" / "msfcnn_arena.h").read_text()
    assert f"#define MSFCNN_SHARED_ARENA_BYTES {doc['shared_arena_bytes']}\n" in header


REGIONS = ("--board", "stm32f407", "--region", "fast:2KiB:1", "--region", "slow:64KiB:2")


@pytest.mark.slow  # about 10 s of CPU: two plans and their stack bounds on cortex-m4, the C of both, LiteRT
def test_vww_and_dscnn_share_one_arena_per_region_bit_exact_in_one_cpp_program(tmp_path, capsys):
    # Two regions, the fast one too small for either network's arena: each region's shared arena
    # is the larger of the two networks' arenas there, to the byte, and both run bit-exact on them.
    target = require_target("host")
    require_target("cortex-m4")  # the board's target bounds the stacks
    require_tools("c++", "nm", packages=("g++", "binutils"))
    out = tmp_path / "out"
    assert main(["compile", VWW, str(DSCNN), *OPTIONS, *REGIONS, "-o", str(out)]) == 0
    capsys.readouterr()
    each = {}
    for prefix in ("mcunet_vww5", "dscnn"):
        header = (out / prefix / "model.h").read_text()
        each[prefix] = {name.lower(): int(size) for name, size in
                        re.findall(rf"#define {prefix.upper()}_ARENA_(FAST|SLOW)_BYTES (\d+)", header)}
    shared = {name.lower(): int(size) for name, size in
              re.findall(r"#define MSFCNN_SHARED_ARENA_(FAST|SLOW)_BYTES (\d+)", (out / "msfcnn_arena.h").read_text())}
    assert set(shared) == {"fast", "slow"} and 0 < shared["fast"] <= 2 * 1024
    assert shared == {r: max(each["mcunet_vww5"][r], each["dscnn"][r]) for r in shared}
    assert each["mcunet_vww5"] != shared and each["dscnn"] != shared  # each region's largest is another's
    assert "> MSFCNN_FAST" in (out / "msfcnn_regions.ld").read_text()
    objects = _compile_objects(out, shlex.split(target.cflags))
    sizes = {line.split()[3]: int(line.split()[1], 16)
             for line in run("nm", "-S", "--defined-only", *objects).splitlines() if len(line.split()) == 4}
    assert {r: sizes[f"msfcnn_shared_arena_in_{r}"] for r in shared} == {r: -(-n // 4) * 4 for r, n in shared.items()}
    assert not [name for name in sizes if "arena" in name and not name.startswith("msfcnn_shared_arena_in_")]
    (tmp_path / "main.cpp").write_text(PROGRAM.replace(
        "MSFCNN_SHARED_ARENA_BYTES == (MCUNET_VWW5_ARENA_BYTES > DSCNN_ARENA_BYTES ?\n"
        "                                                MCUNET_VWW5_ARENA_BYTES : DSCNN_ARENA_BYTES)",
        "MSFCNN_SHARED_ARENA_FAST_BYTES + MSFCNN_SHARED_ARENA_SLOW_BYTES == MSFCNN_SHARED_ARENA_BYTES"))
    _runs_bit_exact(tmp_path, out, objects)


@pytest.mark.slow  # about 8 s of CPU: two small models' fronts on cortex-m4, their stack bounds, the C
def test_fit_answers_for_two_networks_over_regions_and_compile_shares_those_arenas(tmp_path, capsys):
    # fit A B on a board of two regions: every byte counted in one region or the other; the plans
    # it writes compile into one library whose shared arena per region is the one fit placed.
    require_target("cortex-m4")
    chain = str(FIXTURES / "models" / "i16_chain.tflite")
    board = ("--board", "nucleo-f412zg", "--region", "fast:4000:1", "--region", "slow:24KiB:2")
    plans = f"{tmp_path / 'a.json'},{tmp_path / 'b.json'}"
    assert main(["fit", chain, str(DSCNN), *board, "--json", "-o", plans]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["fits"] and [r["region"] for r in doc["regions"]] == ["fast", "slow"]
    kept = doc["state_bytes"] + doc["io_bytes"] + doc["stack_bytes"] + doc["static_bytes"] + doc["reserve_bytes"]
    assert sum(r["arena_bytes"] for r in doc["regions"]) == doc["shared_arena_bytes"] + kept
    assert doc["shared_arena_bytes"] == sum(doc["region_shared_arena_bytes"].values())
    assert all(doc["region_shared_arena_bytes"].values())  # both regions hold a shared arena
    assert doc["headroom_bytes"] == 4000 + 24 * 1024 - sum(r["arena_bytes"] for r in doc["regions"]) >= 0
    assert all(r["arena_bytes"] <= r["size"] for r in doc["regions"])
    board_file = tmp_path / "board.json"  # the Python API answers the same, given the regions as a board file
    board_file.write_text(json.dumps({"target": "cortex-m4", "regions": [{"name": "fast", "size": 4000, "cost": 1},
                                                                           {"name": "slow", "size": "24KiB", "cost": 2}]}))
    together = msfcnn.fit([chain, str(DSCNN)], str(board_file)).to_dict()
    assert {k: together[k] for k in ("regions", "region_shared_arena_bytes", "headroom_bytes")} == {
        k: doc[k] for k in ("regions", "region_shared_arena_bytes", "headroom_bytes")}
    assert main(["compile", chain, str(DSCNN), "--plan", plans, *board, "-o", str(tmp_path / "out")]) == 0
    header = (tmp_path / "out" / "msfcnn_arena.h").read_text()
    declared = {name.lower(): int(size) for name, size in
                re.findall(r"#define MSFCNN_SHARED_ARENA_(FAST|SLOW)_BYTES (\d+)", header)}
    assert declared == {name: size for name, size in doc["region_shared_arena_bytes"].items() if size}


@pytest.mark.slow  # about 4 s of CPU: two small plans, their library built and run on the host
def test_verify_of_two_models_runs_their_library_bit_exact_in_one_program(capsys):
    chain = str(FIXTURES / "models" / "i16_chain.tflite")
    assert main(["verify", str(DSCNN), chain, *OPTIONS, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    nets = doc["networks"]
    assert doc["pass"] and [n["model"] for n in nets] == ["dscnn", "i16_chain"]
    assert all(n["pass"] and n["bit_exact"] and n["max_abs_diff"] == 0 for n in nets)
    assert doc["shared_arena_bytes"] == max(n["arena_bytes"] for n in nets)
    for argv, message in (([str(KEYWORDS)], "no state"), ([chain, "--instructions"], "--instructions takes one model"),
                          ([chain, "--board", "nucleo-f412zg"], "nucleo-f412zg has one")):
        code = main(["verify", str(DSCNN), *argv])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1 and message in err

"""Several networks compiled together (`msfcnn compile A B -o out/`): one library, each network
under its own prefix, one shared arena as large as the largest of theirs. A C++ program runs
MCUNet-VWW and MLPerf Tiny's DS-CNN one after the other on that arena, each bit-exact with its
reference (DS-CNN: LiteRT; the built-in MCUNet-VWW: the numpy executor, as `verify` checks)."""

import re
import shlex

import numpy as np
import pytest

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


def _compile_objects(folder, cflags) -> list:
    """Every .c of the library compiled as C, with no include path (model.c finds the kernels and
    the arena by relative paths)."""
    objects = []
    for source in sorted(folder.rglob("*.c")):
        obj = source.with_suffix(".o")
        run("cc", *cflags, "-c", source, "-o", obj)
        objects.append(obj)
    return objects


def _single_arena(model: str) -> int:
    """The arena a compile of the model alone defines (its model.h's ARENA_BYTES)."""
    graph = pipeline.load(model, weights=True)
    plan = pipeline.solve(pipeline.planner(graph), max_overhead=1.2)
    header = generate(graph, pipeline.lower(graph, plan), plan)["model.h"]
    return int(re.search(r"#define MSFCNN_ARENA_BYTES (\d+)", header).group(1))


@pytest.mark.slow  # about 10 s of CPU: two plans, the C of both, LiteRT
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
    program = tmp_path / "two_networks"
    run("c++", "-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic", f"-I{out}", "-o", program,
        tmp_path / "main.cpp", *objects, "-lm")
    graphs = {name: pipeline.load(name, weights=True) for name in (VWW, str(DSCNN))}
    inputs = {name: random_input(graph, 7) for name, graph in graphs.items()}
    paths = []
    for i, (name, graph) in enumerate(graphs.items()):
        x = inputs[name]
        (tmp_path / f"{i}.in").write_bytes(np.ascontiguousarray(to_internal(graph, x[0] if x.ndim == 4 else x)).tobytes())
        paths += [tmp_path / f"{i}.in", tmp_path / f"{i}.out"]
    run(program, *paths)
    got = [np.frombuffer((tmp_path / f"{i}.out").read_bytes(), np.int8) for i in range(2)]
    vww = graphs[VWW]
    expected_vww = pipeline.run(pipeline.lower(vww, pipeline.solve(pipeline.planner(vww), max_overhead=1.2)),
                                inputs[VWW], raw=True).output.reshape(-1)
    assert np.array_equal(got[0], expected_vww)
    assert np.array_equal(got[1], run_tflite(DSCNN, inputs[str(DSCNN)]).reshape(-1).view(np.int8))

"""The generated C as a library in someone else's build: a C++ program includes model.h and
links two networks compiled with different prefixes (and saved plans), each bit-exact with the
numpy executor."""

import json
import shlex

import pytest

from msfcnn import __version__
from msfcnn.cli import main
from msfcnn.codegen.emit import kernel_headers, kernel_symbols
from support.c_library import ALPHA, BETA, check_outputs, cmake, compile_saved, run
from support.toolchains import require_target, require_tools

PROGRAM = r"""
#include <cstdio>
#include <vector>

#include "alpha/model.h"
#include "alpha/kernels/numerics.h"  /* msf_quantize_f32 is alpha_msf_quantize_f32 here */
#include "beta/model.h"

template <typename T>
static bool run(const char *in_path, const char *out_path, int (*invoke)(const T *, T *), size_t n_in, size_t n_out)
{
    std::vector<T> in(n_in), out(n_out);
    std::FILE *f = std::fopen(in_path, "rb");
    if (!f || std::fread(in.data(), sizeof(T), n_in, f) != n_in) return false;
    std::fclose(f);
    if (invoke(in.data(), out.data()) != 0) return false;
    f = std::fopen(out_path, "wb");
    if (!f || std::fwrite(out.data(), sizeof(T), n_out, f) != n_out) return false;
    return std::fclose(f) == 0;
}

int main(int argc, char **argv)
{
    static_assert(ALPHA_API_VERSION == 1 && BETA_API_VERSION == 1, "model.h API version");
    static_assert(ALPHA_INPUT_BYTES == sizeof(alpha_value) * ALPHA_INPUT_SIZE, "input bytes");
    const float real[2] = { 1.0f, -0.74f };
    int8_t q[2] = { 0, 0 };
    msf_quantize_f32(real, q, 2, 0.5f, 3);
    if (argc != 5 || q[0] != 5 || q[1] != 2) return 2;
    return run<alpha_value>(argv[1], argv[2], alpha_invoke, ALPHA_INPUT_SIZE, ALPHA_OUTPUT_SIZE)
        && run<beta_value>(argv[3], argv[4], beta_invoke, BETA_INPUT_SIZE, BETA_OUTPUT_SIZE) ? 0 : 1;
}
"""


def _objects(folder, cflags) -> list:
    """model.c, weights.c and the kernels compiled as C (not the harness), with no include path:
    model.c finds the kernels' header by its relative path."""
    sources = [folder / "model.c", folder / "weights.c", *sorted((folder / "kernels").glob("*.c"))]
    objects = []
    for source in sources:
        obj = source.with_suffix(".o")
        run("cc", *cflags, "-c", source, "-o", obj)
        objects.append(obj)
    return objects


@pytest.mark.slow
def test_a_cpp_program_links_two_prefixed_networks_bit_exact(tmp_path, capsys):
    target = require_target("host")
    require_tools("c++", "nm", packages=("g++", "binutils"))
    cflags = shlex.split(target.cflags)
    networks = {"alpha": compile_saved(tmp_path, ALPHA, "alpha"), "beta": compile_saved(tmp_path, BETA, "beta")}
    capsys.readouterr()
    objects = []
    for prefix, (_, _, folder) in networks.items():
        own = _objects(folder, cflags)
        # Every symbol the network defines for the linker carries its prefix (the kernels too).
        defined = [line.split()[-1] for line in run("nm", "-g", "--defined-only", *own).splitlines()
                   if len(line.split()) == 3]
        assert defined and all(name.startswith(prefix + "_") for name in defined), defined
        assert {f"{prefix}_invoke", f"{prefix}_msf_conv2d_s8"} <= set(defined)
        # the kernels of the sources written (those the network calls), every one of them renamed
        written = {source.stem for source in (folder / "kernels").glob("*.c")}
        assert sorted(n for n in defined if "_msf_" in n) == sorted(
            f"{prefix}_{name}" for name in kernel_symbols() if kernel_headers(name)[-1][:-2] in written)
        objects += own
    (tmp_path / "main.cpp").write_text(PROGRAM)
    program = tmp_path / "two_networks"
    run("c++", "-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic", f"-I{tmp_path}", "-o", program,
         tmp_path / "main.cpp", *objects, "-lm")
    check_outputs(program, networks, tmp_path)


PARENT = """cmake_minimum_required(VERSION 3.13)
project(two_networks C CXX)
add_subdirectory(alpha)
add_subdirectory(beta)
add_executable(two_networks main.cpp)
set_target_properties(two_networks PROPERTIES CXX_STANDARD 11 CXX_STANDARD_REQUIRED ON)
target_link_libraries(two_networks PRIVATE alpha beta)
"""


@pytest.mark.slow
def test_cmake_builds_the_library_and_harness_and_a_project_of_two_networks(tmp_path, capsys):
    """The generated CMakeLists.txt on its own builds the static library and the harness; added
    with add_subdirectory to a C++ project, two networks' libraries link into one program. Both
    bit-exact; the ESP-IDF and Zephyr descriptors are written beside it."""
    require_target("host")
    require_tools("cmake", "c++", packages=("cmake", "g++"))
    networks = {"alpha": compile_saved(tmp_path, ALPHA, "alpha"), "beta": compile_saved(tmp_path, BETA, "beta")}
    capsys.readouterr()
    alpha = networks["alpha"][2]
    cmake(alpha, alpha / "build")
    assert (alpha / "build" / "libalpha.a").is_file()
    check_outputs(alpha / "build" / "alpha_main", {"alpha": networks["alpha"]}, tmp_path)
    assert "idf_component_register(" in (alpha / "CMakeLists.txt").read_text()
    assert "zephyr_library_named(alpha)" in (alpha / "zephyr" / "CMakeLists.txt").read_text()
    assert (alpha / "zephyr" / "module.yml").read_text().splitlines()[2:] == ["name: alpha", "build:", "  cmake: zephyr"]
    assert json.loads((alpha / "idf_component.yml").read_text().splitlines()[2].split(": ", 1)[1]) == __version__
    (tmp_path / "CMakeLists.txt").write_text(PARENT)
    (tmp_path / "main.cpp").write_text(PROGRAM)
    cmake(tmp_path, tmp_path / "build")
    check_outputs(tmp_path / "build" / "two_networks", networks, tmp_path)


@pytest.mark.parametrize("prefix", ["9lives", "a-b", "net_", "a__b", "_x", "", "x" * 33, "caf\u00e9"])
def test_a_bad_prefix_is_one_line_and_status_2(tmp_path, capsys, prefix):
    require_target("host")
    assert main(["compile", "mcunet-vww5", "--prefix", prefix, "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--prefix {prefix!r} is not a C identifier" in err
    assert not (tmp_path / "out").exists()


def test_verify_runs_a_saved_plan_under_a_prefix(tmp_path, capsys):
    """`verify --plan` checks the very plan `plan -o` wrote (not one planned again), with the C
    named by --prefix; a paper cost model plan file is refused by `compile --plan` as by `run`."""
    require_target("host")
    model = tmp_path / "beta.json"
    model.write_text(json.dumps(BETA))
    plan_file = tmp_path / "plan.json"
    assert main(["plan", str(model), "--strategy", "vanilla", "-o", str(plan_file)]) == 0
    saved = json.loads(plan_file.read_text())
    capsys.readouterr()
    assert main(["verify", str(model), "--plan", str(plan_file), "--prefix", "beta", "--json",
                 "-o", str(tmp_path / "c")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["bit_exact"] and doc["plan"] == saved and doc["arena_bytes"] == saved["peak_ram_bytes"]
    assert "int beta_invoke(const beta_value *input" in (tmp_path / "c" / "model.h").read_text()
    paper = tmp_path / "paper.json"
    assert main(["plan", str(model), "--cost-model", "paper", "-o", str(paper)]) == 0
    capsys.readouterr()
    assert main(["compile", str(model), "--plan", str(paper), "-o", str(tmp_path / "p")]) == 2
    assert "exact cost model" in capsys.readouterr().err


def test_a_compile_removes_only_the_files_an_earlier_compile_wrote(tmp_path, capsys):
    """An fe310 compile writes input.c; a host compile into the same folder removes it (a build
    that takes every .c file would link a stale input), and a --prefix compile's
    kernels/msfcnn_prefix.h is the default one again. The user's own files stay, and so does an
    input.c that msfcnn did not write."""
    require_target("host")
    require_target("fe310")  # compile checks the target's tools
    model = tmp_path / "beta.json"
    model.write_text(json.dumps(BETA))
    out = tmp_path / "out"
    mine = [out / "app.c", out / "kernels" / "board.c", out / "notes.txt"]
    for path in mine:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("/* the user's */\n")
    assert main(["compile", str(model), "--target", "fe310", "--prefix", "beta", "-o", str(out)]) == 0
    assert (out / "input.c").is_file() and "beta_msf_conv2d_s8" in (out / "kernels" / "msfcnn_prefix.h").read_text()
    listed = (out / "msfcnn-files.txt").read_text().splitlines()
    assert "input.c" in listed and "kernels/conv2d.c" in listed and "app.c" not in listed
    assert main(["compile", str(model), "-o", str(out)]) == 0
    assert not (out / "input.c").exists() and "#define msf_" not in (out / "kernels" / "msfcnn_prefix.h").read_text()
    assert all(path.read_text() == "/* the user's */\n" for path in mine)
    assert {p.name for p in out.glob("*.c")} == {"model.c", "weights.c", "main.c", "app.c"}
    # A folder written before the manifest existed: only an input.c msfcnn wrote goes.
    for text, kept in (("/* The harness's input tensor of beta in (H, W, C) order */\n", False), ("int x;\n", True)):
        (out / "msfcnn-files.txt").unlink()
        (out / "input.c").write_text(text)
        assert main(["compile", str(model), "-o", str(out)]) == 0
        assert (out / "input.c").exists() == kept
    capsys.readouterr()


def test_every_template_and_kernel_file_is_package_data():
    """`pip install .` (not editable) ships only the files pyproject.toml's package-data names:
    every template (zephyr/ too) and kernel file must match one of its patterns."""
    import tomllib
    from support.paths import ROOT
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["msfcnn"]
    package = ROOT / "src" / "msfcnn"
    shipped = {path for pattern in patterns for path in package.glob(pattern)}
    needed = [p for folder in ("codegen/templates", "codegen/kernels") for p in (package / folder).rglob("*")
              if p.is_file() and p.suffix in (".j2", ".c", ".h")]
    assert needed and [p for p in needed if p not in shipped] == []


def test_weights_are_const_in_rodata_unless_their_section_macro_says_otherwise(tmp_path, capsys):
    target = require_target("host")
    require_tools("objdump", packages=("binutils",))
    folder = compile_saved(tmp_path, BETA, "beta")[2]
    capsys.readouterr()
    cflags = shlex.split(target.cflags)
    sections = {}
    for name, define in (("default", []), ("moved", ['-DBETA_WEIGHTS_SECTION=__attribute__((section(".nn_flash")))'])):
        obj = tmp_path / f"{name}.o"
        run("cc", *cflags, *define, "-c", folder / "weights.c", "-o", obj)
        table = [line.split() for line in run("objdump", "-t", obj).splitlines()]
        sections[name] = {row[-1]: row[-3] for row in table if row and row[-1].startswith("beta_op")}
    assert sections["default"] and set(sections["default"].values()) == {".rodata"}
    assert sections["moved"].keys() == sections["default"].keys() and set(sections["moved"].values()) == {".nn_flash"}

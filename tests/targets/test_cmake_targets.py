"""The generated CMakeLists.txt with a cross compiler: CMake builds the library and the harness
for a microcontroller target with that target's flags (as the Makefile has them), and the program
runs under QEMU bit-exact with the numpy executor."""

import pytest

from support.c_library import ALPHA, check_outputs, cmake, compile_saved
from support.toolchains import require_target, require_tools


@pytest.mark.slow
def test_cmake_cross_builds_the_library_and_harness_for_cortex_m4(tmp_path, capsys):
    target = require_target("cortex-m4")
    require_tools("cmake", packages=("cmake",))
    network = compile_saved(tmp_path, ALPHA, "alpha", ("--max-overhead", "1.3"), target=target.name)
    capsys.readouterr()
    folder = network[2]
    cmake(folder, folder / "build", "-DCMAKE_SYSTEM_NAME=Generic", f"-DCMAKE_C_COMPILER={target.cc}",
          f"-DCMAKE_C_FLAGS={target.cflags}", f"-DCMAKE_EXE_LINKER_FLAGS={target.ldflags}",
          "-DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY")
    assert (folder / "build" / "libalpha.a").is_file()
    check_outputs(folder / "build" / "alpha_main", {"alpha": network}, tmp_path,
                  lambda program, *paths: target.run_command(*map(str, (program, *paths))))

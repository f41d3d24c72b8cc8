"""Generated C on emulated microcontrollers (QEMU system emulation, picolibc, semihosting): the
same bit-exact results, and the same arena in the target's object file, as the numpy executor
predicts; on the 16 KiB FE310, every plan that fits. Plus what a user sees of a target: the
Makefile builds for it, a plan too big for the board and a missing toolchain are one clear line."""

import json
import re
import subprocess

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from support import cache
from support.c_build import check_c
from support.fused_cases import networks, random_plan
from msfcnn import targets
from msfcnn.cli import main
from msfcnn.cost import exact
from msfcnn.errors import UserError
from msfcnn.frontends import builtin_names
from msfcnn.frontends.layer_list import graph_from_layer_list
from msfcnn.frontends.random_weights import with_random_weights
from msfcnn.fusion import solvers
from support.paths import FIXTURE_MODELS, FIXTURES
from support.toolchains import require_target

MICROCONTROLLERS = ("cortex-m4", "cortex-m7")
FITS_FE310 = ("mcunet-vww-res", "mcunet-vww5", "mobilenetv2-0.35")  # least-RAM arena + output < 16 KiB


@pytest.mark.parametrize("target", MICROCONTROLLERS)
@pytest.mark.parametrize("name", sorted(builtin_names()))
def test_builtin_models_least_ram_plans(name, target):
    graph = cache.model(name, weights=True)
    check_c(graph, solvers.min_peak_ram(cache.dag(graph)).blocks, target=target)


@pytest.mark.parametrize("path", FIXTURE_MODELS, ids=lambda p: p.name)
def test_fixture_models_random_plans(path):
    """Every TFLite / ONNX fixture, on one of the two cores (alternating)."""
    graph = cache.model(str(path))
    target = MICROCONTROLLERS[FIXTURE_MODELS.index(path) % 2]
    check_c(graph, random_plan(cache.dag(graph), 5), target=target, seed=5)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(networks(), st.integers(0, 10_000))
def test_random_networks_and_plans(doc, seed):
    try:
        graph = with_random_weights(graph_from_layer_list(doc))
    except UserError:
        return  # shapes that do not work out: the loader's errors are tested elsewhere
    check_c(graph, random_plan(exact.build_dag(graph), seed), target=MICROCONTROLLERS[seed % 2], seed=seed)


@pytest.mark.parametrize("name", FITS_FE310)
def test_builtin_models_on_the_16_kib_fe310(name):
    """The least-RAM plans of these networks, MobileNetV2-0.35 at 144x144 with its 1000-class
    head included, run in the FE310's 16 KiB (input and weights in flash)."""
    graph = cache.model(name, weights=True)
    plan = solvers.min_peak_ram(cache.dag(graph))
    assert check_c(graph, plan.blocks, target="fe310") == plan.peak_ram


@pytest.mark.parametrize("name", sorted(set(builtin_names()) - set(FITS_FE310)))
def test_plans_too_big_for_the_fe310_are_one_clear_line(name, capsys):
    """Their least-RAM plans do not fit: the line says so, and asks for no impossible cap."""
    require_target("fe310")
    assert main(["verify", name, "--target", "fe310"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "does not fit in the 16384 B of RAM of fe310" in err
    assert "no plan fits" in err and "--max-ram" not in err


FE310_TOO_BIG = {
    # It does not link; no plan within F <= 1.1 fits, so the advice raises the overhead cap too.
    "overflow": ("mcunet-vww-res", ["--max-overhead", "1.1"], r"pass (--max-ram \d+ --max-overhead [0-9.]+)$"),
}
# (A plan that links but whose stack runs into the static data no longer exists among the
# built-ins: since the window loop was written once, their networks' stacks stay within the 2 KiB
# picolibc reserves (1.3-1.9 KiB measured). The advice for that case is tested in tests/unit.)


def without_caps(options):
    """The (option, value) pairs other than --max-ram and --max-overhead."""
    pairs = zip(options[::2], options[1::2])
    return [word for pair in pairs if pair[0] not in ("--max-ram", "--max-overhead") for word in pair]


@pytest.mark.parametrize("case", FE310_TOO_BIG)
def test_fe310_advice_works_when_followed(capsys, case):
    """A plan that does not fit the FE310: the options the error names, in place of the caps
    given, give a plan that builds and runs there."""
    require_target("fe310")
    model, options, pattern = FE310_TOO_BIG[case]
    assert main(["verify", model, *options, "--target", "fe310"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "does not fit in the 16384 B of RAM of fe310" in err
    advice = re.search(pattern, err)
    assert advice, err
    follow = ["verify", model, *without_caps(options), *advice.group(1).split(), "--target", "fe310"]
    assert main(follow) == 0, capsys.readouterr().err


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(networks(), st.integers(0, 10_000))
def test_random_networks_least_ram_plans_on_the_fe310(doc, seed):
    try:
        graph = with_random_weights(graph_from_layer_list(doc))
    except UserError:
        return  # shapes that do not work out
    plan = solvers.min_peak_ram(exact.build_dag(graph))
    assume(plan.peak_ram + graph.nbytes(graph.output) < 12 * 1024)  # leaves 4 KiB for stack and libc
    check_c(graph, plan.blocks, target="fe310", seed=seed)


# Every built-in model's least-RAM plan (all fit its 400 KiB) and a float network: QEMU's esp32c3
# CPU has no F or D, so the float kernels must run in soft float (an FPU instruction would fault).
ESP32C3_MODELS = (*sorted(builtin_names()), str(FIXTURES / "models" / "onnx_conv_bn_relu.onnx"))


@pytest.mark.parametrize("name", ESP32C3_MODELS, ids=lambda n: n.rsplit("/", 1)[-1])
def test_models_on_the_esp32c3(name):
    graph = cache.model(name, weights=True)
    plan = solvers.min_peak_ram(cache.dag(graph))
    assert check_c(graph, plan.blocks, target="esp32c3") == plan.peak_ram


# The ESP8266's core, 80 KiB of RAM: every built-in model's least-RAM plan (all fit; those with an
# int8 softmax do float arithmetic in msfcnn's soft float), and a float network (soft float
# throughout, int to float for the average).
XTENSA_MODELS = (*sorted(builtin_names()), str(FIXTURES / "models" / "onnx_gap_linear.onnx"))


@pytest.mark.parametrize("name", XTENSA_MODELS, ids=lambda n: n.rsplit("/", 1)[-1])
def test_models_on_the_xtensa_lx106(name):
    require_target("xtensa-lx106")
    graph = cache.model(name, weights=True)
    plan = solvers.min_peak_ram(cache.dag(graph))
    assert check_c(graph, plan.blocks, target="xtensa-lx106") == plan.peak_ram


PROGRAM = """#include <stdio.h>
volatile int x;
int main(void) { %s; printf("ran %%d\\n", x); return 0; }
"""


def test_the_esp32c3_build_is_rv32imc_and_its_cpu_faults_on_atomics(tmp_path):
    """The target's build uses the ESP32-C3's extensions (M and C, no A, F or D); a program built
    with atomics (rv32imac) faults on the target's QEMU CPU instead of running."""
    tgt = require_target("esp32c3")
    cases = {"rv32imc": ("x += 1", True), "rv32imac": ("__atomic_fetch_add(&x, 1, __ATOMIC_SEQ_CST)", False)}
    for march, (statement, runs) in cases.items():
        source, program = tmp_path / f"{march}.c", tmp_path / f"{march}.elf"
        source.write_text(PROGRAM % statement)
        flags = tgt.cflags.replace("-march=rv32imc", f"-march={march}")
        done = subprocess.run([tgt.cc, *flags.split(), *tgt.ldflags.split(), "-o", str(program), str(source)],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        ran = subprocess.run(tgt.run_command(str(program), "in", "out"), capture_output=True, text=True, timeout=60)
        assert (ran.returncode == 0 and ran.stdout == "ran 1\n") == runs, ran.stdout + ran.stderr
    attributes = subprocess.run([tgt.nm.removesuffix("nm") + "readelf", "-A", str(tmp_path / "rv32imc.elf")],
                                capture_output=True, text=True, check=True).stdout
    arch = re.search(r'Tag_RISCV_arch: "(\w+)"', attributes).group(1)
    extensions = {part.rstrip("0123456789p") for part in arch.split("_")}
    assert {"rv32i", "m", "c"} <= extensions and not {"a", "f", "d"} & extensions, arch


@pytest.mark.parametrize("target, ram", [("esp32c3", 409600), ("xtensa-lx106", 81920)])
def test_the_ram_limit_is_enforced(target, ram, tmp_path, capsys):
    """Unfused, this network's 432 KiB intermediate tensor overflows the RAM the linker script
    gives the program (400 KiB; 80 KiB): one line, naming the board's RAM (fused, it runs in a 48 B
    arena)."""
    require_target(target)
    conv = {"op": "conv2d", "kernel": 1, "stride": 1, "padding": "same"}
    model = tmp_path / "wide.json"
    model.write_text(json.dumps({"name": "wide", "input": [96, 96, 8], "layers": [
        {**conv, "filters": 48, "act": "relu"}, {**conv, "filters": 8}]}))
    assert main(["verify", str(model), "--strategy", "vanilla", "--target", target]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"does not fit in the {ram} B of RAM of {target}" in err, err


@pytest.mark.parametrize("target, machine", [("cortex-m4", 40), ("fe310", 243), ("esp32c3", 243),
                                             ("xtensa-lx106", 94)])  # EM_ARM, EM_RISCV, EM_XTENSA
def test_compiled_makefile_builds_for_the_target(target, machine, tmp_path):
    require_target(target)
    out = tmp_path / target
    assert main(["compile", "mcunet-vww5", "--target", target, "-o", str(out)]) == 0
    done = subprocess.run(["make", "-s", "-C", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    header = (out / "build" / "msfcnn_main").read_bytes()[:20]
    assert header[:4] == b"\x7fELF" and int.from_bytes(header[18:20], "little") == machine


def test_a_program_that_never_exits_is_an_error_after_the_timeout(monkeypatch, tmp_path):
    """As qemu-system-xtensa waiting forever on a missing file: the run stops at the timeout, and
    verify reports it in one line (a RuntimeError, not a raw subprocess exception)."""
    from msfcnn.codegen import build
    monkeypatch.setattr(build, "RUN_TIMEOUT", 1)
    hangs = targets.Target("hangs", "cc", "-O2", command=("sleep", "30"))
    graph = cache.model("mcunet-vww5")
    (tmp_path / "build").mkdir()
    with pytest.raises(RuntimeError, match=r"did not finish in 1 s on hangs"):
        build.run(tmp_path / "build" / "msfcnn_main", hangs, graph, np.zeros(graph.input_shape, graph.element.numpy))


def test_missing_toolchain_names_the_packages(monkeypatch, capsys):
    fake = targets.Target("fake-mcu", "no-such-gcc", "-O2", packages=("gcc-fake", "qemu-fake"))
    monkeypatch.setitem(targets.TARGETS, "fake-mcu", fake)
    with pytest.raises(UserError, match=r"no-such-gcc.*apt-get install gcc-fake qemu-fake"):
        targets.get_target("fake-mcu")
    assert main(["verify", "mcunet-vww5", "--target", "no-such-board"]) == 2
    err = capsys.readouterr().err
    assert "unknown target 'no-such-board'" in err and "cortex-m4" in err and len(err.strip().splitlines()) == 1


def test_qemu_option_paths_escape_commas():
    command = targets.TARGETS["cortex-m4"].run_command("/a,b/prog", "/a,b/in.bin", "/a,b/out.bin")
    assert "enable=on,target=native,arg=/a,,b/in.bin,arg=/a,,b/out.bin" in command
    assert command[-1] == "/a,b/prog"  # a whole word is passed as it is

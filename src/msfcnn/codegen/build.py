"""Write a generated C project to a folder, build it with a target's compiler, run it, and read
the arena's size off the built object."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import UserError
from ..files import write_atomic, write_folder
from ..ir import Graph
from ..plan import Plan
from ..schedule import Schedule
from ..targets import TARGETS, Target
from .emit import DEFAULT_PREFIX, generate, harness_input, harness_values, kernel_sources, output_element, project_kernels


def write_project(folder: Path, graph: Graph, schedule: Schedule, plan: Plan,
                  target: Target = TARGETS["host"], prefix: str = DEFAULT_PREFIX) -> list[Path]:
    """model.h, model.c, weights.[ch], main.c, a Makefile for `target` and kernels/ in `folder`;
    every external name starts with `prefix`."""
    generated = generate(graph, schedule, plan, target, prefix)  # a bad prefix is refused before any write
    # only the kernel files the network needs (and the headers they include)
    files = {folder / "kernels" / name: text for name, text in project_kernels(generated["model.c"]).items()}
    files.update({folder / name: text for name, text in generated.items()})  # kernels/msfcnn_prefix.h too
    files[folder / MANIFEST] = _manifest(folder, files)
    write_folder(folder, files, _stale_files(folder, set(files)))  # all or nothing
    return sorted(files)


# The files a compile wrote into its folder, one relative path a line: the next compile into the
# same folder removes those it does not write again (an input.c for another target, a file of an
# older version), so that a build that takes every .c file (Arduino) sees only this network's.
MANIFEST = "msfcnn-files.txt"
# Folders written before the manifest existed: an input.c that msfcnn wrote starts so.
_OLD_INPUT_C = ("input.c", "/* The harness's input tensor of ")


def _manifest(folder: Path, files) -> str:
    names = sorted(path.relative_to(folder).as_posix() for path in files)
    return ("# Files written by msfcnn compile; the next compile into this folder removes those it does not\n"
            "# write again. Files not listed here are never touched.\n" + "".join(f"{name}\n" for name in names))


def _stale_files(folder: Path, written: set[Path]) -> list[Path]:
    """Files an earlier compile wrote into `folder` (its manifest) that are not in `written`."""
    try:
        lines = (folder / MANIFEST).read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        old = folder / _OLD_INPUT_C[0]
        try:
            lines = [_OLD_INPUT_C[0]] if old.read_text(errors="replace").startswith(_OLD_INPUT_C[1]) else []
        except OSError:
            lines = []
    root = folder.resolve()
    stale = []
    for line in lines:
        path = folder / line
        if (line and not line.startswith("#") and path not in written and path.is_file()
                and path.resolve().parent.is_relative_to(root)):
            stale.append(path)
    return stale


KERNEL_LIBRARY = "libmsfcnn_kernels.a"
# Where the Makefile puts objects and the program, inside the project (its BUILD_DIR default).
BUILD_DIR = "build"
PROGRAM = "msfcnn_main"

# picolibc's linker script reserves 2 KiB of stack on a board with little RAM (fe310), but the
# harness calling msfcnn_invoke may use more: 1.2 to 2.5 KiB measured on plans of the built-in
# models. Advice to shrink a plan that does not fit keeps this much more RAM free for the stack.
STACK_HEADROOM = 768


class DoesNotFit(UserError):
    """The plan's program needs more RAM than the board has. `excess`: how many bytes the plan's
    peak RAM must shrink by to fit (stack headroom included), for advice that knows the plans."""

    def __init__(self, message: str, excess: int):
        super().__init__(message)
        self.excess = excess


def _make(folder: Path, target: Target, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "-s", "-j2", "-C", str(folder), f"CC={target.cc}", f"CFLAGS={target.cflags}",
                           f"LDFLAGS={target.ldflags}", *arguments], capture_output=True, text=True)


def build_kernel_library(folder: Path, target: Target) -> Path:
    """Compile a written project's kernels/ into an archive, with the target's compiler and flags
    exactly as `build` compiles them, for `build(..., kernel_lib=...)` of other networks for the
    same target (the kernels do not depend on the network). The project holds only its own
    network's kernels: the rest of the library is added to its kernels/ first, so that the archive
    serves any network."""
    for name, text in kernel_sources().items():
        if not (folder / "kernels" / name).exists():  # (its own msfcnn_prefix.h stays)
            write_atomic(folder / "kernels" / name, text)
    every = " ".join(sorted(f"kernels/{name}" for name in kernel_sources() if name.endswith(".c")))
    result = _make(folder, target, KERNEL_LIBRARY, f"KERNELS={every}")
    if result.returncode != 0:
        raise RuntimeError(f"the kernels did not build:\n{result.stdout}{result.stderr}")
    return folder / BUILD_DIR / KERNEL_LIBRARY


def build(folder: Path, target: Target, kernel_lib: Path | None = None) -> Path:
    """Compile with the target's compiler and flags; returns the harness program. With
    `kernel_lib` (from `build_kernel_library` for the same target) the kernels are linked from
    it instead of being compiled again."""
    result = _make(folder, target, *([f"KERNEL_LIB={Path(kernel_lib).resolve()}"] if kernel_lib else []))
    if result.returncode != 0:
        overflow = re.search(r"region .?ram.? overflowed by (\d+) bytes", result.stdout + result.stderr)
        if overflow and target.ram_bytes:
            raise DoesNotFit(f"the plan does not fit in the {target.ram_bytes} B of RAM of {_where(target)}: the arena, "
                             f"the output, the stack and the C library overflow it by {overflow.group(1)} B",
                             int(overflow.group(1)) + STACK_HEADROOM)
        raise RuntimeError(f"the generated C did not build:\n{result.stdout}{result.stderr}")
    return folder / BUILD_DIR / PROGRAM


def project_of(program: Path) -> Path:
    """The project folder of a program that `build` made (in the project's BUILD_DIR)."""
    return Path(program).resolve().parent.parent


# Seconds a run may take before it counts as hung.
RUN_TIMEOUT = 600


def _where(target: Target) -> str:
    return target.name if target.board is None else f"{target.board} (on {target.name})"


@dataclass(frozen=True)
class HarnessRun:
    output: np.ndarray  # the network's last tensor, (H, W, C) order, int8 or float32
    stack_bytes: int | None  # stack the network used, where the harness measures it (embedded)
    frames_bytes: int | None = None  # the start-up code's and main's frames above that point (embedded)


def run(program: Path, target: Target, graph: Graph, x, kernel_lib: Path | None = None,
        prefix: str = DEFAULT_PREFIX, steps: int = 1) -> HarnessRun:
    """Run the harness on one input tensor of `graph` (H, W, C order; a list of them, one per input,
    for a model with several); `kernel_lib` as for `build`,
    `prefix` the one the project was written with. A stateful model's file harness runs a
    sequence: `steps` inputs in `x` (a list, one per step), `steps` outputs one after the other."""
    program = Path(program).resolve()
    folder = program.parent  # the input and output files go beside the program (icount reads them there)
    if target.embedded_harness:  # the input is compiled in: write it into the project, and build again
        write_atomic(project_of(program) / "input.c", harness_input(graph, x, prefix))
        build(project_of(program), target, kernel_lib)
    else:
        (folder / "input.bin").write_bytes(harness_values(graph, x).tobytes())
    (folder / "output.bin").unlink(missing_ok=True)
    command = target.run_command(str(program), str(folder / "input.bin"), str(folder / "output.bin"))
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:  # never exits (qemu-system-xtensa even hangs on a missing file)
        raise RuntimeError(f"the generated program did not finish in {RUN_TIMEOUT} s on {target.name}") from None
    printed = re.search(r"^msfcnn-output ([0-9a-f]*)$", result.stdout, re.M)
    stack = re.search(r"^msfcnn-stack (\d+) (\d+)$", result.stdout, re.M)
    frames = re.search(r"^msfcnn-frames (\d+)$", result.stdout, re.M)
    if result.returncode != 0 or (target.embedded_harness and (printed is None or stack is None)):
        raise RuntimeError(f"the generated program failed ({result.returncode}) on {target.name}:\n"
                           f"{result.stdout}{result.stderr}")
    if stack is not None and int(stack.group(2)) == 0:
        raise DoesNotFit(f"the plan does not fit in the {target.ram_bytes} B of RAM of {_where(target)}: the stack ran "
                         f"into the static data (it used {stack.group(1)} B)", STACK_HEADROOM)
    raw = bytes.fromhex(printed.group(1)) if target.embedded_harness else (folder / "output.bin").read_bytes()
    # every output, one after the other in the model's order
    size = steps * sum(graph.elements(t) for t in graph.output_tensors)
    output = np.frombuffer(raw, dtype=output_element(graph).numpy)[:size]
    return HarnessRun(output, int(stack.group(1)) if stack else None, int(frames.group(1)) if frames else None)


def static_ram_bytes(program: Path, target: Target) -> int:
    """The RAM a linked embedded program's static data takes, from the start of its RAM region to
    the end of its .bss (picolibc.ld's __ram and __bss_end): the arena, the harness's buffers,
    the C library's data and any alignment between them."""
    result = subprocess.run([target.nm, str(program)], capture_output=True, text=True, check=True)
    symbols = {parts[2]: int(parts[0], 16) for parts in map(str.split, result.stdout.splitlines()) if len(parts) == 3}
    return symbols["__bss_end"] - symbols["__ram"]


def region_arenas(program: Path, target: Target, prefix: str = DEFAULT_PREFIX) -> tuple[dict, ...]:
    """Where a program linked as a board of several regions (Target.region_map) put each arena:
    its address and bytes, its region's origin and length, and whether it lies inside."""
    result = subprocess.run([target.nm, "-S", str(program)], capture_output=True, text=True, check=True)
    at = {parts[3]: (int(parts[0], 16), int(parts[1], 16)) for parts in map(str.split, result.stdout.splitlines())
          if len(parts) == 4}
    found = []
    for name, origin, length in target.region_map:
        address, size = at.get(f"{prefix}_arena_in_{name}", (None, 0))
        if address is not None:
            found.append({"region": name, "origin": origin, "length": length, "address": address, "bytes": size,
                          "inside": origin <= address and address + size <= origin + length})
    return tuple(found)


def arenas_inside_regions(program: Path, target: Target, prefix: str, arena: str = "arena") -> tuple[dict, ...]:
    """`region_arenas` (none on a target of one RAM region), after checking that each arena lies
    inside its region: a RuntimeError names the first that does not."""
    placed = region_arenas(program, target, prefix) if target.region_map else ()
    outside = [r["region"] for r in placed if not r["inside"]]
    if outside:
        raise RuntimeError(f"the {arena} of region {outside[0]} was linked outside that region")
    return placed


def arena_bytes(folder: Path, target: Target, prefix: str = DEFAULT_PREFIX) -> int:
    """Size of the <prefix>_arena symbol (or its aligned float twin; or the sum of the arenas of a
    plan over several regions) in the built model.o (in the project's BUILD_DIR); 0 when
    the plan needs no arena and none is declared."""
    result = subprocess.run([target.nm, "-S", str(folder / BUILD_DIR / "model.o")], capture_output=True, text=True,
                            check=True)
    regions = 0  # a plan over several RAM regions: one arena per region, <prefix>_arena_in_<region>
    for line in result.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3] in (f"{prefix}_arena", f"{prefix}_arena_words"):
            return int(parts[1], 16)
        if len(parts) == 4 and parts[3].startswith(f"{prefix}_arena_in_"):
            regions += int(parts[1], 16)
    return regions  # 0: the plan needed no arena, and the generated code declares none

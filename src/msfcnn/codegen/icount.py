"""Exact counts of the instructions a built harness executes in `msfcnn_invoke`, from its entry to
its return (everything it calls included), on every target.

QEMU targets: a small TCG plugin (icount/msfcnn_icount.c), built once with the host's C compiler,
adds one to a counter per executed guest instruction and logs the counter whenever an instruction
at a marked address executes. The marks are msfcnn_invoke's first instruction and the instruction
after the harness's call to it, both read off the program's disassembly; the difference of the two
logged values is the count. It does not depend on QEMU's translation blocks, timers or the host's
speed, so it is the same on every run (the harness enables no interrupts). The host target counts
with valgrind's callgrind instead (--toggle-collect=msfcnn_invoke), as benchmarks/codegen.py does.

    count_instructions(program, target) -> int

`program` is a harness built by build.build() whose input is in place (build.run() writes it:
input.bin beside the program, or input.c compiled into it on embedded-harness targets).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..targets import Target

FUNCTION = "msfcnn_invoke"
_PLUGIN_SOURCE = "msfcnn_icount.c"
_CALL = re.compile(r"^\s*([0-9a-f]+):\s.*?\b([0-9a-f]+) <" + FUNCTION + r">\s*$")
_LINE = re.compile(r"^\s*([0-9a-f]+):\s")


@dataclass(frozen=True)
class Marks:
    entry: int  # address of the function's first instruction
    back: tuple[int, ...]  # addresses of the instructions after the caller's calls (where they return to)


def plugin_source() -> str:
    return resources.files("msfcnn.codegen").joinpath("icount", _PLUGIN_SOURCE).read_text()


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(base) / "msfcnn"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if os.access(folder, os.W_OK):
            return folder
    except OSError:
        pass
    folder = Path(tempfile.gettempdir()) / f"msfcnn-{os.getuid()}"
    folder.mkdir(exist_ok=True)
    return folder


def plugin_path(cc: str = "cc") -> Path:
    """The plugin's shared object, built on first use and cached by the hash of its source (several
    processes may build it at once: each writes its own file and renames it into place)."""
    source = plugin_source()
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    so = _cache_dir() / f"msfcnn_icount-{digest}.so"
    if so.exists():
        return so
    with tempfile.TemporaryDirectory(prefix="msfcnn-icount-") as tmp:
        src = Path(tmp) / _PLUGIN_SOURCE
        src.write_text(source)
        built = Path(tmp) / "plugin.so"
        done = subprocess.run([cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic", "-shared", "-fPIC",
                               "-fvisibility=hidden", "-o", str(built), str(src)], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"the QEMU instruction-count plugin did not build:\n{done.stdout}{done.stderr}")
        staged = so.with_name(f".{so.name}.{os.getpid()}")
        shutil.copyfile(built, staged)
        os.replace(staged, so)
    return so


def _objdump(target: Target) -> str:
    """The target's objdump, named as its nm is (arm-none-eabi-nm -> arm-none-eabi-objdump)."""
    return target.nm[:-2] + "objdump" if target.nm.endswith("nm") else "objdump"


def find_marks(program: Path, target: Target, caller: str = "main") -> Marks:
    """msfcnn_invoke's entry and the return addresses of its calls in `caller`, from the
    disassembly. Addresses are the ones QEMU reports for instructions (even on Thumb)."""
    listing = subprocess.run([_objdump(target), "-d", "--no-show-raw-insn", f"--disassemble={caller}", str(program)],
                             capture_output=True, text=True, check=True).stdout.splitlines()
    entry, back = None, []
    for n, line in enumerate(listing):
        call = _CALL.match(line)
        if call is None:
            continue
        entry = int(call.group(2), 16)
        following = next((m for m in map(_LINE.match, listing[n + 1:]) if m), None)
        if following is None:
            raise RuntimeError(f"the call to {FUNCTION} is the last instruction of {caller} in {program}")
        back.append(int(following.group(1), 16))
    if entry is None:
        raise RuntimeError(f"no call to {FUNCTION} in {caller} of {program}")
    return Marks(entry, tuple(back))


def counter_tool(target: Target) -> str:
    """What counts on `target`: QEMU's plugin (built with the system compiler), or valgrind."""
    return "cc" if _is_qemu(target) else "valgrind"


def can_count(target: Target) -> bool:
    return shutil.which(counter_tool(target)) is not None


def _is_qemu(target: Target) -> bool:
    return Path(target.command[0]).name.startswith("qemu-system-")


def _escape(path: Path | str) -> str:
    return str(path).replace(",", ",,")  # QEMU's option syntax


def count_instructions(program: Path, target: Target, input_path: Path | None = None,
                       output_path: Path | None = None, timeout: float = 1800) -> int:
    """Instructions executed from the entry of msfcnn_invoke to its return, summed over its calls
    (the harness makes one). Input and output files default to input.bin / output.bin beside the
    program (embedded-harness targets compile the input in and ignore them)."""
    program = Path(program).resolve()
    folder = program.parent
    input_path = Path(input_path) if input_path is not None else folder / "input.bin"
    output_path = Path(output_path) if output_path is not None else folder / "output.bin"
    command = target.run_command(str(program), str(input_path), str(output_path))
    with tempfile.TemporaryDirectory(prefix="msfcnn-icount-") as tmp:
        if _is_qemu(target):
            marks = find_marks(program, target)
            events = Path(tmp) / "events.txt"
            option = ",".join([f"file={_escape(plugin_path())}", f"out={_escape(events)}",
                               *(f"mark={address:#x}" for address in (marks.entry, *marks.back))])
            done = subprocess.run([*command, "-plugin", option], capture_output=True, text=True, timeout=timeout)
            _check(done, target)
            return _count_from_events(events.read_text())
        if command[0] == str(program):  # the host: callgrind
            out = Path(tmp) / "callgrind.out"
            done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                                   f"--toggle-collect={FUNCTION}", *command], capture_output=True, text=True,
                                  timeout=timeout)
            _check(done, target)
            text = out.read_text()
            found = re.search(r"^summary:\s+(\d+)", text, re.M) or re.search(r"^totals:\s+(\d+)", text, re.M)
            if found is None:
                raise RuntimeError(f"callgrind wrote no total to {out}")
            return int(found.group(1))
    raise ValueError(f"cannot count instructions on target {target.name}: neither QEMU nor the host")


def _check(done: subprocess.CompletedProcess, target: Target) -> None:
    if done.returncode != 0:
        raise RuntimeError(f"the program failed ({done.returncode}) on {target.name} while counting "
                           f"instructions:\n{done.stdout}{done.stderr}")


def _count_from_events(text: str) -> int:
    """Sum of (return - entry) over the entry / return pairs the plugin logged (mark 0 is the entry,
    the others are return addresses)."""
    total, entered, calls = 0, None, 0
    for line in text.splitlines():
        mark, value = line.split()
        if mark == "end":
            continue
        if (mark == "0") == (entered is not None):
            raise RuntimeError(f"unbalanced calls of {FUNCTION} in the instruction-count events:\n{text}")
        if mark == "0":
            entered = int(value)
        else:
            total += int(value) - entered
            entered, calls = None, calls + 1
    if calls == 0:
        raise RuntimeError(f"{FUNCTION} was never called and returned (instruction-count events:\n{text})")
    return total

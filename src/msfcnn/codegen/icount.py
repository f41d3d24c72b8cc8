"""Exact counts of the instructions a built harness executes in `msfcnn_invoke`, from its entry to
its return (everything it calls included), on every target, in total and block by block.

QEMU targets: a small TCG plugin (icount/msfcnn_icount.c), built once with the host's C compiler,
adds one to a counter per executed guest instruction and logs the counter whenever an instruction
at a marked address executes. The marks are msfcnn_invoke's first instruction, the instruction
after the harness's call to it, and msfcnn_invoke's call of each block function (`blockN`, which
the generated C keeps out of line), all read off the program's disassembly; differences of the
logged values are the counts. It does not depend on QEMU's translation blocks, timers or the host's
speed, so it is the same on every run (the harness enables no interrupts). The host target counts
with valgrind's callgrind instead (--toggle-collect=msfcnn_invoke, as benchmarks/codegen.py does),
which dumps its counters whenever a block function is entered (--dump-before).

Block N's count runs from its call to the next block's call: the block, its call, and what
msfcnn_invoke does after it (the memmoves that slide live tensors between blocks, the copy of the
output on the last block); block 0 also takes msfcnn_invoke's entry and the copy of the input.
The counts add up to the total exactly.

On a target with a vector extension (Target.vector_extension: "mve" on the Cortex-M55) the plugin
also counts the vector instructions among them, from a list of their addresses read off the whole
program's disassembly: an MVE instruction names a Q register or the VPR (p0), or is a VPT, VPST,
VCTP or VPNOT. The low-overhead loop instructions (DLSTP, LETP, ...) are not vector instructions.

    count_instructions(program, target) -> int
    measure(program, target) -> Count  (.total, .blocks)

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
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

from ..targets import Target

FUNCTION = "msfcnn_invoke"
_PLUGIN_SOURCE = "msfcnn_icount.c"
MAX_MARKS = 4096  # the plugin's limit (icount/msfcnn_icount.c)
def _call_of(function: str) -> re.Pattern:
    """A disassembled call of `function`: (its address, the callee's address)."""
    return re.compile(r"^\s*([0-9a-f]+):\s.*?\b([0-9a-f]+) <" + re.escape(function) + r">\s*$")
_LINE = re.compile(r"^\s*([0-9a-f]+):\s")
# A call (or tail call) of a block function; gcc may name a clone of it block3.constprop.0 (or, on
# Xtensa, block3$constprop$0).
_BLOCK_CALL = re.compile(r"^\s*([0-9a-f]+):\s.*?\b[0-9a-f]+ <(block(\d+)(?:[.$][\w.$]+)?)>\s*$")


@dataclass(frozen=True)
class Marks:
    entry: int  # address of the function's first instruction
    back: tuple[int, ...]  # addresses of the instructions after the caller's calls (where they return to)
    blocks: tuple[tuple[int, int], ...] = ()  # (address of a call of a block function in FUNCTION, block index)
    # block index -> the block function's symbol, for the blocks FUNCTION calls. A block whose
    # function does nothing (a reshape that only renames bytes) may have no call at all: GCC
    # removes calls of functions without side effects, noinline or not. It executes nothing.
    block_names: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Count:
    total: int  # instructions from the entry of msfcnn_invoke to its return, summed over its calls
    blocks: tuple[int, ...]  # the same, block by block in schedule order (sums to total); () without blocks
    vector: int | None = None  # of the total, vector instructions (targets with a vector extension)


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


def _disassemble(program: Path, target: Target, function: str) -> list[str]:
    return subprocess.run([_objdump(target), "-d", "--no-show-raw-insn", f"--disassemble={function}", str(program)],
                          capture_output=True, text=True, check=True).stdout.splitlines()


# objdump's machine option that decodes the extension, and a vector instruction's disassembly
_VECTOR_DECODERS = {"mve": ("-marmv8.1-m.main", re.compile(
    r"^\s*([0-9a-f]+):\s+(?:vpst|vpt|vctp|vpnot|v\S*\s.*\b(?:q[0-7]|p0)\b)"))}


def vector_addresses(program: Path, target: Target) -> list[int]:
    """The addresses of the program's vector instructions (see the module)."""
    machine, vector = _VECTOR_DECODERS[target.vector_extension]
    listing = subprocess.run([_objdump(target), "-d", "--no-show-raw-insn", machine, str(program)],
                             capture_output=True, text=True, check=True).stdout.splitlines()
    return [int(found.group(1), 16) for found in map(vector.match, listing) if found]


def find_marks(program: Path, target: Target, caller: str = "main", function: str = FUNCTION) -> Marks:
    """msfcnn_invoke's entry, the return addresses of its calls in `caller`, and its calls of the
    block functions, from the disassembly. Addresses are the ones QEMU reports for instructions
    (even on Thumb)."""
    listing = _disassemble(program, target, caller)
    calls = _call_of(function)
    entry, back = None, []
    for n, line in enumerate(listing):
        call = calls.match(line)
        if call is None:
            continue
        entry = int(call.group(2), 16)
        following = next((m for m in map(_LINE.match, listing[n + 1:]) if m), None)
        if following is None:
            raise RuntimeError(f"the call to {function} is the last instruction of {caller} in {program}")
        back.append(int(following.group(1), 16))
    if entry is None:
        raise RuntimeError(f"no call to {function} in {caller} of {program}")
    blocks, names = [], {}
    for line in _disassemble(program, target, function):
        call = _BLOCK_CALL.match(line)
        if call:
            blocks.append((int(call.group(1), 16), int(call.group(3))))
            names[int(call.group(3))] = call.group(2)
    return Marks(entry, tuple(back), tuple(blocks), dict(sorted(names.items())))


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
    return measure(program, target, input_path, output_path, timeout).total


def measure(program: Path, target: Target, input_path: Path | None = None, output_path: Path | None = None,
            timeout: float = 1800, n_blocks: int | None = None, function: str = FUNCTION,
            caller: str = "main") -> Count:
    """The total of count_instructions and its split over the block functions (see the module):
    `n_blocks` of them (default: up to the last one called); a block never called counts 0.
    `caller` is the function that calls `function` (main, or the several-output entry point)."""
    program = Path(program).resolve()
    folder = program.parent
    input_path = Path(input_path) if input_path is not None else folder / "input.bin"
    output_path = Path(output_path) if output_path is not None else folder / "output.bin"
    command = target.run_command(str(program), str(input_path), str(output_path))
    with tempfile.TemporaryDirectory(prefix="msfcnn-icount-") as tmp:
        if _is_qemu(target):
            marks = find_marks(program, target, caller, function)
            addresses = (marks.entry, *marks.back, *(address for address, _ in marks.blocks))
            if len(addresses) > MAX_MARKS:
                raise RuntimeError(f"{len(addresses)} addresses to mark, more than the counter's {MAX_MARKS}")
            events = Path(tmp) / "events.txt"
            option = ",".join([f"file={_escape(plugin_path())}", f"out={_escape(events)}",
                               *(f"mark={address:#x}" for address in addresses)])
            if target.vector_extension:
                vectors = Path(tmp) / "vectors.txt"
                vectors.write_text("".join(f"{a:x}\n" for a in vector_addresses(program, target)))
                option += f",vectors={_escape(vectors)}"
            _run([*command, "-plugin", option], target, timeout)
            count = _count_from_events(events.read_text(), len(marks.back), [k for _, k in marks.blocks],
                                       _blocks(marks, n_blocks))
            return replace(count, vector=count.vector if target.vector_extension else None)
        if command[0] == str(program):  # the host: callgrind
            marks = find_marks(program, target, caller, function)
            names = marks.block_names
            out = Path(tmp) / "callgrind.out"
            _run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", f"--toggle-collect={function}",
                  *(f"--dump-before={name}" for name in names.values()), *command], target, timeout)
            return _count_from_dumps(sorted(Path(tmp).glob("callgrind.out*")), names, _blocks(marks, n_blocks))
    raise ValueError(f"cannot count instructions on target {target.name}: neither QEMU nor the host")


def _run(command: list[str], target: Target, timeout: float) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"the program did not finish in {timeout:g} s on {target.name} while counting "
                           f"instructions") from None
    if done.returncode != 0:
        raise RuntimeError(f"the program failed ({done.returncode}) on {target.name} while counting "
                           f"instructions:\n{done.stdout}{done.stderr}")


def _blocks(marks: Marks, n_blocks: int | None) -> int:
    called = max(marks.block_names) + 1 if marks.block_names else 0
    if n_blocks is not None and n_blocks < called:
        raise RuntimeError(f"{FUNCTION} calls block{called - 1} of a plan of {n_blocks} blocks")
    return called if n_blocks is None else n_blocks


def _count_from_events(text: str, n_back: int, block_of_mark: list[int], n_blocks: int | None = None) -> Count:
    """Total and per-block counts from the events the plugin logged: mark 0 is msfcnn_invoke's
    entry, marks 1..n_back the return addresses, the others calls of blocks (block_of_mark[i] for
    mark 1 + n_back + i). A block's segment runs from its call to the next call or the return; the
    entry's instructions before the first block go to that block."""
    total, entered, calls = 0, None, 0
    vector, vector_entered = 0, 0
    blocks = [0] * (n_blocks if n_blocks is not None else max(block_of_mark) + 1 if block_of_mark else 0)
    last = max(block_of_mark) if block_of_mark else None
    current, start = None, 0
    for line in text.splitlines():
        mark, value, *vectors = line.split()
        if mark == "end":
            continue
        mark, value, vectors = int(mark), int(value), int(vectors[0]) if vectors else 0
        if (mark == 0) == (entered is not None):
            raise RuntimeError(f"unbalanced calls of {FUNCTION} in the instruction-count events:\n{text}")
        if mark == 0:
            entered, current, start, vector_entered = value, None, value, vectors
        elif mark > n_back:  # a block is called
            block = block_of_mark[mark - 1 - n_back]
            if current is not None and block <= current:
                raise RuntimeError(f"block{block} called after block{current} in the instruction-count events")
            if current is not None:
                blocks[current] += value - start
                start = value
            current = block
        else:  # msfcnn_invoke returns
            if current != last:
                raise RuntimeError(f"{FUNCTION} returned after block{current} of {len(blocks)}")
            total += value - entered
            vector += vectors - vector_entered
            if current is not None:
                blocks[current] += value - start
            entered, calls = None, calls + 1
    if calls == 0:
        raise RuntimeError(f"{FUNCTION} was never called and returned (instruction-count events:\n{text})")
    return Count(total, tuple(blocks), vector)


_PART = re.compile(r"^part:\s+(\d+)", re.M)
_TRIGGER = re.compile(r"^desc: Trigger: --dump-before=(\S+)", re.M)
_TOTALS = re.compile(r"^(?:totals|summary):\s+(\d+)", re.M)


def _count_from_dumps(files: list[Path], names: dict[int, str], n_blocks: int) -> Count:
    """Total and per-block counts from callgrind's dumps: one at each entry of a block function
    (holding what ran since the previous dump: the previous block and what followed it, or for
    block 0 the entry of msfcnn_invoke) and one at the program's end (the last block's)."""
    parts = []
    for path in files:
        text = path.read_text()
        found = _TOTALS.search(text)
        if found is None:
            raise RuntimeError(f"callgrind wrote no total to {path}")
        part, trigger = _PART.search(text), _TRIGGER.search(text)
        parts.append((int(part.group(1)) if part else 1, trigger.group(1) if trigger else None, int(found.group(1))))
    parts.sort()
    index = {name: k for k, name in names.items()}
    blocks, current = [0] * n_blocks, None
    for _, trigger, cost in parts:
        block = index[trigger] if trigger is not None else None
        owner = current if current is not None else block  # before block 0: its share of the entry
        if owner is not None:
            blocks[owner] += cost
        elif names and cost:
            raise RuntimeError(f"callgrind counted instructions in {FUNCTION} but saw no block entered")
        if block is not None:
            if current is not None and block <= current and block != min(names):  # (a new call starts over)
                raise RuntimeError(f"{trigger} entered after block{current} in the callgrind dumps")
            current = block
    return Count(sum(cost for _, _, cost in parts), tuple(blocks))

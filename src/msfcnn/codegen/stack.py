"""The stack and static data of a plan's generated C, planned before it runs (docs/cli.md, `fit`).

The generated library is compiled for a target exactly as `make` compiles it, plus gcc's
`-fstack-usage -fcallgraph-info=su`: every function's static frame and its call edges (.ci
files). The bound is the heaviest call path from <prefix>_invoke, frames summed. Sound because:

- the generated code and the kernels have no recursion (a cycle in the call graph is an error),
  and no frame is dynamic (alloca / VLA: an error too);
- an indirect call (window.c's op->accumulate / op->finish) is charged the heaviest path of any
  kernel function whose name the kernels' sources use as a value (assigned, passed, or its
  address taken: a superset of the callbacks) and that makes no indirect call itself (every
  callback is such a function);
- a call out of the generated code (libgcc's soft-float routines, memcpy, expf of the C library:
  compiled without .ci) is charged LIBRARY_CALL_BYTES, an allowance: these are leaf routines or
  call one or two more small ones (expf's overflow helpers). tests/targets/test_library_stack.py
  measures every routine the kernels call on each target under QEMU on edge-case values: 92 B
  at most (expf on RV32; docs/cli.md).

The harness measures the stack below a local of main, so the bound adds CALLER_BYTES for the rest
of the caller's frame below that local and the call itself.
"""

from __future__ import annotations

import atexit
import hashlib
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..errors import UserError
from ..ir import Graph
from ..plan import Plan
from ..schedule import Schedule
from ..targets import Target
from .emit import DEFAULT_PREFIX, generate, kernel_sources

STACK_FLAGS = "-fstack-usage -fcallgraph-info=su"
LIBRARY_CALL_BYTES = 256
CALLER_BYTES = 64
INDIRECT = "__indirect_call"

_NODE = re.compile(r'^node: \{ title: "([^"]+)" label: "[^"]*\\n(\d+) bytes \(([^)]*)\)"', re.M)
_EDGE = re.compile(r'^edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"', re.M)
# Static (zero-initialised or initialised) data in RAM, as nm types it: small-data sections too.
_PULL = re.compile(r"(?:^|:)block(\d+)_pull\b")
_RAM_TYPES = set("bBdDsSgG")


@dataclass(frozen=True)
class CodeFootprint:
    """What a plan's generated C needs in RAM beyond the arena and the network's input and output."""

    stack_bytes: int  # bound on the stack of one <prefix>_invoke call, caller allowance included
    static_bytes: int  # .data and .bss of the generated objects and kernels, the arena excluded
    path: tuple[str, ...]  # the heaviest call path, outermost first


# An identifier used as a value, not called: after `=`, `&`, `,` or `(`, before `,`, `;`, `}` or `)`.
_VALUE = re.compile(r"[=&,(]\s*([A-Za-z_]\w*)\s*(?=[,;})])")


@lru_cache(maxsize=None)
def _used_as_values() -> frozenset[str]:
    return frozenset(name for text in kernel_sources().values() for name in _VALUE.findall(text))


def _base(function: str) -> str:
    """A .ci title's C name: kernels/window.c:gather_runs.constprop.0 -> gather_runs."""
    return function.rsplit(":", 1)[-1].split(".")[0]


@dataclass
class CallGraph:
    frames: dict[str, int]
    calls: dict[str, set[str]]
    kernels: set[str]  # functions of the kernel library: what an indirect call may reach

    def add(self, text: str, kernels: bool = False) -> None:
        for name, size, kind in _NODE.findall(text):
            if "dynamic" in kind:
                raise RuntimeError(f"{name} has a dynamic stack frame ({kind}): no static bound")
            self.frames[name] = max(self.frames.get(name, 0), int(size))
            if kernels:
                self.kernels.add(name)
        for source, target in _EDGE.findall(text):
            self.calls.setdefault(source, set()).add(target)

    def heaviest(self, root: str, depths: dict[int, int] | None = None) -> tuple[int, tuple[str, ...]]:
        """The heaviest path from `root`: (bytes, functions). The one recursion allowed is a
        streamed block's blockN_pull (and gcc's clones of it), which pulls an op's inputs, always
        ops before it in the block: it nests at most depths[N] (the block's op count) deep."""
        memo: dict[str, tuple[int, tuple[str, ...]]] = {}
        reaches_indirect = self._reaching(INDIRECT)
        used = _used_as_values()
        callbacks = sorted(f for f in self.kernels if f not in reaches_indirect and _base(f) in used)

        def visit(name: str, active: tuple[str, ...]) -> tuple[int, tuple[str, ...]]:
            if name in memo:
                return memo[name]
            pulled = _PULL.search(name)
            if name in active and not pulled:
                raise RuntimeError(f"recursion through {name}: no static stack bound")
            if name == INDIRECT:
                best = max((visit(f, active) for f in callbacks), default=(0, ()))
                result = (best[0], (f"{INDIRECT}->{best[1][0]}",) + best[1][1:] if best[1] else (INDIRECT,))
            elif name not in self.frames:  # outside the generated code: the C library, libgcc
                result = (LIBRARY_CALL_BYTES, (f"{name} (library allowance)",))
            elif pulled:  # the whole recursion of one block's pull, as one
                group = [f for f in self.frames if (m := _PULL.search(f)) and m.group(1) == pulled.group(1)]
                if depths is None or int(pulled.group(1)) not in depths:
                    raise RuntimeError(f"recursion through {name}: its block's depth is unknown")
                depth = depths[int(pulled.group(1))]
                outside = {c for f in group for c in self.calls.get(f, ()) if c not in group}
                below = max((visit(c, active + tuple(group)) for c in outside), default=(0, ()))
                frame = max(self.frames[f] for f in group)
                result = (depth * frame + below[0], (f"{name} x{depth}",) + below[1])
                for f in group:
                    memo[f] = result
            else:
                below = max((visit(c, active + (name,)) for c in self.calls.get(name, ())), default=(0, ()))
                result = (self.frames[name] + below[0], (name,) + below[1])
            memo[name] = result
            return result

        return visit(root, ())

    def _reaching(self, goal: str) -> set[str]:
        """The functions from which a call chain reaches `goal`."""
        found: set[str] = set()
        changed = True
        while changed:
            changed = False
            for source, targets in self.calls.items():
                if source not in found and (goal in targets or targets & found):
                    found.add(source)
                    changed = True
        return found


def _compile(folder: Path, target: Target, source: str) -> None:
    obj = str(Path(source).with_suffix(".o"))
    result = subprocess.run([target.cc, *target.cflags.split(), *STACK_FLAGS.split(), "-Ikernels", "-c", "-o", obj,
                             source], cwd=folder, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"the generated C did not compile for {target.name}:\n{result.stderr}")


def _compile_weights(folder: Path, kernels: Path, target: Target, source: str, header: str) -> None:
    """weights.c compiled into `folder` (weights.o, weights.ci). The weights do not depend on the
    plan, and a model's file of them runs to megabytes, so each text is compiled once per target and
    process (kept beside the kernels: `kernels` is the target's folder)."""
    digest = hashlib.sha256(f"{header}\0{source}".encode()).hexdigest()[:32]
    kept = kernels / "weights" / digest
    if not kept.exists():
        scratch = Path(tempfile.mkdtemp(prefix="compiling-", dir=kernels))
        (scratch / "weights.h").write_text(header)
        (scratch / "weights.c").write_text(source)
        _compile(scratch, target, "weights.c")
        kept.parent.mkdir(exist_ok=True)
        scratch.rename(kept)
    for name in ("weights.o", "weights.ci"):
        shutil.copyfile(kept / name, folder / name)


def _static_bytes(folder: Path, target: Target, objects: list[str], arena: tuple[str, ...]) -> int:
    result = subprocess.run([target.nm, "-S", *objects], cwd=folder, capture_output=True, text=True, check=True)
    total = 0
    for line in result.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in _RAM_TYPES and parts[3] not in arena:
            total += int(parts[1], 16)
    return total


@lru_cache(maxsize=None)
def _kernels(target: Target) -> tuple[Path, str, int]:
    """The kernels compiled once per target (they do not depend on the network): the folder, their
    call graph text and their static data."""
    folder = Path(tempfile.mkdtemp(prefix=f"msfcnn-stack-{target.name}-"))
    atexit.register(shutil.rmtree, folder, True)
    (folder / "kernels").mkdir()
    for name, text in kernel_sources().items():
        (folder / "kernels" / name).write_text(text)
    sources = sorted(f"kernels/{n}" for n in kernel_sources() if n.endswith(".c"))
    for source in sources:
        _compile(folder, target, source)
    text = "".join((folder / Path(s).with_suffix(".ci")).read_text() for s in sources)
    static = _static_bytes(folder, target, [str(Path(s).with_suffix(".o")) for s in sources], ())
    return folder, text, static


def kernel_static_bytes(target: Target) -> int:
    """The kernels' own static data on `target`, which every footprint's static_bytes counts."""
    return _kernels(target)[2]


def library_calls(target: Target) -> set[str]:
    """The functions outside the kernels (the C library's, libgcc's) that the kernels call on
    `target`: what LIBRARY_CALL_BYTES stands for (tests/targets/test_library_stack.py measures them)."""
    _, text, _ = _kernels(target)
    defined = {name for name, _, _ in _NODE.findall(text)}
    return {callee for _, callee in _EDGE.findall(text) if callee not in defined and callee != INDIRECT}


def footprint(graph: Graph, schedule: Schedule, plan: Plan, target: Target) -> CodeFootprint:
    """The stack bound and static data of the plan's generated C (default prefix) on `target`."""
    missing = [tool for tool in (target.cc, target.nm) if shutil.which(tool) is None]
    if missing:  # the compiler and nm only: no emulator is needed for a bound
        raise UserError(f"bounding the stack on {target.name} needs {', '.join(missing)}, which is not installed"
                        + (f" (Debian: apt-get install {' '.join(target.packages)})" if target.packages else ""))
    try:
        kernels, kernel_graph, kernel_static = _kernels(target)
        with tempfile.TemporaryDirectory(prefix="msfcnn-stack-", dir=kernels) as scratch:
            folder = Path(scratch)
            (folder / "kernels").symlink_to(kernels / "kernels")
            generated = generate(graph, schedule, plan, target, DEFAULT_PREFIX)
            for name in ("model.c", "model.h", "weights.h"):
                (folder / name).write_text(generated[name])
            _compile(folder, target, "model.c")
            _compile_weights(folder, kernels, target, generated["weights.c"], generated["weights.h"])
            calls = CallGraph({}, {}, set())
            calls.add(kernel_graph, kernels=True)
            for ci in ("model.ci", "weights.ci"):
                calls.add((folder / ci).read_text())
            # a harness gives a model with several inputs to invoke_inputs, which calls invoke
            entry = "invoke_inputs" if len(graph.input_tensors) > 1 else "invoke"
            stack, path = calls.heaviest(f"{DEFAULT_PREFIX}_{entry}",
                                          {k: b.last - b.first + 1 for k, b in enumerate(plan.blocks)})
            arena = (f"{DEFAULT_PREFIX}_arena", f"{DEFAULT_PREFIX}_arena_words")
            static = kernel_static + _static_bytes(folder, target, ["model.o", "weights.o"], arena)
    except RuntimeError as err:
        raise UserError(str(err).splitlines()[0].rstrip(":")) from None
    return CodeFootprint(stack + CALLER_BYTES, static, path)

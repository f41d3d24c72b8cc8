"""Build and run generated C for a plan, and compare it with the fused numpy executor."""

import atexit
import shutil
import tempfile
from pathlib import Path

import numpy as np

from msfcnn import executor
from msfcnn.codegen import build
from msfcnn.plan import Plan
from msfcnn.schedule import schedule_plan
from msfcnn.targets import Target
from msfcnn.tensors import random_input
from support import cache
from support.toolchains import require_target

# The kernels are the same for every network: each target's are compiled once per test session
# (per xdist worker), with the target's compiler and flags through the generated Makefile's own
# rule, and linked into every network built for that target.
_libraries: dict[str, Path] = {}
_library_folder: Path | None = None


def kernel_library(project: Path, target: Target) -> Path:
    """The session's kernel archive for `target`, built from `project`'s kernels/ the first time."""
    global _library_folder
    if target.name not in _libraries:
        if _library_folder is None:
            _library_folder = Path(tempfile.mkdtemp(prefix="msfcnn-test-kernels-"))
            atexit.register(shutil.rmtree, _library_folder, ignore_errors=True)
        library = _library_folder / f"{target.name}-{build.KERNEL_LIBRARY}"
        shutil.copyfile(build.build_kernel_library(project, target), library)
        _libraries[target.name] = library
    return _libraries[target.name]


def check_c(graph, blocks, target="host", seed=0):
    """Generate, build and run; assert int8 bit-exactness (float within 1e-4) and that the
    arena in the object file is the predicted peak. Returns the arena size. Skips (or fails, see
    support.toolchains) when the target's tools are not installed."""
    tgt = require_target(target)
    schedule = schedule_plan(graph, list(blocks))
    plan = Plan(graph.name, "exact", sum(graph.macs(i) for i in range(len(graph))), tuple(blocks))
    x = random_input(graph, seed)
    expected = cache.fused_run(graph, blocks, seed, raw=True).output.reshape(-1)
    internal = executor.to_internal(graph, x[0])
    with tempfile.TemporaryDirectory(prefix="msfcnn-test-") as folder:
        folder = Path(folder)
        build.write_project(folder, graph, schedule, plan, tgt)
        library = kernel_library(folder, tgt)
        program = build.build(folder, tgt, kernel_lib=library)
        harness = build.run(program, tgt, graph, internal, kernel_lib=library)
        got = harness.output
        arena = build.arena_bytes(folder, tgt)
    if graph.dtype == "int8":
        assert np.array_equal(got, expected), f"C differs from numpy on {int((got != expected).sum())} values"
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    assert arena == schedule.arena_bytes
    if tgt.embedded_harness:  # it measures the stack, and fails if the stack reached the static data
        assert harness.stack_bytes is not None and 0 < harness.stack_bytes < 4096
    return arena

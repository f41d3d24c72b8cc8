"""Build and run generated C for a plan, and compare it with the fused numpy executor."""

import shutil
import tempfile
from pathlib import Path

import numpy as np

from msfcnn import pipeline
from msfcnn.codegen import build
from msfcnn.codegen.emit import kernel_sources
from msfcnn.plan import Plan
from msfcnn.schedule import schedule_plan
from msfcnn.targets import Target
from msfcnn.tensors import random_input
from support.build_cache import cached_build, compiler_identity, key_of
from support.islands import assert_within_island_bound
from support.toolchains import require_target

# The kernels are the same for every network: each target's are compiled once, with the target's
# compiler and flags through the generated Makefile's own rule, and linked into every network built
# for that target. The archive is shared by the test processes and later runs (support.build_cache),
# keyed by the project's kernel sources, Makefile and the target's compiler and flags.
_libraries: dict[str, Path] = {}


def kernel_library(graph, schedule, plan, target: Target) -> Path:
    """The kernel archive for `target`, built from this network's project the first time."""
    if target.name not in _libraries:
        with tempfile.TemporaryDirectory(prefix="msfcnn-test-kernels-") as scratch:
            project = Path(scratch) / target.name
            pipeline.write_c(project, graph, schedule, plan, target)
            key = key_of(target.name, compiler_identity(target.cc), target.cflags, target.ldflags,
                         _archive_rules(project), *kernel_sources().values(), Path(__file__).read_text())

            def build_archive(into: Path) -> None:
                shutil.copyfile(build.build_kernel_library(project, target), into / build.KERNEL_LIBRARY)

            _libraries[target.name] = cached_build(f"archive-{target.name}", key, build_archive) / build.KERNEL_LIBRARY
    return _libraries[target.name]


def _archive_rules(project: Path) -> str:
    """What the archive is built from besides the kernel sources: the project's Makefile without
    its list of this network's kernels (the archive takes every kernel), and its prefix header."""
    makefile = [line for line in (project / "Makefile").read_text().splitlines() if not line.startswith("KERNELS =")]
    return "\n".join(makefile) + (project / "kernels" / "msfcnn_prefix.h").read_text()


def check_c(graph, blocks, target="host", seed=0, count_io=False, input_stream=False):
    """Generate, build and run (`pipeline.verify`); assert integer bit-exactness (float within
    1e-4) and that the arena in the object file is the predicted peak (with the network input and
    output in it when `count_io`; with the output and the input rows still needed when
    `input_stream`). Returns the arena size. Skips (or fails, see support.toolchains) when the
    target's tools are not installed."""
    tgt = require_target(target)
    schedule = schedule_plan(graph, list(blocks), count_io, input_stream)
    plan = Plan(graph.name, "exact", sum(graph.macs(i) for i in range(len(graph))), tuple(blocks),
                io_counted=count_io or input_stream, input_streamed=input_stream)
    library = kernel_library(graph, schedule, plan, tgt)
    check = pipeline.verify(graph, plan, schedule, random_input(graph, seed), tgt, kernel_lib=library)
    if not check.is_float and graph.mixed:  # integer outputs after a float island: C's float32 kernels
        assert_within_island_bound(check.output, check.expected)  # may sum in another order than numpy's
    elif not check.is_float:  # int8, int16 outputs
        assert check.bit_exact, f"C differs from numpy on {int((check.output != check.expected).sum())} values"
    else:
        np.testing.assert_allclose(check.output, check.expected, rtol=1e-4, atol=1e-5)
    assert check.arena_bytes == schedule.arena_bytes
    if tgt.embedded_harness:  # it measures the stack, and fails if the stack reached the static data
        assert check.stack_bytes is not None and 0 < check.stack_bytes < 4096
    return check.arena_bytes

"""Issue 27's goal for the new cores: every built-in model's least-RAM plan runs bit-exact on
cortex-m55 (Helium) and cortex-m33, and on cortex-m0plus linked as the raspberry-pi-pico board
(its 264 KB of RAM, the Pico SDK's 8 KB of stack). Each model's C is built once per core against
the cores' shared kernel archives and compared with the unfused numpy network (the fused one
equals it, tests/integration), computed once per model: no instruction counting, which
test_m33_m0plus_targets and test_latency_targets do on one model."""

import tempfile
from pathlib import Path

import numpy as np
import pytest

from msfcnn import pipeline
from msfcnn.boards import BOARDS
from msfcnn.codegen import build
from msfcnn.executor import internal_inputs
from msfcnn.frontends import builtin_names
from msfcnn.tensors import random_input
from support import cache
from support.c_build import kernel_library
from support.toolchains import require_target

PICO = BOARDS["raspberry-pi-pico"]
PICO_STACK = 8 * 1024  # what the Pico SDK's linker script keeps for the stacks


def _cores():
    """The three new cores' targets, the M0+ linked as the Pico board."""
    m0plus = require_target(PICO.target).for_board(PICO.name, PICO.ram_bytes, PICO_STACK, input_in_ram=True)
    return [require_target("cortex-m55"), require_target("cortex-m33"), m0plus]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(builtin_names()))
def test_least_ram_plan_of_a_builtin_is_bit_exact_on_the_new_cores(name):
    graph = cache.model(name, weights=True)
    plan = pipeline.planner(graph).min_ram()
    schedule = pipeline.lower(graph, plan)
    expected = cache.unfused_output(graph, 0).reshape(-1)
    x = internal_inputs(graph, random_input(graph, 0))[0]
    for target in _cores():
        library = kernel_library(graph, schedule, plan, target)
        with tempfile.TemporaryDirectory(prefix="msfcnn-test-") as scratch:
            folder = Path(scratch)
            pipeline.write_c(folder, graph, schedule, plan, target)
            run = build.run(build.build(folder, target, library), target, graph, x, library)
        assert np.array_equal(run.output.reshape(-1), expected), f"{name} on {target.description}"
        if target.embedded_harness:  # measured, and below the static data (else the run fails)
            assert 0 < run.stack_bytes <= PICO_STACK

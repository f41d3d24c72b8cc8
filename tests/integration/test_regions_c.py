"""A plan over several RAM regions in C: one arena per region, each in its own linker section,
bit-exact with the numpy executor (which runs the same offsets in one array)."""

import re

import numpy as np
import pytest

from msfcnn import pipeline
from msfcnn.boards import custom_board, parse_regions
from msfcnn.codegen.emit import generate
from msfcnn.targets import TARGETS
from msfcnn.tensors import random_input
from support.paths import FIXTURES


def _two_regions(name="i16_chain.tflite"):
    """The unfused plan (io counted) of a small model over two regions, neither of which holds its
    whole arena: a fast one of two thirds of it and a slow one."""
    graph = pipeline.load(str(FIXTURES / "models" / name), weights=True)
    plan = pipeline.planner(graph, pipeline.SCHEDULABLE_COST_MODEL, count_io=True).vanilla()
    single = pipeline.lower(graph, plan)
    fast = single.arena_bytes * 2 // 3
    board = custom_board(None, "cortex-m4", regions=parse_regions([f"fast:{fast}:1", f"slow:{single.arena_bytes}:4"]))
    return graph, plan, single, pipeline.lower_on_regions(graph, plan, board, 0, True), fast


def test_each_region_gets_its_own_arena_and_section_and_the_run_is_unchanged():
    graph, plan, single, placed, fast = _two_regions()
    (_, fast_base, fast_bytes), (_, slow_base, slow_bytes) = placed.regions
    assert fast_base == 0 and 0 < fast_bytes <= fast and slow_base % 16 == 0 and slow_base >= fast_bytes
    x = random_input(graph, 0)
    assert np.array_equal(pipeline.run(placed, x).output, pipeline.run(single, x).output)
    files = generate(graph, placed, plan)
    for name, size in (("fast", fast_bytes), ("slow", slow_bytes)):
        assert f'__attribute__((section(".msfcnn_{name}")))' in files["model.c"]
        assert re.search(rf"int8_t bytes\[{-(-size // 4) * 4}\];\n}} msfcnn_arena_in_{name} ", files["model.c"])
        assert f"#define MSFCNN_ARENA_{name.upper()}_BYTES {size} " in files["model.h"]
    assert "static int8_t msfcnn_arena[" not in files["model.c"]


@pytest.mark.slow  # builds and runs the C on the host
def test_the_c_over_two_regions_is_bit_exact_on_the_host():
    graph, plan, _, placed, _ = _two_regions()
    check = pipeline.verify(graph, plan, placed, random_input(graph, 1), TARGETS["host"])
    assert check.passed and check.bit_exact
    assert check.arena_bytes == sum(-(-size // 4) * 4 for _, _, size in placed.regions)


def test_input_in_pins_the_arenas_input_buffer_to_its_region():
    graph = pipeline.load(str(FIXTURES / "models" / "i16_chain.tflite"), weights=True)
    plan = pipeline.planner(graph, pipeline.SCHEDULABLE_COST_MODEL, count_io=True).vanilla()
    board = custom_board(None, "cortex-m4", regions=parse_regions(["fast:64KiB:1", "slow:64KiB:8"]))
    for region in ("fast", "slow"):
        placed = pipeline.lower_on_regions(graph, plan, board, 0, True, input_in=region)
        _, base, size = next(r for r in placed.regions if r[0] == region)
        assert base <= placed.input_offset < base + size

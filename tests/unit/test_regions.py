"""Placing buffers over several RAM regions (schedule/regions.py): hand-checked cases, and random
small cases against brute force over every assignment of buffers to regions."""

import itertools
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_arena import chains_with_placements, lifetimes

from msfcnn import pipeline
from msfcnn.boards import BOARDS, Region, custom_board, parse_regions
from msfcnn.schedule.arena import Buffer, check_arena, plan_arena
from msfcnn.schedule.layout import arena_buffers
from msfcnn.schedule.lowered import Liveness
from msfcnn.schedule.placement import INPUT, PROGRAM, place_schedule, wholes
from msfcnn.schedule.regions import groups_of, place
from msfcnn.fit import NoFit, fit
from support.cli import run_cli
from support.toolchains import require_target


@dataclass(frozen=True)
class R:
    name: str
    size: int
    cost: float = 1.0
    dma: bool = True


def checked(buffers, steps, regions, accesses, needs_dma=None):
    """place(), with every region's arena checked by the arena's own checker and within its size."""
    placement = place(buffers, steps, regions, accesses, needs_dma)
    if placement is not None:
        for r, arena in enumerate(placement.arenas):
            mine = [b for i, b in enumerate(buffers) if placement.region_of[i] == r]
            assert arena.size <= regions[r].size
            if mine:
                check_arena([_local(b, buffers, placement, r) for b in mine], arena)
    return placement


def _local(b, buffers, placement, r):
    """b with its references renumbered within region r (as the packer saw it)."""
    def at(i):
        return placement.local_index[i] if i is not None and placement.region_of[i] == r else None
    placed = None if b.placed_at is None else (placement.local_index[b.placed_at[0]], b.placed_at[1])
    return Buffer(b.size, b.first, b.last, b.scratch, at(b.away_from), at(b.alias_of), placed)


def test_one_region_packs_exactly_as_the_single_arena():
    buffers = [Buffer(40, 0, 3), Buffer(60, 1, 2, away_from=0), Buffer(20, 2, 4, away_from=1),
               Buffer(10, 3, 4, away_from=0), Buffer(5, 4, 4, away_from=2)]
    placement = checked(buffers, 5, [R("ram", 120)], [1] * 5)
    assert placement.arenas[0] == plan_arena(buffers, 5) and placement.arena_bytes == (120,)
    assert checked(buffers, 5, [R("ram", 119)], [1] * 5) is None  # one byte short: nothing fits


def test_the_most_accessed_per_byte_go_to_the_cheapest_region():
    # Two tensors live together: a small hot ring and a big cold image; the fast region holds one.
    buffers = [Buffer(1000, 0, 1), Buffer(100, 0, 1, scratch=False)]
    regions = [R("tcm", 1000, cost=1.0), R("ext", 10_000, cost=8.0)]
    placement = checked(buffers, 2, regions, accesses=[2000, 50_000])
    assert placement.region_of == (1, 0)  # the ring (500 accesses a byte) in the TCM, the image outside
    assert placement.cost == 2000 * 8.0 + 50_000 * 1.0 and placement.arena_bytes == (100, 1000)


def test_a_buffer_written_over_another_stays_in_its_region():
    buffers = [Buffer(64, 0, 1), Buffer(64, 1, 2, alias_of=0), Buffer(8, 1, 1, scratch=True)]
    assert groups_of(buffers) == [[0, 1], [2]]
    placement = checked(buffers, 3, [R("a", 64, 1.0), R("b", 64, 2.0)], [1, 1_000_000, 1])
    assert placement.region_of == (0, 0, 1)  # the hot alias drags its source along; the scratch goes aside


def test_a_buffer_that_dma_fills_avoids_a_region_dma_does_not_reach():
    buffers = [Buffer(100, 0, 0), Buffer(10, 0, 0)]
    regions = [R("ccm", 200, cost=1.0, dma=False), R("sram", 200, cost=2.0)]
    assert checked(buffers, 1, regions, [1000, 1], needs_dma=[True, False]).region_of == (1, 0)


def test_buffers_live_at_different_steps_share_a_region_split_ones_do_not():
    # a and b never live together: one 100-byte region holds both; c overlaps both, so it goes apart.
    buffers = [Buffer(100, 0, 0), Buffer(100, 1, 1), Buffer(50, 0, 1)]
    placement = checked(buffers, 2, [R("small", 60), R("big", 100)], [1, 1, 1])
    assert placement.region_of == (1, 1, 0) and placement.arena_bytes == (50, 100)


def brute_force(buffers, steps, regions, accesses, needs_dma):
    """The least cost over every assignment of buffers to regions that keeps each group together,
    each region's packed arena within its size; None when none fits."""
    best = None
    for region_of in itertools.product(range(len(regions)), repeat=len(buffers)):
        if any(b.over is not None and region_of[i] != region_of[b.over] for i, b in enumerate(buffers)):
            continue
        if any(needs_dma[i] and not regions[r].dma for i, r in enumerate(region_of)):
            continue
        fits = True
        for r, region in enumerate(regions):
            mine = [i for i in range(len(buffers)) if region_of[i] == r]
            index = {i: k for k, i in enumerate(mine)}
            local = [Buffer(buffers[i].size, buffers[i].first, buffers[i].last, buffers[i].scratch,
                            index.get(buffers[i].away_from), index.get(buffers[i].alias_of),
                            None if buffers[i].placed_at is None else (index[buffers[i].placed_at[0]],
                                                                       buffers[i].placed_at[1]))
                     for i in mine]
            try:
                too_big = bool(local) and plan_arena(local, steps).size > region.size
            except ValueError:  # the region's packing cannot realise it: place() counts it as none
                too_big = True
            if too_big:
                fits = False
                break
        if fits:
            cost = sum(accesses[i] * regions[r].cost for i, r in enumerate(region_of))
            best = cost if best is None else min(best, cost)
    return best


@st.composite
def small_cases(draw):
    buffers, steps = draw(st.one_of(lifetimes(), chains_with_placements()).filter(lambda c: len(c[0]) <= 6))
    total = max(1, sum(b.size for b in buffers))
    regions = [R(f"r{k}", draw(st.integers(1, total)), draw(st.sampled_from([1.0, 2.0, 3.0, 8.0])),
                 draw(st.booleans())) for k in range(draw(st.integers(1, 3)))]
    accesses = [draw(st.integers(0, 1000)) for _ in buffers]
    needs_dma = [draw(st.booleans()) and draw(st.booleans()) for _ in buffers]
    return buffers, steps, regions, accesses, needs_dma


@settings(max_examples=150, deadline=None)
@given(small_cases())
def test_small_cases_find_the_least_cost_placement_brute_force_finds(case):
    buffers, steps, regions, accesses, needs_dma = case
    placement = checked(buffers, steps, regions, accesses, needs_dma)
    best = brute_force(buffers, steps, regions, accesses, needs_dma)
    assert (placement is None) == (best is None)
    if placement is not None:
        assert placement.cost == best
        assert placement.cost == sum(accesses[i] * regions[r].cost for i, r in enumerate(placement.region_of))


@settings(max_examples=80, deadline=None)
@given(small_cases())
def test_the_greedy_search_of_large_cases_gives_fitting_arenas_never_cheaper_than_the_best(case):
    import msfcnn.schedule.regions as regions_module
    buffers, steps, regions, accesses, needs_dma = case
    limit, regions_module.EXHAUSTIVE_LIMIT = regions_module.EXHAUSTIVE_LIMIT, 0
    try:
        placement = checked(buffers, steps, regions, accesses, needs_dma)
    finally:
        regions_module.EXHAUSTIVE_LIMIT = limit
    best = brute_force(buffers, steps, regions, accesses, needs_dma)
    if placement is not None:
        assert best is not None and placement.cost >= best
        assert all(regions[r].dma or not needs_dma[i] for i, r in enumerate(placement.region_of))


# ---- a plan's buffers over a board's regions (schedule/placement.py, fit) ---------------------------

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "models"


def _chain_schedule(count_io):
    graph = pipeline.load(str(FIXTURES / "i16_chain.tflite"), weights=True)
    plan = pipeline.planner(graph, pipeline.SCHEDULABLE_COST_MODEL, count_io=count_io).vanilla()
    return graph, plan, pipeline.lower(graph, plan)


@pytest.mark.parametrize("count_io", [False, True])
def test_one_region_holds_the_single_arena_and_the_wholes_exactly(count_io):
    graph, plan, schedule = _chain_schedule(count_io)
    live = Liveness(graph, count_io)
    extra = wholes(graph, live, schedule.blocks, program_bytes=100)
    need = schedule.arena_bytes + sum(w.size for w in extra)
    placed, _, keys = place_schedule(graph, live, schedule.blocks, extra, [R("ram", need)])
    assert placed.arena_bytes == (need,)
    assert place_schedule(graph, live, schedule.blocks, extra, [R("ram", need - 1)]) is None
    assert (INPUT in keys) == (not count_io) and PROGRAM in keys


def test_a_plan_too_big_for_each_region_fits_across_two():
    graph, plan, schedule = _chain_schedule(True)
    live = Liveness(graph, True)
    sizes = sorted((b.size for b in arena_buffers(graph, list(schedule.blocks), live)[0]), reverse=True)
    half = schedule.arena_bytes - sizes[-1]  # less than the arena: one region alone cannot hold it
    regions = [R("fast", half, 1.0), R("slow", schedule.arena_bytes, 4.0)]
    placed, buffers, keys = place_schedule(graph, live, schedule.blocks, [], regions)
    assert all(size <= r.size for size, r in zip(placed.arena_bytes, regions))
    assert place_schedule(graph, live, schedule.blocks, [], [R("only", half)]) is None
    assert sum(placed.arena_bytes) >= schedule.arena_bytes


@pytest.mark.parametrize("region,message", [
    ("a:x", "bad --region 'a:x': bad size"), ("9a:1KiB", "NAME a C identifier"), ("a:1KiB:0", "COST is a positive"),
    ("a:1KiB:fast", "COST is a positive"), ("a", "expected NAME:SIZE[:COST]"),
])
def test_bad_regions_are_one_line_and_exit_2(region, message, capsys):
    code, out, err = run_cli(capsys, "fit", "mbv2-w0.35", "--region", region, "--target", "cortex-m4")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and message in err


def test_a_region_given_twice_and_ram_with_regions_are_refused(capsys):
    for extra in (["--region", "a:2KiB"], ["--ram", "4KiB"]):
        code, _, err = run_cli(capsys, "fit", "mbv2-w0.35", "--region", "a:1KiB", *extra, "--target", "cortex-m4")
        assert code == 2 and len(err.strip().splitlines()) == 1


def test_regions_replace_a_boards_and_ram_makes_one():
    h7 = BOARDS["stm32h743"]
    assert [r.name for r in h7.ram_regions] == ["dtcm", "axi_sram", "sram1_3", "sram4"]
    assert sum(r.size for r in h7.ram_regions) == 992 * 1024 and h7.ram_bytes == 512 * 1024
    mine = custom_board(None, None, base=h7, regions=parse_regions(["tcm:64KiB:1", "ext:8MiB:8"]))
    assert [(r.name, r.size, r.cost) for r in mine.ram_regions] == [("tcm", 64 * 1024, 1.0), ("ext", 8 << 20, 8.0)]
    assert mine.ram_bytes == 8 << 20
    assert custom_board(256 * 1024, None, base=h7).ram_regions == (Region("ram", 256 * 1024),)


@pytest.mark.slow  # bounds the stack of the plans it measures: compiles C for cortex-m4
def test_fit_places_a_plan_over_two_regions_neither_of_which_holds_it(capsys):
    require_target("cortex-m4")
    graph = pipeline.load(str(FIXTURES / "i16_chain.tflite"), weights=True)
    one = fit(graph, custom_board(64 * 1024, "cortex-m4"))
    used = one.used_bytes + one.reserve_bytes  # everything the fastest plan needs on one region
    half = used * 2 // 3  # each region smaller than that
    board = custom_board(None, "cortex-m4", regions=parse_regions([f"tcm:{half}:1", f"ext:{half}:8"]))
    result = fit(graph, board)
    assert result.headroom_bytes >= 0 and len(result.regions) == 2
    assert all(use.arena_bytes <= use.size for use in result.regions)
    assert sum(use.arena_bytes for use in result.regions) == result.used_bytes + result.reserve_bytes
    tcm = result.regions[0]
    assert PROGRAM in tcm.holds  # the stack is the most accessed: the cheapest region
    assert dict(result.plan.region_arenas) == {u.name: u.arena_bytes for u in result.regions}
    assert result.plan.to_dict()["region_arena_bytes"] == dict(result.plan.region_arenas)
    # Enough bytes in all, but each region smaller than the reserve alone, which is one buffer:
    crumbs = [f"r{k}:1000" for k in range(-(-used // 1000) + 1)]
    with pytest.raises(NoFit, match="cannot be split over its regions"):
        fit(graph, custom_board(None, "cortex-m4", regions=parse_regions(crumbs)))


def test_a_pinned_buffer_goes_to_its_region_even_when_another_is_cheaper():
    buffers = [Buffer(100, 0, 1), Buffer(50, 1, 1)]
    regions = [R("tcm", 200, 1.0), R("psram", 1000, 8.0)]
    assert checked(buffers, 2, regions, [1000, 1]).region_of == (0, 0)
    assert place(buffers, 2, regions, [1000, 1], pinned={0: 1}).region_of == (1, 0)
    assert place(buffers, 2, [R("tcm", 200), R("small", 60)], [1, 1], pinned={0: 1}) is None  # 100 B in 60


@pytest.mark.parametrize("argv,message", [
    (["--input-in", "c"], "unknown region 'c' for --input-in"),
    (["--input-in", "a", "--input-in-flash"], "--input-in and --input-in-flash"),
    (["--input-in", "flash", "--input-in-flash"], "say the same"),
])
def test_bad_input_regions_are_one_line_and_exit_2(argv, message, capsys):
    code, out, err = run_cli(capsys, "fit", "mbv2-w0.35", "--region", "a:1KiB", "--region", "b:8KiB", "--target",
                             "cortex-m4", *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and message in err

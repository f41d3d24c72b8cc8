"""Placing buffers over several RAM regions (schedule/regions.py): hand-checked cases, and random
small cases against brute force over every assignment of buffers to regions."""

import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_arena import chains_with_placements, lifetimes

from msfcnn import pipeline
from msfcnn.boards import BOARDS, Region, custom_board, parse_regions
from msfcnn.schedule.arena import HIGH, LOW, Buffer, check_arena, ends_of, plan_arena
from msfcnn.schedule.layout import arena_buffers
from msfcnn.schedule.lowered import Liveness
from msfcnn.schedule.placement import INPUT, PROGRAM, place_schedule, wholes
from msfcnn.schedule.regions import groups_of, pack, place
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
            local = region_share(buffers, placement.region_of, r)
            assert arena.size <= regions[r].size
            if local:
                check_arena(local, arena)
    return placement


def region_share(buffers, region_of, r):
    """The buffers of region r renumbered among themselves, each tensor whose `away_from` is in
    another region at the end the single arena's packing gives it (as the packer sees them)."""
    ends = ends_of(buffers)
    mine = [i for i in range(len(buffers)) if region_of[i] == r]
    index = {i: k for k, i in enumerate(mine)}

    def local(i):
        b = buffers[i]
        away = index.get(b.away_from)
        end = ends[i] if b.away_from is not None and away is None else b.end
        placed = None if b.placed_at is None else (index[b.placed_at[0]], b.placed_at[1])
        return Buffer(b.size, b.first, b.last, b.scratch, away, index.get(b.alias_of), placed, end)
    return [local(i) for i in mine]


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
    each region's packed arena within its size; None when none fits. The cost: accesses times
    the region's cost, plus each byte its packing moves between steps read and written there."""
    best = None
    for region_of in itertools.product(range(len(regions)), repeat=len(buffers)):
        if any(b.over is not None and region_of[i] != region_of[b.over] for i, b in enumerate(buffers)):
            continue
        if any(needs_dma[i] and not regions[r].dma for i, r in enumerate(region_of)):
            continue
        cost = sum(accesses[i] * regions[r].cost for i, r in enumerate(region_of))
        for r, region in enumerate(regions):
            local = region_share(buffers, region_of, r)
            try:
                arena = plan_arena(local, steps) if local else None
            except ValueError:  # the region's packing cannot realise it: place() counts it as none
                cost = None
                break
            if arena is not None and arena.size > region.size:
                cost = None
                break
            if arena is not None:
                cost += sum(2 * move.size * region.cost for moves in arena.moves for move in moves)
        if cost is not None:
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


@pytest.mark.slow  # fast-tier budget: about 2 s of CPU
@settings(max_examples=150, deadline=None)
@given(small_cases())
def test_small_cases_find_the_least_cost_placement_brute_force_finds(case):
    buffers, steps, regions, accesses, needs_dma = case
    placement = checked(buffers, steps, regions, accesses, needs_dma)
    best = brute_force(buffers, steps, regions, accesses, needs_dma)
    assert (placement is None) == (best is None)
    if placement is not None:
        assert placement.cost == best
        moved = sum(2 * move.size * regions[r].cost for r, arena in enumerate(placement.arenas)
                    for moves in arena.moves for move in moves)
        assert placement.cost == sum(accesses[i] * regions[r].cost for i, r in enumerate(placement.region_of)) + moved


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


def test_a_tensor_away_from_one_in_another_region_keeps_its_end_so_nothing_moves():
    # MCUNetV2's first blocks on stm32h743: b is written away from a (the high end); c overwrites
    # b from 100 bytes below it. With a in another region, b alone at the low end would have to
    # slide up 100 bytes (a 200-byte move) before c is written; at the high end nothing moves.
    buffers = [Buffer(200, 0, 1), Buffer(200, 1, 2, away_from=0), Buffer(300, 2, 3, placed_at=(1, -100))]
    assert ends_of(buffers) == [LOW, HIGH, HIGH] and plan_arena(buffers, 4).moves == ((),) * 4
    split = pack(buffers, 4, 2, [1, 0, 0])
    assert split.arenas[0].moves == ((),) * 4 and split.arena_bytes == (300, 200)


def test_moves_count_in_the_cost_so_a_placement_that_avoids_one_is_preferred():
    # a dies under b, which then slides down 100 bytes: 200 accesses at the region's cost.
    buffers = [Buffer(100, 0, 0), Buffer(100, 0, 1)]
    one = checked(buffers, 2, [R("ram", 200)], [1, 1])
    assert one.arenas[0].moves == (((100, 0, 100),), ()) and one.cost == 2 + 200
    apart = checked(buffers, 2, [R("a", 200, 1.0), R("b", 200, 1.0)], [1, 1])
    assert sum(len(m) for arena in apart.arenas for m in arena.moves) == 0 and apart.cost == 2


def group_respecting(buffers, pick):
    """A region per buffer, `pick()` for each group's first, the rest of the group with it."""
    region_of = []
    for b in buffers:
        region_of.append(region_of[b.over] if b.over is not None else pick())
    return region_of


@settings(max_examples=120, deadline=None)
@given(st.one_of(lifetimes(), chains_with_placements()), st.data())
def test_a_regions_moves_are_among_the_single_arenas(case, data):
    buffers, steps = case
    count = data.draw(st.integers(1, 3))
    region_of = group_respecting(buffers, lambda: data.draw(st.integers(0, count - 1)))
    single = plan_arena(buffers, steps)
    split = pack(buffers, steps, count, region_of)  # never fails where the single arena packs
    for r, arena in enumerate(split.arenas):
        local = region_share(buffers, region_of, r)
        if local:
            check_arena(local, arena)
    for step in range(steps):
        sizes = sorted(move.size for arena in split.arenas for move in arena.moves[step])
        remaining = sorted(move.size for move in single.moves[step])
        for size in sizes:
            remaining.remove(size)  # a move of this size in the single arena too (ValueError: none)


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


def test_loop_counts_put_the_most_read_per_byte_in_the_cheap_region_as_brute_force_does():
    # The least-RAM plan of a chain: one column-streamed block of five rings and an accumulator.
    # From bytes touched, every ring of the block counts alike, so the smallest ones (ring4, 16 B)
    # look densest; the loop counts say ring1 (32 B, the depthwise output that a convolution reads
    # once per MAC) is read over 20 times as often per byte as ring4 (the pool's output, summed once), so a
    # 32-byte fast region takes ring1.
    from collections import Counter
    from msfcnn.latency.accesses import loop_runs
    from msfcnn.latency.features import BlockCounter
    from msfcnn.schedule.placement import loop_accesses
    graph = pipeline.load(str(FIXTURES / "i16_chain.tflite"), weights=True)
    plan = min(pipeline.planner(graph, pipeline.SCHEDULABLE_COST_MODEL, count_io=True).pareto(),
               key=lambda p: p.peak_ram_bytes)
    schedule, live = pipeline.lower(graph, plan), Liveness(graph, True)
    runs = loop_runs(graph, schedule.blocks)
    for block, run in zip(schedule.blocks, runs):  # every loop-body run of the block, split by op
        counts = Counter(BlockCounter(graph, dsp=False).block(block))
        assert sum(run.reads.values()) + sum(run.writes.values()) + run.own == sum(counts.values())
    buffers, keys = arena_buffers(graph, list(schedule.blocks), live)
    accesses = loop_accesses(graph, buffers, keys, schedule.blocks, runs)
    density = {k: a / b.size for k, a, b in zip(keys, accesses, buffers)}
    assert density["ring1"] > 20 * density["ring4"]
    regions = [R("fast", 32, 1.0), R("slow", 1 << 20, 8.0)]
    placed, _, _ = place_schedule(graph, live, schedule.blocks, [], regions, runs=runs)
    assert placed.cost == brute_force(buffers, len(schedule.blocks), regions, accesses, [False] * len(buffers))
    fast = {k for k, r in zip(keys, placed.region_of) if r == 0}
    assert "ring1" in fast and "ring4" not in fast
    by_bytes, _, _ = place_schedule(graph, live, schedule.blocks, [], regions)
    assert "ring4" in {k for k, r in zip(keys, by_bytes.region_of) if r == 0}


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


def test_no_split_of_a_plan_over_regions_is_predicted_slower_than_the_plan():
    # Every plan of a chain's front (fused blocks written over their inputs, moves between blocks),
    # its buffers split at random over three regions: the moves the C makes (those the latency
    # model counts) are never more than in the single arena, so the prediction never grows (a
    # third of these splits grew it when a tensor away from one in another region went to the low end).
    import random
    from msfcnn import latency
    from msfcnn.schedule.placement import placed_schedule
    graph = pipeline.load(str(FIXTURES / "i16_chain.tflite"), weights=True)
    model = latency.load("cortex-m4")
    planner = pipeline.planner(graph, pipeline.SCHEDULABLE_COST_MODEL, count_io=True, latency=model)
    counter, live, rng, regions = model.counter(graph), Liveness(graph, True), random.Random(0), [R("a", 0)] * 3
    for plan in planner.pareto(weight="instructions"):
        single = pipeline.lower(graph, plan)
        planned = sum(counter.schedule(single))
        buffers, keys = arena_buffers(graph, list(single.blocks), live)
        for _ in range(12):
            region_of = group_respecting(buffers, lambda: rng.randrange(3))
            split = pack(buffers, len(single.blocks), 3, region_of)
            placed = sum(counter.schedule(placed_schedule(graph, live, single.blocks, split, keys, regions)))
            assert placed <= planned + 1e-6


# ---- several networks sharing one arena per region (placement.place_shared) -------------------------

def _planned(path, count_io=False):
    graph = pipeline.load(str(path), weights=True)
    plan = pipeline.planner(graph, pipeline.SCHEDULABLE_COST_MODEL, count_io=count_io).vanilla()
    return graph, plan, pipeline.lower(graph, plan)


def test_networks_share_each_regions_arena_the_largest_there_with_what_they_keep_beside():
    from msfcnn.tensors import random_input
    planned = [_planned(FIXTURES / "i16_chain.tflite", True), _planned(FIXTURES / "dscnn.tflite"),
               _planned(FIXTURES.parent / "sequence" / "svdf_keyword.tflite")]
    # The fast region is smaller than the arenas of i16_chain (4,320 B) and DS-CNN (16,000 B).
    regions = [R("fast", 4000, 1.0, dma=False), R("slow", 64 * 1024, 4.0)]
    schedules, shared, uses = pipeline.shared_over_regions(planned, regions, program_bytes=512)
    for (graph, _, single), schedule in zip(planned, schedules):
        assert [name for name, _, _ in schedule.regions] == ["fast", "slow"]
        assert schedule.regions[0][1] >= graph.state_bytes  # the state apart, below the regions
        assert schedule.state_offsets == graph.state_offsets()
        x = random_input(graph, 3)
        assert np.array_equal(pipeline.run(schedule, x).output, pipeline.run(single, x).output)
    assert shared == [max(s.regions[r][2] for s in schedules) for r in range(2)] and shared[0] > 0
    kept = sum(w.size for (g, p, s) in planned
               for w in wholes(g, Liveness(g, p.io_counted), s.blocks, 0)) + 512
    assert sum(u.arena_bytes for u in uses) == sum(shared) + kept
    assert all(u.arena_bytes <= r.size for u, r in zip(uses, regions))
    assert not any(k.endswith("input") for k in uses[0].holds)  # no DMA to the fast one: inputs go slow
    assert pipeline.shared_over_regions(planned, [R("fast", 4000), R("slow", 1024)], 512) is None

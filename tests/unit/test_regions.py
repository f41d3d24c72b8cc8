"""Placing buffers over several RAM regions (schedule/regions.py): hand-checked cases, and random
small cases against brute force over every assignment of buffers to regions."""

import itertools
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st
from test_arena import chains_with_placements, lifetimes

from msfcnn.schedule.arena import Buffer, check_arena, plan_arena
from msfcnn.schedule.regions import groups_of, place


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
            if local and plan_arena(local, steps).size > region.size:
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

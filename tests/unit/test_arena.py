"""The arena planner on hand-made lifetimes, with no graph: where it puts buffers, the moves it
makes, and its self-check catching broken layouts."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from msfcnn.schedule.arena import (HIGH, LOW, ArenaPlan, Buffer, Move, check_arena, ends_of, live_bytes, peak_live_bytes,
                                   plan_arena)


def planned(buffers, steps):
    plan = plan_arena(buffers, steps)
    check_arena(buffers, plan)
    return plan


def test_a_chain_writes_each_output_against_the_end_opposite_its_input():
    a = Buffer(100, 0, 1)  # the first block reads the caller's input, so it writes low
    b = Buffer(50, 1, 2, away_from=0)
    c = Buffer(30, 2, 2, away_from=1)
    plan = planned([a, b, c], 3)
    assert plan.size == 150  # step 1 holds a and b
    assert plan.offsets == ({0: 0}, {0: 0, 1: 100}, {1: 100, 2: 0})
    assert plan.moves == ((), (), ())


def test_a_skip_source_freed_under_a_live_tensor_is_closed_by_a_move():
    buffers = [
        Buffer(40, 0, 3),  # 0: a skip source, low, read again at step 3
        Buffer(60, 1, 2, away_from=0),  # 1: high
        Buffer(20, 2, 4, away_from=1),  # 2: low, on top of the skip source
        Buffer(10, 3, 4, away_from=0),  # 3: high, the skip source's last reader writes it
        Buffer(5, 4, 4, away_from=2),  # 4: high, under 3
    ]
    plan = planned(buffers, 5)
    assert plan.size == 120 == peak_live_bytes(buffers, 5)  # step 2: 40 + 20 + 60
    assert plan.offsets[3] == {0: 0, 2: 40, 3: 110}
    assert plan.moves == ((), (), (), (Move(40, 0, 20),), ())  # buffer 2 slides down onto the freed bytes
    assert plan.offsets[4] == {2: 0, 3: 110, 4: 105}


def test_a_high_tensor_slides_up_when_the_one_above_it_is_freed():
    buffers = [
        Buffer(8, 0, 3),  # 0: low
        Buffer(16, 1, 2, away_from=0),  # 1: high, at the top
        Buffer(4, 2, 3, away_from=0),  # 2: high, under 1
        Buffer(2, 3, 3, away_from=0),  # 3: high
    ]
    plan = planned(buffers, 4)
    assert plan.size == 28
    assert plan.offsets[2] == {0: 0, 1: 12, 2: 8}
    assert plan.moves[2] == (Move(8, 24, 4),)
    assert plan.offsets[3] == {0: 0, 2: 24, 3: 22}


def test_an_alias_takes_the_bytes_of_the_buffer_dying_as_it_is_born():
    buffers = [Buffer(30, 0, 1), Buffer(30, 1, 2, alias_of=0), Buffer(10, 2, 2, away_from=1)]
    plan = planned(buffers, 3)
    assert plan.offsets[1] == {0: 0, 1: 0}
    assert live_bytes(buffers, 1) == 30
    assert plan.size == 40
    assert plan.offsets[2] == {1: 0, 2: 30}


def test_an_alias_keeps_its_source_place_in_the_middle_of_an_end():
    buffers = [
        Buffer(10, 0, 2),  # 0: low, at the bottom
        Buffer(6, 1, 2),  # 1: low, above 0
        Buffer(6, 2, 3, alias_of=1),  # 2: written over 1
    ]
    plan = planned(buffers, 4)
    assert plan.offsets[2] == {0: 0, 1: 10, 2: 10}
    assert plan.moves[2] == (Move(10, 0, 6),)  # 0 died below the alias
    assert plan.offsets[3] == {2: 0}


def test_scratch_sits_on_the_low_end_between_the_two_ends():
    buffers = [
        Buffer(50, 0, 1),
        Buffer(20, 1, 2, away_from=0),  # high
        Buffer(8, 1, 1, scratch=True),
        Buffer(4, 1, 1, scratch=True),
        Buffer(30, 2, 2, away_from=1),  # low, scratch above it
        Buffer(7, 2, 2, scratch=True),
    ]
    plan = planned(buffers, 3)
    assert plan.size == 82
    assert plan.offsets[1] == {0: 0, 1: 62, 2: 50, 3: 58}
    assert plan.offsets[2] == {1: 62, 4: 0, 5: 30}


def test_an_empty_plan_needs_no_arena():
    assert planned([], 0) == ArenaPlan(0, (), ())
    assert planned([], 2) == ArenaPlan(0, ({}, {}), ((), ()))


@pytest.mark.parametrize("buffers, steps", [
    ([Buffer(0, 0, 0)], 1),  # empty
    ([Buffer(4, 1, 0)], 2),  # dies before it is born
    ([Buffer(4, 0, 2)], 2),  # outlives the steps
    ([Buffer(4, 0, 1, scratch=True)], 2),  # scratch over two steps
    ([Buffer(4, 0, 1), Buffer(4, 1, 1, scratch=True, away_from=0)], 2),
    ([Buffer(4, 0, 1), Buffer(4, 1, 1, away_from=0, alias_of=0)], 2),
    ([Buffer(4, 0, 1, away_from=1), Buffer(4, 0, 1)], 2),  # away from a buffer not placed yet
    ([Buffer(4, 0, 0), Buffer(4, 1, 1, away_from=0)], 2),  # away from a dead buffer
    ([Buffer(4, 0, 1), Buffer(5, 1, 1, alias_of=0)], 2),  # alias of another size
    ([Buffer(4, 0, 2), Buffer(4, 1, 2, alias_of=0)], 3),  # alias of a buffer that lives on
    ([Buffer(4, 0, 1), Buffer(4, 1, 1, alias_of=0), Buffer(4, 1, 1, alias_of=0)], 2),  # aliased twice
])
def test_lifetimes_the_packing_rule_does_not_cover_are_rejected(buffers, steps):
    with pytest.raises(ValueError):
        plan_arena(buffers, steps)


# ---- the self-check ----------------------------------------------------------------------------

TWO = [Buffer(4, 0, 1), Buffer(4, 0, 1)]


@pytest.mark.parametrize("plan, fault", [
    (ArenaPlan(8, ({0: 0, 1: 2}, {0: 0, 1: 4}), ((), ())), "overlap"),
    (ArenaPlan(8, ({0: 0, 1: 6}, {0: 0, 1: 6}), ((), ())), "outside the arena"),
    (ArenaPlan(8, ({0: 0}, {0: 0, 1: 4}), ((), ())), "live buffers"),
    (ArenaPlan(8, ({0: 0, 1: 4}, {0: 4, 1: 0}), ((), ())), "at the next step"),  # moved without a move
    (ArenaPlan(8, ({0: 0, 1: 4}, {0: 2, 1: 4}), ((Move(0, 2, 4),), ())), "overwrites"),
    (ArenaPlan(8, ({0: 0, 1: 4}, {0: 0, 1: 4}), ((Move(1, 2, 4),), ())), "matches"),
])
def test_the_self_check_catches_broken_layouts(plan, fault):
    with pytest.raises(AssertionError, match=fault):
        check_arena(TWO, plan)


def test_the_self_check_accepts_a_move_over_the_bytes_it_leaves():
    buffers = [Buffer(4, 0, 0), Buffer(6, 0, 1)]
    plan = ArenaPlan(10, ({0: 0, 1: 4}, {1: 1}), ((Move(4, 1, 6),), ()))  # source and target overlap
    check_arena(buffers, plan)


def test_the_self_check_wants_an_alias_on_its_source():
    buffers = [Buffer(4, 0, 1), Buffer(4, 1, 1, alias_of=0)]
    check_arena(buffers, ArenaPlan(4, ({0: 0}, {0: 0, 1: 0}), ((), ())))
    with pytest.raises(AssertionError):
        check_arena(buffers, ArenaPlan(8, ({0: 0}, {0: 0, 1: 4}), ((), ())))


# ---- random lifetimes --------------------------------------------------------------------------

@st.composite
def lifetimes(draw):
    """Buffers over a few steps: each step writes some tensors (each away from a live one, or on
    the bytes of one dying now) and some scratch; every tensor lives on a random number of steps."""
    steps = draw(st.integers(1, 8))
    buffers: list[Buffer] = []
    for step in range(steps):
        earlier = [i for i, b in enumerate(buffers) if not b.scratch and b.first < step <= b.last]
        dying = [i for i in earlier if buffers[i].last == step and not any(b.alias_of == i for b in buffers)]
        for _ in range(draw(st.integers(0, 3))):
            last = draw(st.integers(step, steps - 1))
            if dying and draw(st.booleans()):
                source = draw(st.sampled_from(dying))
                dying.remove(source)
                buffers.append(Buffer(buffers[source].size, step, last, alias_of=source))
                continue
            away_from = draw(st.sampled_from([None] + earlier))
            buffers.append(Buffer(draw(st.integers(1, 64)), step, last, away_from=away_from))
        buffers += [Buffer(draw(st.integers(1, 32)), step, step, scratch=True) for _ in range(draw(st.integers(0, 2)))]
    return buffers, steps


@pytest.mark.slow  # fast-tier budget: about 2 to 3 s of CPU
@settings(max_examples=400, deadline=None)
@given(lifetimes())
def test_random_lifetimes_pack_into_the_most_bytes_live_at_one_step(case):
    buffers, steps = case
    plan = planned(buffers, steps)
    assert plan.size == peak_live_bytes(buffers, steps)


# ---- buffers placed on the bytes of their input (vMCU) -------------------------------------------

def test_a_placed_buffer_shares_the_consumed_bytes_of_its_source():
    buffers = [Buffer(30, 0, 1), Buffer(40, 1, 2, away_from=0), Buffer(25, 2, 2, placed_at=(1, 10))]
    plan = planned(buffers, 3)
    assert live_bytes(buffers, 2) == 40  # 25 bytes from offset 10 of 40: inside them
    assert plan.offsets[2][2] == plan.offsets[2][1] + 10 and plan.size == 70


def test_a_placed_buffer_starting_before_its_source_slides_the_source_up_first():
    buffers = [Buffer(30, 0, 1), Buffer(20, 1, 1, placed_at=(0, -8))]
    plan = planned(buffers, 2)
    assert plan.size == live_bytes(buffers, 1) == 38  # the union: 8 bytes before, 30 of the source
    assert plan.moves[0] == (Move(0, 8, 30),) and plan.offsets[1] == {0: 8, 1: 0}


def test_on_the_high_end_a_placed_buffer_reaching_past_its_source_slides_it_down():
    buffers = [Buffer(10, 0, 2), Buffer(30, 1, 2, away_from=0), Buffer(40, 2, 2, placed_at=(1, 0))]
    plan = planned(buffers, 3)
    assert plan.size == 50 and plan.offsets[1] == {0: 0, 1: 20}
    assert plan.moves[1] == (Move(20, 10, 30),) and plan.offsets[2] == {0: 0, 1: 10, 2: 10}


def test_a_buffer_may_be_placed_away_from_one_born_at_its_step_and_listed_before_it():
    plan = planned([Buffer(4, 0, 0), Buffer(6, 0, 0, away_from=0)], 1)  # the network input, then block 0's output
    assert plan.offsets == ({0: 0, 1: 4},) and plan.size == 10


def test_a_fresh_source_is_placed_with_room_and_needs_no_move():
    buffers = [Buffer(30, 0, 0), Buffer(20, 0, 0, placed_at=(0, -8))]
    plan = planned(buffers, 1)
    assert plan.size == 38 and plan.offsets[0] == {0: 8, 1: 0} and plan.moves == ((),)


@pytest.mark.parametrize("buffers", [
    [Buffer(8, 0, 2), Buffer(8, 1, 2, away_from=0), Buffer(4, 2, 2, away_from=1),
     Buffer(4, 2, 2, placed_at=(0, 0))],  # the source is not on top of its end
    [Buffer(8, 0, 2), Buffer(4, 1, 1, placed_at=(0, 0))],  # the source lives on
    [Buffer(8, 0, 1), Buffer(4, 1, 1, placed_at=(0, 0), away_from=0)],  # two placement facts
])
def test_placements_the_packing_rule_does_not_cover_are_rejected(buffers):
    with pytest.raises(ValueError):
        plan_arena(buffers, 3)


@st.composite
def chains_with_placements(draw):
    """A chain of tensors, each away from the one before or placed on it at a random delta."""
    steps = draw(st.integers(1, 6))
    buffers = [Buffer(draw(st.integers(1, 64)), 0, 1 if steps > 1 else 0)]
    source = 0  # the chain's last tensor
    for step in range(1, steps):
        size, last = draw(st.integers(1, 64)), min(step + 1, steps - 1)
        if draw(st.booleans()):
            delta = draw(st.integers(-size, buffers[source].size))
            buffers.append(Buffer(size, step, last, placed_at=(source, delta)))
        else:
            buffers.append(Buffer(size, step, last, away_from=source))
        source = len(buffers) - 1
        buffers += [Buffer(draw(st.integers(1, 16)), step, step, scratch=True) for _ in range(draw(st.integers(0, 1)))]
    return buffers, steps


@settings(max_examples=300, deadline=None)
@given(chains_with_placements())
def test_random_placements_pack_into_the_most_bytes_live_at_one_step(case):
    buffers, steps = case
    plan = planned(buffers, steps)
    assert plan.size == peak_live_bytes(buffers, steps)


# ---- a tensor's end given outright (a region's share of a schedule keeps the single arena's) --------

def test_a_tensor_given_the_high_end_is_packed_there_without_a_buffer_to_be_away_from():
    buffers = [Buffer(30, 0, 1, end=HIGH), Buffer(20, 1, 1, placed_at=(0, -8))]
    plan = planned(buffers, 2)
    assert plan.offsets[0] == {0: 8} and plan.size == 38  # against the top of the arena from step 0
    assert plan.offsets[1] == {0: 8, 1: 0} and plan.moves == ((), ())  # 8 bytes below it: no slide needed
    assert ends_of(buffers) == [HIGH, HIGH] and ends_of([Buffer(30, 0, 1)]) == [LOW]


def test_an_end_is_refused_on_scratch_and_on_a_buffer_written_over_another():
    with pytest.raises(ValueError, match="scratch"):
        plan_arena([Buffer(8, 0, 0, scratch=True, end=HIGH)], 1)
    with pytest.raises(ValueError, match="its end"):
        plan_arena([Buffer(8, 0, 1), Buffer(8, 1, 1, alias_of=0, end=LOW)], 2)


def _at_their_ends(buffers):
    """The buffers with every `away_from` replaced by the end `ends_of` says it gives."""
    ends = ends_of(buffers)
    return [Buffer(b.size, b.first, b.last, b.scratch, None, b.alias_of, b.placed_at,
                   ends[i] if b.away_from is not None else b.end) for i, b in enumerate(buffers)]


@settings(max_examples=200, deadline=None)
@given(st.one_of(lifetimes(), chains_with_placements()))
def test_ends_of_gives_the_ends_the_packing_takes(case):
    buffers, steps = case
    assert plan_arena(_at_their_ends(buffers), steps) == plan_arena(buffers, steps)

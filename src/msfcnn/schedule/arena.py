"""A static arena planner that knows nothing of graphs: buffers with sizes and lifetimes in,
offsets, moves and the arena size out.

In the spirit of TensorFlow Lite Micro's memory planner (add buffers with a size and a first and
last use, then ask for each buffer's offset and the arena's size), with what fused schedules need
on top: a buffer may move between steps, and a buffer carries a few placement facts.

Steps are the blocks of a schedule, run in order. A buffer is live from step `first` through step
`last` and freed after `last`; its offset is given per step because it may move.

Packing rule (why the arena is exactly the largest step's live bytes): live tensors are packed
against the two ends of the arena, some growing up from offset 0 ("low"), some down from the top
("high"), each end without holes. A tensor born at a step goes on top of the end opposite to the
buffer it is placed `away_from` (the step's main input; the low end if none), so a step reads from
one end and writes against the other. Scratch buffers go on top of the low end, between the two.
While a step runs its live bytes are thus contiguous from both ends. After a step, the buffers
that die leave holes; the survivors slide against their end (a memmove each, recorded as moves),
so no hole survives into the next step. Hence, for any input `plan_arena` accepts, the arena size
equals the most bytes live at one step (`peak_live_bytes`).

A buffer may also be placed at an offset relative to another: `placed_at=(other, delta)`, for an
output that overwrites the part of its input already consumed (vMCU). It starts `delta` bytes
after the start of `other` (negative: before it), which dies at the buffer's first step; the
scheme, not the planner, guarantees that every byte of `other` it covers is consumed before it
is written. The two count as their union while that step runs: `other` must be on top of its end,
so the union grows that end; when the union would reach past `other`'s far edge, `other` first
slides away from its end (a move before the step). An alias (`alias_of`) is the special case of a
buffer of the same size at delta 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

LOW, HIGH = "low", "high"
Position = tuple[str, int]  # (end, distance of the buffer's near edge from that end)


@dataclass(frozen=True)
class Buffer:
    """`size` bytes live from step `first` through step `last`.

    scratch: lives during its one step only (first == last), between the two packed ends.
    away_from: a buffer live before this one is born (the step's main input): this one goes
        against the other end. None: the low end.
    alias_of: a buffer of the same size that dies at this one's first step: this one takes its
        bytes (an in-place element-wise op). Excludes `away_from`.
    placed_at: (other, delta): this one starts delta bytes from the start of `other`, which is on
        top of its end, was born before and dies at this one's first step. Excludes the others.
    end: the end a tensor goes against when it has no `away_from` (LOW or HIGH; None: LOW). A
        region's share of a schedule keeps the ends the whole schedule's packing gave (`ends_of`).
    """

    size: int
    first: int
    last: int
    scratch: bool = False
    away_from: int | None = None
    alias_of: int | None = None
    placed_at: tuple[int, int] | None = None
    end: str | None = None

    @property
    def over(self) -> int | None:
        """The buffer whose bytes this one shares at its first step (an alias's or a placed one's)."""
        return self.alias_of if self.alias_of is not None else self.placed_at[0] if self.placed_at else None


class Move(NamedTuple):
    """A memmove run between two steps: `size` bytes from offset `source` to offset `target`."""

    source: int
    target: int
    size: int


@dataclass(frozen=True)
class ArenaPlan:
    size: int  # the arena's bytes
    offsets: tuple[dict[int, int], ...]  # per step: buffer index -> offset, for every buffer live then
    moves: tuple[tuple[Move, ...], ...]  # per step, run in order after it


def plan_arena(buffers: Sequence[Buffer], steps: int) -> ArenaPlan:
    """Place `buffers` (referred to by their index) over steps 0..steps-1 by the packing rule."""
    _validate(buffers, steps)
    sizes = [b.size for b in buffers]
    ends = _Ends(sizes)
    born_at: list[list[int]] = [[] for _ in range(steps)]
    for i, b in enumerate(buffers):
        born_at[b.first].append(i)
    positions, end_moves, arena = [], [], 0
    for step, born in enumerate(born_at):
        placed, footprint, slides = _place_step(ends, buffers, born)
        if slides:  # run after the previous step, before this one
            end_moves[-1].extend(slides)
        arena = max(arena, footprint)
        positions.append(placed)
        ends.free(i for i in ends.tensors() if buffers[i].last == step)
        end_moves.append(ends.compact())
    offsets = tuple({i: _offset(pos, sizes[i], arena) for i, pos in placed.items()} for placed in positions)
    moves = tuple(tuple(Move(_offset((end, old), n, arena), _offset((end, new), n, arena), n)
                        for end, old, new, n in step_moves) for step_moves in end_moves)
    return ArenaPlan(arena, offsets, moves)


def _place_step(ends: _Ends, buffers: Sequence[Buffer], born: list[int]):
    """Place the buffers born at a step: its tensors on the ends, then its scratch between them.
    Returns where every live buffer is, the bytes from offset 0 to the top of the low end's
    scratch plus the high end's extent (the arena this step needs), and the moves to run before
    the step ((end, old, new distance, bytes): a buffer sliding to make room for one placed on it)."""
    slides = []
    for i in born:
        if buffers[i].alias_of is not None:
            ends.hand_over(buffers[i].alias_of, i)
        elif buffers[i].placed_at is not None:
            source, delta = buffers[i].placed_at
            slides += ends.place_on(source, delta, i, fresh=buffers[source].first == buffers[i].first)
        elif not buffers[i].scratch:
            away_from = buffers[i].away_from
            ends.push(i, _pushed_end(buffers[i], None if away_from is None else ends.end_of(away_from)))
    placed = ends.positions()
    cursor = ends.extent(LOW)
    for i in born:
        if buffers[i].scratch:
            placed[i] = (LOW, cursor)
            cursor += buffers[i].size
        if buffers[i].alias_of is not None:
            placed[buffers[i].alias_of] = placed[i]  # the op reads its input where it writes
    return placed, cursor + ends.extent(HIGH), slides


def _pushed_end(b: Buffer, other_end: str | None) -> str:
    """The end a new tensor goes against: opposite its `away_from` (at `other_end`), else its own."""
    if other_end is not None:
        return HIGH if other_end == LOW else LOW
    return b.end or LOW


def ends_of(buffers: Sequence[Buffer]) -> list[str]:
    """The end each tensor is packed against by `plan_arena` (scratch: LOW, between the two),
    without packing: an alias or a placed buffer takes its source's end, a tensor pushed away
    from another the opposite one. (A source whose alias was born earlier at the same step is no
    longer at its end then: `_Ends.end_of` says HIGH, so a tensor away from it goes LOW.)"""
    aliased = {}  # (source, step) -> the first alias of source born then
    for i, b in enumerate(buffers):
        if b.alias_of is not None:
            aliased.setdefault((b.alias_of, b.first), i)
    found: list[str] = []
    for i, b in enumerate(buffers):
        if b.over is not None:
            found.append(found[b.over])
        elif b.scratch:
            found.append(LOW)
        elif b.away_from is None:
            found.append(_pushed_end(b, None))
        else:
            handed = aliased.get((b.away_from, b.first), i) < i
            found.append(_pushed_end(b, HIGH if handed else found[b.away_from]))
    return found


class _Ends:
    """The live tensors packed against each end of the arena, each at a distance from its end
    (its near edge), without holes between them once compacted."""

    def __init__(self, sizes: list[int]):
        self.sizes = sizes
        self.at: dict[str, dict[int, int]] = {LOW: {}, HIGH: {}}  # end -> tensor -> distance

    def tensors(self) -> list[int]:
        return [i for at in self.at.values() for i in at]

    def end_of(self, i: int) -> str:
        return LOW if i in self.at[LOW] else HIGH

    def extent(self, end: str) -> int:
        """Bytes from the end to the far edge of its furthest tensor (without holes once compacted;
        a union of a placed buffer and its source is as far as the further of the two)."""
        return max((distance + self.sizes[i] for i, distance in self.at[end].items()), default=0)

    def positions(self) -> dict[int, Position]:
        return {i: (end, distance) for end, at in self.at.items() for i, distance in at.items()}

    def push(self, i: int, end: str) -> None:
        self.at[end][i] = self.extent(end)

    def hand_over(self, source: int, i: int) -> None:
        """Tensor i takes the place of `source`, which dies as i is born (same size)."""
        at = self.at[self.end_of(source)]
        at[i] = at.pop(source)

    def place_on(self, source: int, delta: int, i: int, fresh: bool) -> list[tuple[str, int, int, int]]:
        """Tensor i starts `delta` bytes after the start of `source` (by address), which is on
        top of its end and dies as i is born. If the union would reach past the source's near
        edge, the source first slides away from its end: returns that move, or none when the
        source is `fresh` (born at this step, so nothing is in it yet)."""
        end = self.end_of(source)
        at, size, other = self.at[end], self.sizes[i], self.sizes[source]
        if max(at.values()) != at[source]:
            raise ValueError(f"buffer {i} is placed on buffer {source}, which is not on top of its end")
        # Distances grow away from the end: up in memory on the low end, down on the high end.
        reach = -delta if end == LOW else delta + size - other
        moves = []
        if reach > 0:
            if not fresh:
                moves.append((end, at[source], at[source] + reach, other))
            at[source] += reach
        at[i] = at[source] + delta if end == LOW else at[source] + other - delta - size
        return moves

    def free(self, dying: Iterable[int]) -> None:
        for i in list(dying):
            if i in self.at[LOW] or i in self.at[HIGH]:  # a placed buffer's source has left already
                del self.at[self.end_of(i)][i]

    def compact(self) -> list[tuple[str, int, int, int]]:
        """Slide the tensors left on each end against it, nearest first, closing the holes that
        tensors freed below them leave. A move never overwrites a live byte it has not yet copied
        (memmove semantics), so it needs no extra memory. Returns (end, old, new distance, bytes)."""
        moved = []
        for end, at in self.at.items():
            distance = 0
            for i, old in sorted(at.items(), key=lambda item: item[1]):
                if old != distance:
                    moved.append((end, old, distance, self.sizes[i]))
                    at[i] = distance
                distance += self.sizes[i]
        return moved


def _offset(position: Position, size: int, arena: int) -> int:
    end, distance = position
    return distance if end == LOW else arena - distance - size


def _validate(buffers: Sequence[Buffer], steps: int) -> None:
    """Reject what the packing rule does not cover (a caller's mistake, so ValueError)."""
    aliased = set()
    for i, b in enumerate(buffers):
        if b.size <= 0 or not 0 <= b.first <= b.last < steps:
            raise ValueError(f"buffer {i}: {b.size} bytes over steps {b.first}..{b.last} of 0..{steps - 1}")
        if b.scratch and (b.first != b.last or b.away_from is not None or b.alias_of is not None or b.end):
            raise ValueError(f"buffer {i}: a scratch buffer lives one step and has no placement facts")
        if b.end not in (None, LOW, HIGH) or (b.end and b.over is not None):
            raise ValueError(f"buffer {i}: its end is {LOW!r} or {HIGH!r}, for a tensor not written over another")
        if sum(fact is not None for fact in (b.away_from, b.alias_of, b.placed_at)) > 1:
            raise ValueError(f"buffer {i}: away_from, alias_of and placed_at exclude each other")
        if b.placed_at is not None:
            source = b.placed_at[0]
            if not (_listed_before_and_live(buffers, source, i) and buffers[source].last == b.first and not b.scratch):
                raise ValueError(f"buffer {i}: the buffer it is placed on ({source}) must be a tensor listed "
                                 f"before it, live at step {b.first} and dying then")
        for other in (b.away_from, b.alias_of):
            if other is not None and not _listed_before_and_live(buffers, other, i):
                raise ValueError(f"buffer {i}: buffer {other} is not a tensor listed before it and live at "
                                 f"step {b.first}")
        if b.alias_of is not None:
            source = buffers[b.alias_of]
            if source.size != b.size or source.last != b.first or b.alias_of in aliased:
                raise ValueError(f"buffer {i}: alias source {b.alias_of} must have its size, die at its "
                                 "first step and be aliased once")
            aliased.add(b.alias_of)


def _listed_before_and_live(buffers: Sequence[Buffer], other: int, i: int) -> bool:
    """`other` is a tensor placed before buffer i (born earlier, or at i's step but listed first)
    and still live when i is born."""
    step = buffers[i].first
    return 0 <= other < i and not buffers[other].scratch and buffers[other].first <= step <= buffers[other].last


def live_buffers(buffers: Sequence[Buffer], step: int) -> list[int]:
    return [i for i, b in enumerate(buffers) if b.first <= step <= b.last]


def _shared_sources(buffers: Sequence[Buffer], live: list[int], step: int) -> set[int]:
    """The buffers sharing their bytes with one born at `step` (an alias's or a placed one's)."""
    return {buffers[i].over for i in live if buffers[i].over is not None and buffers[i].first == step}


def _union(buffers: Sequence[Buffer], i: int, offset: int = 0) -> tuple[int, int]:
    """[start, end) of buffer i at `offset`, together with the buffer it is placed on (if any),
    which starts `delta` bytes before it."""
    b = buffers[i]
    if b.placed_at is None:
        return offset, offset + b.size
    source, delta = b.placed_at
    start = offset - delta
    return min(offset, start), max(offset + b.size, start + buffers[source].size)


def live_bytes(buffers: Sequence[Buffer], step: int) -> int:
    """Bytes live at `step`, a buffer sharing bytes with another counted as their union."""
    live = live_buffers(buffers, step)
    sources = _shared_sources(buffers, live, step)
    total = 0
    for i in live:
        if i in sources:
            continue
        if buffers[i].first == step:
            start, end = _union(buffers, i)
            total += end - start
        else:
            total += buffers[i].size
    return total


def peak_live_bytes(buffers: Sequence[Buffer], steps: int) -> int:
    return max((live_bytes(buffers, step) for step in range(steps)), default=0)


def check_arena(buffers: Sequence[Buffer], plan: ArenaPlan) -> None:
    """Raise AssertionError unless, at every step, exactly the live buffers have offsets, all lie
    inside the arena and none overlap (but an alias and its source, which share their bytes), and
    the moves after each step carry every survivor to its next offset without clobbering another."""
    steps = len(plan.offsets)
    assert len(plan.moves) == steps, f"{len(plan.moves)} lists of moves for {steps} steps"
    for step in range(steps):
        _check_step(buffers, plan, step)
        _check_moves(buffers, plan, step)


def _check_step(buffers: Sequence[Buffer], plan: ArenaPlan, step: int) -> None:
    offsets = plan.offsets[step]
    live = live_buffers(buffers, step)
    assert sorted(offsets) == live, f"step {step}: offsets for {sorted(offsets)}, live buffers {live}"
    for i in live:
        assert 0 <= offsets[i] and offsets[i] + buffers[i].size <= plan.size, \
            f"step {step}: buffer {i} at [{offsets[i]}, {offsets[i] + buffers[i].size}) outside the arena"
    sources = _shared_sources(buffers, live, step)
    spans = []
    for i in live:
        if i in sources:
            continue
        b = buffers[i]
        if b.over is not None and b.first == step:
            delta = b.placed_at[1] if b.placed_at else 0
            assert offsets[i] == offsets[b.over] + delta, f"step {step}: buffer {i} is not at {delta} from {b.over}"
            spans.append((*_union(buffers, i, offsets[i]), i))
        else:
            spans.append((offsets[i], offsets[i] + b.size, i))
    spans.sort()
    for (_, end, i), (start, _, j) in zip(spans, spans[1:]):
        assert end <= start, f"step {step}: buffers {i} and {j} overlap"


def _check_moves(buffers: Sequence[Buffer], plan: ArenaPlan, step: int) -> None:
    """Replay the moves after `step` on the buffers that survive it."""
    at = {i: plan.offsets[step][i] for i in live_buffers(buffers, step) if buffers[i].last > step}
    for source, target, size in plan.moves[step]:
        movers = [i for i, offset in at.items() if offset == source and buffers[i].size == size]
        assert len(movers) == 1, f"after step {step}: move from {source} matches buffers {movers}"
        assert 0 <= target and target + size <= plan.size, f"after step {step}: move to {target} leaves the arena"
        for other, offset in at.items():
            assert other == movers[0] or offset + buffers[other].size <= target or target + size <= offset, \
                f"after step {step}: moving buffer {movers[0]} overwrites buffer {other}"
        at[movers[0]] = target
    for i, offset in at.items():
        assert offset == plan.offsets[step + 1][i], f"buffer {i} is at {offset} after step {step}, " \
                                                    f"but {plan.offsets[step + 1][i]} at the next step"

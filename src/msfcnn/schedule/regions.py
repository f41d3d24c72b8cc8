"""Placing a plan's buffers over several RAM regions (a board's TCM, SRAM and external RAM).

Graph-free, like `arena`: given the buffers (`arena.Buffer`: size, lifetime, placement facts), how
often each is accessed and the regions (size, relative access cost, whether DMA reaches them),
put every buffer in one region so that each region's arena, packed by `arena.plan_arena`, fits its
size, and among the placements that fit, pick one of least total cost: the sum over buffers of
accesses times its region's cost, plus the bytes the moves between steps copy, read and written
(`moved`). So the buffers read most per byte go to the cheapest regions.

A buffer and the one it is written over (`alias_of`, `placed_at`) share bytes, so they form one
group that goes to one region. Each tensor keeps the end of the arena that the packing of all the
buffers in one arena gives it (`arena.ends_of`; `away_from` is dropped when the other buffer is
in another region). So each end of a region holds its tensors in the single arena's order, and a
tensor moves only where it moves in the single arena: when one below it at its end dies, or when
one is written over it, both then in the region. Placing never adds a move, and a placement
that separates them saves one. For the same reason, a region's packing finds a buffer's source
on top of its end whenever the single arena's does.

The packing makes each arena exactly the peak over steps of its buffers' live bytes
(`arena.live_bytes`), and live bytes add up over groups, so a placement fits when, in every
region, the groups' live bytes at every step do. A placement whose packing fails (buffers that
no single arena packs either) counts as none found. Small cases are searched exhaustively
(branch and bound); larger ones by two greedy passes: the densest groups first into the
cheapest region they fit, then, should that fail, the largest first into the region with most
room, each then moved to a cheaper region where it still fits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from .arena import ArenaPlan, Buffer, ends_of, live_bytes, plan_arena

EXHAUSTIVE_LIMIT = 20_000  # assignments (regions ** groups) searched exhaustively


class RegionLike(Protocol):
    name: str
    size: int
    cost: float
    dma: bool


@dataclass(frozen=True)
class Placement:
    region_of: tuple[int, ...]  # per buffer: the index of its region
    arenas: tuple[ArenaPlan, ...]  # per region: its buffers packed (indices local to the region)
    local_index: tuple[int, ...]  # per buffer: its index among its region's buffers
    cost: float  # sum of accesses times region cost, the moves' bytes counted as accesses (`moved`)

    @property
    def arena_bytes(self) -> tuple[int, ...]:
        return tuple(arena.size for arena in self.arenas)

    def offset(self, buffer: int, step: int) -> int:
        """The buffer's offset in its region's arena at `step` (while it is live)."""
        return self.arenas[self.region_of[buffer]].offsets[step][self.local_index[buffer]]


def groups_of(buffers: Sequence[Buffer]) -> list[list[int]]:
    """The buffers that must share a region: each with the one it is written over, transitively."""
    root = list(range(len(buffers)))

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    for i, b in enumerate(buffers):
        if b.over is not None:
            root[find(i)] = find(b.over)
    groups: dict[int, list[int]] = {}
    for i in range(len(buffers)):
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


def group_loads(buffers: Sequence[Buffer], group: list[int], steps: int) -> list[int]:
    """The group's live bytes at each step (its members' union where one is written over another)."""
    members = [buffers[i] for i in group]
    index = {i: k for k, i in enumerate(group)}
    local = [relinked(b, index) for b in members]
    return [live_bytes(local, step) for step in range(steps)]


def relinked(b: Buffer, index: dict[int, int], end: str | None = None) -> Buffer:
    """`b` with its references to other buffers renumbered by `index`, dropped where absent; a
    dropped `away_from` leaves the tensor at `end` (the end the whole schedule's packing gave it)."""
    def at(i: int | None) -> int | None:
        return None if i is None else index.get(i)

    placed = None if b.placed_at is None else (index[b.placed_at[0]], b.placed_at[1])
    away_from = at(b.away_from)
    kept = b.end if away_from is not None or b.away_from is None else end
    return Buffer(b.size, b.first, b.last, b.scratch, away_from, at(b.alias_of), placed, kept)


def place(buffers: Sequence[Buffer], steps: int, regions: Sequence[RegionLike], accesses: Sequence[float],
          needs_dma: Sequence[bool] | None = None, pinned: dict[int, int] | None = None) -> Placement | None:
    """A placement of least cost that fits (exact for small cases, module docstring), or None when
    none is found. `needs_dma[i]`: buffer i goes only to a region DMA reaches. `pinned`: buffer ->
    the only region it may go to (--input-in)."""
    needs_dma = needs_dma or [False] * len(buffers)
    pinned = pinned or {}
    groups = groups_of(buffers)
    loads = [group_loads(buffers, g, steps) for g in groups]
    weight = [sum(accesses[i] for i in g) for g in groups]
    allowed = [[r for r, region in enumerate(regions) if (region.dma or not any(needs_dma[i] for i in g))
                and all(pinned.get(i, r) == r for i in g)] for g in groups]
    def packed(choice: list[int]) -> Placement | None:
        region_of = [0] * len(buffers)
        for g, r in zip(groups, choice):
            for i in g:
                region_of[i] = r
        try:
            placement = pack(buffers, steps, len(regions), region_of)
        except ValueError:  # a buffer written over another that the region's packing cannot put on top of its end
            return None
        cost = sum(w * regions[r].cost for w, r in zip(weight, choice)) + moved(placement, regions)
        return replace(placement, cost=cost)

    if len(regions) ** len(groups) <= EXHAUSTIVE_LIMIT:
        return _exhaustive(loads, weight, allowed, regions, steps, packed)
    choice = _greedy(loads, weight, allowed, regions, steps)
    return None if choice is None else packed(choice)


def pack(buffers: Sequence[Buffer], steps: int, regions: int, region_of: Sequence[int], cost: float = 0.0) -> Placement:
    """Each region's buffers packed by `arena.plan_arena`, in their order (so "listed before" holds)."""
    local_index = [0] * len(buffers)
    arenas = []
    for mine, local in region_members(buffers, region_of, regions):
        for k, i in enumerate(mine):
            local_index[i] = k
        arenas.append(plan_arena(local, steps) if mine
                      else ArenaPlan(0, tuple({} for _ in range(steps)), tuple(() for _ in range(steps))))
    return Placement(tuple(region_of), tuple(arenas), tuple(local_index), cost)


def moved(placement: Placement, regions: Sequence[RegionLike]) -> float:
    """The cost of the placement's moves between steps: each byte moved is read and written once."""
    return sum(2 * size * regions[r].cost for r, arena in enumerate(placement.arenas)
               for step in arena.moves for _, _, size in step)


def region_members(buffers: Sequence[Buffer], region_of: Sequence[int], regions: int):
    """Per region: its buffers' indices, and the buffers as its packer sees them (renumbered, each
    tensor against the end the whole schedule's packing gave it)."""
    ends = ends_of(buffers)
    found = []
    for r in range(regions):
        mine = [i for i in range(len(buffers)) if region_of[i] == r]
        index = {i: k for k, i in enumerate(mine)}
        found.append((mine, [relinked(buffers[i], index, ends[i]) for i in mine]))
    return found


def _exhaustive(loads, weight, allowed, regions, steps, packed) -> Placement | None:
    """Branch and bound over every assignment of groups to regions, densest group first; each
    complete one that beats the best so far is packed (`packed`: None if its packing fails)."""
    order = sorted(range(len(loads)), key=lambda g: -weight[g])
    room = [[region.size] * steps for region in regions]
    cheapest = min((region.cost for region in regions), default=0.0)
    rest = [0.0] * (len(order) + 1)  # a lower bound on the cost of the groups after position k
    for k in range(len(order) - 1, -1, -1):
        rest[k] = rest[k + 1] + weight[order[k]] * cheapest
    best: list = [None, float("inf")]
    chosen = [0] * len(loads)

    def visit(k: int, cost: float) -> None:
        if cost + rest[k] >= best[1]:
            return
        if k == len(order):  # the moves, known once packed, only add to `cost`: the bound holds
            placement = packed(chosen)
            if placement is not None and placement.cost < best[1]:
                best[:] = [placement, placement.cost]
            return
        g = order[k]
        for r in sorted(allowed[g], key=lambda r: regions[r].cost):
            if _fits(room[r], loads[g]):
                _take(room[r], loads[g], -1)
                chosen[g] = r
                visit(k + 1, cost + weight[g] * regions[r].cost)
                _take(room[r], loads[g], +1)

    visit(0, 0.0)
    return best[0]


def _greedy(loads, weight, allowed, regions, steps) -> list[int] | None:
    """Densest first into the cheapest region with room; failing that, largest first into the
    region with most room. Either is then improved by moving groups to cheaper regions."""
    density = sorted(range(len(loads)), key=lambda g: -weight[g] / max(1, max(loads[g])))
    by_size = sorted(range(len(loads)), key=lambda g: -max(loads[g]))
    for order, pick in ((density, _cheapest), (by_size, _roomiest)):
        room = [[region.size] * steps for region in regions]
        chosen: list[int] = [-1] * len(loads)
        for g in order:
            fitting = [r for r in allowed[g] if _fits(room[r], loads[g])]
            if not fitting:
                break
            chosen[g] = pick(fitting, regions, room, loads[g])
            _take(room[chosen[g]], loads[g], -1)
        else:
            _improve(chosen, density, loads, allowed, regions, room)
            return chosen
    return None


def _cheapest(fitting, regions, room, load) -> int:
    return min(fitting, key=lambda r: (regions[r].cost, -min(room[r])))


def _roomiest(fitting, regions, room, load) -> int:
    return max(fitting, key=lambda r: (min(a - b for a, b in zip(room[r], load)), -regions[r].cost))


def _improve(chosen, order, loads, allowed, regions, room) -> None:
    """Move each group, densest first, to the cheapest region that has room for it."""
    for g in order:
        here = chosen[g]
        _take(room[here], loads[g], +1)
        fitting = [r for r in allowed[g] if _fits(room[r], loads[g])]  # includes `here`
        chosen[g] = min(fitting, key=lambda r: (regions[r].cost, r != here))
        _take(room[chosen[g]], loads[g], -1)


def _fits(room: list[int], load: list[int]) -> bool:
    return all(need <= free for need, free in zip(load, room) if need)


def _take(room: list[int], load: list[int], sign: int) -> None:
    for step, need in enumerate(load):
        room[step] += sign * need

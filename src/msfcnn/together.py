"""`msfcnn fit A B ... --board X`: several networks in one firmware, sharing one arena.

The networks run one after the other, never at the same time, so they share one arena as large as
the largest of theirs (`msfcnn compile A B ...`, codegen/shared.py). Their persistent state is not
shared: each keeps its own. Their RAM, everything counted, is therefore the largest arena (its state
aside), plus every network's state, io and static data, plus the deepest of their stack bounds (one
call at a time), plus the reserve. Among the shared arena sizes that fit, the largest is chosen, and
each network runs its fastest plan within it (objective min-ram: each network's plan of least RAM).

On a board of several RAM regions the networks fit when their buffers can be placed over the
regions with one shared arena per region, each the largest of the networks' arenas there, and
their state, io and the program's bytes beside (schedule/placement.place_shared).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from . import latency, pipeline
from .boards import Board
from .codegen.stack import footprint, kernel_static_bytes
from .errors import UserError
from .fit import Fit, io_bytes, least_ram
from .ir import Graph
from .plan import Plan
from .schedule.placement import RegionUse
from .targets import TARGETS


@dataclass(frozen=True)
class FitTogether:
    """Each network's plan (a `Fit` of its own figures) and their RAM together on the board."""

    fits: tuple[Fit, ...]
    board: Board
    reserve_bytes: int
    kernel_static_bytes: int  # the kernels' static data, which each Fit counts and the firmware holds once
    # A board of several regions: each region's shared arena and what it keeps beside, everything
    # counted (placement.place_shared), or () when no placement is found (they do not fit).
    regions: tuple[RegionUse, ...] = ()
    region_shared_bytes: tuple[int, ...] = ()  # per region: its shared arena (the largest there)

    @property
    def shared_arena_bytes(self) -> int:
        """The largest arena, state aside; placed over several regions, the sum of their shared arenas."""
        if self.region_shared_bytes:
            return sum(self.region_shared_bytes)
        return max(f.arena_bytes - f.graph.state_bytes for f in self.fits)

    @property
    def state_bytes(self) -> int:
        return sum(f.graph.state_bytes for f in self.fits)

    @property
    def io_bytes(self) -> int:
        return sum(f.io_bytes for f in self.fits)

    @property
    def stack_bytes(self) -> int:
        return max(f.code.stack_bytes for f in self.fits)

    @property
    def static_bytes(self) -> int:
        return sum(f.code.static_bytes for f in self.fits) - (len(self.fits) - 1) * self.kernel_static_bytes

    @property
    def used_bytes(self) -> int:
        return self.shared_arena_bytes + self.state_bytes + self.io_bytes + self.stack_bytes + self.static_bytes

    @property
    def headroom_bytes(self) -> int:
        """The RAM left; on a board of several regions, their free bytes (-1: no placement fits)."""
        if self.board.several_regions:
            return sum(r.size - r.arena_bytes for r in self.regions) if self.regions else -1
        return self.board.ram_bytes - self.reserve_bytes - self.used_bytes

    @property
    def program_bytes(self) -> int:
        """What the program takes beside the networks' buffers: the stack, static data, reserve."""
        return self.stack_bytes + self.static_bytes + self.reserve_bytes

    def to_dict(self) -> dict:
        return {"models": [f.graph.name for f in self.fits], "board": self.board.name, "target": self.board.target,
                "fits": self.headroom_bytes >= 0, "board_ram_bytes": self.board.ram_bytes,
                "shared_arena_bytes": self.shared_arena_bytes, "state_bytes": self.state_bytes,
                "io_bytes": self.io_bytes, "stack_bytes": self.stack_bytes, "static_bytes": self.static_bytes,
                "reserve_bytes": self.reserve_bytes, "headroom_bytes": self.headroom_bytes,
                **({"regions": [r.to_dict() for r in self.regions],
                    "region_shared_arena_bytes": {r.name: n for r, n in zip(self.regions, self.region_shared_bytes)}}
                   if self.board.several_regions else {}),
                "networks": [f.to_dict() for f in self.fits]}


class _Network:
    """One network's candidate plans on the board, fastest first, each measured (stack bound,
    static data) once, when first asked."""

    def __init__(self, graph: Graph, board: Board, reserve: int, input_in_flash: bool, objective: str):
        self.graph, self.board, self.reserve, self.input_in_flash, self.objective = (
            graph, board, reserve, input_in_flash, objective)
        model = latency.load(board.target) if board.target in latency.calibrated_targets() else None
        self.uncovered = tuple(model.uncovered(graph)) if model is not None else ()
        self.weight = "instructions" if model is not None and not self.uncovered else "macs"
        fronts, self.vanilla = [], None
        for count_io in (False,) if input_in_flash else (False, True):  # a constant input is not in the arena
            planner = pipeline.planner(graph, pipeline.SCHEDULABLE_COST_MODEL, count_io=count_io, latency=model)
            fronts.append(planner.pareto(weight=self.weight))
            self.vanilla = self.vanilla or planner.vanilla()
        self.candidates = sorted((p for front in fronts for p in front), key=lambda p: (
            p.predicted_instructions if self.weight == "instructions" else p.macs, p.peak_ram_bytes + self.io_of(p)))
        self._measured: dict[int, Fit] = {}

    def io_of(self, plan: Plan) -> int:
        return 0 if plan.io_counted else io_bytes(self.graph, self.input_in_flash)

    def arena_of(self, plan: Plan) -> int:
        """What the plan needs of the shared arena: its peak RAM less its own state."""
        return plan.peak_ram_bytes - self.graph.state_bytes

    def measured(self, plan: Plan) -> Fit:
        if id(plan) not in self._measured:
            schedule = pipeline.lower(self.graph, plan)
            self._measured[id(plan)] = Fit(self.graph, self.board, plan, schedule.arena_bytes, self.io_of(plan),
                                           footprint(self.graph, schedule, plan, TARGETS[self.board.target]),
                                           self.reserve, self.weight, self.uncovered, self.input_in_flash,
                                           self.objective, self.vanilla)
        return self._measured[id(plan)]

    def fastest_within(self, cap: int) -> Plan | None:
        return next((p for p in self.candidates if self.arena_of(p) <= cap), None)


def fit_together(graphs: list[Graph], board: Board, reserve: int, input_in_flash: bool = False,
                 objective: str = "min-latency") -> FitTogether:
    """The networks' plans that fit `board` together (module docstring); UserError naming the RAM
    they need with each network's plan of least RAM when none do (each network's least, not a
    search of every combination for the least together)."""
    networks = [_Network(g, board, reserve, input_in_flash, objective) for g in graphs]
    shared = kernel_static_bytes(TARGETS[board.target])

    def together(plans) -> FitTogether:
        result = FitTogether(tuple(n.measured(p) for n, p in zip(networks, plans)), board, reserve, shared)
        return placed(result) if board.several_regions else result

    budget = sum(r.size for r in board.ram_regions) - reserve
    if objective == "min-latency":
        caps = sorted({n.arena_of(p) for n in networks for p in n.candidates}, reverse=True)
        for cap in caps:
            plans = [n.fastest_within(cap) for n in networks]
            if None in plans:
                break  # a smaller cap leaves a network without any plan
            bound = max(n.arena_of(p) for n, p in zip(networks, plans)) + sum(
                g.state_bytes + n.io_of(p) for g, n, p in zip(graphs, networks, plans))
            if bound > budget:  # cannot fit whatever their stacks
                continue
            result = together(plans)
            if result.headroom_bytes >= 0:
                return result
    least = together([least_ram(n.candidates, n.measured, n.io_of).plan for n in networks])
    if objective == "min-ram" and least.headroom_bytes >= 0:
        return least
    names = " and ".join(g.name for g in graphs)
    if board.several_regions and least.used_bytes <= budget:
        sizes = ", ".join(f"{r.name} {r.size}" for r in board.ram_regions)
        raise UserError(f"{names} do not fit {board.name} together: with each one's plan of least RAM they need "
                        f"{least.used_bytes} B, which cannot be split over its regions ({sizes} B; {reserve} B reserve) "
                        f"with one shared arena per region: no buffer may straddle two")
    raise UserError(f"{names} do not fit {board.name} together: with each one's plan of least RAM they need {least.used_bytes} B "
                    f"(shared arena {least.shared_arena_bytes} + state {least.state_bytes} + io {least.io_bytes} + "
                    f"stack {least.stack_bytes} + static {least.static_bytes}), {least.used_bytes - budget} B more "
                    f"than the {budget} B available ({board.ram_bytes} B less the {reserve} B reserve)")


def placed(result: FitTogether) -> FitTogether:
    """`result` on a board of several regions: the networks' buffers placed over them, one shared
    arena per region (placement.place_shared), or no regions when none is found."""
    planned = [(f.graph, f.plan, pipeline.lower(f.graph, f.plan)) for f in result.fits]
    found = pipeline.shared_over_regions(planned, result.board.ram_regions, result.program_bytes)
    if found is None:
        return replace(result, regions=())
    _, shared, uses = found
    return replace(result, regions=uses, region_shared_bytes=tuple(shared))

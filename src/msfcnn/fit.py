"""`msfcnn fit`: the fastest plan whose whole RAM fits a board (docs/cli.md).

The RAM counted is the arena, the network's input and output (the caller's buffers; only the
output with --input-in-flash, the input then being a constant in flash; or, in the plans that
count them, buffers of the arena itself, which later blocks reuse), the stack bound of the
generated code (codegen/stack.py) and its static data, plus a reserve for the rest of the program
(the C library's data, the start-up code, the caller's own frames). "Fastest" is the fewest
instructions the board's target's latency model predicts, or the fewest MACs where the target has
no latency model or its model has no costs for one of the network's kernels; the candidates are the Pareto fronts of (peak RAM, that weight), with the input
and output outside the arena and (without --input-in-flash) inside it, fastest first.

On a board of several RAM regions a plan fits when its buffers, the io and the program's bytes
(stack bound, static data, reserve) can be placed over the regions (schedule/placement.py); the
arena is then one per region.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from . import latency, pipeline
from .boards import Board
from .codegen.stack import CodeFootprint, footprint
from .errors import UserError, did_you_mean
from .ir import NETWORK_INPUT, Graph
from .plan import Plan, unfused_doc
from .schedule.lowered import Liveness
from .schedule.placement import RegionUse, declared_bytes, placed_schedule, region_uses
from .targets import TARGETS

DEFAULT_RESERVE = 1024  # the C library's static data, start-up code and the caller's frame


@dataclass(frozen=True)
class Fit:
    graph: Graph
    board: Board
    plan: Plan
    arena_bytes: int
    io_bytes: int
    code: CodeFootprint
    reserve_bytes: int
    weight: str  # "instructions" (latency model) or "macs"
    uncovered: tuple[str, ...] = ()  # kernels the latency model has no costs for
    input_in_flash: bool = False
    objective: str = "min-latency"  # or "min-ram": the fitting plan of least RAM, everything counted
    vanilla: Plan | None = None  # the unfused plan, with its predicted time where it is predicted
    # --input-stream: the least peak RAM plus io of the plans with the input streamed and of those
    # with the whole input (in the arena or the caller's), side by side; None without the option.
    streamed_vs_whole: tuple[int, int] | None = None
    hop: int | None = None  # --streaming: the graph is one call of a sliding window, `hop` new frames
    # A board of several regions: the arena each holds (everything placed counted), or () when the
    # plan's buffers could not be placed over them (it does not fit).
    regions: tuple[RegionUse, ...] = ()
    input_in: str | None = None  # --input-in: the region that holds the input
    # Over several regions: the instructions predicted for the schedule as placed, whose moves
    # between blocks (each region packed on its own) are among the plan's one arena's (regions.py).
    placed_instructions: int | None = None

    @property
    def io_in_arena(self) -> bool:
        return self.plan.io_counted

    @property
    def used_bytes(self) -> int:
        return self.arena_bytes + self.io_bytes + self.code.stack_bytes + self.code.static_bytes

    @property
    def headroom_bytes(self) -> int:
        """The RAM left; on a board of several regions, their free bytes (-1: no placement fits)."""
        if self.board.several_regions:
            return sum(r.size - r.arena_bytes for r in self.regions) if self.regions else -1
        return self.board.ram_bytes - self.reserve_bytes - self.used_bytes

    @property
    def predicted_ms(self) -> float | None:
        """Predicted instructions / clock: a lower bound, at one instruction per cycle."""
        n = self.plan.predicted_instructions
        return None if n is None or self.board.clock_hz is None else n / self.board.clock_hz * 1e3

    def to_dict(self) -> dict:
        return {"model": self.graph.name, "board": self.board.name, "target": self.board.target,
                "objective": self.objective,
                "fits": self.headroom_bytes >= 0, "board_ram_bytes": self.board.ram_bytes,
                "arena_bytes": self.arena_bytes, "io_bytes": self.io_bytes, "io_in_arena": self.io_in_arena, "stack_bytes": self.code.stack_bytes,
                "static_bytes": self.code.static_bytes, "reserve_bytes": self.reserve_bytes,
                "headroom_bytes": self.headroom_bytes, "ranked_by": self.weight,
                "latency_complete": self.weight == "instructions", "latency_missing": list(self.uncovered),
                "predicted_instructions": self.plan.predicted_instructions,
                "predicted_ms_lower_bound": self.predicted_ms, "macs": self.plan.macs,
                "stack_path": list(self.code.path), **unfused_doc(self.plan, self.vanilla),
                **({"input_streamed": self.plan.input_streamed, "least_streamed_bytes": self.streamed_vs_whole[0],
                    "least_whole_input_bytes": self.streamed_vs_whole[1]} if self.streamed_vs_whole else {}),
                **({"hop": self.hop, "state_bytes": self.graph.state_bytes} if self.hop else {}),
                **({"regions": [r.to_dict() for r in self.regions],
                    "placed_predicted_instructions": self.placed_instructions} if self.board.several_regions else {}),
                "plan": self.plan.to_dict()}


class NoFit(UserError):
    """No plan fits; `least` is the plan of least total RAM (arena, io, stack bound, static data)."""

    def __init__(self, least: Fit, message: str):
        super().__init__(message)
        self.least = least


def io_bytes(graph: Graph, input_in_flash: bool) -> int:
    """The network's inputs (unless they are constants in flash) and output buffers."""
    inputs = 0 if input_in_flash else sum(graph.nbytes(t) for t in graph.input_tensors)
    return inputs + graph.nbytes(graph.output)


def least_ram(candidates: list[Plan], measured, io_of, usable=None) -> Fit:
    """The candidate whose total (arena, io, stack bound, static data) is least: exactly the RAM
    less reserve that `fit` needs to find a plan. Plans are measured in order of peak RAM plus io,
    a lower bound on their total (the arena holds the peak, the stack and static data are >= 0),
    until that bound reaches the least total found. `usable`: the plans that may fit at all (on a
    board of several regions, those whose buffers can be placed), when any is."""
    pool = [p for p in candidates if usable(p)] if usable else []
    best = None
    for plan in sorted(pool or candidates, key=lambda p: p.peak_ram_bytes + io_of(p)):
        if best is not None and plan.peak_ram_bytes + io_of(plan) >= best.used_bytes:
            break
        result = measured(plan)
        if best is None or result.used_bytes < best.used_bytes:
            best = result
    return best


def fit(graph: Graph, board: Board, reserve: int = DEFAULT_RESERVE, input_in_flash: bool = False,
        objective: str = "min-latency", input_stream: bool = False, hop: int | None = None,
        input_in: str | None = None) -> Fit:
    """The fastest plan of `graph` whose RAM, everything counted, fits `board` less `reserve`
    (objective "min-ram": the plan of least RAM, everything counted); UserError naming the least
    RAM reachable when none fits. `input_stream`: the plans that pull the input row by row
    (--input-stream) are candidates too. `hop`: `graph` is one call of a sliding window
    (pipeline.load(..., hop=)), reported as such."""
    if input_stream and input_in_flash:
        raise UserError("--input-stream and --input-in-flash: a streamed input is never in RAM whole; give one of them")
    check_input_region(board, input_in, input_in_flash)
    if objective not in ("min-latency", "min-ram"):
        raise UserError(f"fit's objective is min-latency or min-ram, not {objective!r}")
    target = TARGETS[board.target]  # its compiler and nm bound the stack (codegen/stack.py)
    model = latency.load(board.target) if board.target in latency.calibrated_targets() else None
    uncovered = tuple(model.uncovered(graph)) if model is not None else ()
    # Time ranks the plans only where the model costs every kernel; MACs do otherwise.
    weight = "instructions" if model is not None and not uncovered else "macs"

    def io_of(plan: Plan) -> int:
        return 0 if plan.io_counted else io_bytes(graph, input_in_flash)

    fronts, vanilla = [], None
    counts = [(False, False)] if input_in_flash else [(False, False), (True, False)]  # a constant input is not in the arena
    for count_io, streamed in counts + [(True, True)] * input_stream:
        planner = pipeline.planner(graph, pipeline.SCHEDULABLE_COST_MODEL, count_io=count_io, latency=model,
                                   input_stream=streamed)
        fronts.append(planner.pareto(weight=weight))
        vanilla = vanilla or planner.vanilla()
    side_by_side = None
    if input_stream:
        side_by_side = tuple(min(p.peak_ram_bytes + io_of(p) for front in group for p in front)
                             for group in (fronts[-1:], fronts[:-1]))
    candidates = sorted((p for front in fronts for p in front), key=lambda p: (
        p.predicted_instructions if weight == "instructions" else p.macs, p.peak_ram_bytes + io_of(p)))
    budget = sum(r.size for r in board.ram_regions) - reserve

    fits: dict[int, Fit] = {}  # by id(plan): each plan's code is compiled once

    def measured(plan: Plan) -> Fit:
        if id(plan) not in fits:
            schedule = pipeline.lower(graph, plan)
            result = Fit(graph, board, plan, schedule.arena_bytes, io_of(plan),
                         footprint(graph, schedule, plan, target), reserve, weight, uncovered,
                         input_in_flash, objective, vanilla, side_by_side, hop, input_in=input_in)
            fits[id(plan)] = placed(result, schedule) if board.several_regions else result
        return fits[id(plan)]

    if objective == "min-latency":
        for plan in candidates:
            if plan.peak_ram_bytes + io_of(plan) > budget:  # cannot fit whatever its stack
                continue
            if board.several_regions and not placeable(graph, plan, board, reserve, input_in_flash, input_in):
                continue  # not even with no stack (before the stack bound compiles the plan's code)
            result = measured(plan)
            if result.headroom_bytes >= 0:
                return result
    usable = (lambda p: placeable(graph, p, board, reserve, input_in_flash, input_in)) if board.several_regions else None
    least = least_ram(candidates, measured, io_of, usable)
    if objective == "min-ram" and least.headroom_bytes >= 0:
        return least
    io = "io in the arena" if least.io_in_arena else f"io {least.io_bytes}"
    if board.several_regions and least.used_bytes <= budget:
        sizes = ", ".join(f"{r.name} {r.size}" for r in board.ram_regions)
        raise NoFit(least, f"{graph.name} does not fit {board.name}: its least RAM, {least.used_bytes} B (arena "
                           f"{least.arena_bytes} + {io} + stack {least.code.stack_bytes} + static "
                           f"{least.code.static_bytes}), cannot be split over its regions ({sizes} B; "
                           f"{reserve} B reserve): no buffer may straddle two")
    raise NoFit(least, f"{graph.name} does not fit {board.name}: the least RAM reachable is {least.used_bytes} B "
                    f"(arena {least.arena_bytes} + {io} + stack {least.code.stack_bytes} + static "
                    f"{least.code.static_bytes}), {least.used_bytes - budget} B more than the {budget} B available "
                    f"({budget + reserve} B less the {reserve} B reserve)")


def check_input_region(board: Board, input_in: str | None, input_in_flash: bool) -> None:
    """--input-in REGION names one of the board's regions, and excludes --input-in-flash."""
    if input_in is None:
        return
    names = [r.name for r in board.ram_regions]
    if input_in_flash:
        raise UserError("--input-in and --input-in-flash: the input is in one place; give one of them")
    if input_in not in names:
        raise UserError(f"unknown region {input_in!r} for --input-in{did_you_mean(input_in, names)} "
                        f"({board.name}'s regions: {', '.join(names)}; or flash)")


def _placement(graph: Graph, plan: Plan, board: Board, program_bytes: int, input_in_flash: bool, schedule=None,
               input_in: str | None = None):
    """The plan's buffers, its io and the program's bytes over the board's regions, or None."""
    return pipeline.placed_on(graph, plan, board.ram_regions, program_bytes, not input_in_flash, schedule, input_in)


def placeable(graph: Graph, plan: Plan, board: Board, reserve: int, input_in_flash: bool,
              input_in: str | None = None) -> bool:
    """Whether the plan could fit the board's regions with no stack and no static data."""
    return _placement(graph, plan, board, reserve, input_in_flash, None, input_in) is not None


def placed(result: Fit, schedule) -> Fit:
    """`result` on a board of several regions: its buffers placed over them, the arena per region
    (its arena_bytes the arenas the C declares: what the regions hold less io and program bytes)."""
    program = result.code.stack_bytes + result.code.static_bytes + result.reserve_bytes
    found = _placement(result.graph, result.plan, result.board, program, result.input_in_flash, schedule,
                       result.input_in)
    if found is None:
        return result
    placement, _, keys = found
    uses = region_uses(placement, keys, result.board.ram_regions)
    live = Liveness(result.graph, result.plan.io_counted, result.plan.input_streamed)
    regions_schedule = placed_schedule(result.graph, live, schedule.blocks, placement, keys, result.board.ram_regions)
    arena = declared_bytes(regions_schedule)  # as the C declares them
    plan = replace(result.plan, region_arenas=tuple((u.name, u.arena_bytes) for u in uses))
    predicted = None
    if result.weight == "instructions":
        counter = latency.load(result.board.target).counter(result.graph)
        predicted = round(sum(counter.schedule(regions_schedule)))
    return replace(result, plan=plan, arena_bytes=arena, regions=uses, placed_instructions=predicted)


def run_linked(result: Fit, x):
    """The fitting plan's program built for the board's emulated target, linked as the board (its
    RAM as the linker's region, the plan's stack bound reserved in it: a plan that does not fit
    fails to link; several regions each at an address of its own, an arena in each), run on input x against the numpy executor: a pipeline.Verification whose
    stack_bytes is the measured stack (docs/cli.md, `verify --board`)."""
    board = result.board
    graph, plan = result.graph, result.plan
    regions = tuple((r.name, r.size) for r in board.ram_regions) if board.several_regions else ()
    target = TARGETS[board.target].for_board(board.name, board.ram_bytes, result.code.stack_bytes,
                                             not result.input_in_flash, regions)
    if not regions:
        return pipeline.verify(graph, plan, pipeline.lower(graph, plan), x, target)
    program = result.code.stack_bytes + result.code.static_bytes + result.reserve_bytes
    schedule = pipeline.lower_on_regions(graph, plan, board, program, not result.input_in_flash, result.input_in)
    return pipeline.verify(graph, plan, schedule, x, target)


def linked_report(check, board: Board, code: CodeFootprint, io: int) -> dict:
    """What a run linked as `board` measured, against fit's terms: the stack against its bound,
    and the RAM beyond arena, io and the generated code's static data (the C library's data, the
    start-up code's and main's frames), which fit's reserve stands for."""
    arena = 0 if check.region_arenas else check.arena_bytes  # (over several regions: in their own memories)
    library = check.static_ram_bytes - arena - io - code.static_bytes
    return {"board": board.name, "board_ram_bytes": board.ram_bytes, "stack_bound_bytes": code.stack_bytes,
            "within_stack_bound": check.stack_bytes <= code.stack_bytes, "static_ram_bytes": check.static_ram_bytes,
            "io_bytes": io, "c_library_bytes": library, "frames_bytes": check.frames_bytes,
            "reserve_used_bytes": library + check.frames_bytes}

"""The steps from a model to verified C, one function each: load, plan, lower, run, emit, build,
verify. The CLI, the tests, the benchmarks and the scripts all go through these, so every
command applies the same checks (one cost-model guard, one verification)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from . import jsontext, progress
from .cost import DEFAULT_COST_MODEL
from .errors import UserError
from .executor import States, initial_states, internal_inputs, run_unfused, run_unfused_outputs
from .frontends import load_model
from .frontends.sliding import sliding_window
from .fused_executor import FusedRun, run_fused
from .ir import Graph
from .plan import Plan
from .planner import Planner
from .schedule import Schedule, schedule_plan
from .targets import TARGETS, Target

SCHEDULABLE_COST_MODEL = "exact"


def load(model: str, weights: bool = False, numerics: str = "litert", hop: int | None = None) -> Graph:
    """A built-in name or a model file as a graph; weights=True gives weightless models (built-ins,
    layer lists) deterministic random int8 weights, ready to run. numerics="tflm" makes its int8
    arithmetic bit-exact with TFLite Micro (TFLite's reference kernels) instead of LiteRT's x86
    kernels (docs/numerics.md). With a `hop`, the graph of one call of the model streamed over a
    sliding window, `hop` new frames a call (`--streaming`, frontends/sliding.py)."""
    graph = load_model(model, weights=weights, numerics=numerics)
    return graph if hop is None else sliding_window(graph, hop)


def planner(graph: Graph, cost_model: str = DEFAULT_COST_MODEL, schemes=None, count_io: bool = False,
            latency=None, input_stream: bool = False) -> Planner:
    """The model's fusion DAG under a cost model, ready for every question about plans; with a
    target's latency model (`latency.load(target)`) every block also weighs its predicted instructions.
    `input_stream`: the whole RAM counted, the input pulled row by row where a block can."""
    return Planner(graph, cost_model, None if schemes is None else tuple(schemes), count_io, latency, input_stream)


@dataclass(frozen=True)
class PlanOptions:
    """One planning question: the model, how its blocks are counted (`cost_model`, `schemes`,
    `count_io`), the strategy, the objective and the caps. `latency_target` names the target whose
    latency model weighs the blocks (None: no latency model). `max_latency` is the time cap as
    given, (value, "instructions" or "ms"); `clock_hz` turns milliseconds into instructions."""

    model: str
    cost_model: str = DEFAULT_COST_MODEL
    schemes: tuple[str, ...] | None = None
    count_io: bool = False
    strategy: str = "optimal"
    objective: str | None = None
    max_overhead: float | None = None
    max_ram: int | None = None
    max_latency: tuple[float, str] | None = None
    clock_hz: int | None = None
    latency_target: str | None = None
    hop: int | None = None  # --streaming: the frames each call brings; None: whole windows
    input_stream: bool = False

    def instruction_cap(self) -> int | None:
        """The time cap in predicted instructions (milliseconds at `clock_hz`, one instruction a
        cycle: as many instructions as that time holds)."""
        if self.max_latency is None:
            return None
        value, unit = self.max_latency
        if unit == "instructions":
            return round(value)
        if self.clock_hz is None:
            raise UserError("--max-latency in milliseconds needs --board with a clock (the clock turns time into instructions)")
        return int(value * self.clock_hz // 1000)


def latency_model(options: PlanOptions):
    """The latency model of the options' target, or None when no target weighs the plans."""
    if options.latency_target is None:
        return None
    from . import latency
    return latency.load(options.latency_target)


def options_planner(graph: Graph, options: PlanOptions, latency=None) -> Planner:
    """`planner` for the options; a latency model (`latency_model(options)`) needs the exact cost
    model, whose blocks are the lowered ones it weighs."""
    if latency is not None and options.cost_model != SCHEDULABLE_COST_MODEL:
        raise UserError("the latency model weighs lowered blocks: use --cost-model exact with --target")
    with progress.step(f"planning {graph.name}: enumerating fused blocks"):
        return planner(graph, options.cost_model, options.schemes, options.count_io, latency, options.input_stream)


def solve_options(plans: Planner, options: PlanOptions) -> Plan:
    """The plan the options ask for (`solve` with their strategy, objective and caps)."""
    return solve(plans, options.strategy, options.objective, options.max_overhead, options.max_ram,
                 options.instruction_cap())


def objective_for(objective: str | None, max_overhead: float | None, max_ram: int | None) -> str:
    """The objective asked for, or the one the caps imply: only a RAM cap means fewest MACs under it."""
    return objective or ("min-mac" if max_ram is not None and max_overhead is None else "min-ram")


def solve(plans: Planner, strategy: str = "optimal", objective: str | None = None,
          max_overhead: float | None = None, max_ram: int | None = None, max_latency: int | None = None) -> Plan:
    """One plan for a strategy and caps; an infeasible constraint raises UserError."""
    return plans.solve(strategy, objective_for(objective, max_overhead, max_ram), max_overhead, max_ram, max_latency)


def load_plan(path: str, graph: Graph, digest: str | None = None) -> Plan:
    """A plan file written by `msfcnn plan -o`, checked against the model it is used with: its
    blocks must cover the model's ops, and a plan that records its model's sha256 must have been
    made for `digest` (frontends.model_digest of the model)."""
    try:
        with open(path) as f:
            plan = Plan.from_dict(jsontext.loads(f.read(), jsontext.INT64_LIMIT))
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        raise UserError(f"{path}: not a plan file ({type(err).__name__}: {err})") from None
    if digest is not None and plan.model_sha256 is not None and plan.model_sha256 != digest:
        raise UserError(f"{path}: made for another model (sha256 {plan.model_sha256[:12]}...), not this "
                        f"{graph.name} (sha256 {digest[:12]}...)")
    return check_covers(plan, graph, path)


def check_covers(plan: Plan, graph: Graph, name: str) -> Plan:
    """The plan, whose blocks must cover the graph's ops in order (UserError naming `name` if not)."""
    blocks = plan.blocks
    if not blocks or blocks[0].first != 0 or blocks[-1].last != len(graph) - 1 or any(
            a.last + 1 != b.first for a, b in zip(blocks, blocks[1:])):
        raise UserError(f"{name}: its blocks do not cover ops 0..{len(graph) - 1} of this model in order")
    return plan


def recomputed_plan(plan: Plan, graph: Graph, schedule: Schedule) -> tuple[Plan, list[str]]:
    """A saved plan with its figures as the model really costs them (the schedule's RAM and MACs of
    each block, the unfused MACs), and how its recorded figures disagree with those, if they do
    (a hand-edited file, or one made for another model or version)."""
    blocks = tuple(replace(b, ram_bytes=ram, macs=lowered.macs)
                   for b, ram, lowered in zip(plan.blocks, schedule.block_ram, schedule.blocks))
    real = replace(plan, blocks=blocks, vanilla_macs=sum(graph.macs(i) for i in range(len(graph))))
    recorded = {"peak RAM": plan.recorded.get("peak_ram_bytes", plan.peak_ram_bytes),
                "MACs": plan.recorded.get("macs", plan.macs), "unfused MACs": plan.vanilla_macs,
                "overhead": plan.recorded.get("overhead", round(real.overhead, 4))}
    recomputed = {"peak RAM": real.peak_ram_bytes, "MACs": real.macs, "unfused MACs": real.vanilla_macs,
                  "overhead": round(real.overhead, 4)}
    differences = [f"{what} {recorded[what]} recorded, {recomputed[what]} recomputed"
                   for what in recorded if recorded[what] != recomputed[what]]
    differences += [f"block {k} ({b.first}..{b.last}) {what} {mine} recorded, {theirs} recomputed"
                    for k, (b, r) in enumerate(zip(plan.blocks, blocks))
                    for what, mine, theirs in (("RAM", b.ram_bytes, r.ram_bytes), ("MACs", b.macs, r.macs))
                    if mine != theirs]
    if plan.model_sha256 is None and plan.model != graph.name:
        differences.insert(0, f"made for model {plan.model!r}")
    return real, differences


def lower(graph: Graph, plan: Plan) -> Schedule:
    """The plan's schedule: every buffer with its size and arena offset. Only the exact cost
    model's RAM is what a schedule allocates, so other cost models' plans are refused here, for
    every command alike."""
    if plan.cost_model != SCHEDULABLE_COST_MODEL:
        raise UserError(f"a {plan.cost_model} cost model plan's RAM is not what the runtime allocates; schedules, "
                        f"runs and generated code follow the exact cost model: use --cost-model exact")
    return schedule_plan(graph, list(plan.blocks), plan.io_counted, plan.input_streamed)


def run(schedule: Schedule, x: np.ndarray, raw: bool = False, states: States | None = None) -> FusedRun:
    """Run a schedule with the fused numpy executor inside one arena of the planned size. A float
    model whose arithmetic overflows float32 gives infinities or NaN, not numpy warnings: the
    callers check the output. A stateful model continues from `states` and leaves its new state
    there (executor.States; None: from its initial state)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return run_fused(schedule, x, raw=raw, states=states)


def run_steps(schedule: Schedule, steps: list, raw: bool = False) -> list[FusedRun]:
    """Run a sequence of inputs in order from the initial state, the state carried from each step
    to the next (a stateless model: each step alone)."""
    states = initial_states(schedule.graph)
    return [run(schedule, x, raw, states) for x in steps]


def run_reference(graph: Graph, x: np.ndarray) -> np.ndarray:
    """The unfused reference executor's output (the numerics' executable spec)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return run_unfused(graph, x)


def run_reference_outputs(graph: Graph, x: np.ndarray) -> list[np.ndarray]:
    """Every output of the unfused reference executor, in the model's order."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return run_unfused_outputs(graph, x)


def max_abs_diff(a: np.ndarray, b: np.ndarray) -> float:
    with np.errstate(invalid="ignore"):  # inf - inf is NaN, and says so
        return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0


def linked_for_board(graph: Graph, plan: Plan, schedule: Schedule, target: Target, board, input_in_flash: bool):
    """`target` linked as `board` (a boards.Board): its RAM, with the plan's stack bound
    (codegen/stack.py) reserved in it, and the input in RAM unless `input_in_flash`. Returns the
    linked target and the bound."""
    from .codegen.stack import footprint
    with progress.step(f"bounding the stack of {graph.name} on {target.name}"):
        bound = footprint(graph, schedule, plan, target)
    regions = tuple((r.name, r.size) for r in board.ram_regions) if board.several_regions else ()
    return target.for_board(board.name, board.ram_bytes, bound.stack_bytes, not input_in_flash, regions), bound


def placed_on(graph: Graph, plan: Plan, regions, program_bytes: int, input_in_ram: bool,
              schedule: Schedule | None = None, input_in: str | None = None):
    """The plan's buffers, the state, its io (the caller's, unless counted) and the program's bytes
    (stack bound, static data, reserve) placed over `regions` (schedule/placement.py): (placement,
    buffers, what each holds), or None when no placement is found. `input_in`: the region that
    holds the input (--input-in; None: any)."""
    from .latency.accesses import loop_runs
    from .schedule.lowered import Liveness
    from .schedule.placement import place_schedule, wholes
    schedule = schedule or lower(graph, plan)
    live = Liveness(graph, plan.io_counted, plan.input_streamed)
    runs = loop_runs(graph, schedule.blocks)  # the buffers' accesses, from the latency model's loop counts
    extra = wholes(graph, live, schedule.blocks, program_bytes, input_in_ram, runs)
    names = [r.name for r in regions]
    return place_schedule(graph, live, schedule.blocks, extra, regions, None if input_in is None else names.index(input_in),
                          runs)


def lower_on_regions(graph: Graph, plan: Plan, board, program_bytes: int, input_in_ram: bool,
                     input_in: str | None = None) -> Schedule:
    """The plan's schedule with one arena per region of `board` (a boards.Board of several), as
    `fit` places it; UserError when its buffers cannot be placed over them."""
    from .schedule.lowered import Liveness
    from .schedule.placement import placed_schedule
    schedule = lower(graph, plan)
    found = placed_on(graph, plan, board.ram_regions, program_bytes, input_in_ram, schedule, input_in)
    if found is None:
        raise UserError(f"the plan's buffers cannot be placed over the RAM regions of {board.name} "
                        f"({', '.join(f'{r.name} {r.size} B' for r in board.ram_regions)}): msfcnn fit finds one that can")
    placement, _, keys = found
    return placed_schedule(graph, Liveness(graph, plan.io_counted, plan.input_streamed), schedule.blocks, placement,
                           keys, board.ram_regions)


def shared_over_regions(planned: list, regions, program_bytes: int):
    """Networks sharing their arenas over RAM `regions` (planned: (graph, plan, schedule) each),
    with their state and io kept apart and the program's bytes (the deepest stack bound, static
    data, reserve) beside: schedule/placement.place_shared's (schedules, shared arena of each
    region, RegionUses), or None when no placement is found."""
    from .latency.accesses import loop_runs
    from .schedule.lowered import Liveness
    from .schedule.placement import SharedNetwork, place_shared, wholes
    networks = []
    for graph, plan, schedule in planned:
        live = Liveness(graph, plan.io_counted, plan.input_streamed)
        runs = tuple(loop_runs(graph, schedule.blocks))
        networks.append(SharedNetwork(graph.name, graph, live, schedule.blocks,
                                      tuple(wholes(graph, live, schedule.blocks, 0, runs=runs)), runs))
    return place_shared(networks, program_bytes, regions)


def lower_shared_on_regions(planned: list, board, target: Target, reserve: int) -> list:
    """The networks (planned: (graph, plan, schedule) each) with their schedules sharing one arena
    per RAM region of `board` (`shared_over_regions`), beside the program's bytes: the deepest
    stack bound on `target`, the static data (the kernels' once) and `reserve`. UserError when
    their buffers cannot be placed so."""
    from .codegen.stack import footprint, kernel_static_bytes
    bounds = [footprint(graph, schedule, plan, target) for graph, plan, schedule in planned]
    program = (max(b.stack_bytes for b in bounds) + sum(b.static_bytes for b in bounds)
               - (len(bounds) - 1) * kernel_static_bytes(target) + reserve)
    found = shared_over_regions(planned, board.ram_regions, program)
    if found is None:
        sizes = ", ".join(f"{r.name} {r.size} B" for r in board.ram_regions)
        raise UserError(f"the networks' buffers cannot be placed over the RAM regions of {board.name} ({sizes}) "
                        f"sharing one arena per region: msfcnn fit A B --board {board.name} finds plans that can")
    return [(graph, plan, schedule) for (graph, plan, _), schedule in zip(planned, found[0])]


def write_c(folder: Path, graph: Graph, schedule: Schedule, plan: Plan, target: Target = TARGETS["host"],
            prefix: str | None = None):
    """The generated C project for `target` in `folder`, its external names starting with
    `prefix` (default: msfcnn); returns the files written."""
    from .codegen.build import write_project
    from .codegen.emit import DEFAULT_PREFIX
    return write_project(Path(folder), graph, schedule, plan, target, prefix or DEFAULT_PREFIX)


def recompute_bound(schedule: Schedule, op_instructions: dict[int, int]) -> tuple[float, ...]:
    """Instructions each block of `schedule` would take if fusing cost nothing of its own: the sum
    over its ops of the op's instructions in the unfused build (`op_instructions`, op -> count, as
    `verify --instructions` gives them block by block for the vanilla plan) times how often the
    block computes the op's outputs (`Schedule.recompute_factors`). Their sum over the unfused
    total is the recompute bound on a fused plan's instruction ratio to the unfused build."""
    factors = schedule.recompute_factors
    return tuple(sum(op_instructions[op] * factors[op] for op in range(b.first, b.last + 1)) for b in schedule.blocks)


# The float32 criterion of `verify`: C and numpy sum in different orders, so they may differ in
# the last bits. A K-term float32 sum regrouped differs by at most about K x 2^-24 of the sum of
# the magnitudes; for the reductions of these networks (K up to a few thousand) and a handful of
# layers that stays below 1e-4 of the output's scale. The absolute term keeps an output that is
# all zeros (or nearly) from being held to exact equality. int8 outputs must be bit-exact.
FLOAT_RTOL = 1e-4  # times the largest |numpy output|
FLOAT_ATOL = 1e-6


def float_tolerance(expected: np.ndarray) -> float:
    """The largest |C - numpy| `verify` accepts for a float32 output."""
    scale = float(np.max(np.abs(expected.astype(np.float64)))) if expected.size else 0.0
    return FLOAT_RTOL * scale + FLOAT_ATOL


@dataclass(frozen=True)
class Verification:
    """Generated C run on one input, against the fused numpy executor."""

    output: np.ndarray  # the C program's outputs, (H, W, C) order, flattened one after the other
    expected: np.ndarray  # the numpy executor's, the same way (model order: see Graph.output_tensors)
    arena_bytes: int  # the arena's size in the built object file
    predicted_peak_ram_bytes: int
    stack_bytes: int | None  # where the target's harness measures it
    instructions: int | None = None  # executed in msfcnn_invoke, when counted (exact, deterministic)
    block_instructions: tuple[int, ...] | None = None  # the same per block of the plan, in order (sums to it)
    frames_bytes: int | None = None  # start-up and main frames above the measured stack (embedded harness)
    static_ram_bytes: int | None = None  # the linked program's static data in RAM (embedded harness)
    vector_instructions: int | None = None  # of `instructions`, vector ones (MVE on cortex-m55), when counted
    # Linked as a board of several RAM regions: each arena's address against its region's (build.region_arenas)
    region_arenas: tuple[dict, ...] = ()

    @property
    def bit_exact(self) -> bool:
        return bool(np.array_equal(self.output, self.expected))

    @property
    def max_abs_diff(self) -> float:
        return max_abs_diff(self.output, self.expected)

    @property
    def is_float(self) -> bool:
        return bool(np.issubdtype(self.expected.dtype, np.floating))

    @property
    def tolerance(self) -> float:
        """The largest |C - numpy| accepted: 0 for int8 (bit-exact), `float_tolerance` for float32."""
        return float_tolerance(self.expected) if self.is_float else 0.0

    @property
    def passed(self) -> bool:
        """int8: bit-exact; float32: every |C - numpy| within the tolerance (a NaN never is)."""
        if not self.is_float or self.output.shape != self.expected.shape:
            return self.bit_exact
        return bool(np.all(np.abs(self.output.astype(np.float64) - self.expected.astype(np.float64))
                           <= self.tolerance))


def verify_shared(networks: list, inputs: list, target: Target = TARGETS["host"],
                  keep: str | Path | None = None) -> list[Verification]:
    """`verify A B ...`: the networks' library (codegen/shared.py: networks, each a shared.Network)
    built for `target` with a program that runs them in turn twice on the shared arena(s), each on
    its input of `inputs` (the model's own layout); each network's Verification against the fused
    numpy executor. Networks of one input, one output and no state, on a target with a file harness.
    A target with a board's regions (Target.with_regions) links each region's shared arena in its
    region, and each Verification gives where they lie (`region_arenas`; one outside fails)."""
    import shlex
    import subprocess
    from .codegen import build as c_build
    from .codegen.shared import SHARED_ARENA, harness_source, write_shared
    if target.embedded_harness:
        raise UserError(f"verify of several models runs their library with a file harness: on host, cortex-m4, "
                        f"cortex-m7, cortex-m33 or cortex-m0plus, not {target.name}")
    for n in networks:
        graph = n.graph
        if graph.states or len(graph.input_tensors) > 1 or len(graph.output_tensors) > 1 or n.schedule.input_stream:
            raise UserError(f"verify of several models takes networks of one input, one output and no state; "
                            f"{graph.name} is not one: verify it alone")
    internal = [c_build.harness_values(n.graph, internal_inputs(n.graph, x)[0]) for n, x in zip(networks, inputs)]
    with tempfile.TemporaryDirectory(prefix="msfcnn-verify-") as scratch:
        folder = Path(keep or scratch).resolve()
        write_shared(folder, networks, target)
        (folder / "main.c").write_text(harness_source(networks))
        program = folder / "networks.elf"
        sources = sorted(str(p) for p in folder.rglob("*.c"))
        command = [target.cc, *shlex.split(target.cflags), f"-I{folder}", *shlex.split(target.ldflags), "-o",
                   str(program), *sources, "-lm"]
        with progress.step(f"verify {len(networks)} networks: building and running the C on {target.name}"):
            built = subprocess.run(command, capture_output=True, text=True, cwd=folder)  # (msfcnn_memory.ld is there)
            if built.returncode != 0:
                where = f" (see {folder})" if keep else " (rerun with -o DIR to keep the build)"
                raise UserError(f"the library of {len(networks)} networks does not build for {target.name}: "
                                f"{(built.stderr.strip().splitlines() or [''])[0]}{where}")
            (folder / "input.bin").write_bytes(b"".join(np.ascontiguousarray(a).tobytes() for a in internal))
            ran = subprocess.run(target.run_command(str(program), str(folder / "input.bin"), str(folder / "output.bin")),
                                 capture_output=True, text=True, timeout=c_build.RUN_TIMEOUT)
            if ran.returncode != 0:
                raise UserError(f"the program of {len(networks)} networks failed ({ran.returncode}) on {target.name}: "
                                "a second run of a network differed from its first, or it could not read its input")
            raw = (folder / "output.bin").read_bytes()
            try:
                placed = c_build.arenas_inside_regions(program, target, SHARED_ARENA, "shared arena")
            except RuntimeError as err:
                raise UserError(str(err)) from None
    found, start = [], 0
    for n, x in zip(networks, inputs):
        expected = np.concatenate([y.reshape(-1) for y in run(n.schedule, x, raw=True).outputs])
        size = expected.size * expected.dtype.itemsize
        output = np.frombuffer(raw[start:start + size], dtype=expected.dtype)
        start += size
        found.append(Verification(output, expected, n.arena_bytes, n.schedule.arena_bytes, None, region_arenas=placed))
    return found


def entry_point(graph: Graph, target: Target, prefix: str, input_stream: bool = False) -> tuple[str, str]:
    """The generated function that calls the blocks (<prefix>_invoke, <prefix>_invoke_stream for
    a plan that streams its input, or <prefix>_invoke_inputs for a model with several inputs) and
    the harness function that calls it (main, or the file harness's several-output entry point)."""
    if input_stream:  # from main; a file harness's several outputs go through invoke_outputs and invoke
        several = len(graph.output_tensors) > 1 and not target.embedded_harness
        return f"{prefix}_invoke_stream", f"{prefix}_invoke" if several else "main"
    if len(graph.input_tensors) > 1:
        return f"{prefix}_invoke_inputs", "main"
    if len(graph.output_tensors) > 1 and not target.embedded_harness:
        return f"{prefix}_invoke", f"{prefix}_invoke_outputs"
    return f"{prefix}_invoke", "main"


def verify(graph: Graph, plan: Plan, schedule: Schedule, x: np.ndarray, target: Target = TARGETS["host"],
           keep: str | Path | None = None, kernel_lib: Path | None = None,
           count_instructions: bool = False, prefix: str | None = None, steps: list | None = None) -> Verification:
    """Generate, build and run the C for `target` on input x (the model's own layout, batch
    optional); compare with the fused numpy executor. The C is built first, so a toolchain or
    build problem is reported before any numpy work. `keep`: build there and keep the folder;
    `kernel_lib`: link the kernels from this archive (`codegen.build.build_kernel_library` for
    the same target) instead of compiling them. `count_instructions`: also count the instructions
    msfcnn_invoke executes, in total and block by block (codegen/icount.py: a QEMU plugin, or
    callgrind on the host). `prefix`: the generated C's names (as `write_c`); counting
    instructions needs the default one. `steps`: a stateful model's sequence of inputs (instead of
    x), run in order on both sides, the state carried over; the outputs are compared step by step."""
    from .codegen import build as c_build
    from .codegen import icount
    from .codegen.emit import DEFAULT_PREFIX, check_prefix
    prefix = check_prefix(prefix or DEFAULT_PREFIX)
    sequence = [x] if steps is None else list(steps)
    if len(sequence) > 1 and count_instructions:
        raise UserError("counting instructions measures one call of the network: give one step, not a sequence "
                        f"of {len(sequence)}")
    if count_instructions and not icount.can_count(target):
        raise UserError(f"counting instructions on {target.name} needs {icount.counter_tool(target)}, which is not "
                        f"installed (Debian: apt-get install {icount.counter_tool(target)})")
    if len(sequence) > 1 and (target.embedded_harness or len(graph.input_tensors) > 1 or len(graph.output_tensors) > 1):
        raise UserError(f"a sequence of inputs runs on a target with a file harness (host, cortex-m4, cortex-m7, cortex-m33, cortex-m0plus), "
                        f"for a model of one input and one output; not on {target.name}")
    internal = [internal_inputs(graph, step)[0] for step in sequence]
    harness_input = internal[0] if len(sequence) == 1 else [step[0] for step in internal]
    with tempfile.TemporaryDirectory(prefix="msfcnn-verify-") as scratch:
        folder = Path(keep or scratch)
        with progress.step(f"verify {graph.name}: writing the C"):
            write_c(folder, graph, schedule, plan, target, prefix)
        try:
            with progress.step(f"verify {graph.name}: building the C for {target.name}"):
                program = c_build.build(folder, target, kernel_lib)
            with progress.step(f"verify {graph.name}: running the C on {target.name}"):
                harness = c_build.run(program, target, graph, harness_input, kernel_lib, prefix, len(sequence))
            arena = c_build.arena_bytes(folder, target, prefix)
            static_ram = c_build.static_ram_bytes(program, target) if target.embedded_harness else None
            placed = c_build.arenas_inside_regions(program, target, prefix or "msfcnn")
            with progress.step(f"verify {graph.name}: counting instructions on {target.name}"):
                function, caller = entry_point(graph, target, prefix, schedule.input_stream)
                counted = (icount.measure(program, target, n_blocks=len(plan.blocks), function=function,
                                          caller=caller) if count_instructions else None)
            if counted is not None and len(counted.blocks) != len(plan.blocks):
                raise RuntimeError(f"counted {len(counted.blocks)} block functions for a plan of {len(plan.blocks)} blocks")
        except RuntimeError as err:  # one line; the compiler's full output stays with `keep`
            where = f" (see {folder})" if keep else " (rerun with -o DIR to keep the build and see the compiler output)"
            raise UserError(str(err).splitlines()[0].rstrip(":") + where) from None
    with progress.step(f"verify {graph.name}: running the numpy executor"):
        expected = np.concatenate([y.reshape(-1) for fused in run_steps(schedule, sequence, raw=True)
                                   for y in fused.outputs])
    return Verification(harness.output, expected, arena, schedule.arena_bytes, harness.stack_bytes,
                        counted.total if counted else None, counted.blocks if counted else None,
                        harness.frames_bytes, static_ram, counted.vector if counted else None, placed)

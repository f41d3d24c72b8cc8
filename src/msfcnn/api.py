"""The Python API (docs/python.md): `import msfcnn`, then load, plan, fit, compile, verify and run.

Each function takes a model as the CLI does (a built-in name or a model file) or as a loaded
graph, plan options as keyword arguments with the CLI's names and units, and returns a dataclass.
Bad input raises `UserError` with the CLI's message. Everything goes through `pipeline`, as the
CLI does, so the checks are the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import pipeline
from .boards import Board, custom_board, get_board
from .errors import UserError
from .fit import DEFAULT_RESERVE, Fit
from .ir import Graph
from .plan import Plan
from .pipeline import PlanOptions, Verification
from .sizes import parse_clock, parse_overhead, parse_size
from .targets import get_target
from .together import FitTogether

__all__ = ["load", "plan", "fit", "compile", "verify", "run", "UserError", "Graph", "Plan", "Fit", "Board",
           "Compiled", "CompiledTogether", "FitTogether", "Verification", "Run"]


@dataclass(frozen=True)
class Compiled:
    """The C project `compile` wrote."""

    folder: Path
    files: tuple[Path, ...]  # every file written, kernels included
    plan: Plan
    arena_bytes: int  # the arena model.c declares
    target: str


@dataclass(frozen=True)
class CompiledTogether:
    """The library `compile` wrote for several networks sharing one arena (codegen/shared.py)."""

    folder: Path
    files: tuple[Path, ...]
    plans: tuple[Plan, ...]  # each network's, in the models' order
    shared_arena_bytes: int  # the shared arena (over several regions: the sum of each region's)
    target: str


@dataclass(frozen=True)
class Run:
    """A plan run by the fused numpy executor inside one arena of the planned size."""

    outputs: tuple[np.ndarray, ...]  # every output of the model, in its order
    plan: Plan
    max_abs_diff_vs_unfused: float  # against the unfused reference executor (0 for int8: bit-exact)
    measured_peak_ram_bytes: int
    predicted_peak_ram_bytes: int

    @property
    def output(self) -> np.ndarray:
        """The model's first output."""
        return self.outputs[0]


def load(model: str | Graph, weights: bool = True, numerics: str = "litert", hop: int | None = None) -> Graph:
    """A built-in name or a .tflite / .onnx / .json file as a graph. weights=True gives weightless
    models (built-ins, layer lists) seeded random int8 weights, as compile, verify and run use.
    With `hop`, the graph of one call of the model streamed over a sliding window (`--streaming`)."""
    if isinstance(model, Graph):
        return model
    if numerics not in ("litert", "tflm"):
        raise UserError(f"numerics is 'litert' or 'tflm', not {numerics!r}")
    return pipeline.load(str(model), weights=weights, numerics=numerics, hop=hop)


def plan(model: str | Graph, *, max_overhead: float | str | None = None, max_ram: int | str | None = None,
         objective: str | None = None, max_latency: int | None = None, target: str | None = None,
         strategy: str = "optimal", count_io: bool = False, cost_model: str = pipeline.SCHEDULABLE_COST_MODEL,
         schemes: tuple[str, ...] | None = None, input_stream: bool = False) -> Plan:
    """The plan `msfcnn plan` gives for the same options: least peak RAM by default, under
    `max_overhead` (MACs <= F x unfused), `max_ram` (bytes, or a size such as "64kB") and
    `max_latency` (instructions predicted on `target`). `objective`: "min-ram", "min-mac" or
    "min-latency" (with `target`). `input_stream`: as --input-stream."""
    return _solved(load(model), _options(model, max_overhead, max_ram, objective, max_latency, target, strategy,
                                         count_io, cost_model, schemes, input_stream))


def fit(model: str | Graph | list, board: str | Board | None = None, *, ram: int | str | None = None,
        target: str | None = None, clock: int | str | None = None, flash: int | str | None = None,
        reserve: int | str = DEFAULT_RESERVE, input_in_flash: bool = False, objective: str = "min-latency",
        input_stream: bool = False, hop: int | None = None) -> Fit | FitTogether:
    """`msfcnn fit`: the fastest plan (or with objective="min-ram", the least RAM) whose arena,
    io, stack bound and static data fit the board less `reserve`. `board` is a name, a board file
    or a Board; `ram`, `target`, `clock` and `flash` describe a board of your own or replace
    those of `board`. `input_stream` and `hop` are `fit --input-stream` and `fit --streaming
    --hop N` (one call of a sliding window; `model` a path). A model that fits nowhere raises
    fit.NoFit (a UserError) naming the least RAM it needs. A list of models is `fit A B ...`:
    they share one arena (one per region on a board of several), a together.FitTogether."""
    from .fit import fit as fit_board
    base = get_board(board) if isinstance(board, str) else board
    figures = (_size(ram), target, None if clock is None else parse_clock(str(clock)), _size(flash))
    chosen = custom_board(*figures, base) if base is None or any(v is not None for v in figures) else base
    if isinstance(model, (list, tuple)):
        from .together import fit_together
        if input_stream or hop is not None:
            raise UserError("input_stream and hop take one model: fit several models without them")
        return fit_together([load(m) for m in model], chosen, _size(reserve), input_in_flash, objective)
    return fit_board(load(model, hop=hop), chosen, _size(reserve), input_in_flash, objective, input_stream, hop)


def compile(model: str | Graph | list, output: str | Path, plan=None, *, target: str | None = None,
            board: str | Board | None = None, input_in_flash: bool = False, prefix=None,
            numerics: str = "litert", **plan_options) -> Compiled | CompiledTogether:
    """`msfcnn compile`: the C99 project of the plan (a Plan, a plan file, or the one `plan(**plan_options)`
    gives) for `target` (default host), written into `output`. With `board` (a name, a board file or
    a Board), linked as that board on its target, as `compile --board`. A list of models is
    `compile A B ...`: one library sharing one arena (one per RAM region of a board of several),
    `plan` and `prefix` then a list with one per model (or None), a CompiledTogether."""
    if isinstance(model, (list, tuple)):
        return _compile_shared(list(model), Path(output), plan, target, board, input_in_flash, prefix, numerics,
                               plan_options)
    graph = load(model, numerics=numerics)
    linked_board = _board(board, target, input_in_flash)
    chosen = _plan_for(graph, model, plan, plan_options, _target_name(target, linked_board))
    schedule = pipeline.lower(graph, chosen)
    built_for = _built_for(graph, chosen, schedule, target, linked_board, input_in_flash)
    files = pipeline.write_c(Path(output), graph, schedule, chosen, built_for, prefix)
    return Compiled(Path(output), tuple(files), chosen, schedule.arena_bytes, built_for.name)


def _compile_shared(models: list, output: Path, plans, target, board, input_in_flash: bool, prefixes, numerics: str,
                    plan_options: dict) -> CompiledTogether:
    """`compile A B ...`: one library of the networks sharing one arena (one per RAM region of a
    board of several), each planned with `plan_options` or given its plan (`plans`: one per model)."""
    from .codegen.shared import Network, network_prefixes, shared_arena_bytes, write_shared
    if input_in_flash:
        raise UserError("input_in_flash takes one model: compile several models without it")
    plans = [None] * len(models) if plans is None else list(plans)
    if len(plans) != len(models):
        raise UserError(f"plan names {len(plans)} plans for {len(models)} models: give one per model, in order")
    linked_board = _board(board, target, False)
    target_name = _target_name(target, linked_board)
    planned = []
    for model, given in zip(models, plans):
        graph = load(model, numerics=numerics)
        chosen = _plan_for(graph, model, given, plan_options, target_name)
        planned.append((graph, chosen, pipeline.lower(graph, chosen)))
    if linked_board is not None and linked_board.several_regions:
        planned = pipeline.lower_shared_on_regions(planned, linked_board, get_target(target_name), DEFAULT_RESERVE)
    names = [graph.name for graph, _, _ in planned]
    given = None if prefixes is None else list(prefixes)
    networks = [Network(p, *each) for p, each in zip(network_prefixes(names, given), planned)]
    files = write_shared(output, networks, get_target(target_name))
    return CompiledTogether(output, tuple(files), tuple(n.plan for n in networks), shared_arena_bytes(networks),
                            target_name)


def verify(model: str | Graph, plan: Plan | str | None = None, *, target: str | None = None,
           board: str | Board | None = None, input_in_flash: bool = False, x=None, seed: int = 0,
           instructions: bool = False, keep: str | Path | None = None, numerics: str = "litert",
           **plan_options) -> Verification:
    """`msfcnn verify`: build the plan's C for `target` (default host), run it on input `x`
    (default: the seeded random input) and compare with the fused numpy executor. With `board`,
    the program is linked as that board (its RAM, the plan's stack bound reserved), as
    `verify --board`. `instructions=True` also counts the instructions msfcnn_invoke executes.
    The result's `passed` is the verdict."""
    graph = load(model, numerics=numerics)
    linked_board = _board(board, target, input_in_flash)
    chosen = _plan_for(graph, model, plan, plan_options, _target_name(target, linked_board))
    schedule = pipeline.lower(graph, chosen)
    built_for = _built_for(graph, chosen, schedule, target, linked_board, input_in_flash)
    return pipeline.verify(graph, chosen, schedule, _input(graph, x, seed), built_for, keep,
                           count_instructions=instructions)


def run(model: str | Graph, x=None, plan: Plan | str | None = None, *, seed: int = 0, numerics: str = "litert",
        **plan_options) -> Run:
    """`msfcnn run`: the plan run by the fused numpy executor in one arena of the planned size, on
    `x` (the model's layout, batch optional; default: the seeded random input), against the
    unfused network."""
    graph = load(model, numerics=numerics)
    chosen = _plan_for(graph, model, plan, plan_options, "host")
    inputs = _input(graph, x, seed)
    fused = pipeline.run(pipeline.lower(graph, chosen), inputs)
    reference = pipeline.run_reference_outputs(graph, inputs)
    diff = max(pipeline.max_abs_diff(y, ref) for y, ref in zip(fused.outputs, reference))
    return Run(tuple(fused.outputs), chosen, diff, fused.measured_peak_ram_bytes, fused.predicted_peak_ram_bytes)


# -- the steps the functions share -----------------------------------------------------------------

def _options(model, max_overhead, max_ram, objective, max_latency, target, strategy, count_io, cost_model,
             schemes, input_stream=False) -> PlanOptions:
    """The CLI's plan options, checked as the CLI checks its arguments."""
    if strategy not in ("optimal", "heuristic", "vanilla"):
        raise UserError(f"strategy is 'optimal', 'heuristic' or 'vanilla', not {strategy!r}")
    if objective not in (None, "min-ram", "min-mac", "min-latency"):
        raise UserError(f"objective is 'min-ram', 'min-mac' or 'min-latency', not {objective!r}")
    if target is None and (objective == "min-latency" or max_latency is not None):
        raise UserError("a latency objective or cap needs target= (a target with a latency model)")
    overhead = None if max_overhead is None else parse_overhead(str(max_overhead))
    latency_cap = None if max_latency is None else (float(max_latency), "instructions")
    name = model.name if isinstance(model, Graph) else str(model)
    return PlanOptions(name, cost_model, None if schemes is None else tuple(schemes), count_io, strategy, objective,
                       overhead, _size(max_ram), latency_cap, latency_target=target, input_stream=input_stream)


def _board(board: str | Board | None, target: str | None, input_in_flash: bool) -> Board | None:
    """The board `compile` / `verify` link for, checked against `target` as the CLI checks it."""
    if board is None:
        if input_in_flash:
            raise UserError("input_in_flash needs board (the fe310 and esp32c3 harnesses keep the input in flash)")
        return None
    chosen = get_board(board) if isinstance(board, str) else board
    if target is not None and target != chosen.target:
        raise UserError(f"board {chosen.name} runs on target {chosen.target}, not target {target}")
    return chosen


def _target_name(target: str | None, board: Board | None) -> str:
    return board.target if board is not None else target or "host"


def _built_for(graph: Graph, chosen: Plan, schedule, target: str | None, board: Board | None, input_in_flash: bool):
    """The target the C is built for: `target`, or the board's linked as the board, with the
    plan's stack bound reserved in its RAM (codegen/stack.py)."""
    built_for = get_target(_target_name(target, board))
    if board is None:
        return built_for
    return pipeline.linked_for_board(graph, chosen, schedule, built_for, board, input_in_flash)[0]


def _solved(graph: Graph, options: PlanOptions) -> Plan:
    model = pipeline.latency_model(options)
    return pipeline.solve_options(pipeline.options_planner(graph, options, model), options)


def _plan_for(graph: Graph, model, plan: Plan | str | None, plan_options: dict, target: str) -> Plan:
    """The plan given (a Plan or a plan file), checked against the graph, or the one the plan
    options ask for; a time objective or cap weighs the plans on `target`, the C's (as the CLI)."""
    if plan is None:
        options = {**_PLAN_DEFAULTS, **_known(plan_options)}
        timed = options["objective"] == "min-latency" or options["max_latency"] is not None
        return _solved(graph, _options(model, **{**options, "target": target if timed else None}))
    if plan_options:
        raise UserError(f"give either plan= or plan options ({', '.join(plan_options)}), not both")
    if isinstance(plan, Plan):
        pipeline.check_covers(plan, graph, "plan")
        return plan
    return pipeline.load_plan(str(plan), graph)


_PLAN_DEFAULTS = {"max_overhead": None, "max_ram": None, "objective": None, "max_latency": None,
                  "strategy": "optimal", "count_io": False, "cost_model": pipeline.SCHEDULABLE_COST_MODEL,
                  "schemes": None, "input_stream": False}


def _known(plan_options: dict) -> dict:
    unknown = sorted(set(plan_options) - set(_PLAN_DEFAULTS))
    if unknown:
        raise UserError(f"unknown plan option {unknown[0]!r} (plan options: {', '.join(_PLAN_DEFAULTS)})")
    return plan_options


def _input(graph: Graph, x, seed: int):
    """The input given (an array in the model's layout, or a list of them), or the seeded random one."""
    from .tensors import random_input
    return random_input(graph, seed) if x is None else x


def _size(value: int | str | None) -> int | None:
    """A size in bytes, given as a number or as the CLI writes it ("64kB", "16KiB")."""
    return None if value is None else parse_size(str(value))

"""The `msfcnn` command line (docs/cli.md). User errors exit 2 with one line on stderr."""

from __future__ import annotations

import argparse
import json
import sys

from . import __version__, progress
from .errors import UserError
from .sizes import parse_overhead, parse_size, split_list
from .targets import TARGETS

TARGET_NAMES = ", ".join(TARGETS)

MODEL_HELP = "built-in model name (msfcnn models), or a .json / .tflite / .onnx file"
DEFAULT_OVERHEADS = "1.1,1.2,1.3,1.4,1.5,inf"
DEFAULT_RAMS = "16kB,32kB,64kB,128kB,256kB"

# Exit statuses (docs/cli.md): 2 is bad input or an impossible request; VERIFY_FAILED is `verify`
# finding the C output different from numpy (not bad input, and not 1, a Python traceback).
USER_ERROR = 2
VERIFY_FAILED = 3


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line and exit 2 like every other user error. Every
    subcommand takes --quiet."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if kwargs.get("prog", "").startswith("msfcnn "):  # a subcommand
            self.add_argument("-q", "--quiet", action="store_true",
                              help="no progress on stderr (progress is shown only on a terminal, for steps "
                                   "over 2 s, and never with --json)")

    def error(self, message: str):
        raise UserError(f"{message} (see: {self.prog} --help)")


def _cost_model_arg(p: argparse.ArgumentParser) -> None:
    from .cost import COST_MODELS, DEFAULT_COST_MODEL
    p.add_argument("--cost-model", choices=sorted(COST_MODELS), default=DEFAULT_COST_MODEL,
                   help=f"how block RAM and MACs are counted (default: {DEFAULT_COST_MODEL})")
    p.add_argument("--count-io", action="store_true",
                   help="count the network's input and output buffers (the caller's) in every block's RAM")


def _schemes_arg(p: argparse.ArgumentParser) -> None:
    from .schedule.schemes import SCHEMES, SINGLE
    listing = "; ".join(f"{name}: {scheme.summary}" + ("; always allowed" if scheme is SINGLE else "")
                        for name, scheme in SCHEMES.items())
    p.add_argument("--schemes", type=_scheme_list, metavar="S,S,...",
                   help=f"comma-separated schemes to allow (default: all the cost model's). {listing}")


def _scheme_list(text: str) -> list[str]:
    """The fused schemes named (`single`, always allowed, may be named too); none named is an error."""
    from .schedule.schemes import SCHEMES, SINGLE
    names = split_list(text)
    if not names:
        raise UserError(f"--schemes needs at least one scheme name (available: {', '.join(SCHEMES)}); "
                        f"leave it out to allow them all")
    return [name for name in names if name != SINGLE.name]


def _plan_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    p.add_argument("--max-overhead", metavar="F", type=parse_overhead,
                   help="compute cap: MACs <= F x unfused MACs (P1: least RAM under it); 'inf' allowed")
    p.add_argument("--max-ram", metavar="SIZE", type=parse_size,
                   help="RAM cap: peak RAM <= SIZE, e.g. 64kB or 16KiB (P2: fewest MACs under it)")
    p.add_argument("--objective", choices=["min-ram", "min-mac", "min-latency"],
                   help="what to minimise (default: min-ram, or min-mac when only --max-ram is given); "
                        "min-latency: fewest instructions predicted on --target")
    p.add_argument("--max-latency", metavar="N", type=_latency_cap,
                   help="time cap: predicted instructions on --target <= N, e.g. 2.5M, or with --board a time "
                        "such as 300ms at the board's clock (instead of --max-overhead)")
    p.add_argument("--strategy", choices=["optimal", "heuristic", "vanilla"], default="optimal",
                   help="optimal: graph solvers; heuristic: MCUNetV2-style first block; vanilla: no fusion")
    _cost_model_arg(p)
    _schemes_arg(p)


def _numerics_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--numerics", choices=["litert", "tflm"], default="litert",
                   help="whose int8 kernels to be bit-exact with: litert, the TFLite interpreter's optimized x86-64 "
                        "kernels (default), or tflm, TFLite Micro's (TFLite's reference kernels)")


def _saved_plan_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--plan", metavar="PLAN.json", help="a plan written by `msfcnn plan -o` (instead of plan options)")


def _c_args(p: argparse.ArgumentParser) -> None:
    """The options of the commands that write C: a saved plan, and the names' prefix."""
    _saved_plan_arg(p)
    p.add_argument("--prefix", metavar="NAME", default="msfcnn",
                   help="start every external name of the generated C with NAME_ (macros with its upper case), "
                        "so that networks with different prefixes link into one program (default: msfcnn)")


def _link_board_args(p: argparse.ArgumentParser) -> None:
    # (its own dest: --board of `plan` also chooses a latency model, this one only links)
    p.add_argument("--board", dest="link_board", metavar="BOARD",
                   help="link for this board (msfcnn fit --help lists them) on its emulated target: its RAM as "
                        "the linker's RAM region, the plan's stack bound reserved in it, the input in RAM")
    p.add_argument("--input-in-flash", action="store_true",
                   help="with --board: the harness's input stays a constant in flash (not copied into RAM)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="msfcnn", description="Fit CNNs into microcontroller RAM with multi-stage fusion.")
    parser.add_argument("--version", action="version", version=f"msfcnn {__version__}")
    # (its own dest: a subcommand's --quiet default would overwrite this one's value)
    parser.add_argument("-q", "--quiet", dest="quiet_all", action="store_true",
                        help="no progress on stderr, for any command (also accepted after the command)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("models", help="list the built-in models")
    p.add_argument("--json", action="store_true", help="print a JSON list of {name, description} objects")

    p = sub.add_parser("plan", help="find the fusion plan for one model and constraint")
    _plan_args(p)
    p.add_argument("--target", help="predict the plan's instructions on this target with its latency model "
                                    f"(calibrated: {_calibrated()})")
    p.add_argument("--board", help="a board (msfcnn fit --help lists them): its target's latency model, and the "
                                   "time in ms at its clock")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.add_argument("-o", "--output", metavar="PLAN.json", help="also write the plan as JSON to this file")
    p.add_argument("--timeline", metavar="FILE.png", help="draw the arena use block by block")

    p = sub.add_parser("sweep", help="vanilla, heuristic, P1 and P2 plans for several models and caps")
    p.add_argument("models", metavar="MODEL", nargs="+", help=MODEL_HELP + " (one or more)")
    p.add_argument("--max-overhead", metavar="F,F,...", default=DEFAULT_OVERHEADS,
                   help=f"P1 caps (default {DEFAULT_OVERHEADS})")
    p.add_argument("--max-ram", metavar="SIZE,SIZE,...", default=DEFAULT_RAMS, help=f"P2 caps (default {DEFAULT_RAMS})")
    _cost_model_arg(p)
    _schemes_arg(p)
    p.add_argument("--json", action="store_true", help="print a JSON list, one object per model")

    p = sub.add_parser("run", help="run a plan with the fused numpy executor; compare with the unfused network")
    _plan_args(p)
    _saved_plan_arg(p)
    _numerics_arg(p)
    p.add_argument("--input", metavar="X.npy", help="input in the model's own layout, batch optional; X.npz "
                                                     "(input0, input1, ...) for a model with several inputs "
                                                     "(default: a seeded random input)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random input (default 0)")
    p.add_argument("-o", "--output", metavar="Y.npy", help="write the output tensor here (Y.npz: every output of "
                                                           "the model, output0, output1, ... in its order)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")

    p = sub.add_parser("compile", help="generate a self-contained C99 library for a plan")
    _plan_args(p)
    p.add_argument("--target", help=f"where the C will run: {TARGET_NAMES} (default: host)")
    _link_board_args(p)
    _c_args(p)
    _numerics_arg(p)
    p.add_argument("-o", "--output", metavar="DIR", required=True, help="folder to write the C project into")

    p = sub.add_parser("verify", help="generate, build and run the C; compare with the numpy executor")
    _plan_args(p)
    p.add_argument("--target", help=f"where the C runs: {TARGET_NAMES} (default: host)")
    _link_board_args(p)
    _c_args(p)
    _numerics_arg(p)
    p.add_argument("--input", metavar="X.npy", help="input in the model's own layout; X.npz (input0, input1, ...) "
                                                     "for a model with several inputs (default: seeded random)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random input (default 0)")
    p.add_argument("-o", "--output", "--keep", dest="keep", metavar="DIR",
                   help="build in DIR and keep it (default: a temporary folder, deleted afterwards)")
    p.add_argument("--instructions", action="store_true",
                   help="also count the instructions msfcnn_invoke executes, exactly (QEMU plugin; callgrind on host)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")

    p = sub.add_parser("fit", help="the fastest plan whose arena, io, stack and static data fit a board's RAM")
    p.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    p.add_argument("--board", required=True, help=f"the board: {_board_names()}")
    p.add_argument("--reserve", metavar="SIZE", type=parse_size, default=None,
                   help="RAM kept for the rest of the program: C library data, start-up, the caller "
                        "(default 1KiB)")
    p.add_argument("--input-in-flash", action="store_true",
                   help="the input is a constant in flash: only the output counts as io in RAM")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("-o", "--output", metavar="PLAN.json", help="also write the plan as JSON (for --plan of "
                                                                "compile and verify)")

    p = sub.add_parser("pareto", help="every Pareto-optimal (peak RAM, MACs) plan of a model")
    p.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    p.add_argument("--axis", choices=["macs", "latency"], default="macs",
                   help="the compute axis: MACs, or instructions predicted on --target (default: macs)")
    p.add_argument("--target", help=f"the target whose latency model weighs the plans (calibrated: {_calibrated()})")
    _cost_model_arg(p)
    _schemes_arg(p)
    p.add_argument("--json", action="store_true", help="print the front, vanilla and heuristic as JSON")
    p.add_argument("--plot", metavar="FILE.png", help="draw RAM vs overhead with vanilla and heuristic marked")
    return parser


def _board_names() -> str:
    from .boards import BOARDS
    return ", ".join(BOARDS)


def _calibrated() -> str:
    from .latency import calibrated_targets
    return ", ".join(calibrated_targets()) or "none"


def _latency_cap(text: str) -> tuple[float, str]:
    """A time cap: an instruction count (2500000, 2.5M, 800k, 1G), or milliseconds (300ms, with
    --board): (value, "instructions" or "ms")."""
    word = text.strip()
    unit = "ms" if word.lower().endswith("ms") else "instructions"
    number = word[:-2] if unit == "ms" else word
    scale = 1 if unit == "ms" else {"k": 10**3, "m": 10**6, "g": 10**9}.get(number[-1:].lower(), 1)
    try:
        value = float(number[:-1] if scale > 1 else number)
    except ValueError:
        raise UserError(f"bad time cap {text!r}: expected an instruction count (2500000, 2.5M) or, with "
                        f"--board, milliseconds (300ms)") from None
    if not value > 0 or value == float("inf"):
        raise UserError(f"bad time cap {text!r}: must be positive and finite")
    return value * scale, unit


def _board(args):
    """The --board of `plan`, which names the target and the clock (None without)."""
    if getattr(args, "board", None) is None:
        return None
    from .boards import get_board
    board = get_board(args.board)
    if args.target is not None and args.target != board.target:
        raise UserError(f"--board {board.name} runs on target {board.target}, not --target {args.target}")
    args.target = board.target
    return board


def _max_latency(args, board) -> int | None:
    """--max-latency in predicted instructions (milliseconds at the board's clock, one instruction
    a cycle: the cap is as many instructions as that time holds)."""
    if getattr(args, "max_latency", None) is None:
        return None
    value, unit = args.max_latency
    if unit == "instructions":
        return round(value)
    if board is None:
        raise UserError("--max-latency in milliseconds needs --board (its clock turns time into instructions)")
    return int(value * board.clock_hz // 1000)


def _latency_model(args):
    """The latency model of args.target when the command weighs time: `plan` and `pareto` with
    --target, and any command asked for min-latency or --max-latency."""
    from . import latency
    target = getattr(args, "target", None)
    timed = getattr(args, "objective", None) == "min-latency" or getattr(args, "max_latency", None) is not None
    timed = timed or getattr(args, "board", None) is not None
    if args.command in ("plan", "pareto") and (target is not None or timed or getattr(args, "axis", "") == "latency"):
        if target is None:
            raise UserError("a latency objective, cap or axis needs --target (calibrated: " + _calibrated() + ")")
        return latency.load(target)
    if timed:
        return latency.load(target or "host")
    return None


def _planner(args, graph=None):
    """The planner of args.model (or of `graph`, its already loaded graph) under the options."""
    from . import pipeline
    model = _latency_model(args)
    # A weightless model is predicted with the weights compile would give it (the output stage's
    # loops depend on the requantisation shifts).
    graph = graph if graph is not None else pipeline.load(args.model, weights=model is not None)
    if model is not None and args.cost_model != "exact":
        raise UserError("the latency model weighs lowered blocks: use --cost-model exact with --target")
    with progress.step(f"planning {graph.name}: enumerating fused blocks"):
        planner = pipeline.planner(graph, args.cost_model, args.schemes, args.count_io, model)
    if model is not None and model.stale:
        print(f"msfcnn: warning: {', '.join(model.stale_sources)} changed since the {model.target} latency model "
              f"was calibrated; predictions may drift (re-run scripts/calibrate_latency.py --target {model.target})", file=sys.stderr)
    if model is not None and planner.uncovered:
        print(f"msfcnn: warning: the {model.target} latency model has no costs for {', '.join(planner.uncovered)} "
              f"(not calibrated): their instructions are not in the predictions", file=sys.stderr)
    return planner


def _solve(args, planner, board=None):
    from . import pipeline
    with progress.step(f"planning {planner.graph.name}: solving ({args.strategy})"):
        return pipeline.solve(planner, args.strategy, args.objective, args.max_overhead, args.max_ram,
                              _max_latency(args, board))


def cmd_models(args) -> None:
    from .frontends import builtin_names
    names = builtin_names()
    if args.json:
        print(json.dumps([{"name": n, "description": d} for n, d in names.items()], indent=1))
    else:
        for name, description in names.items():
            print(f"{name:16s} {description}")


def cmd_plan(args) -> None:
    from .report import plan_table
    from . import pipeline
    board = _board(args)
    planner = _planner(args)
    plan = _solve(args, planner, board)
    fields = plan.to_dict()
    if board is not None and plan.feasible:
        # instructions at one a cycle: a lower bound on the board (flash wait states, caches,
        # multi-cycle instructions only add)
        fields.update({"board": board.name, "clock_hz": board.clock_hz,
                       "predicted_ms_lower_bound": round(plan.predicted_instructions / board.clock_hz * 1000, 3)})
    doc = json.dumps(fields, indent=1)
    if args.timeline:
        from .report import plot_timeline
        plot_timeline(args.timeline, plan, pipeline.lower(planner.graph, plan))
    if args.output:
        from .files import write_atomic
        write_atomic(args.output, doc + "\n")
    if args.json:
        print(doc)
        return
    print(plan_table(plan, planner.graph))
    if board is not None and plan.feasible:
        print(f"on {board.name} at {board.clock_hz / 1e6:g} MHz: at least {fields['predicted_ms_lower_bound']:g} ms "
              f"(one instruction a cycle; {board.target} stands for its core)")


def cmd_sweep(args) -> None:
    from .report import sweep_table
    overheads = [parse_overhead(f) for f in split_list(args.max_overhead)]
    rams = [parse_size(s) for s in split_list(args.max_ram)]
    from . import pipeline
    planners = []
    with progress.step("sweep: enumerating fused blocks, model", total=len(args.models)) as bar:
        for model in args.models:  # validate every model before printing
            planners.append(pipeline.planner(pipeline.load(model), args.cost_model, args.schemes, args.count_io))
            bar.advance()
    results = []
    for planner in planners:
        with progress.step(f"sweep {planner.graph.name}: plan", total=2 + len(overheads) + len(rams)) as bar:
            vanilla, heuristic = planner.vanilla(), planner.heuristic()
            bar.advance(2)
            p1, p2 = [], []
            for f in overheads:
                p1.append(planner.p1(f))
                bar.advance()
            for r in rams:
                p2.append(planner.p2(r))
                bar.advance()
        if args.json:
            results.append({"model": planner.graph.name, "vanilla": vanilla.to_dict(), "heuristic": heuristic.to_dict(),
                            "p1": [p.to_dict() for p in p1], "p2": [p.to_dict() for p in p2]})
        else:
            print(sweep_table(planner.graph.name, vanilla, heuristic, p1, p2), end="\n\n")
    if args.json:
        print(json.dumps(results, indent=1))


def cmd_run(args) -> None:
    import numpy as np
    from . import pipeline
    from .report import plan_table
    from .tensors import load_input, random_input, save_outputs
    graph, plan, schedule = _planned_schedule(args)
    x = load_input(args.input, graph) if args.input else random_input(graph, args.seed)
    with progress.step(f"running {graph.name}: fused and unfused numpy executors"):
        fused = pipeline.run(schedule, x)
        ys = fused.outputs
        diff = max(pipeline.max_abs_diff(y, ref) for y, ref in zip(ys, pipeline.run_reference_outputs(graph, x)))
    bad = sum(y.size - int(np.count_nonzero(np.isfinite(y))) for y in ys)
    if bad:  # a float model whose arithmetic overflows float32
        raise UserError(f"{args.model}: {bad} of the {sum(y.size for y in ys)} output values are NaN or infinite: the "
                        f"model's float32 arithmetic overflows on this input (check its weights)")
    if args.output:
        save_outputs(args.output, ys, args.model)
    y, caller = ys[0], ys[graph.output_tensors.index(graph.output)]  # caller: the output not in the arena
    input_bytes = int(sum(a.nbytes for a in (x if isinstance(x, list) else [x])))
    result = {"model": graph.name, "numerics": graph.numerics, "plan": plan.to_dict(), "output_shape": list(y.shape), "output_dtype": str(y.dtype),
              "max_abs_diff_vs_vanilla": diff, "measured_peak_ram_bytes": fused.measured_peak_ram_bytes,
              "predicted_peak_ram_bytes": fused.predicted_peak_ram_bytes,
              "io_bytes": {"input": input_bytes, "output": int(caller.nbytes)}}
    if len(ys) > 1:
        result["outputs"] = [{"shape": list(y.shape), "dtype": str(y.dtype)} for y in ys]
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(plan_table(plan, graph))
        lines = []
        for k, y in enumerate(ys):
            flat = y.reshape(-1)
            top = f", argmax {int(flat.argmax())}" if flat.size > 1 else ""
            lines.append(f"output{f' {k}' if len(ys) > 1 else ''} {list(y.shape)} {y.dtype}{top}")
        print("\n".join(lines) + f"; max |fused - unfused| = {diff:g}{' over all outputs' if len(ys) > 1 else ''}")
        extra = f" and output {caller.nbytes} B" + ("; the other outputs are in the arena" if len(ys) > 1 else "")
        print(f"arena: measured {fused.measured_peak_ram_bytes} B, predicted {fused.predicted_peak_ram_bytes} B "
              f"(plus the caller's input{'s' if isinstance(x, list) else ''} {input_bytes} B{extra})")


def _planned_schedule(args):
    """The model with weights, the plan (the saved one of --plan, or the one the options ask for)
    and its schedule."""
    from . import pipeline
    graph = pipeline.load(args.model, weights=True, numerics=args.numerics)
    plan = pipeline.load_plan(args.plan, graph) if args.plan else _solve(args, _planner(args, graph))
    return graph, plan, pipeline.lower(graph, plan)


def _link_target(args):
    """The target of `compile` and `verify`: --target, or the board's of --board (None without)."""
    from .targets import get_target
    if args.input_in_flash and args.link_board is None:
        raise UserError("--input-in-flash needs --board (the fe310 and esp32c3 harnesses keep the input in flash)")
    if args.link_board is None:
        return get_target(args.target or "host"), None
    from .boards import get_board
    board = get_board(args.link_board)
    if args.target is not None and args.target != board.target:
        raise UserError(f"--board {board.name} runs on target {board.target}, not --target {args.target}")
    args.target = board.target  # a latency objective weighs the plans on it
    return get_target(board.target), board


def _for_board(target, board, graph, plan, schedule, input_in_ram: bool):
    """`target` linked as `board`, with the plan's stack bound (codegen/stack.py) reserved; and
    the bound."""
    from .codegen.stack import footprint
    with progress.step(f"bounding the stack of {graph.name} on {target.name}"):
        bound = footprint(graph, schedule, plan, target)
    return target.for_board(board.name, board.ram_bytes, bound.stack_bytes, input_in_ram), bound


def cmd_compile(args) -> None:
    from . import pipeline
    from .codegen.emit import check_prefix
    target, board = _link_target(args)
    check_prefix(args.prefix)
    graph, plan, schedule = _planned_schedule(args)
    if board is not None:
        target, _ = _for_board(target, board, graph, plan, schedule, not args.input_in_flash)
    with progress.step(f"writing the C for {graph.name}"):
        files = pipeline.write_c(args.output, graph, schedule, plan, target, args.prefix)
    linked = f" linked as {board.name}" if board else ""
    print(f"{graph.name}: {len(plan.blocks)} blocks, arena {schedule.arena_bytes} B, F = {plan.overhead:.4f}; "
          f"wrote {len(files)} files to {args.output} (build for {target.name}{linked}: make -C {args.output})")


def cmd_verify(args) -> int:
    from . import pipeline
    from .plan import block_name
    from .tensors import load_input, random_input
    from .codegen.build import DoesNotFit
    from .codegen.emit import check_prefix
    target, board = _link_target(args)
    check_prefix(args.prefix)
    graph, plan, schedule = _planned_schedule(args)
    if board is not None:
        target, bound = _for_board(target, board, graph, plan, schedule, not args.input_in_flash)
    x = load_input(args.input, graph) if args.input else random_input(graph, args.seed)
    try:
        check = pipeline.verify(graph, plan, schedule, x, target, args.keep, count_instructions=args.instructions,
                                prefix=args.prefix)
    except DoesNotFit as err:  # what to pass for a plan that fits, under the other options given
        budget = plan.peak_ram_bytes - err.excess
        if budget <= 0:  # no arena at all would fit beside the rest
            hint = " (try --input-in-flash)" if board is not None and not args.input_in_flash else ""
            raise UserError(f"{err}; no plan fits: the rest (io, stack, C library) alone overflows it{hint}") from None
        advice = _planner(args, graph).advice_to_fit(args.strategy, args.max_overhead, budget)
        raise UserError(f"{err}; {advice}") from None
    predicted = _predicted_blocks(target.name, graph, schedule)
    result = {"model": graph.name, "target": target.name, "numerics": graph.numerics, "plan": plan.to_dict(),
              "pass": check.passed, "tolerance": check.tolerance, "bit_exact": check.bit_exact,
              "arena_bytes": check.arena_bytes, "predicted_peak_ram_bytes": check.predicted_peak_ram_bytes,
              "max_abs_diff": check.max_abs_diff, "stack_bytes": check.stack_bytes,
              "instructions": check.instructions,
              "predicted_instructions": None if predicted is None else round(sum(predicted)),
              "block_instructions": None if check.block_instructions is None else [
                  {**block_name(b), "instructions": n,
                   **({} if predicted is None else {"predicted_instructions": round(p)})}
                  for b, n, p in zip(plan.blocks, check.block_instructions, predicted or [None] * len(plan.blocks))]}
    linked = {} if board is None else _linked_report(check, board, bound, graph, plan, args.input_in_flash)
    result.update(linked)
    verdict = _verdict(check)
    if len(graph.output_tensors) > 1:  # the verdict is over all of them, one after the other
        result["outputs"] = len(graph.output_tensors)
        verdict += f" (all {len(graph.output_tensors)} outputs)"
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        stack = "" if check.stack_bytes is None else f"; stack {check.stack_bytes} B measured"
        entry = pipeline.entry_point(graph, target, args.prefix or "msfcnn")[0]
        count = "" if check.instructions is None else f"; {check.instructions} instructions in {entry}"
        if predicted is not None and check.instructions:
            count += f" ({round(sum(predicted))} predicted, {sum(predicted) / check.instructions - 1:+.1%})"
        elif predicted is not None:  # not counted (no --instructions): the latency model's figure alone
            count += f"; {round(sum(predicted))} instructions predicted"
        print(f"{graph.name} on {target.name}: {verdict}; arena {check.arena_bytes} B in the object file, "
              f"{check.predicted_peak_ram_bytes} B predicted{stack}{count}")
        for k, (block, n) in enumerate(zip(plan.blocks, check.block_instructions or ())):
            guess = "" if predicted is None else f", {round(predicted[k])} predicted"
            print(f"  block {k:3d}  ops {block.first:3d}-{block.last:<3d} {block.scheme:10s} R={block.rows:<3d} "
                  f"{n:12d} instructions ({n / check.instructions:6.1%}{guess})")
        if linked:
            print(f"linked as {board.name} ({board.ram_bytes} B of RAM, {bound.stack_bytes} B of it for the stack): "
                  f"static data {check.static_ram_bytes} B (C library {linked['c_library_bytes']} B); stack "
                  f"{check.stack_bytes} B measured, {'within' if linked['within_stack_bound'] else 'OVER'} its bound; "
                  f"start-up and main frames {check.frames_bytes} B")
    if check.passed and linked.get("within_stack_bound", True):
        return 0
    if check.passed:
        verdict = f"FAIL (stack {check.stack_bytes} B measured > its bound {bound.stack_bytes} B)"
    print(f"msfcnn: verify: {graph.name} on {target.name}: {verdict}", file=sys.stderr)
    return VERIFY_FAILED


def _linked_report(check, board, bound, graph, plan, input_in_flash: bool) -> dict:
    from .fit import io_bytes, linked_report
    return linked_report(check, board, bound, 0 if plan.io_counted else io_bytes(graph, input_in_flash))


def _predicted_blocks(target: str, graph, schedule) -> list[float] | None:
    """The latency model's instructions per block of the schedule, where the target has one."""
    from . import latency
    if target not in latency.calibrated_targets():
        return None
    return latency.load(target).counter(graph).schedule(schedule)


def _verdict(check) -> str:
    """PASS or FAIL with the criterion: bit-exact for int8, the tolerance for float32."""
    diff = f"max |C - numpy| = {check.max_abs_diff:g}"
    if not check.is_float:
        return f"PASS (bit-exact, {diff})" if check.passed else f"FAIL (not bit-exact: {diff})"
    if check.passed:
        return f"PASS ({diff} <= tolerance {check.tolerance:.3g})"
    return f"FAIL ({diff} > tolerance {check.tolerance:.3g})"


def cmd_fit(args) -> None:
    from . import pipeline
    from .boards import get_board
    from .fit import DEFAULT_RESERVE, fit
    board = get_board(args.board)
    reserve = DEFAULT_RESERVE if args.reserve is None else args.reserve
    graph = pipeline.load(args.model, weights=True)
    with progress.step(f"fit {graph.name} on {board.name}: planning and bounding the stack"):
        result = fit(graph, board, reserve, args.input_in_flash)
    if result.uncovered:
        print(f"msfcnn: warning: the {board.target} latency model has no costs for {', '.join(result.uncovered)} "
              f"(not calibrated): their instructions are not in the predictions", file=sys.stderr)
    if args.output:
        from .files import write_atomic
        write_atomic(args.output, json.dumps(result.plan.to_dict(), indent=1) + "\n")
    if args.json:
        print(json.dumps(result.to_dict(), indent=1))
        return
    from .report import plan_table
    plan = result.plan
    near = "" if board.exact_core else " (nearest emulated target only)"
    print(plan_table(plan, graph))
    io = ("in the arena" if result.io_in_arena else
          "output only, input in flash" if args.input_in_flash else "input and output")
    print(f"{graph.name} fits {board.name} ({board.chip}, {board.ram_bytes} B RAM) on target {board.target}{near}:")
    for label, value in (("arena", result.arena_bytes), (f"io ({io})", result.io_bytes),
                         ("stack (bound)", result.code.stack_bytes), ("static data", result.code.static_bytes),
                         ("reserve", result.reserve_bytes)):
        print(f"  {label:34s} {value:9d} B")
    print(f"  {'headroom':34s} {result.headroom_bytes:9d} B")
    if plan.predicted_instructions is not None:
        print(f"fastest fitting plan: {plan.predicted_instructions} instructions predicted on {board.target}, "
              f">= {result.predicted_ms:.1f} ms at {board.clock_hz / 1e6:g} MHz (a lower bound: one instruction "
              f"per cycle)")
    else:
        print(f"fastest fitting plan by MACs ({plan.macs}, F = {plan.overhead:.4f}): {board.target} has no latency "
              f"model (calibrated: {_calibrated()})")
    if board.note:
        print(f"note: {board.note}")


def cmd_pareto(args) -> None:
    from .report import pareto_table, plot_pareto
    from . import pipeline
    planner = _planner(args)
    weight = "instructions" if args.axis == "latency" else "macs"
    with progress.step(f"pareto {planner.graph.name}: front", total=2) as bar:
        front, vanilla, heuristic = planner.pareto(weight=weight), planner.vanilla(), planner.heuristic()
        bar.advance()
        # The same model with the network input and output counted the other way, for comparison.
        other = pipeline.planner(planner.graph, args.cost_model, args.schemes, not args.count_io,
                                 planner.latency).pareto(weight=weight)
        bar.advance()
    with_io, without_io = (front, other) if args.count_io else (other, front)
    if args.plot:
        fronts = {f"all schemes ({', '.join(planner.schemes) or 'none: unfused'})": front}
        from .schedule.schemes import PAPER_SCHEME, in_paper_space
        if planner.cost.NAME == "exact" and PAPER_SCHEME in planner.schemes:
            # The paper's search space under the same cost model: H-cache with one row per step.
            fronts = {f"paper's space ({PAPER_SCHEME}, R = 1)": planner.pareto(in_paper_space, weight), **fronts}
        plot_pareto(args.plot, planner.graph.name, fronts, vanilla, heuristic, args.axis)
    if args.json:
        print(json.dumps({"model": planner.graph.name, "cost_model": vanilla.cost_model,
                          "front": [p.to_dict() for p in front], "vanilla": vanilla.to_dict(),
                          "heuristic": heuristic.to_dict(), "front_with_io": [p.to_dict() for p in with_io],
                          "front_without_io": [p.to_dict() for p in without_io]}, indent=1))
    else:
        print(pareto_table(planner.graph.name, front, vanilla, heuristic))
        label = "without the input and output" if args.count_io else "with the input and output in the arena"
        print(f"{label} (--count-io {'off' if args.count_io else 'on'}): " + ", ".join(
            f"{p.peak_ram_bytes} B @ " + (f"{p.predicted_instructions} instructions" if args.axis == "latency"
                                          else f"F {p.overhead:.4f}") for p in other))


COMMANDS = {"models": cmd_models, "plan": cmd_plan, "sweep": cmd_sweep, "pareto": cmd_pareto, "run": cmd_run,
            "compile": cmd_compile, "verify": cmd_verify,
            "fit": cmd_fit}


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        progress.configure(getattr(args, "quiet", False) or args.quiet_all, getattr(args, "json", False))
        from .files import check_not_input, guarding_inputs
        read = [getattr(args, name, None) for name in ("model", "input", "plan")] + getattr(args, "models", [])
        with guarding_inputs(read):  # no output replaces a file the command reads
            for name in ("output", "timeline", "plot", "keep"):  # refused before any work
                if getattr(args, name, None):
                    check_not_input(getattr(args, name))
            return COMMANDS[args.command](args) or 0
    except UserError as err:
        print(f"msfcnn: error: {err}", file=sys.stderr)
        return USER_ERROR
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("msfcnn: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

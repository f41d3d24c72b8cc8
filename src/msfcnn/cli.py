"""The `msfcnn` command line (docs/cli.md): each command's arguments become a frozen request, which
the command runs through `pipeline` and renders through `report`. User errors exit 2 with one line on
stderr."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import progress
from .version import __version__
from .errors import UserError
from .sizes import parse_clock, parse_overhead, parse_size, split_list
from .targets import TARGETS

if TYPE_CHECKING:  # (imported where used: `msfcnn --help` stays quick)
    from .boards import Board
    from .pipeline import PlanOptions
    from .targets import Target

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


def _cost_model_arg(p: argparse.ArgumentParser, input_stream: bool = True) -> None:
    from .cost import COST_MODELS, DEFAULT_COST_MODEL
    p.add_argument("--cost-model", choices=sorted(COST_MODELS), default=DEFAULT_COST_MODEL,
                   help=f"how block RAM and MACs are counted (default: {DEFAULT_COST_MODEL})")
    p.add_argument("--count-io", action="store_true",
                   help="count the network's input and output buffers (the caller's) in every block's RAM")
    if input_stream:
        p.add_argument("--input-stream", action="store_true",
                       help="count the whole RAM as --count-io does, but the blocks that read the input pull its "
                            "rows from the caller, in order, once each, and hold only the rows they still need "
                            "(C: msfcnn_invoke_stream)")


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
    _streaming_args(p)


def _streaming_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--streaming", action="store_true",
                   help="incremental sliding-window inference: each call takes the newest --hop frames along "
                        "the time axis (H, or W of a 1 x T map) and computes only the newest rows of each layer, "
                        "keeping the rows their windows still need as state")
    p.add_argument("--hop", metavar="FRAMES", type=int, default=None,
                   help="with --streaming: the frames each call brings (default 1)")


def _hop(args) -> int | None:
    """--streaming's hop (None: whole windows)."""
    if args.hop is not None and not args.streaming:
        raise UserError("--hop needs --streaming")
    return (1 if args.hop is None else args.hop) if args.streaming else None


def _numerics_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--numerics", choices=["litert", "tflm"], default="litert",
                   help="whose int8 kernels to be bit-exact with: litert, the TFLite interpreter's optimized x86-64 "
                        "kernels (default), or tflm, TFLite Micro's (TFLite's reference kernels)")


def _saved_plan_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--plan", metavar="PLAN.json", help="a plan written by `msfcnn plan -o` (instead of plan options)")
    p.add_argument("--strict", action="store_true", help="refuse a --plan whose recorded figures (RAM, MACs) "
                                                         "disagree with what it costs on the model, instead of warning")


def _c_args(p: argparse.ArgumentParser) -> None:
    """The options of the commands that write C: a saved plan, and the names' prefix."""
    _saved_plan_arg(p)
    p.add_argument("--prefix", metavar="NAME",
                   help="start every external name of the generated C with NAME_ (macros with its upper case), "
                        "so that networks with different prefixes link into one program (default: msfcnn; "
                        "compile of several models: NAME,NAME,... one per model, default: from the models' names)")


def _link_board_args(p: argparse.ArgumentParser) -> None:
    # (its own dest: --board of `plan` also chooses a latency model, this one only links)
    p.add_argument("--board", dest="link_board", metavar="BOARD",
                   help="link for this board (msfcnn fit --help lists them) on its emulated target: its RAM as "
                        "the linker's RAM region, the plan's stack bound reserved in it, the input in RAM")
    p.add_argument("--input-in-flash", action="store_true",
                   help="with --board: the harness's input stays a constant in flash (not copied into RAM)")
    _region_arg(p)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="msfcnn", description="Fit CNNs into microcontroller RAM with multi-stage fusion.")
    parser.add_argument("--version", action="version", version=f"msfcnn {__version__}")
    # (its own dest: a subcommand's --quiet default would overwrite this one's value)
    parser.add_argument("-q", "--quiet", dest="quiet_all", action="store_true",
                        help="no progress on stderr, for any command (also accepted after the command)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("models", help="list the built-in models")
    p.add_argument("--json", action="store_true", help="print a JSON list of {name, description} objects")

    p = sub.add_parser("ops", help="the support matrix: each model format's operators, their element types, "
                                   "numerics, fusion and calibrated targets (docs/operators.md)")
    p.add_argument("--json", action="store_true", help="print the matrix's rows as JSON")

    p = sub.add_parser("plan", help="find the fusion plan for one model and constraint")
    _plan_args(p)
    p.add_argument("--target", help="predict the plan's instructions on this target with its latency model "
                                    f"(calibrated: {_calibrated()})")
    p.add_argument("--board", help="a board (msfcnn fit --help lists them) or a board file BOARD.json: its target's "
                                   "latency model, and the time in ms at its clock")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.add_argument("-o", "--output", metavar="PLAN.json", help="also write the plan as JSON to this file")
    p.add_argument("--timeline", metavar="FILE.png", help="draw the arena use block by block")

    p = sub.add_parser("sweep", help="vanilla, heuristic, P1 and P2 plans for several models and caps")
    p.add_argument("models", metavar="MODEL", nargs="+", help=MODEL_HELP + " (one or more)")
    p.add_argument("--max-overhead", metavar="F,F,...", default=DEFAULT_OVERHEADS,
                   help=f"P1 caps (default {DEFAULT_OVERHEADS})")
    p.add_argument("--max-ram", metavar="SIZE,SIZE,...", default=DEFAULT_RAMS, help=f"P2 caps (default {DEFAULT_RAMS})")
    _cost_model_arg(p, input_stream=False)
    _schemes_arg(p)
    p.add_argument("--json", action="store_true", help="print a JSON list, one object per model")

    p = sub.add_parser("run", help="run a plan with the fused numpy executor; compare with the unfused network")
    _plan_args(p)
    _saved_plan_arg(p)
    _numerics_arg(p)
    p.add_argument("--input", metavar="X.npy", help="input in the model's own layout, batch optional; X.npz "
                                                     "(input0, input1, ...) for a model with several inputs; "
                                                     "a stateful model's sequence: steps first, or X.npz with one "
                                                     "array per step (default: a seeded random input)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random input (default 0)")
    p.add_argument("-o", "--output", metavar="Y.npy", help="write the output tensor here (Y.npz: every output of "
                                                           "the model, output0, output1, ... in its order; a "
                                                           "sequence's outputs steps first)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")

    p = sub.add_parser("compile", help="generate a self-contained C99 library for a plan")
    _plan_args(p)
    p.add_argument("more_models", metavar="MODEL", nargs="*",
                   help="more models: one library, each network under its own prefix, all sharing one arena "
                        "as large as the largest (they run one at a time)")
    p.add_argument("--target", help=f"where the C will run: {TARGET_NAMES} (default: host)")
    _link_board_args(p)
    _c_args(p)
    _numerics_arg(p)
    p.add_argument("-o", "--output", metavar="DIR", required=True, help="folder to write the C project into")

    p = sub.add_parser("verify", help="generate, build and run the C; compare with the numpy executor")
    _plan_args(p)
    p.add_argument("more_models", metavar="MODEL", nargs="*",
                   help="more models: their library as compile A B ... writes it, run in turn in one program")
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
    p.add_argument("more_models", metavar="MODEL", nargs="*",
                   help="more models in the same firmware, run one after the other: they share one arena "
                        "(compile A B ...), and fit answers for them together")
    p.add_argument("--board", help=f"the board: {_board_names()}; or a board file BOARD.json (docs/cli.md)")
    p.add_argument("--ram", metavar="SIZE", type=parse_size,
                   help="a board of your own: its RAM (with --target), or the RAM of --board replaced")
    p.add_argument("--target", "--core", dest="target",
                   help=f"a board of your own: the emulated target that stands for its core ({TARGET_NAMES})")
    p.add_argument("--clock", metavar="FREQ", type=parse_clock, help="a board of your own: its clock, e.g. 80MHz "
                                                                     "(without one, no time in ms)")
    p.add_argument("--flash", metavar="SIZE", type=parse_size, help="a board of your own: its flash (reported only)")
    _region_arg(p)
    p.add_argument("--objective", choices=["min-latency", "min-ram"], default="min-latency",
                   help="among the fitting plans: the fastest (default; by MACs where time is not predicted), "
                        "or the one of least RAM, everything counted")
    p.add_argument("--reserve", metavar="SIZE", type=parse_size, default=None,
                   help="RAM kept for the rest of the program: C library data, start-up, the caller "
                        "(default 1KiB)")
    p.add_argument("--input-in-flash", action="store_true",
                   help="the input is a constant in flash: only the output counts as io in RAM")
    p.add_argument("--input-stream", action="store_true",
                   help="also try plans that pull the input row by row from the caller (plan --input-stream); "
                        "the report gives the least RAM with the input streamed beside the whole input's")
    _streaming_args(p)
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
    _streaming_args(p)
    p.add_argument("--json", action="store_true", help="print the front, vanilla and heuristic as JSON")
    p.add_argument("--plot", metavar="FILE.png", help="draw RAM vs overhead with vanilla and heuristic marked")
    return parser


def _region_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--region", metavar="NAME:SIZE[:COST]", action="append", default=[],
                   help="a RAM region of your board (repeat for each; replaces --board's): every buffer goes to one "
                        "region, the most accessed per byte to those of least relative COST (default 1)")
    p.add_argument("--input-in", metavar="REGION", help="the input lives in this RAM region of the board (or flash: "
                                                        "as --input-in-flash)")


def _input_place(args) -> tuple[bool, str | None]:
    """--input-in-flash, or --input-in flash or REGION: (the input in flash, its region)."""
    if args.input_in is None or args.input_in == "flash":
        if args.input_in and args.input_in_flash:
            raise UserError("--input-in flash and --input-in-flash say the same: give one of them")
        return args.input_in_flash or args.input_in == "flash", None
    return args.input_in_flash, args.input_in


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


# -- requests: the parsed arguments, checked and typed; the commands read nothing else -------------

@dataclass(frozen=True)
class Invocation:
    """What every command shares: whether progress may show, and the files it reads and writes
    (no output may replace an input)."""

    quiet: bool
    json: bool = False
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelsRequest:
    call: Invocation


@dataclass(frozen=True)
class OpsRequest:
    call: Invocation


@dataclass(frozen=True)
class PlanRequest:
    call: Invocation
    options: PlanOptions
    board: Board | None  # its target weighs the plans; its clock turns instructions into time
    output: str | None
    timeline: str | None


@dataclass(frozen=True)
class SweepRequest:
    call: Invocation
    models: tuple[str, ...]
    overheads: tuple[float, ...]
    rams: tuple[int, ...]
    cost_model: str
    schemes: tuple[str, ...] | None
    count_io: bool


@dataclass(frozen=True)
class ParetoRequest:
    call: Invocation
    options: PlanOptions
    axis: str  # "macs" or "latency": the compute axis
    plot: str | None


@dataclass(frozen=True)
class ModelPlan:
    """The model with weights and its plan: the saved one of --plan, or the one the options ask for."""

    options: PlanOptions
    saved_plan: str | None
    numerics: str
    strict: bool = False  # a saved plan's figures that disagree with the model's: an error, not a warning


@dataclass(frozen=True)
class Link:
    """Where the generated C goes: the target, the board it is linked as (or none), and the
    prefix of its external names."""

    target: Target
    board: Board | None
    input_in_flash: bool
    prefix: str
    input_in: str | None = None  # --input-in REGION: the region holding the input


@dataclass(frozen=True)
class RunRequest:
    call: Invocation
    model: ModelPlan
    input: str | None
    seed: int
    output: str | None


@dataclass(frozen=True)
class CompileRequest:
    call: Invocation
    model: ModelPlan
    link: Link
    output: str
    # Several models: the others, compiled with the first into one library sharing one arena
    # (codegen/shared.py), and the prefixes given for all of them (None: from their names).
    others: tuple[ModelPlan, ...] = ()
    prefixes: tuple[str, ...] | None = None


@dataclass(frozen=True)
class VerifyRequest:
    call: Invocation
    model: ModelPlan
    link: Link
    input: str | None
    seed: int
    keep: str | None
    instructions: bool
    others: tuple[ModelPlan, ...] = ()  # more models, verified together with the first (one library)
    prefixes: tuple[str, ...] | None = None  # the networks' prefixes (None: from their names)


@dataclass(frozen=True)
class FitRequest:
    call: Invocation
    model: str
    board: Board
    reserve: int
    input_in_flash: bool
    output: str | None
    objective: str = "min-latency"
    input_stream: bool = False
    others: tuple[str, ...] = ()  # more models, fitted together with the first, sharing one arena
    hop: int | None = None  # --streaming: the frames each call brings (None: whole inputs)
    input_in: str | None = None  # --input-in REGION


def _invocation(args, json_output: bool = False, reads=(), writes=()) -> Invocation:
    """The shared part of a request; `reads` and `writes` are the paths given (None if not). An
    output that would replace an input is refused first, before any other check of the request."""
    from .files import check_not_input, guarding_inputs
    call = Invocation(args.quiet or args.quiet_all, json_output, tuple(p for p in reads if p),
                      tuple(p for p in writes if p))
    with guarding_inputs(call.reads):
        for path in call.writes:
            check_not_input(path)
    return call


def _schemes(names: list[str] | None) -> tuple[str, ...] | None:
    return None if names is None else tuple(names)


def _weighing_target(target: str | None, timed: bool) -> str | None:
    """`plan` and `pareto`: the target whose latency model weighs the plans; a time objective, cap
    or axis needs one."""
    if timed and target is None:
        raise UserError("a latency objective, cap or axis needs --target (calibrated: " + _calibrated() + ")")
    return target


def _model_plan(args, target: str | None) -> ModelPlan:
    """`run`, `compile` and `verify`: a time objective or cap weighs the plans on `target` (the
    C's; the host's without one)."""
    from .pipeline import PlanOptions
    timed = args.objective == "min-latency" or args.max_latency is not None
    options = PlanOptions(args.model, args.cost_model, _schemes(args.schemes), args.count_io, args.strategy,
                          args.objective, args.max_overhead, args.max_ram, args.max_latency,
                          latency_target=(target or "host") if timed else None, hop=_hop(args),
                          input_stream=args.input_stream)
    if args.strict and args.plan is None:
        raise UserError("--strict checks a saved plan: it needs --plan")
    return ModelPlan(options, args.plan, args.numerics, args.strict)


def _board_on(name: str, target: str | None) -> Board:
    """The board named, which must run on --target when both are given."""
    from .boards import get_board
    board = get_board(name)
    if target is not None and target != board.target:
        raise UserError(f"--board {board.name} runs on target {board.target}, not --target {target}")
    return board


def _link(args) -> Link:
    """`compile` and `verify`: --target, or the target of the board --board links for."""
    from .codegen.emit import DEFAULT_PREFIX, check_prefix
    from .targets import get_target
    input_in_flash, input_in = _input_place(args)
    if input_in_flash and args.link_board is None:
        raise UserError("--input-in-flash needs --board (the fe310 and esp32c3 harnesses keep the input in flash)")
    if input_in and args.link_board is None:
        raise UserError("--input-in needs --board: the board whose RAM region holds the input")
    board = _link_board(args)
    target = get_target(board.target if board else args.target or "host")
    prefix = DEFAULT_PREFIX if args.prefix is None else args.prefix
    check_prefix(prefix)
    if board is not None:
        from .fit import check_input_region
        check_input_region(board, input_in, input_in_flash)
    return Link(target, board, input_in_flash, prefix, input_in)


def _link_board(args):
    """The board --board (with --region's regions) links for, or None."""
    board = None if args.link_board is None else _board_on(args.link_board, args.target)
    if args.region:
        from .boards import custom_board, parse_regions
        if board is None:
            raise UserError("--region needs --board: the board whose RAM regions it replaces")
        board = custom_board(None, None, base=board, regions=parse_regions(args.region))
    return board


def models_request(args) -> ModelsRequest:
    return ModelsRequest(_invocation(args, args.json))


def ops_request(args) -> OpsRequest:
    return OpsRequest(_invocation(args, args.json))


def plan_request(args) -> PlanRequest:
    from .pipeline import PlanOptions
    call = _invocation(args, args.json, [args.model], [args.output, args.timeline])
    board = None if args.board is None else _board_on(args.board, args.target)
    target = board.target if board else args.target
    timed = args.objective == "min-latency" or args.max_latency is not None or board is not None
    options = PlanOptions(args.model, args.cost_model, _schemes(args.schemes), args.count_io, args.strategy,
                          args.objective, args.max_overhead, args.max_ram, args.max_latency,
                          board.clock_hz if board else None, _weighing_target(target, timed), _hop(args),
                          args.input_stream)
    return PlanRequest(call, options, board, args.output, args.timeline)


def sweep_request(args) -> SweepRequest:
    call = _invocation(args, args.json, args.models)
    overheads = tuple(parse_overhead(f) for f in split_list(args.max_overhead))
    rams = tuple(parse_size(s) for s in split_list(args.max_ram))
    return SweepRequest(call, tuple(args.models), overheads, rams, args.cost_model, _schemes(args.schemes),
                        args.count_io)


def pareto_request(args) -> ParetoRequest:
    from .pipeline import PlanOptions
    call = _invocation(args, args.json, [args.model], [args.plot])
    options = PlanOptions(args.model, args.cost_model, _schemes(args.schemes), args.count_io,
                          latency_target=_weighing_target(args.target, args.axis == "latency"), hop=_hop(args),
                          input_stream=args.input_stream)
    return ParetoRequest(call, options, args.axis, args.plot)


def run_request(args) -> RunRequest:
    return RunRequest(_invocation(args, args.json, [args.model, args.input, args.plan], [args.output]),
                      _model_plan(args, None), args.input, args.seed, args.output)


def _folder_output(path: str | None, option: str) -> None:
    from .files import STDOUT
    if path == STDOUT:
        raise UserError(f"{option} takes a folder: standard output (-) cannot hold a C project")


def compile_request(args) -> CompileRequest:
    _folder_output(args.output, "-o")
    plans = [args.plan] if not args.more_models or args.plan is None else split_list(args.plan)
    call = _invocation(args, False, [args.model, *args.more_models, *plans], [args.output])
    if args.more_models:
        return _shared_compile_request(args, call, args.output)
    link = _link(args)
    return CompileRequest(call, _model_plan(args, args.target or _board_target(link)), link, args.output)


def _shared_compile_request(args, call: Invocation, output: str | None) -> CompileRequest:
    """`compile A B ...`: one library, every network planned with the same options, or from its
    saved plan (--plan A.json,B.json, one per model, as `fit A B -o` writes them)."""
    from dataclasses import replace
    from .codegen.shared import network_prefixes
    from .targets import get_target
    input_in_flash, input_in = _input_place(args)
    for given, option in ((input_in_flash, "--input-in-flash"), (input_in, "--input-in")):
        if given:
            raise UserError(f"{option} takes one model: compile several models without it")
    models = [args.model, *args.more_models]
    plans = [None] * len(models) if args.plan is None else split_list(args.plan)
    if len(plans) != len(models):
        raise UserError(f"--plan names {len(plans)} plans for {len(models)} models: give one per model, "
                        "comma-separated, in the models' order")
    # prefixes given are checked now, before any planning; those from the names once they are loaded
    prefixes = None if args.prefix is None else tuple(network_prefixes(models, split_list(args.prefix)))
    board = _link_board(args)  # its target; over its RAM regions when it has several
    link = Link(get_target(board.target if board else args.target or "host"), board, False, "")
    base = _model_plan(args, link.target.name)
    each = [replace(base, options=replace(base.options, model=m), saved_plan=p) for m, p in zip(models, plans)]
    return CompileRequest(call, each[0], link, output, tuple(each[1:]), prefixes)


def verify_request(args) -> VerifyRequest:
    _folder_output(args.keep, "--keep")
    call = _invocation(args, args.json, [args.model, args.input, args.plan], [args.keep])
    if args.more_models:
        for given, option in ((args.input, "--input"), (args.instructions, "--instructions")):
            if given:
                raise UserError(f"{option} takes one model: verify several models without it")
        shared = _shared_compile_request(args, call, None)  # verify builds in a folder of its own
        board = shared.link.board
        if board is not None and not board.several_regions:
            raise UserError(f"--board with several models links their shared arenas over a board's several RAM "
                            f"regions; {board.name} has one: verify several models without it, or give --region")
        return VerifyRequest(call, shared.model, shared.link, None, args.seed, args.keep, False, shared.others,
                             shared.prefixes)
    link = _link(args)
    return VerifyRequest(call, _model_plan(args, args.target or _board_target(link)), link, args.input, args.seed,
                         args.keep, args.instructions)


def _board_target(link: Link) -> str | None:
    return None if link.board is None else link.board.target


def fit_request(args) -> FitRequest:
    from .boards import custom_board, get_board, parse_regions
    from .fit import DEFAULT_RESERVE, check_input_region
    board_file = args.board if args.board and args.board.lower().endswith(".json") else None
    outputs = [args.output] if not args.more_models or args.output is None else split_list(args.output)
    call = _invocation(args, args.json, [args.model, *args.more_models, board_file], outputs)
    if args.more_models and args.input_stream:
        raise UserError("--input-stream takes one model: fit several models without it")
    if args.more_models and args.streaming:
        raise UserError("--streaming takes one model: fit several models without it")
    if args.more_models and "-" in outputs:
        raise UserError("-o - writes one plan to standard output: fit several models into files, one per model")
    if args.more_models and args.output is not None and len(outputs) != 1 + len(args.more_models):
        raise UserError(f"-o names {len(outputs)} plan files for {1 + len(args.more_models)} models: give one per "
                        "model, comma-separated, in the models' order")
    base = None if args.board is None else get_board(args.board)
    regions = parse_regions(args.region)
    if base is None and args.ram is None and args.target is None:
        raise UserError(f"fit needs a board: --board NAME ({_board_names()}) or BOARD.json, or one of your own "
                        f"with --ram SIZE (or --region NAME:SIZE) --target T")
    if regions and args.ram is not None:
        raise UserError("--ram and --region: give the RAM as one size or as its regions, not both")
    custom = any(v is not None for v in (args.ram, args.target, args.clock, args.flash)) or bool(regions)
    board = (custom_board(args.ram, args.target, args.clock, args.flash, base, regions=regions)
             if custom or base is None else base)
    input_in_flash, input_in = _input_place(args)
    check_input_region(board, input_in, input_in_flash)
    return FitRequest(call, args.model, board, DEFAULT_RESERVE if args.reserve is None else args.reserve,
                      input_in_flash, args.output, args.objective, args.input_stream, tuple(args.more_models),
                      _hop(args), input_in)


# -- the steps the commands share ------------------------------------------------------------------

def _planner(options: PlanOptions, graph=None):
    """The planner of the options' model (or of `graph`, its already loaded graph)."""
    from . import pipeline, report
    model = pipeline.latency_model(options)
    # A weightless model is predicted with the weights compile would give it (the output stage's
    # loops depend on the requantisation shifts).
    graph = graph if graph is not None else pipeline.load(options.model, weights=model is not None, hop=options.hop)
    planner = pipeline.options_planner(graph, options, model)
    if model is not None:
        _warn(report.latency_warnings(model, planner.uncovered))
    return planner


def _warn(lines: list[str]) -> None:
    for line in lines:
        print(line, file=sys.stderr)


def _with_digest(plan, model: str):
    """The plan recording its model's sha256 (and so the tool's version), for --plan to check."""
    from dataclasses import replace
    from .frontends import model_digest
    return replace(plan, model_sha256=model_digest(model)) if plan.feasible else plan


def _solve(options: PlanOptions, planner):
    from . import pipeline
    with progress.step(f"planning {planner.graph.name}: solving ({options.strategy})"):
        return pipeline.solve_options(planner, options)


def _planned_schedule(model: ModelPlan):
    """The model with weights, its plan and the plan's schedule."""
    from . import pipeline
    graph = pipeline.load(model.options.model, weights=True, numerics=model.numerics, hop=model.options.hop)
    if not model.saved_plan:
        plan = _solve(model.options, _planner(model.options, graph))
        return graph, plan, pipeline.lower(graph, plan)
    from .frontends import model_digest
    saved = pipeline.load_plan(model.saved_plan, graph, model_digest(model.options.model))
    schedule = pipeline.lower(graph, saved)
    plan, differences = pipeline.recomputed_plan(saved, graph, schedule)
    if differences:
        made_by = saved.recorded.get("msfcnn_version")
        message = (f"{model.saved_plan}: its recorded figures disagree with what it costs on {graph.name} "
                   f"({'; '.join(differences[:3])}{'; ...' if len(differences) > 3 else ''}"
                   f"{f'; made by msfcnn {made_by}' if made_by and made_by != __version__ else ''})")
        if model.strict:
            raise UserError(f"{message}: refusing it (--strict)")
        _warn([f"msfcnn: warning: {message}; the recomputed figures are used"])
    return graph, plan, schedule


def _input(path: str | None, seed: int, graph):
    """The input file's tensor(s), or a seeded random input."""
    from .tensors import load_input, random_input
    return load_input(path, graph) if path else random_input(graph, seed)


def _for_board(link: Link, graph, plan, schedule):
    """The link's target linked as its board, and the plan's stack bound."""
    from . import pipeline
    return pipeline.linked_for_board(graph, plan, schedule, link.target, link.board, link.input_in_flash)


def _over_regions(link: Link, graph, plan, schedule, bound):
    """On a board of several RAM regions, the schedule with one arena per region as `fit` places
    it (the stack `bound` and the default reserve counted); otherwise `schedule` itself."""
    if link.board is None or not link.board.several_regions:
        return schedule
    from . import pipeline
    from .fit import DEFAULT_RESERVE
    program = bound.stack_bytes + bound.static_bytes + DEFAULT_RESERVE
    return pipeline.lower_on_regions(graph, plan, link.board, program, not link.input_in_flash, link.input_in)


def _print_json(doc, stream=None) -> None:
    from . import report
    print(report.json_text(doc), file=stream or sys.stdout)


def _report_stream(request):
    """Where a command's report goes: standard output, unless its output file is (`-o -`)."""
    from .files import STDOUT
    return sys.stderr if request.output == STDOUT else sys.stdout


# -- the commands ----------------------------------------------------------------------------------

def cmd_models(request: ModelsRequest) -> None:
    from . import report
    from .frontends import builtin_names
    names = builtin_names()
    if request.call.json:
        _print_json(report.models_doc(names))
    elif names:
        print(report.models_text(names))


def cmd_ops(request: OpsRequest) -> None:
    from .support import ops_command
    print(ops_command(request.call.json).rstrip("\n"))


def cmd_plan(request: PlanRequest) -> None:
    from . import pipeline, report
    planner = _planner(request.options)
    plan = _with_digest(_solve(request.options, planner), request.options.model)
    vanilla = planner.vanilla() if planner.latency_complete else None  # its predicted time, to compare
    doc = report.json_text(report.plan_doc(plan, request.board, vanilla))
    if request.timeline:
        report.plot_timeline(request.timeline, plan, pipeline.lower(planner.graph, plan))
    if request.output:
        from .files import write_atomic
        write_atomic(request.output, doc + "\n")
    print(doc if request.call.json else report.plan_text(plan, planner.graph, request.board, vanilla),
          file=_report_stream(request))


def cmd_sweep(request: SweepRequest) -> None:
    from . import pipeline, report
    planners = []
    with progress.step("sweep: enumerating fused blocks, model", total=len(request.models)) as bar:
        for model in request.models:  # validate every model before printing
            planners.append(pipeline.planner(pipeline.load(model), request.cost_model, request.schemes,
                                             request.count_io))
            bar.advance()
    docs = []
    for planner in planners:
        plans = _sweep(request, planner)
        if request.call.json:
            docs.append(report.sweep_doc(planner.graph.name, *plans))
        else:
            print(report.sweep_table(planner.graph.name, *plans), end="\n\n")
    if request.call.json:
        _print_json(docs)


def _sweep(request: SweepRequest, planner):
    """Vanilla, heuristic, and the P1 and P2 plans under every cap."""
    steps = 2 + len(request.overheads) + len(request.rams)
    with progress.step(f"sweep {planner.graph.name}: plan", total=steps) as bar:
        vanilla, heuristic = planner.vanilla(), planner.heuristic()
        bar.advance(2)
        p1, p2 = [], []
        for f in request.overheads:
            p1.append(planner.p1(f))
            bar.advance()
        for r in request.rams:
            p2.append(planner.p2(r))
            bar.advance()
    return vanilla, heuristic, p1, p2


def cmd_run(request: RunRequest) -> None:
    import numpy as np
    from . import pipeline, report
    from .tensors import save_outputs
    graph, plan, schedule = _planned_schedule(request.model)
    if request.model.options.hop is not None:  # --streaming: a long input, window by window
        return _run_windows(request, graph, plan, schedule)
    if graph.states:  # a stateful model runs a sequence, its state carried from step to step
        return _run_sequence(request, graph, plan, schedule)
    x = _input(request.input, request.seed, graph)
    with progress.step(f"running {graph.name}: fused and unfused numpy executors"):
        fused = pipeline.run(schedule, x)
        ys = fused.outputs
        diff = max(pipeline.max_abs_diff(y, ref) for y, ref in zip(ys, pipeline.run_reference_outputs(graph, x)))
    bad = sum(y.size - int(np.count_nonzero(np.isfinite(y))) for y in ys)
    model = request.model.options.model
    if bad:  # a float model whose arithmetic overflows float32
        raise UserError(f"{model}: {bad} of the {sum(y.size for y in ys)} output values are NaN or infinite: the "
                        f"model's float32 arithmetic overflows on this input (check its weights)")
    if request.output:
        save_outputs(request.output, ys, model)
    if request.call.json:
        _print_json(report.run_doc(graph, plan, x, fused, diff), _report_stream(request))
    else:
        print(report.run_text(graph, plan, x, fused, diff), file=_report_stream(request))


def _run_sequence(request: RunRequest, graph, plan, schedule) -> None:
    """`run` on a stateful model: the input file's steps (one random step without one) in order,
    fused and unfused, each from the state the step before left; the outputs with a step axis."""
    import numpy as np
    from . import pipeline, report
    from .executor import run_sequence
    from .tensors import load_steps, random_input, save_outputs
    steps = load_steps(request.input, graph) if request.input else [random_input(graph, request.seed)]
    with progress.step(f"running {graph.name} over {len(steps)} steps: fused and unfused numpy executors"):
        runs = pipeline.run_steps(schedule, steps)
        references = run_sequence(graph, steps)
    diff = max(pipeline.max_abs_diff(y, ref) for fused, refs in zip(runs, references)
               for y, ref in zip(fused.outputs, refs))
    outputs = [np.stack([fused.outputs[k] for fused in runs]) for k in range(len(runs[0].outputs))]
    if request.output:
        save_outputs(request.output, outputs, request.model.options.model)
    if request.call.json:
        _print_json({**report.run_doc(graph, plan, steps[-1], runs[-1], diff), "steps": len(steps),
                     "output_shape": list(outputs[0].shape)})
    else:
        print(report.run_text(graph, plan, steps[-1], runs[-1], diff)
              + f"\n{len(steps)} step{'s' if len(steps) > 1 else ''} in order, the state carried over ({graph.state_bytes} B of state "
                f"buffers at the arena's start); output{'s' if len(outputs) > 1 else ''} above: the last step's")


def _whole_window(model: ModelPlan):
    """The whole-window model of a --streaming request, with weights."""
    from . import pipeline
    return pipeline.load(model.options.model, weights=True, numerics=model.numerics)


def _run_windows(request: RunRequest, graph, plan, schedule) -> None:
    """`run --streaming`: a long input's calls in order; every window's output, stacked in window
    order, each compared with the whole-window model's."""
    from . import report, windows
    from .tensors import save_outputs
    whole = _whole_window(request.model)
    frames = windows.long_input(whole, request.input, request.seed)
    with progress.step(f"running {graph.name} window by window: fused numpy executor and the whole-window model"):
        result = windows.run_windows(whole, schedule, frames, request.model.options.hop)
    if request.output:
        save_outputs(request.output, [result.outputs], request.model.options.model)
    doc = report.windows_doc(graph, plan, result)
    if request.call.json:
        _print_json(doc, _report_stream(request))
    else:
        print(report.windows_text(graph, plan, result), file=_report_stream(request))


def cmd_compile(request: CompileRequest) -> None:
    from . import pipeline, report
    if request.others:
        return _compile_shared(request)
    link = request.link
    graph, plan, schedule = _planned_schedule(request.model)
    target, bound = (link.target, None) if link.board is None else _for_board(link, graph, plan, schedule)
    schedule = _over_regions(link, graph, plan, schedule, bound)
    with progress.step(f"writing the C for {graph.name}"):
        files = pipeline.write_c(request.output, graph, schedule, plan, target, link.prefix)
    print(report.compile_text(graph, plan, schedule, files, request.output, target.name, link.board))


def _compile_shared(request: CompileRequest) -> None:
    """`compile A B ...`: each model planned, then one library of them all sharing one arena."""
    from . import report
    from .codegen.shared import Network, network_prefixes, write_shared
    planned = _shared_over_regions(request.link, [_planned_schedule(model) for model in (request.model, *request.others)])
    prefixes = network_prefixes([graph.name for graph, _, _ in planned], request.prefixes)
    networks = [Network(prefix, *each) for prefix, each in zip(prefixes, planned)]
    with progress.step(f"writing the C for {len(networks)} networks sharing one arena"):
        files = write_shared(request.output, networks, request.link.target)
    print(report.compile_shared_text(networks, files, request.output))


def cmd_verify(request: VerifyRequest) -> int:
    from . import pipeline, report
    if request.others:
        return _verify_shared(request)
    link = request.link
    graph, plan, schedule = _planned_schedule(request.model)
    target, bound = (link.target, None) if link.board is None else _for_board(link, graph, plan, schedule)
    schedule = _over_regions(link, graph, plan, schedule, bound)
    if request.model.options.hop is not None:  # --streaming: a long input's calls, window by window
        return _verify_windows(request, graph, plan, schedule, target)
    steps = None
    if graph.states and request.input:  # a stateful model's sequence: every step, the state carried over
        from .tensors import load_steps
        steps = load_steps(request.input, graph)
    x = steps[0] if steps else _input(request.input, request.seed, graph)
    check = _verified(request, graph, plan, schedule, x, target, steps if steps and len(steps) > 1 else None)
    predicted = _predicted_blocks(target.name, graph, schedule, x)
    linked = None if bound is None else _linked_report(check, link, bound, graph, plan)
    if request.call.json:
        _print_json(report.verify_doc(graph, target.name, plan, check, predicted, linked))
    else:
        entry = pipeline.entry_point(graph, target, link.prefix or "msfcnn", schedule.input_stream)[0]
        print(report.verify_text(graph, target.name, plan, check, predicted, linked, entry))
    failure = report.verify_failure(graph, target.name, check, linked)
    if failure is None:
        return 0
    print(failure, file=sys.stderr)
    return VERIFY_FAILED


def _shared_over_regions(link: Link, planned: list) -> list:
    """On a board of several RAM regions, the networks' schedules sharing one arena per region (as
    `fit A B` places them); otherwise `planned` itself."""
    if link.board is None or not link.board.several_regions:
        return planned
    from . import pipeline
    from .fit import DEFAULT_RESERVE
    with progress.step(f"placing {len(planned)} networks over the RAM regions of {link.board.name}"):
        return pipeline.lower_shared_on_regions(planned, link.board, link.target, DEFAULT_RESERVE)


def _verify_shared(request: VerifyRequest) -> int:
    """`verify A B ...`: the networks' library, as compile A B ... writes it, run in one program,
    each network on its seeded random input against the numpy executor."""
    from . import pipeline, report
    from .codegen.shared import Network, network_prefixes, shared_arena_bytes
    link = request.link
    planned = _shared_over_regions(link, [_planned_schedule(model) for model in (request.model, *request.others)])
    prefixes = network_prefixes([graph.name for graph, _, _ in planned], request.prefixes)
    networks = [Network(prefix, *each) for prefix, each in zip(prefixes, planned)]
    inputs = [_input(None, request.seed, graph) for graph, _, _ in planned]
    linked = link.target
    if link.board is not None and link.board.several_regions:  # each region's arena at an address of its own
        linked = linked.with_regions(link.board.name, tuple((r.name, r.size) for r in link.board.ram_regions))
    checks = pipeline.verify_shared(networks, inputs, linked, request.keep)
    target, placed = link.target.name, checks[0].region_arenas
    if request.call.json:
        _print_json({"target": target, "shared_arena_bytes": shared_arena_bytes(networks),
                     "pass": all(c.passed for c in checks),
                     "networks": [{"prefix": n.prefix, "model": n.graph.name, "pass": c.passed,
                                   "bit_exact": c.bit_exact, "max_abs_diff": c.max_abs_diff,
                                   "arena_bytes": n.arena_bytes} for n, c in zip(networks, checks)],
                     **({"region_arenas": list(placed)} if placed else {})})
    else:
        for n, c in zip(networks, checks):
            print(f"{n.prefix}/ ({n.graph.name}) on {target}, arena {n.arena_bytes} B of the shared "
                  f"{shared_arena_bytes(networks)} B, run twice in turn with the others: {report.verdict(c)}")
        for r in placed:
            print(f"shared arena of {r['region']}: {r['bytes']} B at {r['address']:#x}, inside its region "
                  f"[{r['origin']:#x}, {r['origin'] + r['length']:#x}) as linked for {link.board.name}")
    failed = [n.graph.name for n, c in zip(networks, checks) if not c.passed]
    if not failed:
        return 0
    print(f"msfcnn: FAIL: {', '.join(failed)} differ from the numpy executor", file=sys.stderr)
    return VERIFY_FAILED


def _verify_windows(request: VerifyRequest, graph, plan, schedule, target) -> int:
    """`verify --streaming`: the C of one call run over a long input's calls in order against the
    numpy executor, every window compared with the whole-window model's; with --instructions, the
    instructions of one call and of the whole-window model's plan under the same options."""
    from dataclasses import replace
    from . import pipeline, report, windows
    if target.embedded_harness:
        raise UserError(f"verify --streaming runs the C over every call of a long input, which the harness of "
                        f"{target.name}{' linked as a board' if request.link.board else ''} does not take (it runs "
                        "one call): verify on host, cortex-m4, cortex-m7, cortex-m33 or cortex-m0plus without --board")
    whole = _whole_window(request.model)
    frames = windows.long_input(whole, request.input, request.seed)
    result = windows.run_windows(whole, schedule, frames, request.model.options.hop)
    check = _verified(request, graph, plan, schedule, result.steps[0], target, result.steps,
                      count_instructions=False)
    counts = call = None
    if request.instructions:
        call = _verified(request, graph, plan, schedule, result.steps[-1], target)
        options = replace(request.model.options, hop=None)
        whole_plan = _solve(options, _planner(options, whole))
        whole_schedule = pipeline.lower(whole, whole_plan)
        first = windows.first_window(whole, frames)
        full = _verified(request, whole, whole_plan, whole_schedule, first, target)
        counts = {"instructions": full.instructions, "instructions_per_step": call.instructions,
                  "predicted_instructions": _predicted_total(target.name, whole, whole_schedule),
                  "predicted_instructions_per_step": _predicted_total(target.name, graph, schedule),
                  "whole_window_peak_ram_bytes": whole_plan.peak_ram_bytes}
    predicted = _predicted_blocks(target.name, graph, schedule)
    if request.call.json:
        _print_json(report.verify_windows_doc(graph, target.name, plan, check, predicted, result, counts, call))
    else:
        print(report.verify_windows_text(graph, target.name, plan, check, predicted, result, counts))
    failure = report.verify_failure(graph, target.name, check, None)
    if failure is None and result.equal < result.count:
        failure = (f"msfcnn: verify: {graph.name}: {result.count - result.equal} of {result.count} windows differ "
                   "from the whole-window model's")
    if failure is None:
        return 0
    print(failure, file=sys.stderr)
    return VERIFY_FAILED


def _predicted_total(target: str, graph, schedule) -> int | None:
    blocks = _predicted_blocks(target, graph, schedule)
    return None if blocks is None else round(sum(blocks))


def _verified(request: VerifyRequest, graph, plan, schedule, x, target, steps=None, count_instructions=None):
    """The C built and run against numpy (on a stateful model's `steps` in order, when given); a
    build that does not fit the board's RAM is a user error that says what to pass for a plan that
    fits."""
    from . import pipeline
    from .codegen.build import DoesNotFit
    try:
        return pipeline.verify(graph, plan, schedule, x, target, request.keep,
                               count_instructions=request.instructions if count_instructions is None else count_instructions,
                               prefix=request.link.prefix, steps=steps)
    except DoesNotFit as err:
        raise UserError(f"{err}; {_fitting_advice(request, graph, plan, err.excess)}") from None


def _fitting_advice(request: VerifyRequest, graph, plan, excess: int) -> str:
    """What to pass for a plan that fits, under the other options given, when the build overflows
    the board's RAM by `excess` bytes."""
    budget = plan.peak_ram_bytes - excess
    if budget <= 0:  # no arena at all would fit beside the rest
        hint = " (try --input-in-flash)" if request.link.board is not None and not request.link.input_in_flash else ""
        return f"no plan fits: the rest (io, stack, C library) alone overflows it{hint}"
    options = request.model.options
    return _planner(options, graph).advice_to_fit(options.strategy, options.max_overhead, budget)


def _linked_report(check, link: Link, bound, graph, plan) -> dict:
    from .fit import io_bytes, linked_report
    return linked_report(check, link.board, bound, 0 if plan.io_counted else io_bytes(graph, link.input_in_flash))


def _predicted_blocks(target: str, graph, schedule, x=None) -> list[float] | None:
    """The latency model's instructions per block of the schedule, where the target has one with
    costs for every kernel the graph runs; otherwise None, and a warning names the missing ones
    (a kernel without costs would count as 0 instructions). On a core without an FPU, for the
    values of input x (the one verified), else of the seeded input."""
    from . import latency
    if target not in latency.calibrated_targets():
        return None
    model = latency.load(target)
    missing = model.uncovered(graph)
    if missing:
        _warn([f"msfcnn: warning: the {target} latency model has no costs for {', '.join(missing)} (not "
               "calibrated): no instructions are predicted"])
        return None
    return model.counter(graph, x).schedule(schedule)


def cmd_fit(request: FitRequest) -> None:
    from . import pipeline, report
    from .fit import fit
    board = request.board
    if request.others:
        return _fit_together(request)
    graph = pipeline.load(request.model, weights=True, hop=request.hop)
    with progress.step(f"fit {graph.name} on {board.name}: planning and bounding the stack"):
        result = fit(graph, board, request.reserve, request.input_in_flash, request.objective, request.input_stream,
                     request.hop, request.input_in)
    if result.uncovered:
        _warn([report.uncovered_warning(board.target, result.uncovered)])
    if request.output:
        from .files import write_atomic
        write_atomic(request.output, report.json_text(_with_digest(result.plan, request.model).to_dict()) + "\n")
    if request.call.json:
        _print_json(result.to_dict(), _report_stream(request))
    else:
        print(report.fit_text(result, request.input_in_flash, _calibrated()), file=_report_stream(request))


def _fit_together(request: FitRequest) -> None:
    """`fit A B ...`: the networks' plans on the board together, sharing one arena."""
    from . import pipeline, report
    from .together import fit_together
    graphs = [pipeline.load(m, weights=True) for m in (request.model, *request.others)]
    with progress.step(f"fit {len(graphs)} networks on {request.board.name}: planning and bounding the stacks"):
        result = fit_together(graphs, request.board, request.reserve, request.input_in_flash, request.objective)
    for fitted in result.fits:
        if fitted.uncovered:
            _warn([report.uncovered_warning(request.board.target, fitted.uncovered)])
    if request.output:  # each network's plan, for compile A B --plan A.json,B.json
        from .files import write_atomic
        for path, fitted, model in zip(split_list(request.output), result.fits, (request.model, *request.others)):
            write_atomic(path, report.json_text(_with_digest(fitted.plan, model).to_dict()) + "\n")
    if request.call.json:
        _print_json(result.to_dict(), _report_stream(request))
    else:
        print(report.fit_together_text(result, request.input_in_flash, _calibrated()), file=_report_stream(request))


def cmd_pareto(request: ParetoRequest) -> None:
    from . import pipeline, report
    options = request.options
    planner = _planner(options)
    # Time ranks the plans only where every kernel has costs; MACs do otherwise (the plans say why).
    axis = request.axis if planner.latency_complete or planner.latency is None else "macs"
    weight = "instructions" if axis == "latency" else "macs"
    with progress.step(f"pareto {planner.graph.name}: front", total=2) as bar:
        front, vanilla, heuristic = planner.pareto(weight=weight), planner.vanilla(), planner.heuristic()
        bar.advance()
        # The same model with the network input and output counted the other way, for comparison
        # (under --input-stream: with the whole input in the arena).
        other = pipeline.planner(planner.graph, options.cost_model, options.schemes,
                                 not options.count_io or options.input_stream, planner.latency).pareto(weight=weight)
        bar.advance()
    with_io, without_io = (front, other) if options.count_io else (other, front)
    if options.input_stream:  # the streamed front is `front`; `other` has the whole input
        with_io, without_io = other, None
    if request.plot:
        _plot_pareto(request, planner, axis, front, vanilla, heuristic)
    name = planner.graph.name
    if request.call.json:
        _print_json(report.pareto_doc(name, front, vanilla, heuristic, with_io, without_io, axis))
    else:
        print(report.pareto_text(name, front, vanilla, heuristic, other, options.count_io, axis, options.input_stream))


def _plot_pareto(request: ParetoRequest, planner, axis: str, front, vanilla, heuristic) -> None:
    from . import report
    weight = "instructions" if axis == "latency" else "macs"
    from .schedule.schemes import PAPER_SCHEME, in_paper_space
    fronts = {f"all schemes ({', '.join(planner.schemes) or 'none: unfused'})": front}
    if planner.cost.NAME == "exact" and PAPER_SCHEME in planner.schemes:
        # The paper's search space under the same cost model: H-cache with one row per step.
        fronts = {f"paper's space ({PAPER_SCHEME}, R = 1)": planner.pareto(in_paper_space, weight), **fronts}
    report.plot_pareto(request.plot, planner.graph.name, fronts, vanilla, heuristic, axis)


# Each command: the function that turns its arguments into a request, and the one that runs it.
COMMANDS = {"models": (models_request, cmd_models), "ops": (ops_request, cmd_ops), "plan": (plan_request, cmd_plan),
            "sweep": (sweep_request, cmd_sweep), "pareto": (pareto_request, cmd_pareto),
            "run": (run_request, cmd_run), "compile": (compile_request, cmd_compile),
            "verify": (verify_request, cmd_verify), "fit": (fit_request, cmd_fit)}


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        build, command = COMMANDS[args.command]
        request = build(args)
        progress.configure(request.call.quiet, request.call.json)
        from .files import guarding_inputs
        with guarding_inputs(request.call.reads):  # no output replaces a file the command reads
            return command(request) or 0
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

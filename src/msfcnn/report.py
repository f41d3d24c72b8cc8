"""Human-readable tables and plots of plans, sweeps and Pareto fronts."""

from __future__ import annotations

import io
import json
import math

from .errors import UserError
from .files import write_atomic
from .ir import NETWORK_INPUT, Graph
from .latency.values import depends_on_values
from .plan import Plan, unfused_doc
from .schedule.schemes import is_fused


def size(n: int) -> str:
    """Bytes, with kB beside them from 1000 B on: '27 B', '9636 B (9.6 kB)'."""
    return f"{n} B" if n < 1000 else f"{n} B ({n / 1000:.1f} kB)"


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def table(headers: list[str], rows: list[list[str]]) -> str:
    """Plain-text table: numeric columns right-aligned, text columns left-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    numeric = [bool(rows) and all(_is_number(r[i]) for r in rows) for i in range(len(headers))]

    def line(cells):
        return "  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric)).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return text in ("-", "none")
    return True


def plan_table(plan: Plan, graph: Graph) -> str:
    if not plan.feasible:
        return f"{plan.model}: infeasible: {plan.note}"
    rows, skips = [], False
    for b in plan.blocks:
        ops = graph.nodes[b.first:b.last + 1]
        names = ", ".join(n.op.describe() for n in ops)
        if len(names) > 48:
            names = names[:45] + "..."
        unfused = sum(graph.macs(i) for i in range(b.first, b.last + 1))
        skips = skips or b.macs < unfused
        span = f"{b.first}" if b.first == b.last else f"{b.first}-{b.last}"
        scheme = f"{b.scheme} R={b.rows}" if is_fused(b) else b.scheme
        rows.append([span, names, scheme, str(b.ram_bytes), str(b.macs),
                     f"{b.macs / unfused:.2f}" if unfused else "-"] + ([str(b.instructions)] if plan.latency_complete else []))
    head = (f"{plan.model}  [{plan.cost_model} cost model]  peak RAM {size(plan.peak_ram_bytes)}"
            f"  MACs {plan.macs}  overhead F = {plan.overhead:.4f}  blocks {len(plan.blocks)}")
    if plan.target:
        head += "\n" + prediction_line(plan)
        if plan.latency_complete and depends_on_values(graph, plan.target):
            head += ("\nsoft float (no FPU): float kernels take paths that depend on their values; predicted for "
                     "the seeded input (msfcnn verify --instructions predicts for its --seed or --input)")
    io = sum(graph.nbytes(t) for t in graph.input_tensors) + graph.nbytes(graph.output)
    inputs = f"{len(graph.input_tensors)} inputs" if graph.extra_inputs else "input"
    head += (f"\nnetwork {inputs} + output = {io} B: "
             + (_streamed_input_words(plan, graph) if plan.input_streamed else
                "in the arena while live, counted in the peak (--count-io)" if plan.io_counted
                else "the caller's buffers, not counted (count them with --count-io)"))
    if graph.extra_outputs:
        head += f"\nthe other {len(graph.extra_outputs)} outputs: in the arena from their block to the end, counted"
    if graph.states:
        head += (f"\nstate buffers: {graph.state_bytes} B kept between invocations at the arena's start, counted in "
                 "every block's RAM")
    if skips:
        head += ("\nF < 1: a fused block computes only the rows and columns its readers need, so it skips "
                 "outputs that are never read (e.g. beyond a strided VALID window), which the unfused op computes")
    columns = ["ops", "layers", "scheme", "RAM B", "MACs", "F"] + (["instr"] if plan.latency_complete else [])
    return head + "\n" + table(columns, rows)


def prediction_line(plan: Plan) -> str:
    """The plan's predicted time on its target, or why none is given (a kernel without costs)."""
    if plan.latency_complete:
        return f"predicted on {plan.target}: {plan.predicted_instructions} instructions (latency model)"
    return (f"predicted on {plan.target}: not given, the latency model has no costs for "
            f"{', '.join(plan.latency_missing)} (not calibrated); plans are ranked by MACs instead of time")


def summary_row(label: str, plan: Plan) -> list[str]:
    if not plan.feasible:
        return [label, "none", "-", "-", "-"]
    fused = sum(1 for b in plan.blocks if is_fused(b))
    return [label, str(plan.peak_ram_bytes), str(plan.macs), f"{plan.overhead:.4f}", f"{len(plan.blocks)} ({fused} fused)"]


def sweep_table(model: str, vanilla: Plan, heuristic: Plan, p1: list[Plan], p2: list[Plan]) -> str:
    rows = [summary_row("vanilla", vanilla), summary_row("heuristic", heuristic)]
    rows += [summary_row(f"P1 F<={_cap(p.constraint['max_overhead'])}", p) for p in p1]
    rows += [summary_row(f"P2 RAM<={p.constraint['max_ram_bytes']}", p) for p in p2]
    return f"{model}  [{vanilla.cost_model} cost model]\n" + table(["problem", "peak RAM B", "MACs", "F", "blocks"], rows)


def pareto_table(model: str, front: list[Plan], vanilla: Plan, heuristic: Plan) -> str:
    timed = vanilla.latency_complete
    rows = [[str(p.peak_ram_bytes), str(p.macs), f"{p.overhead:.4f}", str(len(p.blocks))]
            + ([str(p.predicted_instructions)] if timed else []) for p in front]
    marks = table(["peak RAM B", "MACs", "F", "blocks"] + ([f"instr ({vanilla.target})"] if timed else []), rows)
    missing = "" if timed or not vanilla.target else prediction_line(vanilla) + "\n"
    return (f"{model}: {plural(len(front), 'Pareto-optimal plan')} [{vanilla.cost_model} cost model]\n{missing}{marks}\n"
            f"vanilla:   {vanilla.peak_ram_bytes} B, F = {vanilla.overhead:.4f}\n"
            f"heuristic: {heuristic.peak_ram_bytes} B, F = {heuristic.overhead:.4f}")


def _cap(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:g}"


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UserError("plots need matplotlib: pip install 'msfcnn[plot]', or in a source checkout "
                        "pip install -e '.[plot]' (or pip install matplotlib)") from None
    return plt


def _save(fig, path: str) -> None:
    image = io.BytesIO()
    fig.savefig(image, format="png", dpi=120)
    fig.clear()
    write_atomic(path, image.getvalue())


def plot_pareto(path: str, model: str, fronts: dict[str, list[Plan]], vanilla: Plan, heuristic: Plan,
                axis: str = "macs") -> None:
    """RAM (kB) against overhead F, or (axis="latency") against the predicted instructions on the
    plans' target: each optimal front as a staircase, vanilla and heuristic marked."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.8, 4.4))
    x = (lambda p: p.predicted_instructions / 1e6) if axis == "latency" else (lambda p: p.overhead)
    for label, front in fronts.items():
        by_x = sorted(front, key=x)  # RAM R_i holds for caps in [x_i, x_i+1)
        ax.step([x(p) for p in by_x], [p.peak_ram_bytes / 1000 for p in by_x], where="post",
                marker="o", ms=3, label=label)
    ax.scatter([x(vanilla)], [vanilla.peak_ram_bytes / 1000], marker="s", color="black", zorder=3,
               label="vanilla (no fusion)")
    ax.scatter([x(heuristic)], [heuristic.peak_ram_bytes / 1000], marker="^", color="tab:red", zorder=3,
               label="heuristic (MCUNetV2-style)")
    ax.set_xlabel(f"predicted instructions on {vanilla.target} (millions)" if axis == "latency"
                  else "compute overhead F (MACs / vanilla MACs)")
    ax.set_ylabel("peak RAM (kB)")
    ax.set_yscale("log")
    _plain_log_ticks(ax)
    ax.set_title(f"{model} [{vanilla.cost_model} cost model]")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


def _plain_log_ticks(ax) -> None:
    """Plain numbers on a log y axis (10, 20, 50, not 1.6x10^1): every decade, and between them
    every tick when the axis spans less than a decade, the 2s and 5s when it spans less than two."""
    from matplotlib.ticker import FuncFormatter

    def minor(value: float, _) -> str:
        low, high = ax.get_ylim()
        decades = math.log10(high / low) if low > 0 else math.inf
        mantissa = round(value / 10 ** math.floor(math.log10(value)), 6) if value > 0 else 0
        return f"{value:g}" if decades < 1 or (decades < 2 and mantissa in (2, 5)) else ""

    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(minor))


def plot_timeline(path: str, plan: Plan, schedule) -> None:
    """Arena use block by block: the whole tensors live while each block runs, its scratch
    buffers, and the arena size (the plan's peak)."""
    plt = _pyplot()
    graph = schedule.graph
    scratch = [block.scratch_bytes for block in schedule.blocks]
    # The network input and output, where the arena holds them (--count-io), while they are live;
    # a block writing its output over the input it consumes shares bytes, so the rest is the rest.
    io = [min(sum(graph.nbytes(t) for t in (*graph.input_tensors, graph.output) if t in offsets), ram - extra)
          for offsets, ram, extra in zip(schedule.tensor_offsets, schedule.block_ram, scratch)]
    tensors = [ram - extra - net for ram, extra, net in zip(schedule.block_ram, scratch, io)]
    labels = [f"{b.first}" if b.first == b.last else f"{b.first}-{b.last}" for b in schedule.blocks]
    fig, ax = plt.subplots(figsize=(max(6.4, 0.22 * len(labels)), 4.2))
    xs = range(len(labels))
    ax.bar(xs, [t / 1000 for t in tensors], label="tensors (block inputs, outputs, waiting skips)")
    ax.bar(xs, [s / 1000 for s in scratch], bottom=[t / 1000 for t in tensors],
           label="scratch (rings, caches, patches, accumulators)")
    if any(io):
        ax.bar(xs, [n / 1000 for n in io], bottom=[(t + s) / 1000 for t, s in zip(tensors, scratch)],
               label="network input and output (--count-io)")
    ax.axhline(schedule.arena_bytes / 1000, color="black", lw=1, ls="--", label=f"arena {schedule.arena_bytes} B")
    ax.set_ylim(0, schedule.arena_bytes / 1000 * 1.45)  # room for the legend above the bars
    ax.set_xticks(list(xs), labels, rotation=90, fontsize=7)
    ax.set_xlabel("block (ops)")
    ax.set_ylabel("arena bytes live (kB)")
    ax.set_title(f"{graph.name}: F = {plan.overhead:.3f} [{plan.cost_model}]")
    ax.legend(fontsize=8)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


# -- what each command prints: its JSON document and its text -------------------------------------

def json_text(doc) -> str:
    """A command's JSON output (docs/json.md)."""
    return json.dumps(doc, indent=1)


def models_doc(names: dict[str, str]) -> list[dict]:
    return [{"name": name, "description": description} for name, description in names.items()]


def models_text(names: dict[str, str]) -> str:
    return "\n".join(f"{name:16s} {description}" for name, description in names.items())


def latency_warnings(model, uncovered) -> list[str]:
    """Warnings on a latency model: calibrated on sources that changed since, or without costs for
    some of the model's kernels (`uncovered`)."""
    lines = []
    if model.stale:
        lines.append(f"msfcnn: warning: {', '.join(model.stale_sources)} changed since the {model.target} latency "
                     f"model was calibrated; predictions may drift (re-run scripts/calibrate_latency.py --target "
                     f"{model.target})")
    if uncovered:
        lines.append(uncovered_warning(model.target, uncovered))
    return lines


def uncovered_warning(target: str, uncovered) -> str:
    return (f"msfcnn: warning: the {target} latency model has no costs for {', '.join(uncovered)} (not calibrated): "
            f"no time is predicted and plans are ranked by MACs instead")


def plan_doc(plan: Plan, board=None, vanilla: Plan | None = None) -> dict:
    """`plan --json`: the plan, its cost against the unfused network (`unfused_doc`), and with
    --board its time at the board's clock."""
    fields = plan.to_dict()
    if plan.feasible:
        fields.update(unfused_doc(plan, vanilla))
    if board is not None and plan.latency_complete and board.clock_hz:
        fields.update({"board": board.name, "clock_hz": board.clock_hz,
                       "predicted_ms_lower_bound": _lower_bound_ms(plan, board)})
    return fields


def _lower_bound_ms(plan: Plan, board) -> float:
    # instructions at one a cycle: a lower bound on the board (flash wait states, caches,
    # multi-cycle instructions only add)
    return round(plan.predicted_instructions / board.clock_hz * 1000, 3)


# A plan costing this many times the unfused network's MACs or more gets a hint at --max-overhead.
LARGE_OVERHEAD = 1.3


MAX_OVERHEAD_HINT = "--max-overhead F caps the MACs at F times the unfused ones (e.g. 1.2), for more RAM"


def unfused_line(plan: Plan, vanilla: Plan | None, hint: str = MAX_OVERHEAD_HINT) -> str:
    """What the plan costs against the unfused network, and, when that is much more compute and no
    compute cap was given, the option that trades RAM back for compute."""
    doc = unfused_doc(plan, vanilla)
    line = f"against the unfused network: {plan.overhead:.2f}x the MACs ({plan.macs} vs {plan.vanilla_macs})"
    if "instructions_vs_unfused" in doc:
        line += (f", {doc['instructions_vs_unfused']:.2f}x the predicted instructions "
                 f"({plan.predicted_instructions} vs {doc['unfused_predicted_instructions']})")
    capped = math.isfinite(plan.constraint.get("max_overhead", math.inf)) or "max_instructions" in plan.constraint
    if plan.overhead >= LARGE_OVERHEAD and not capped:
        line += f"; {hint}"
    return line


def plan_text(plan: Plan, graph: Graph, board=None, vanilla: Plan | None = None) -> str:
    text = plan_table(plan, graph)
    if plan.feasible:
        text += "\n" + unfused_line(plan, vanilla)
    if board is not None and plan.latency_complete and board.clock_hz:
        text += (f"\non {board.name} at {board.clock_hz / 1e6:g} MHz: at least {_lower_bound_ms(plan, board):g} ms "
                 f"(one instruction a cycle; {board.target} stands for its core)")
    return text


def sweep_doc(model: str, vanilla: Plan, heuristic: Plan, p1: list[Plan], p2: list[Plan]) -> dict:
    return {"model": model, "vanilla": vanilla.to_dict(), "heuristic": heuristic.to_dict(),
            "p1": [p.to_dict() for p in p1], "p2": [p.to_dict() for p in p2]}


def pareto_doc(model: str, front: list[Plan], vanilla: Plan, heuristic: Plan, with_io: list[Plan],
               without_io: list[Plan] | None, axis: str = "macs") -> dict:
    """`pareto --json`; `axis` is the compute axis the fronts are ranked on (macs where a latency
    axis was asked but the target's model misses a kernel's costs: the plans say which). Under
    --input-stream `front` streams the input, `with_io` has it whole, and `without_io` is None."""
    doc = {"model": model, "cost_model": vanilla.cost_model, "axis": axis, "front": [p.to_dict() for p in front],
           "vanilla": vanilla.to_dict(), "heuristic": heuristic.to_dict(),
           "front_with_io": [p.to_dict() for p in with_io]}
    if without_io is not None:
        doc["front_without_io"] = [p.to_dict() for p in without_io]
    return doc


def pareto_text(model: str, front: list[Plan], vanilla: Plan, heuristic: Plan, other: list[Plan],
                count_io: bool, axis: str, input_stream: bool = False) -> str:
    """The front's table, then the other front (the input and output counted the other way; under
    --input-stream, with the whole input in the arena)."""
    label = ("with the whole input in the arena (--count-io, the input not streamed)" if input_stream
             else f"without the input and output (--count-io off)" if count_io
             else "with the input and output in the arena (--count-io on)")
    others = ", ".join(f"{p.peak_ram_bytes} B @ " + (f"{p.predicted_instructions} instructions" if axis == "latency"
                                                      else f"F {p.overhead:.4f}") for p in other)
    return pareto_table(model, front, vanilla, heuristic) + f"\n{label}: {others}"


def _streamed_input_words(plan: Plan, graph: Graph) -> str:
    """Where the input is under --input-stream: the rows the first block keeps, or the arena."""
    from .schedule import Liveness, lower_block
    block = plan.blocks[0]
    first = block.lowered or lower_block(graph, Liveness(graph, input_stream=True), block.first, block.last,
                                         block.scheme, block.rows)
    if first is None or not getattr(first.loops, "source", False):
        return "the input read row by row into the arena, counted whole as --count-io counts it; the output counted"
    h, w, c = graph.shape_of(NETWORK_INPUT)
    kept = first.rings[NETWORK_INPUT]
    ring = kept * w * c * graph.element_of(NETWORK_INPUT).nbytes
    return (f"the input pulled row by row (--input-stream): {kept} of its {h} rows kept, {ring} B instead of "
            f"{graph.nbytes(NETWORK_INPUT)} B; the output in the arena while live, counted")


def run_doc(graph: Graph, plan: Plan, x, fused, diff: float) -> dict:
    """`run --json`: the outputs' shapes, the difference with the unfused executor, the RAM."""
    ys = fused.outputs
    y, caller = ys[0], ys[graph.output_tensors.index(graph.output)]  # caller: the output not in the arena
    doc = {"model": graph.name, "numerics": graph.numerics, "plan": plan.to_dict(), "output_shape": list(y.shape),
           "output_dtype": str(y.dtype), "max_abs_diff_vs_vanilla": diff,
           "measured_peak_ram_bytes": fused.measured_peak_ram_bytes,
           "predicted_peak_ram_bytes": fused.predicted_peak_ram_bytes,
           "io_bytes": {"input": _input_bytes(x), "output": int(caller.nbytes)}}
    if len(ys) > 1:
        doc["outputs"] = [{"shape": list(y.shape), "dtype": str(y.dtype)} for y in ys]
    return doc


def _input_bytes(x) -> int:
    return int(sum(a.nbytes for a in (x if isinstance(x, list) else [x])))


def run_text(graph: Graph, plan: Plan, x, fused, diff: float) -> str:
    ys = fused.outputs
    caller = ys[graph.output_tensors.index(graph.output)]
    several = len(ys) > 1
    lines = []
    for k, y in enumerate(ys):
        flat = y.reshape(-1)
        top = f", argmax {int(flat.argmax())}" if flat.size > 1 else ""
        lines.append(f"output{f' {k}' if several else ''} {list(y.shape)} {y.dtype}{top}")
    extra = f" and output {caller.nbytes} B" + ("; the other outputs are in the arena" if several else "")
    beside = (f"(the output in it, and the rows kept of the input the caller gives row by row: "
              f"{len(fused.input_rows)} rows pulled)" if fused.input_rows else
              "(the input and output in it)" if plan.input_streamed else
              f"(plus the caller's input{'s' if isinstance(x, list) else ''} {_input_bytes(x)} B{extra})")
    return (plan_table(plan, graph) + "\n" + "\n".join(lines)
            + f"; max |fused - unfused| = {diff:g}{' over all outputs' if several else ''}\n"
            + f"arena: measured {fused.measured_peak_ram_bytes} B, predicted {fused.predicted_peak_ram_bytes} B {beside}")


def windows_doc(graph: Graph, plan: Plan, result) -> dict:
    """`run --streaming --json`: the windows, how many equal the whole-window model's, the RAM."""
    return {"model": graph.name, "numerics": graph.numerics, "plan": plan.to_dict(), "hop": result.hop,
            "calls": len(result.steps), "windows": result.count, "output_shape": list(result.outputs.shape),
            "windows_equal_whole_window": result.equal, "state_bytes": graph.state_bytes,
            "predicted_peak_ram_bytes": plan.peak_ram_bytes}


def windows_text(graph: Graph, plan: Plan, result) -> str:
    return (plan_table(plan, graph) + f"\n{len(result.steps)} calls of {result.hop} frame{'s' if result.hop > 1 else ''}, "
            f"{result.count} windows (the first after {result.warm + 1} calls); output {list(result.outputs.shape)} "
            f"(windows first); {result.equal} of {result.count} equal to the whole-window model's\n"
            f"arena: {plan.peak_ram_bytes} B predicted, of it {graph.state_bytes} B of state (rings, running sums) kept between calls")


def compile_text(graph: Graph, plan: Plan, schedule, files, folder: str, target: str, board=None) -> str:
    linked = f" linked as {board.name}" if board else ""
    return (f"{graph.name}: {len(plan.blocks)} blocks, arena {schedule.arena_bytes} B, F = {plan.overhead:.4f}; "
            f"wrote {len(files)} files to {folder} (build for {target}{linked}: make -C {folder})")


def compile_shared_text(networks, files, folder: str) -> str:
    """`compile A B ...`: each network's plan and arena, and the one arena they share."""
    from .codegen.shared import shared_arena_bytes, shared_regions
    lines = [f"{n.prefix}/: {n.graph.name}: {len(n.plan.blocks)} blocks, arena {n.arena_bytes} B"
             f"{f' + own state {n.graph.state_bytes} B' if n.graph.state_bytes else ''}, F = {n.plan.overhead:.4f}"
             f"{_per_region(n.schedule.regions)}" for n in networks]
    states = sum(n.graph.state_bytes for n in networks)
    regions = shared_regions(networks)
    each = ", ".join(f"{r['name']} {r['bytes']} B" for r in regions)
    largest = f"per region the largest: {each}" if regions else "the largest"
    lines.append(f"shared arena {shared_arena_bytes(networks)} B ({largest}; the networks run one at a time)"
                 f"{f' + {states} B of state' if states else ''}; wrote {len(files)} files to {folder} "
                 f"(a library for CMake: add_subdirectory({folder}), target msfcnn_networks)")
    return "\n".join(lines)


def _per_region(spans) -> str:
    """A schedule's arenas over several regions, for a line about it ('' for one arena)."""
    return f" ({', '.join(f'{name} {size} B' for name, _, size in spans)})" if spans else ""


def verdict(check) -> str:
    """PASS or FAIL with the criterion: bit-exact for int8, the tolerance for float32."""
    diff = f"max |C - numpy| = {check.max_abs_diff:g}"
    if not check.is_float:
        return f"PASS (bit-exact, {diff})" if check.passed else f"FAIL (not bit-exact: {diff})"
    if check.passed:
        return f"PASS ({diff} <= tolerance {check.tolerance:.3g})"
    return f"FAIL ({diff} > tolerance {check.tolerance:.3g})"


def verify_verdict(graph: Graph, check) -> str:
    """The verdict; over all the outputs, one after the other, for a model with several."""
    outputs = len(graph.output_tensors)
    return verdict(check) + (f" (all {outputs} outputs)" if outputs > 1 else "")


def verify_doc(graph: Graph, target: str, plan: Plan, check, predicted: list[float] | None,
               linked: dict | None) -> dict:
    """`verify --json`: the verdict's terms, the counted and predicted instructions, and (linked
    as a board) fit's terms (fit.linked_report)."""
    from .plan import block_name
    doc = {"model": graph.name, "target": target, "numerics": graph.numerics, "plan": plan.to_dict(),
           "pass": check.passed, "tolerance": check.tolerance, "bit_exact": check.bit_exact,
           "arena_bytes": check.arena_bytes, "predicted_peak_ram_bytes": check.predicted_peak_ram_bytes,
           "max_abs_diff": check.max_abs_diff, "stack_bytes": check.stack_bytes, "instructions": check.instructions,
           "predicted_instructions": None if predicted is None else round(sum(predicted)),
           "block_instructions": None if check.block_instructions is None else [
               {**block_name(b), "instructions": n,
                **({} if predicted is None else {"predicted_instructions": round(p)})}
               for b, n, p in zip(plan.blocks, check.block_instructions, predicted or [None] * len(plan.blocks))]}
    if check.vector_instructions is not None:  # a real M55 spends two beats on most of them
        doc["mve_instructions"] = check.vector_instructions
    if check.region_arenas:
        doc["region_arenas"] = list(check.region_arenas)
    doc.update(linked or {})
    if len(graph.output_tensors) > 1:
        doc["outputs"] = len(graph.output_tensors)
    return doc


def verify_text(graph: Graph, target: str, plan: Plan, check, predicted: list[float] | None, linked: dict | None,
                entry: str) -> str:
    """The verdict line, the instructions block by block when counted, and the board's RAM when
    linked as one; `entry` is the generated function whose instructions are counted."""
    stack = "" if check.stack_bytes is None else f"; stack {check.stack_bytes} B measured"
    count = "" if check.instructions is None else f"; {check.instructions} instructions in {entry}"
    if check.vector_instructions is not None:
        count += f" ({check.vector_instructions} of them MVE)"
    if predicted is not None and check.instructions:
        count += f" ({round(sum(predicted))} predicted, {sum(predicted) / check.instructions - 1:+.1%})"
    elif predicted is not None:  # not counted (no --instructions): the latency model's figure alone
        count += f"; {round(sum(predicted))} instructions predicted"
    lines = [f"{graph.name} on {target}: {verify_verdict(graph, check)}; arena {check.arena_bytes} B in the object "
             f"file, {check.predicted_peak_ram_bytes} B predicted{stack}{count}"]
    for k, (block, n) in enumerate(zip(plan.blocks, check.block_instructions or ())):
        guess = "" if predicted is None else f", {round(predicted[k])} predicted"
        lines.append(f"  block {k:3d}  ops {block.first:3d}-{block.last:<3d} {block.scheme:10s} R={block.rows:<3d} "
                     f"{n:12d} instructions ({n / check.instructions:6.1%}{guess})")
    if linked:
        lines.append(f"linked as {linked['board']} ({linked['board_ram_bytes']} B of RAM, "
                     f"{linked['stack_bound_bytes']} B of it for the stack): static data {check.static_ram_bytes} B "
                     f"(C library {linked['c_library_bytes']} B); stack {check.stack_bytes} B measured, "
                     f"{'within' if linked['within_stack_bound'] else 'OVER'} its bound; start-up and main frames "
                     f"{check.frames_bytes} B")
    return "\n".join(lines)


def verify_windows_doc(graph: Graph, target: str, plan: Plan, check, predicted, result, counts, call=None) -> dict:
    """`verify --streaming --json`: verify's terms for the C of one call run over every call, the
    windows, and with counts (`call`: the counted run of one call) the instructions of one call,
    block by block, beside the whole window's."""
    doc = verify_doc(graph, target, plan, check, predicted, None)
    doc.update({"hop": result.hop, "calls": len(result.steps), "windows": result.count,
                "windows_equal_whole_window": result.equal, "state_bytes": graph.state_bytes,
                "instructions": None, "instructions_per_step": None, "predicted_instructions_per_step":
                    doc.pop("predicted_instructions"), "block_instructions": None})
    if call is not None:
        doc["block_instructions"] = verify_doc(graph, target, plan, call, predicted, None)["block_instructions"]
    doc.update(counts or {})
    return doc


def verify_windows_text(graph: Graph, target: str, plan: Plan, check, predicted, result, counts) -> str:
    lines = [f"{graph.name} on {target}, streamed: {verify_verdict(graph, check)} over {len(result.steps)} calls of "
             f"{result.hop} frame{'s' if result.hop > 1 else ''}; arena {check.arena_bytes} B in the object file, "
             f"{check.predicted_peak_ram_bytes} B predicted (of it {graph.state_bytes} B of state (rings, running sums) kept between calls)",
             f"{result.equal} of {result.count} windows equal to the whole-window model's"]
    if counts:
        per, whole = counts["instructions_per_step"], counts["instructions"]
        guess = "" if counts["predicted_instructions_per_step"] is None else \
            f" ({counts['predicted_instructions_per_step']} predicted, {counts['predicted_instructions'] or 0} for the window)"
        lines.append(f"instructions: {per} per call, {whole} for the whole window (1/{whole / per:.1f}){guess}")
    return "\n".join(lines)


def verify_failure(graph: Graph, target: str, check, linked: dict | None) -> str | None:
    """The line on stderr when verify fails (None when it passes): the C differs from numpy, or
    linked as a board its measured stack is over the bound reserved for it."""
    within = (linked or {}).get("within_stack_bound", True)
    if check.passed and within:
        return None
    reason = (verify_verdict(graph, check) if not check.passed else
              f"FAIL (stack {check.stack_bytes} B measured > its bound {linked['stack_bound_bytes']} B)")
    return f"msfcnn: verify: {graph.name} on {target}: {reason}"


def fit_together_text(together, input_in_flash: bool, calibrated: str) -> str:
    """`fit A B ...`: each network's plan and figures, then their RAM together on the board: one
    shared arena (the largest), every network's state, io and static data, the deepest stack."""
    board = together.board
    lines = []
    for fitted in together.fits:
        plan = fitted.plan
        state = f" + own state {fitted.graph.state_bytes} B" if fitted.graph.state_bytes else ""
        io = "io in the arena" if fitted.io_in_arena else f"io {fitted.io_bytes} B"
        if plan.predicted_instructions is not None:
            ms = "" if fitted.predicted_ms is None else f", >= {fitted.predicted_ms:.1f} ms"
            speed = f"{plan.predicted_instructions} instructions predicted on {board.target}{ms}"
        else:
            speed = f"{plan.macs} MACs (no time predicted; calibrated targets: {calibrated})"
        lines += [plan_table(plan, fitted.graph),
                  f"{fitted.graph.name}: arena {fitted.arena_bytes - fitted.graph.state_bytes} B{state}, {io}, "
                  f"stack bound {fitted.code.stack_bytes} B; {speed}", ""]
    fits = "fit" if together.headroom_bytes >= 0 else "do not fit"
    lines.append(f"{' and '.join(f.graph.name for f in together.fits)} {fits} {board.name} together ({board.chip}, "
                 f"{_board_ram(board)}), run one after the other, never at the same time:")
    shared = "shared arenas (per region the largest)" if together.region_shared_bytes else "shared arena (the largest)"
    for label, value in ((shared, together.shared_arena_bytes),
                         ("state (each network's own)", together.state_bytes),
                         (f"io (every network's{', inputs in flash' if input_in_flash else ''})", together.io_bytes),
                         ("stack (the deepest bound)", together.stack_bytes),
                         ("static data (kernels once)", together.static_bytes), ("reserve", together.reserve_bytes)):
        lines.append(f"  {label:34s} {value:9d} B")
    lines.append(f"  {'headroom':34s} {together.headroom_bytes:9d} B")
    lines += _region_lines(together.regions)
    if board.note:
        lines.append(f"note: {board.note}")
    return "\n".join(lines)


def _fit_io_line(fitted, input_in_flash: bool) -> str:
    """How the plan counts the network's input and output, which `fit` tries both ways: outside
    the arena (the caller's buffers) and inside it (`--count-io`, later blocks reuse their bytes)."""
    tried = "outside the arena only (--input-in-flash)" if input_in_flash else "outside the arena and in it"
    if fitted.streamed_vs_whole:
        streamed, whole = fitted.streamed_vs_whole
        tried += (f", and streamed (--input-stream); least RAM (arena + io) {streamed} B with the input streamed, "
                  f"{whole} B with it whole")
    if fitted.plan.input_streamed:
        return (f"io: the output in the arena, the input pulled row by row (plan --input-stream); fit tried {tried} "
                f"(compile and verify this plan with --plan, or with --input-stream)")
    if fitted.io_in_arena:
        return (f"io: in the arena, as plan --count-io; fit tried {tried} (compile and verify this plan "
                f"with --plan, or with --count-io)")
    return f"io: the caller's buffers, outside the arena (no --count-io); fit tried {tried}"


def _board_ram(board) -> str:
    regions = board.ram_regions
    if len(regions) == 1:
        return f"{board.ram_bytes} B RAM"
    return f"{sum(r.size for r in regions)} B RAM in {len(regions)} regions"


def _region_lines(regions) -> list[str]:
    """A board of several regions: the arena placed in each (schedule/placement.py)."""
    if not regions:
        return []
    lines = ["arena per region (every buffer in one region; the most accessed per byte in the cheapest):"]
    for r in regions:
        holds = f"; holds the {', '.join(r.holds)}" if r.holds else ""
        lines.append(f"  {r.name:12s} {r.arena_bytes:9d} B of {r.size:9d} B ({r.kind}, cost {r.cost:g}{holds})")
    return lines


def fit_text(fitted, input_in_flash: bool, calibrated: str) -> str:
    """`fit`: the plan, the board's RAM term by term, where the input and output live, and the
    time at its clock (`calibrated` lists the targets with a latency model, for a board whose
    target has none)."""
    plan, board = fitted.plan, fitted.board
    near = "" if board.exact_core else " (nearest emulated target only)"
    io = ("output, input streamed" if plan.input_streamed else "in the arena" if fitted.io_in_arena else
          "output only, input in flash" if input_in_flash else "input and output")
    lines = [plan_table(plan, fitted.graph),
             f"{fitted.graph.name} fits {board.name} ({board.chip}, {_board_ram(board)}) on target "
             f"{board.target}{near}:"]
    for label, value in (("arena", fitted.arena_bytes), (f"io ({io})", fitted.io_bytes),
                         ("stack (bound)", fitted.code.stack_bytes), ("static data", fitted.code.static_bytes),
                         ("reserve", fitted.reserve_bytes)):
        lines.append(f"  {label:34s} {value:9d} B")
    lines.append(f"  {'headroom':34s} {fitted.headroom_bytes:9d} B")
    lines += _region_lines(fitted.regions)
    lines.append(_fit_io_line(fitted, input_in_flash))
    if fitted.hop:
        lines.append(f"one call of the sliding window (--streaming): {fitted.hop} new frame{'s' * (fitted.hop > 1)} a "
                     f"call; the arena holds the {fitted.graph.state_bytes} B of state kept between calls; times are "
                     "per call")
    lines.append(unfused_line(plan, fitted.vanilla, "without --objective min-ram, fit picks the fastest fitting plan"))
    chosen = "least-RAM fitting plan" if fitted.objective == "min-ram" else "fastest fitting plan"
    clock = "" if board.clock_hz is None else f" at {board.clock_hz / 1e6:g} MHz"
    if plan.predicted_instructions is not None:
        ms = ("" if fitted.predicted_ms is None else
              f", >= {fitted.predicted_ms:.1f} ms{clock} (a lower bound: one instruction per cycle)")
        lines.append(f"{chosen}: {plan.predicted_instructions} instructions predicted on {board.target}{ms}")
        if fitted.placed_instructions is not None:
            lines.append(f"  as placed over the regions (each region's moves between blocks): "
                         f"{fitted.placed_instructions} instructions predicted")
    elif plan.target:
        by = " by MACs" if fitted.objective == "min-latency" else ""
        lines.append(f"{chosen}{by} ({plan.macs} MACs, F = {plan.overhead:.4f}): no time predicted, the "
                     f"{board.target} latency model has no costs for {', '.join(plan.latency_missing)} (not calibrated)")
    else:
        by = " by MACs" if fitted.objective == "min-latency" else ""
        lines.append(f"{chosen}{by} ({plan.macs} MACs, F = {plan.overhead:.4f}): {board.target} has no "
                     f"latency model (calibrated: {calibrated})")
    if board.note:
        lines.append(f"note: {board.note}")
    return "\n".join(lines)

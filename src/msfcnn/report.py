"""Human-readable tables and plots of plans, sweeps and Pareto fronts."""

from __future__ import annotations

import io
import math

from .errors import UserError
from .files import write_atomic
from .ir import Graph
from .plan import Plan
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
                     f"{b.macs / unfused:.2f}" if unfused else "-"] + ([str(b.instructions)] if plan.target else []))
    head = (f"{plan.model}  [{plan.cost_model} cost model]  peak RAM {size(plan.peak_ram_bytes)}"
            f"  MACs {plan.macs}  overhead F = {plan.overhead:.4f}  blocks {len(plan.blocks)}")
    if plan.target:
        head += f"\npredicted on {plan.target}: {plan.predicted_instructions} instructions (latency model)"
    io = sum(graph.nbytes(t) for t in graph.input_tensors) + graph.nbytes(graph.output)
    inputs = f"{len(graph.input_tensors)} inputs" if graph.extra_inputs else "input"
    head += (f"\nnetwork {inputs} + output = {io} B: "
             + ("in the arena while live, counted in the peak (--count-io)" if plan.io_counted
                else "the caller's buffers, not counted (count them with --count-io)"))
    if graph.extra_outputs:
        head += f"\nthe other {len(graph.extra_outputs)} outputs: in the arena from their block to the end, counted"
    if skips:
        head += ("\nF < 1: a fused block computes only the rows and columns its readers need, so it skips "
                 "outputs that are never read (e.g. beyond a strided VALID window), which the unfused op computes")
    columns = ["ops", "layers", "scheme", "RAM B", "MACs", "F"] + (["instr"] if plan.target else [])
    return head + "\n" + table(columns, rows)


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
    timed = bool(vanilla.target)
    rows = [[str(p.peak_ram_bytes), str(p.macs), f"{p.overhead:.4f}", str(len(p.blocks))]
            + ([str(p.predicted_instructions)] if timed else []) for p in front]
    marks = table(["peak RAM B", "MACs", "F", "blocks"] + ([f"instr ({vanilla.target})"] if timed else []), rows)
    return (f"{model}: {plural(len(front), 'Pareto-optimal plan')} [{vanilla.cost_model} cost model]\n{marks}\n"
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
        raise UserError("plots need matplotlib: pip install 'msfcnn[plot]'") from None
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

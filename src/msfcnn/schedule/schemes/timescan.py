"""`timescan`: a block of sequence layers run one time step at a time (the msf-CNN paper's
extension to recurrent layers), so that no sequence between them is ever stored whole.

The block is a chain: recurrent cells (`Op.recurrent`: an LSTM, a forward GRU or RNN), windows
along time on one-row maps (a Conv1D, dilated or not, stride 1), element-wise ops on them (of two
sequences too: a residual ADD) and views between a one-row map and a (T, F) sequence. A cell that keeps only its last step may end the sequence part; vector
ops (a dense head, a reshape) then run once on its output. At least one cell: a block without
one is a stream, which the other schemes run.

Between the ops live only what the next step needs: each cell's state (and one step's gates,
shared by the cells), each window's ring of the input steps it still reads, and a cell's output
step in its state when its reader needs that step only. Every op computes each of its positions
once, so the MACs are the unfused ops' (F = 1). A window that reads ahead (a centred Conv1D) puts
its reader `lookahead` steps behind: op t computes position s - lag at global step s.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import Graph
from ...ops import CCall, Pattern
from ..lowered import LoweredBlock, Scratch, TimeScan, block_reads, step_elements, time_axis
from ..streaming import tail_consumer
from .base import Scheme
from .tails import tail_of, tail_scratch

CELL, VIEW, WINDOW, VECTOR = "cell", "view", "window", "vector"
ACCUMULATE, FLATTEN = "accumulate", "flatten"  # a tail: an op summing the steps (after a flattening view)
# The vector ops a head may run after a cell's last step (a dense layer, a softmax, a reshape).
_HEAD_CALLS = (CCall.VECTOR, CCall.MAP_TO_VECTOR, CCall.NONE)


@dataclass(frozen=True)
class _Step:
    """One op of a scan: its role, the window along time it reads (stride 1), and its input."""

    t: int
    role: str
    source: int
    extent: int = 1  # input steps one output step reads (a window's extent, dilation included)
    lookahead: int = 0  # input steps past its own position it reads
    other: int | None = None  # an element-wise binary op's other input (a residual ADD), an op of the scan


def _role(graph: Graph, t: int, first: int, in_sequence: bool) -> _Step | None:
    """What op t does in a scan starting at `first` (None: it cannot be in one)."""
    node = graph.nodes[t]
    op = node.op
    if len(node.inputs) == 2 and in_sequence:
        return _binary_role(graph, t, first)
    if len(node.inputs) != 1 or (t > first and node.inputs[0] != t - 1):
        return None
    source = node.inputs[0]
    if not in_sequence:
        return _Step(t, VECTOR, source) if op.pattern is Pattern.VECTOR and op.c_call in _HEAD_CALLS else None
    in_shape, out_shape = graph.shape_of(source), graph.shape_of(t)
    axis = time_axis(in_shape)
    if axis is None or graph.element_of(t) != graph.element_of(source):
        return None
    steps = in_shape[axis]
    out_axis = time_axis(out_shape)
    if op.recurrent:
        if graph.states_of(t):
            return None  # its state lives across invocations (Graph.states): the scan starts every cell anew
        if getattr(op, "reverse", False):
            return None  # its steps run from the last to the first
        if out_axis is not None and out_shape[out_axis] != steps:
            return None
        return _Step(t, CELL, source)
    if out_axis is None:
        return None
    if op.is_view:
        if t == first:
            return None  # its steps would be the bytes of a tensor made before the block
        same_steps = out_shape[out_axis] == steps and step_elements(in_shape) == step_elements(out_shape)
        return _Step(t, VIEW, source) if same_steps else None
    if op.pattern not in (Pattern.WINDOW, Pattern.ELEMENTWISE) or op.c_call is not CCall.REGION:
        return None
    if axis != 1 or out_axis != 1:
        return None
    rows, cols = op.axis_window(0), op.axis_window(1)
    if (rows.kernel, rows.stride, rows.pad) != (1, 1, 0) or cols.stride != 1:
        return None
    return _Step(t, WINDOW, source, cols.kernel, max(0, cols.kernel - 1 - cols.pad))


def _binary_role(graph: Graph, t: int, first: int) -> _Step | None:
    """Op t as an element-wise op of two sequences of the scan (a residual ADD): one of them op
    t - 1's, the other an earlier op's of the scan, each step of the output from the same step of
    both, all three of one shape."""
    node = graph.nodes[t]
    op = node.op
    if op.pattern is not Pattern.ELEMENTWISE or op.c_call is not CCall.REGION or t - 1 not in node.inputs:
        return None
    other = node.inputs[1] if node.inputs[0] == t - 1 else node.inputs[0]
    shape = graph.shape_of(t)
    if not first <= other < t - 1 or time_axis(shape) is None or graph.element_of(t) != graph.element_of(t - 1) \
            or any(graph.shape_of(u) != shape for u in node.inputs):
        return None
    return _Step(t, WINDOW, t - 1, other=other)


def _tail_role(graph: Graph, t: int, last: int) -> _Step | None:
    """Op t as the start of a tail after the sequence part: the op that accumulates its steps, or
    a view flattening them for it (`streaming.tail_consumer`)."""
    source = graph.nodes[t].inputs[0]
    if len(graph.nodes[t].inputs) != 1 or source != t - 1 or time_axis(graph.shape_of(source)) is None:
        return None
    consumer = tail_consumer(graph, source)
    if consumer == t:
        return _Step(t, ACCUMULATE, source)
    return _Step(t, FLATTEN, source) if consumer == t + 1 and consumer <= last else None


def _walk(graph: Graph, first: int, last: int) -> list[_Step]:
    """The roles of ops first.. up to `last`, stopping before the first op that cannot follow:
    sequence ops, then either vector ops after a cell's last step or a tail and its vectors."""
    steps, state = [], "sequence"  # then "consumer" (after a flattening view), "vectors"
    for t in range(first, last + 1):
        if state == "consumer":
            steps.append(_Step(t, ACCUMULATE, t - 1))
            state = "vectors"
            continue
        step = _role(graph, t, first, state == "sequence")
        if step is None and state == "sequence" and t > first:
            step = _tail_role(graph, t, last)
        if step is None:
            break
        steps.append(step)
        if step.role == ACCUMULATE or step.role == CELL and time_axis(graph.shape_of(t)) is None:
            state = "vectors"  # a vector head may follow
        elif step.role == FLATTEN:
            state = "consumer"
    return steps


class TimeScanScheme(Scheme, name="timescan", template="timescan", order=60):
    """sequence layers (recurrent cells, windows along time, a vector head) one time step at a time"""

    def reach(self, graph: Graph, first: int, cache: dict) -> int:
        """One past the last op a scan from `first` may take (the DAG tries blocks up to it)."""
        key = ("timescan reach", first)
        if key not in cache:
            steps = _walk(graph, first, len(graph) - 1)
            cache[key] = first + len(steps) if any(s.role == CELL for s in steps) else first
        return cache[key]

    def lower(self, graph, live, first, last, rows, cache):
        if first == last:
            return None
        steps = _walk(graph, first, last)
        if len(steps) != last - first + 1 or not any(s.role == CELL for s in steps):
            return None
        if any(not t < live.last_use.get(t, -1) <= last or t in graph.extra_outputs for t in range(first, last)):
            return None  # an inner sequence read outside the block
        sequence = [s for s in steps if s.role in (CELL, VIEW, WINDOW)]
        end = sequence[-1].t
        tail = tail_of(graph, end, last) if any(s.role == ACCUMULATE for s in steps) else None
        if sequence[-1].role == VIEW and end == last or steps[-1].role == FLATTEN:
            return None  # the block's output would be a view of an inner ring, or a tail lacks its consumer
        storage, lags, positions, need = {}, [], [], {}
        for s in sequence:
            inner = s.source >= first
            lag = lags[s.source - first] if inner else 0
            if s.other is not None:  # both inputs' step p at once: the same lag, each held one step
                if lags[s.other - first] != lag:
                    return None
                need[storage[s.other]] = max(need.get(storage[s.other], 1), 1)
                positions.append(graph.shape_of(s.t)[time_axis(graph.shape_of(s.t))])
            elif s.role == WINDOW:
                lag += s.lookahead if inner else 0
                positions.append(graph.shape_of(s.t)[1])
            else:
                axis = time_axis(graph.shape_of(s.source))
                positions.append(graph.shape_of(s.source)[axis])
            lags.append(lag)
            if inner:
                owner = storage[s.source]
                need[owner] = max(need.get(owner, 1), s.extent)
            storage[s.t] = storage[s.source] if s.role == VIEW else s.t
        if tail is not None:  # the tail reads each step of `end` as it is made
            need.setdefault(storage[end], 1)
        cells = tuple(s.t for s in sequence if s.role == CELL)
        in_state = frozenset(t for t in cells if t in need and need[t] == 1)
        rings = {t: min(k, graph.shape_of(t)[time_axis(graph.shape_of(t))]) for t, k in need.items()
                 if t not in in_state}
        element = graph.kernel_element(cells[0]).name
        scratch = [Scratch.of(graph, f"ring{t}", (k, step_elements(graph.shape_of(t))), t) for t, k in rings.items()]
        scratch += [Scratch(f"state{t}", (graph.nodes[t].op.cell_bytes(element)[0],), "int8", graph.alignment)
                    for t in cells]
        scratch.append(Scratch("temp", (max(graph.nodes[t].op.cell_bytes(element)[1] for t in cells),), "int8",
                               graph.alignment))
        if tail is None:
            scratch += [Scratch.of(graph, f"vec{t}", graph.shape_of(t), t) for t in range(end + 1, last)]
        scratch += tail_scratch(tail)
        loops = TimeScan(first, end, max(lag + n for lag, n in zip(lags, positions)), tuple(lags),
                         tuple(positions), {t: o for t, o in storage.items() if t != last}, in_state, cells, tail)
        return LoweredBlock(first, last, self.name, 1, block_reads(graph, first, last), None, tuple(scratch),
                            sum(graph.macs(t) for t in range(first, last + 1)), loops, rings,
                            recompute=(1.0,) * (last - first + 1))

    def explain(self, block):
        loops = block.loops
        head = f" Ops {loops.end + 1}-{block.last} then run once on its last step." if block.last > loops.end else ""
        return (f"Ops {block.first}-{loops.end} run one time step at a time ({loops.steps} steps): between them only "
                f"the cells' states and the windows' rings of past steps are kept, never a whole sequence.{head}")


SCHEME = TimeScanScheme()

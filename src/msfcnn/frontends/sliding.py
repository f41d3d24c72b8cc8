"""Incremental sliding-window inference (`--streaming`): a model over a window of T frames becomes
the model of one call, which takes the newest `hop` frames and computes only the newest rows of
each layer.

The time axis is the input's H, or its W when H is 1 (a Conv1D-style 1 x T map). Each layer's
output gains `new` rows per call: the hop at the input, divided by each window's stride along
time, and at most the rows the whole window's output has. A window along time that spans more
rows than its stride reads rows of earlier calls: a `TimeRing` op before it keeps them as
persistent state (Graph.states), so the window runs on exactly the rows it needs (a ring without
state drops new rows its window would not read). An op that needs its input whole (a global pool, a flatten and dense
head, anything that is not a row op) gets a ring of the rest of the window before it, and then
runs as in the whole-window model. A model whose output is still a map along time ends in such
a ring too. The new graph is an ordinary stateful model: it is planned, lowered, run and emitted
as any other, and `msfcnn_reset_state()` empties its rings.

Every call's output equals the whole-window model's on the last T frames, bit for bit, once T
frames have been fed (the rings start as real zero). A model is refused, in one line naming the
layer, when that cannot hold: a window that pads the time axis (SAME or causal padding), whose
stride does not divide the rows a call brings, or whose windows leave the last rows unread.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from ..errors import UserError
from ..ir import Graph
from ..ops import CCall, Pattern
from ..ops.global_avg_pool import GlobalAvgPool
from ..ops.time_mean import TimeMean
from ..ops.time_ring import STATE, TimeRing


@dataclass(frozen=True)
class _Time:
    """A tensor that varies along time: its time axis, its rows in the whole window, and the
    rows each call computes (the newest)."""

    axis: int
    whole: int
    new: int


def time_axis_of(shape) -> int | None:
    """The time axis of a model input of this shape: H, or W for a 1 x T map; None for neither."""
    if len(shape) != 3:
        return None
    if shape[0] > 1:
        return 0
    return 1 if shape[1] > 1 else None


def window_frames(graph: Graph) -> int:
    """The frames of one window: the whole-window model's input along its time axis."""
    return graph.input_shape[time_axis_of(graph.input_shape)]


def sliding_window(graph: Graph, hop: int = 1) -> Graph:
    """The graph of one call of `graph` streamed with `hop` new frames per call (see the module)."""
    _check_model(graph, hop)
    axis = time_axis_of(graph.input_shape)
    frames = graph.input_shape[axis]
    step = Graph(graph.name, _with_rows(graph.input_shape, axis, hop), input_quant=graph.input_quant,
                 layout=graph.layout, dtype=graph.dtype, float_input=graph.float_input,
                 float_output=graph.float_output, uint8_input=graph.uint8_input, uint8_output=graph.uint8_output,
                 numerics=graph.numerics)
    where: dict[int, int] = {-1: -1}  # tensor of `graph` -> tensor of `step`
    times: dict[int, _Time | None] = {-1: _Time(axis, frames, hop)}
    for t, node in enumerate(graph.nodes):
        inputs = [times[i] for i in node.inputs]
        if any(inputs) and _is_row_op(graph, t):
            times[t], source = _row_op(graph, t, step, where, inputs)
        elif len(inputs) == 1 and inputs[0] and node.op.is_view and _view_time(graph, t, inputs[0]):
            times[t] = _view_time(graph, t, inputs[0])
            source = [where[node.inputs[0]]]
        elif len(inputs) == 1 and inputs[0] and _running_mean(graph, t, step, where[node.inputs[0]], inputs[0]):
            where[t] = _append_running_mean(step, node, t, where[node.inputs[0]], inputs[0])
            times[t] = None
            continue
        else:  # it needs its inputs whole: each one of the window's rows
            source = [_whole(step, where[i], time) for i, time in zip(node.inputs, inputs)]
            times[t] = None
        op = node.op.with_output_shape(_with_rows(node.shape, times[t].axis, times[t].new)) if times[t] else node.op
        where[t] = _append(step, op, tuple(source), node, t)
    end = times[graph.output]
    if end is not None:
        _whole(step, step.output, end)
    return step


def _check_model(graph: Graph, hop: int) -> None:
    if hop < 1:
        raise UserError(f"--hop {hop}: a call brings at least one frame")
    if graph.extra_inputs or len(graph.output_tensors) > 1:
        raise UserError(f"{graph.name}: --streaming runs models of one input and one output")
    if graph.states:
        raise UserError(f"{graph.name}: --streaming runs stateless models; this one keeps state of its own "
                        f"(op {graph.states[0].owner}, {graph.nodes[graph.states[0].owner].op.describe()})")
    axis = time_axis_of(graph.input_shape)
    if axis is None:
        raise UserError(f"{graph.name}: --streaming needs a time axis: an input map of more than one row "
                        f"(H), or a 1 x T map, not {list(graph.input_shape)}")
    if hop >= graph.input_shape[axis]:
        raise UserError(f"{graph.name}: --hop {hop} is not shorter than the window of {graph.input_shape[axis]} "
                        "frames: nothing to keep between calls")


def _is_row_op(graph: Graph, t: int) -> bool:
    """A row op: each output row along time reads a window of input rows (or the same row)."""
    op = graph.nodes[t].op
    return op.pattern in (Pattern.WINDOW, Pattern.ELEMENTWISE) and op.c_call is CCall.REGION \
        and len(graph.shape_of(t)) == 3 and all(len(graph.shape_of(i)) == 3 for i in graph.nodes[t].inputs)


def _row_op(graph: Graph, t: int, step: Graph, where: dict, inputs: list) -> tuple[_Time, list[int]]:
    """The time of row op t's output and its inputs in `step` (behind a ring when its window along
    time reads rows of earlier calls); a UserError when it cannot be computed row by row."""
    node = graph.nodes[t]
    first = inputs[0]
    if any(time != first for time in inputs):
        raise UserError(f"{graph.name}: layer {t} ({node.op.describe()}) reads maps that differ along time: "
                        "it cannot stream")
    window = node.op.axis_window(first.axis)
    out_rows = node.shape[first.axis]
    what = f"{graph.name}: layer {t} ({node.op.describe()})"
    if window.pad > 0 or (out_rows - 1) * window.stride + window.kernel > first.whole:
        raise UserError(f"{what} pads the time axis (SAME or causal padding): its rows near the window's start "
                        "differ from one window to the next, so it cannot stream exactly")
    unread = first.whole - (out_rows - 1) * window.stride - window.kernel
    if unread:
        raise UserError(f"{what}: its stride {window.stride} along time leaves the window's last {_rows(unread)} "
                        "unread, so it cannot stream exactly")
    if first.new % window.stride and first.new < out_rows * window.stride:  # (rows of earlier calls reused)
        raise UserError(f"{what}: its stride {window.stride} along time does not divide the {_rows(first.new)} "
                        "each call brings it (choose a --hop it divides)")
    new = min(first.new // window.stride, out_rows)  # (a call brings at most a whole window)
    needed = (new - 1) * window.stride + window.kernel  # the newest rows its new outputs read
    sources = [_ring(step, where[i], first.axis, max(needed - first.new, 0), max(first.new - needed, 0))
               for i in node.inputs]
    return _Time(first.axis, out_rows, new), sources


def _view_time(graph: Graph, t: int, source: _Time) -> _Time | None:
    """The time of a view's output, when its rows along time stay whole rows (time the outermost
    axis of both shapes); None when the view mixes time with other axes."""
    in_shape, out_shape = graph.shape_of(graph.nodes[t].inputs[0]), graph.shape_of(t)
    if prod(in_shape[:source.axis]) != 1 or len(out_shape) != 3:
        return None
    row = prod(in_shape[source.axis + 1:])
    for axis in (0, 1):
        if prod(out_shape[:axis]) == 1 and out_shape[axis] == source.whole and prod(out_shape[axis + 1:]) == row:
            return _Time(axis, source.whole, source.new)
    return None


def _running_mean(graph: Graph, t: int, step: Graph, source: int, time: _Time) -> bool:
    """Whether op t is a global average pool that can keep running sums over the window
    (ops/time_mean.py): an int8 pool over every row and column of its input."""
    op = graph.nodes[t].op
    if not isinstance(op, GlobalAvgPool) or step.element_of(source).name != "int8":
        return False
    in_shape = graph.shape_of(graph.nodes[t].inputs[0])
    return op.extent is None or tuple(op.extent) == tuple(in_shape[:2])


def _append_running_mean(step: Graph, node, t: int, source: int, time: _Time) -> int:
    """The pool as a TimeMean on the call's new rows, its ring of rows and sums as state."""
    mean = TimeMean(node.op, time.axis, time.whole)
    index = _append(step, mean, (source,), node, t)
    zero_point = step.quant_of(source).zero_point
    for name, initial in mean.initial_states(step.shape_of(source), zero_point).items():
        step.add_state(index, name, initial)
    return index


def _whole(step: Graph, tensor: int, time: _Time | None) -> int:
    """`tensor` of `step` with every row of the window: behind a ring of the rows earlier calls made."""
    return tensor if time is None else _ring(step, tensor, time.axis, time.whole - time.new)


def _ring(step: Graph, tensor: int, axis: int, kept: int, skip: int = 0) -> int:
    """`tensor` behind a TimeRing keeping `kept` rows of earlier calls (and dropping the first
    `skip` new rows); `tensor` itself when it needs neither."""
    if kept == 0 and skip == 0:
        return tensor
    shape = step.shape_of(tensor)
    if prod(shape[:axis]) != 1:
        raise UserError(f"{step.name}: the map of layer {tensor} is not stored row by row along time "
                        f"({list(shape)}, time axis {axis}): it cannot stream")
    ring = TimeRing(axis, kept, skip)
    quant = step.quant_of(tensor)
    index = step.append(ring, (tensor,), quant=quant)
    if kept:
        step.add_state(index, STATE, ring.initial_state(shape, step.element_of(tensor).numpy,
                                                        quant.zero_point if quant else 0))
    return index


def _append(step: Graph, op, inputs: tuple[int, ...], node, t: int) -> int:
    try:
        return step.append(op, inputs, node.consts, node.quant)
    except UserError as err:
        raise UserError(f"{step.name}: layer {t} ({node.op.describe()}) cannot stream: {err}") from None


def _rows(count: int) -> str:
    return f"{count} row{'s' if count > 1 else ''}"


def _with_rows(shape, axis: int, rows: int) -> tuple[int, ...]:
    out = list(shape)
    out[axis] = rows
    return tuple(out)


def model_time_axis(graph: Graph) -> int:
    """The time axis in the model's own input layout, batch excluded (NCHW puts C first)."""
    axis = time_axis_of(graph.input_shape)
    return axis + 1 if graph.layout == "NCHW" else axis


def model_frames(graph: Graph, frames: np.ndarray) -> np.ndarray:
    """A long input of a model that declares an (N, C, L) input (PyTorch's Conv1d, held as a 1 x L
    map) given as (1, C, F) or (C, F): the same bytes as the (C, 1, F) map of its NCHW layout. Any
    other array unchanged."""
    declared = graph.declared_input_shape
    if graph.layout != "NCHW" or declared is None or len(declared) != 3 or graph.input_shape[0] != 1:
        return frames
    if frames.ndim in (2, 3) and frames.shape[-2] == declared[1] and (frames.ndim == 2 or frames.shape[0] == 1):
        return frames.reshape(declared[1], 1, frames.shape[-1])
    return frames


def window_steps(graph: Graph, frames: np.ndarray, hop: int) -> tuple[list[np.ndarray], int]:
    """A long input of `graph` (its own layout, batch optional; frames along its time axis) as the
    calls of its streaming model: each call's `hop` frames, in order, and how many calls come
    before the one that completes the first window. Call `warm + w` completes window w, frames
    [w x hop, w x hop + T). The first calls reach back before frame 0 when T is not a multiple of
    the hop: those frames are zeros, outside the receptive field of every window's output."""
    frames = np.asarray(frames)
    rank = len(graph.input_shape)
    if frames.ndim == rank + 1 and frames.shape[0] == 1:
        frames = frames[0]
    axis, window = model_time_axis(graph), window_frames(graph)
    expected = list(_model_shape(graph))
    if frames.ndim != rank or [d for i, d in enumerate(frames.shape) if i != axis] != \
            [d for i, d in enumerate(expected) if i != axis]:
        expected[axis] = "F"
        raise UserError(f"a long input of {graph.name} has shape {expected} (F frames along time), not "
                        f"{list(frames.shape)}")
    count = frames.shape[axis]
    if count < window:
        raise UserError(f"a long input of {count} frames is shorter than the window of {window}")
    warm = -(-window // hop) - 1
    start = window - hop - warm * hop  # the first call's first frame (<= 0)
    padding = np.zeros(_with_rows(frames.shape, axis, -start), frames.dtype)
    frames = np.concatenate([padding, frames], axis=axis)
    windows = (count - window) // hop + 1
    calls = warm + windows
    return [np.take(frames, range(k * hop, (k + 1) * hop), axis=axis) for k in range(calls)], warm


def _model_shape(graph: Graph) -> tuple[int, ...]:
    h, w, c = graph.input_shape
    return (c, h, w) if graph.layout == "NCHW" else (h, w, c)

"""`inplace` (TinyEngine's in-place depthwise): an op whose output channel c reads only input
channel c (a depthwise conv with multiplier 1) writes its output over input it no longer reads.

- One op: the output starts where the input starts; channel c's values land on bytes of input
  channel c only, which is dead once its plane is computed. RAM: input + one plane of out_h x
  out_w values, instead of input + output. As for `overlap`, the input must be the tensor made just
  before, on top of its end.
- A row-streamed block (linebuffer): each depthwise row is written into a slot of its input's ring
  that holds a row no computation reads any more but that row itself, instead of into a ring of
  its own. The slot is found by replaying the block's pull order, which also proves it safe. Each
  slot of the input's ring starts with a gap of g pixels (`row_gap`: 1 for a 3x3 SAME window), and
  the depthwise row is written from the gap on, g pixels to the left of the input row: the regular
  kernel writes output pixel x (left to right, a block of channels after the sums that read those
  channels) over input pixel x - g, which it has read and no later pixel reads
  (kernels/depthwise_conv2d.c). So the row runs at the unfused kernel's speed, and costs the
  block's linebuffer RAM less the depthwise rings, plus g pixels per slot of each input ring.
  Where it saves more, the block's output is also written over its consumed input (`placement`).
"""

from __future__ import annotations

from dataclasses import replace

from .. import streaming
from ..lowered import Channels, LoweredBlock, Scratch, Stream, block_reads
from .base import Scheme
from .linebuffer import lower_rows
from .placement import on_top, place_over_input


class InPlace(Scheme, name="inplace", template="single", order=5, time_rank=1, floor="homes"):
    """depthwise convs written over input they no longer read: a whole map over its own input a
    channel at a time, or each row of a row-streamed block over a dead row of its input's ring"""

    def lower(self, graph, live, first, last, rows, cache):
        if first == last:
            return _whole_map(graph, live, first)
        block = lower_rows(graph, live, first, last, cache, self.name)
        if block is None:
            return None
        homes = row_homes(graph, block, cache)
        if not homes:
            return None  # nothing in place: the block is linebuffer's
        gaps = {host: row_gap(graph.nodes[t].op.window) for t, (host, _) in homes.items()}
        dropped = {f"ring{t}" for t in homes}
        gapped = {f"ring{host}": gap for host, gap in gaps.items()}
        scratch = tuple(_with_gap(s, gapped[s.name]) if s.name in gapped else s
                        for s in block.scratch if s.name not in dropped)
        block = replace(block, scratch=scratch, homes=homes, gaps=gaps)
        return place_over_input(graph, live, block, cache) or block

    def template_for(self, block):
        return "stream" if isinstance(block.loops, Stream) else self.template

    def explain(self, block):
        if not block.homes:
            return ("inplace: the output is written over the input, a channel at a time: each output channel is "
                    "computed into a plane, then copied over the input channel it read.")
        rows = ", ".join(f"op {t} into the ring of op {host}" for t, (host, _) in sorted(block.homes.items()))
        return ("inplace: rows stream top to bottom as in linebuffer; depthwise rows are written a few pixels to the "
                f"left of ring rows no longer read ({rows}), whose slots start with a gap of those pixels.")


def row_gap(window) -> int:
    """Pixels to the left of its input row that a depthwise row may be written at: output pixel x
    lands on input pixel x - g, which pixel x reads before writing and no later pixel reads, as
    pixel x + 1 starts reading at (x + 1) * stride - pad_left. So g = pad_left + 1 - stride (at
    least 0): 1 for a 3x3 stride-1 SAME window, 0 for a VALID one."""
    return max(0, window.pads[1] + 1 - window.strides[1])


def _with_gap(ring: Scratch, gap: int) -> Scratch:
    """A ring of (rows, width, channels) whose slots start with `gap` more pixels."""
    rows, width, channels = ring.shape
    return Scratch(ring.name, (rows, width + gap, channels), ring.dtype, ring.alignment, ring.tensor)


def _whole_map(graph, live, t: int) -> LoweredBlock | None:
    source = t - 1
    node = graph.nodes[t]
    if node.inputs != (source,) or not on_top(graph, source):
        return None
    if not (node.op.in_place_channels() and live.in_arena(source) and live.in_arena(t)
            and live.last_use[source] == t):
        return None
    (h, w, _), (out_h, out_w, _) = graph.shape_of(source), node.shape
    if out_h * out_w > h * w:
        return None  # a padded map larger than its input would run past it
    plane = Scratch.of(graph, "plane", (out_h, out_w), t)
    return LoweredBlock(t, t, InPlace.name, 1, block_reads(graph, t, t), None, (plane,), graph.macs(t),
                        Channels(plane), recompute=(1.0,), placed_on=(source, 0))


def row_homes(graph, block: LoweredBlock, cache: dict | None = None) -> dict[int, tuple[int, int]]:
    """For each depthwise tensor of a row stream that can live in its input's ring: (its input,
    the slot shift that the pull order proves safe). Its rows must be read one at a time (a ring
    of one row), its input must have no other reader and rows at least as wide.

    t, its input and their readers are all ops of the block at or after its first op, and the
    pull order restricted to those ops depends only on the stream end (`Stream.order`): so with
    `cache` (one dict per graph) the replays and row counts are shared by every block with the
    same stream end (keyed by what else they read: the input's ring size and the shift)."""
    homes: dict[int, tuple[int, int]] = {}
    rings = block.rings
    loops = block.loops
    made: dict[int, int] | None = None
    replays = {} if cache is None else cache.setdefault(("replays", loops.end), {})
    for t in sorted(rings):
        node = graph.nodes[t]
        host = node.inputs[0]
        if not (node.op.in_place_channels() and rings[t] == 1 and host in rings and host not in homes
                and graph.shape_of(t)[1] <= graph.shape_of(host)[1]
                and [i for i in range(host + 1, block.last + 1) if host in graph.nodes[i].inputs] == [t]):
            continue
        # Most often the slot the input's next row will take is free (the shift that puts row 0
        # there is tried first); the pull order decides.
        if made is None:
            made = _rows_made_before(graph, loops) if cache is None else _shared_rows_made(graph, loops, cache)
        first_try = made[t] % rings[host]
        for shift in sorted(range(rings[host]), key=lambda d: d != first_try):
            key = (t, host, rings[host], shift)
            if key not in replays:
                replays[key] = _replays(graph, loops, rings, t, host, shift)
            if replays[key]:
                homes[t] = (host, shift)
                break
    return homes


def _shared_rows_made(graph, loops: Stream, cache: dict) -> dict[int, int]:
    """_rows_made_before, from a stream with the same end starting at or below this one's first op
    when one was counted: the counts of ops whose input is at or after `first` are the same."""
    key = ("rows made", loops.end)
    base_first, made = cache.get(key, (None, None))
    if base_first is None or base_first > loops.first:
        made = _rows_made_before(graph, loops)
        cache[key] = (loops.first, made)
    return made


def _rows_made_before(graph, loops: Stream) -> dict[int, int]:
    """For every op t of the stream: rows of its main input (`host`) made when row 0 of t is
    computed (all the rows the stream makes of it if t computes none), in one pass of the order."""
    made: dict[int, int] = {}
    first: dict[int, int] = {}
    for u, i in loops.order_of(range(loops.first, loops.end + 1)):
        if i == 0:  # an op's first computation is its row 0
            first[u] = made.get(graph.nodes[u].inputs[0], 0)
        made[u] = made.get(u, 0) + 1
    return {t: first[t] if t in first else made.get(graph.nodes[t].inputs[0], 0)
            for t in range(loops.first, loops.end + 1)}


def _replays(graph, loops: Stream, rings: dict[int, int], t: int, host: int, shift: int) -> bool:
    """Whether, with row i of `t` stored in slot (i + shift) % k of `host`'s ring of k rows, every
    row of either that a computation of the pull order reads is still in its slot then. (Other
    rings keep their own slots, which the ring sizes make safe.) A computation may overwrite rows
    it reads itself: the in-place kernel reads a channel whole before it writes that channel."""
    k = rings[host]
    tags: list[tuple[int, int] | None] = [None] * k
    spans = {} if loops.shared is None else loops.shared
    windows = {c: [(u, streaming.position_spans(graph, c, u, 0, spans)) for u in graph.nodes[c].inputs
                   if u in (t, host)] for c in range(loops.first, loops.end + 1)}
    # Only the computations of t, host and their readers check or tag a slot.
    relevant = {t, host} | {c for c, reads in windows.items() if reads}
    for c, i in loops.order_of(relevant):
        for u, read in windows[c]:
            a, b = read[i]
            offset = shift if u == t else 0
            if any(tags[(j + offset) % k] != (u, j) for j in range(a, b)):
                return False
        if c == t:
            tags[(i + shift) % k] = (t, i)
        elif c == host:
            tags[i % k] = (host, i)
    return True


SCHEME = InPlace()

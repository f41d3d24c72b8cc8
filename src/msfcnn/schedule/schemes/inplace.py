"""`inplace` (TinyEngine's in-place depthwise): an op whose output channel c reads only input
channel c (a depthwise conv with multiplier 1) writes its output over input it no longer reads, a
channel at a time through one plane.

- One op: the output starts where the input starts; channel c's values land on bytes of input
  channel c only, which is dead once its plane is computed. RAM: input + one plane of out_h x
  out_w values, instead of input + output. As for `overlap`, the input must be the tensor made just
  before, on top of its end.
- A row-streamed block (linebuffer): each depthwise row is written into a slot of its input's ring
  that holds a row no computation reads any more, instead of into a ring of its own. RAM: the
  block's linebuffer RAM less those rings, plus one plane of a row (out_w values). The slot is
  found by replaying the block's pull order, which also proves it safe. Where it saves more, the
  block's output is also written over its consumed input (`placement`).
"""

from __future__ import annotations

from dataclasses import replace

from ..lowered import Channels, LoweredBlock, Scratch, Stream, block_reads
from .base import Scheme
from .linebuffer import lower_rows
from .placement import on_top, place_over_input


class InPlace(Scheme, name="inplace", template="single", order=5, time_rank=1):
    """depthwise convs written over input they no longer read, a channel at a time: a whole map over
    its own input, or each row of a row-streamed block into a dead row of its input's ring"""

    def lower(self, graph, live, first, last, rows, cache):
        if first == last:
            return _whole_map(graph, live, first)
        block = lower_rows(graph, live, first, last, cache, self.name)
        if block is None:
            return None
        homes = row_homes(graph, block)
        if not homes:
            return None  # nothing in place: the block is linebuffer's
        width = max(graph.shape_of(t)[1] for t in homes)
        scratch = tuple(s for s in block.scratch if s.name not in {f"ring{t}" for t in homes})
        block = replace(block, scratch=scratch + (Scratch("plane", (1, width), graph.dtype),), homes=homes)
        return place_over_input(graph, live, block, cache) or block

    def template_for(self, block):
        return "stream" if isinstance(block.loops, Stream) else self.template

    def explain(self, block):
        if not block.homes:
            return ("inplace: the output is written over the input, a channel at a time: each output channel is "
                    "computed into a plane, then copied over the input channel it read.")
        rows = ", ".join(f"op {t} into the ring of op {host}" for t, (host, _) in sorted(block.homes.items()))
        return ("inplace: rows stream top to bottom as in linebuffer; depthwise rows are written a channel at a time, "
                f"through a plane, over ring rows no longer read ({rows}).")


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
    plane = Scratch("plane", (out_h, out_w), graph.dtype)
    return LoweredBlock(t, t, InPlace.name, 1, block_reads(graph, t, t), None, (plane,), graph.macs(t),
                        Channels(plane), recompute=(1.0,), placed_on=(source, 0))


def row_homes(graph, block: LoweredBlock) -> dict[int, tuple[int, int]]:
    """For each depthwise tensor of a row stream that can live in its input's ring: (its input,
    the slot shift that the pull order proves safe). Its rows must be read one at a time (a ring
    of one row), its input must have no other reader and rows at least as wide."""
    homes: dict[int, tuple[int, int]] = {}
    rings = block.rings
    for t in sorted(rings):
        node = graph.nodes[t]
        host = node.inputs[0]
        readers = [i for i in range(host + 1, block.last + 1) if host in graph.nodes[i].inputs]
        if not (node.op.in_place_channels() and rings[t] == 1 and host in rings and host not in homes
                and readers == [t] and graph.shape_of(t)[1] <= graph.shape_of(host)[1]):
            continue
        # Most often the slot the input's next row will take is free (the shift that puts row 0
        # there is tried first); the pull order decides.
        first_try = _next_row(block.loops, host, t) % rings[host]
        for shift in sorted(range(rings[host]), key=lambda d: d != first_try):
            if _replays(graph, block.loops, rings, t, host, shift):
                homes[t] = (host, shift)
                break
    return homes


def _next_row(loops: Stream, host: int, t: int) -> int:
    """Rows of `host` made when row 0 of `t` is computed."""
    made = 0
    for u, i in loops.order:
        if u == t:
            return made
        made += u == host
    return made


def _replays(graph, loops: Stream, rings: dict[int, int], t: int, host: int, shift: int) -> bool:
    """Whether, with row i of `t` stored in slot (i + shift) % k of `host`'s ring of k rows, every
    row of either that a computation of the pull order reads is still in its slot then. (Other
    rings keep their own slots, which the ring sizes make safe.) A computation may overwrite rows
    it reads itself: the in-place kernel reads a channel whole before it writes that channel."""
    k = rings[host]
    tags: list[tuple[int, int] | None] = [None] * k
    windows = {c: [(u, graph.nodes[c].op.axis_window(0), graph.shape_of(u)[0]) for u in graph.nodes[c].inputs
                   if u in (t, host)] for c in range(loops.first, loops.end + 1)}
    for c, i in loops.order:
        for u, window, height in windows[c]:
            a, b, _, _ = window.span(i, i + 1, height)
            offset = shift if u == t else 0
            if any(tags[(j + offset) % k] != (u, j) for j in range(a, b)):
                return False
        if c == t:
            tags[(i + shift) % k] = (t, i)
        elif c == host:
            tags[i % k] = (host, i)
    return True


SCHEME = InPlace()

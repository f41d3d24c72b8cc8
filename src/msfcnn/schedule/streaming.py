"""Geometry shared by the fused schemes: which ops can stream together, what positions of a tensor
a range of its readers' positions needs, bands, ring sizes, and the work a streamed block does.

Everything here asks the ops for their facts (`Op.pattern`, `Op.axis_window`, `Op.accumulates`,
`Op.is_view`); nothing compares op classes.
"""

from __future__ import annotations

from itertools import accumulate
from math import prod

from ..ir import Graph
from ..ops import Pattern

ROW_PATTERNS = (Pattern.WINDOW, Pattern.ELEMENTWISE)


def _is_feature_map(graph: Graph, t: int) -> bool:
    return len(graph.shape_of(t)) == 3


def stream_end(graph: Graph, first: int, last: int, cache: dict | None = None) -> int | None:
    """The last row-streamed op of a fused block over first..last, or None if the ops do not
    form one: row ops (windows, element-wise) optionally followed by a tail that consumes the
    streamed map (an accumulating op, after a view of the same bytes or not) and then vector
    ops, each reading the op before it. With `cache` (one dict per graph), the walk from `first`
    is made once for every `last`."""
    end, broken = _scan(graph, first, last, cache)
    if broken <= last or end < first:
        return None
    if end < last and (tail_consumer(graph, end) > last or graph.nodes[end + 1].inputs != (end,)):
        return None
    return end


def _scan(graph: Graph, first: int, last: int, cache: dict | None = None) -> tuple[int, int]:
    """stream_end's walk over ops first..last: (the last row op of the leading run, the first op
    that no block from `first` can stream through, or last + 1). Whether op i breaks the walk
    depends only on ops first..i, so the walk to the graph's end serves every `last`."""
    if cache is None:
        run_end, broken = _walk(graph, first, last + 1)
    else:
        walks = cache.get("walks")
        if walks is None:
            walks = cache["walks"] = _walks(graph)
        run_end, broken = walks[first]
    broken = min(broken, last + 1)
    return (min(run_end, broken - 1) if broken > first else first - 1), broken


def _is_row_op(graph: Graph, i: int) -> bool:
    return graph.nodes[i].op.pattern in ROW_PATTERNS and _is_feature_map(graph, i)


def _walk(graph: Graph, first: int, stop: int) -> tuple[int, int]:
    """The walk over ops first..stop-1: (the last op of the leading run of row ops, the op where
    the walk stops, or `stop`). After the run, a tail that consumes the streamed map (an
    accumulating op or a view) and vector ops each reading the op before may follow."""
    if not _is_row_op(graph, first):
        return first - 1, first
    end = first
    while end + 1 < stop and _is_row_op(graph, end + 1):
        end += 1
    i = end + 1
    if i < stop and (graph.nodes[i].op.accumulates or graph.nodes[i].op.is_view):
        i += 1  # the tail starts: it reads the whole streamed map
        while i < stop and not _is_row_op(graph, i) and graph.nodes[i].op.pattern is Pattern.VECTOR \
                and graph.nodes[i].inputs == (i - 1,):
            i += 1
    return end, i


def _walks(graph: Graph) -> list[tuple[int, int]]:
    """_walk from every op, in time and memory linear in the graph's length: a walk from a row op
    followed by another row op is the walk from that next op (same run end, same stop)."""
    walks: list[tuple[int, int]] = [(0, 0)] * len(graph)
    for first in reversed(range(len(graph))):
        if first + 1 < len(graph) and _is_row_op(graph, first) and _is_row_op(graph, first + 1):
            walks[first] = walks[first + 1]
        else:
            walks[first] = _walk(graph, first, len(graph))
    return walks


def stream_break(graph: Graph, first: int, cache: dict | None = None) -> int:
    """The first op that no stream from op `first` can take in (len(graph) if none): stream_end
    is None for every block first..last with last at or after it, since the walk stops there
    whatever follows."""
    return _scan(graph, first, len(graph) - 1, cache)[1]


def tail_consumer(graph: Graph, end: int) -> int:
    """The op that accumulates the streamed map ending at `end` (a view of the same bytes before
    it is skipped). Returns an index past the graph if the op after `end` cannot accumulate."""
    i = end + 1
    op = graph.nodes[i].op
    if op.is_view:
        nxt = i + 1
        ok = nxt < len(graph) and graph.nodes[nxt].op.accumulates and graph.nodes[nxt].inputs == (i,)
        return nxt if ok else len(graph)
    return i if op.accumulates else len(graph)


def needed_range(graph: Graph, consumer: int, tensor: int, lo: int, hi: int, axis: int = 0):
    """Positions [a, b) of `tensor` along `axis` (0 rows, 1 columns) that positions [lo, hi) of
    `consumer`'s output read, and the padding (before, after) the window has outside the tensor."""
    return graph.nodes[consumer].op.axis_window(axis).span(lo, hi, graph.shape_of(tensor)[axis])


def needed_rows(graph: Graph, consumer: int, tensor: int, index: int, axis: int = 0) -> tuple[int, int]:
    """Positions [lo, hi) of `tensor` along `axis` that position `index` of `consumer` reads."""
    return needed_range(graph, consumer, tensor, index, index + 1, axis)[:2]


def window_ring(graph: Graph, tensor: int, consumer: int, axis: int) -> int:
    """Positions of `tensor` a window op must see at once along `axis`: the largest clipped
    window over all its outputs (k inside the map, fewer at padded borders)."""
    outputs = graph.nodes[consumer].shape[axis]
    return max(b - a for a, b in (needed_rows(graph, consumer, tensor, i, axis) for i in range(outputs)))


def simulate_ring(graph: Graph, tensor: int, consumers: tuple[int, ...], axis: int = 0) -> int:
    """Positions of `tensor` kept at once along the streamed axis when several ops of one block
    read it (the source of a skip inside the block): replays the executor's pull order.

    The executor produces positions on demand: the last consumer pulls its positions in order,
    each pulling what it needs from its inputs first (main input, then skip). A position can be
    dropped once every consumer's next position starts after it.
    """
    last = max(consumers)
    produced = {t: 0 for t in range(tensor, last)}
    next_pos = {c: 0 for c in consumers}
    extent = graph.shape_of(tensor)[axis]
    ring = 0

    def lowest_needed() -> int:
        return min(needed_rows(graph, c, tensor, next_pos[c], axis)[0] if next_pos[c] < graph.nodes[c].shape[axis]
                   else extent for c in consumers)

    def pull(t: int, upto: int) -> None:
        nonlocal ring
        while produced[t] < upto:
            i = produced[t]
            for u in graph.nodes[t].inputs if t != tensor else ():
                if u in produced:
                    pull(u, needed_rows(graph, t, u, i, axis)[1])
            if t in next_pos:
                ring = max(ring, produced[tensor] - lowest_needed())
                next_pos[t] += 1
            produced[t] += 1

    for i in range(graph.nodes[last].shape[axis]):
        for u in graph.nodes[last].inputs:
            if u in produced:
                pull(u, needed_rows(graph, last, u, i, axis)[1])
        ring = max(ring, produced[tensor] - lowest_needed())
        next_pos[last] += 1
    return max(ring, 1)


def readers_of(graph: Graph, cache: dict) -> dict[int, tuple[int, ...]]:
    """Every tensor's readers, in op order (memoised in `cache`, one dict per graph)."""
    readers = cache.get("readers")
    if readers is None:
        found: dict[int, list[int]] = {}
        for i, node in enumerate(graph.nodes):
            for u in dict.fromkeys(node.inputs):
                found.setdefault(u, []).append(i)
        readers = cache["readers"] = {t: tuple(r) for t, r in found.items()}
    return readers


def stream_layout(graph: Graph, last_use: dict[int, int], first: int, last: int, axis: int, cache: dict,
                  single: bool = False):
    """What streaming ops first..last along `axis` needs: (stream end, ring sizes per inner
    tensor), or None when the ops cannot stream together (or are one op, unless `single`). Only
    the block's output may be read after the block; ring sizes depend only on a tensor and its
    readers, so they are memoised in `cache` (one dict per graph), and so is the last layout
    asked for along each axis (a scheme asks for it again for each rows setting; each caller
    gets its own rings dict)."""
    if last == first and not single:
        return None
    key = ("layout", axis)
    block, layout = cache.get(key, (None, None))
    if block != (first, last):
        layout = _stream_layout(graph, last_use, first, last, axis, cache)
        cache[key] = (first, last), layout
    return None if layout is None else (layout[0], dict(layout[1]))


def stream_block_end(graph: Graph, last_use: dict[int, int], first: int, last: int, cache: dict,
                     single: bool = False) -> int | None:
    """The stream end of ops first..last when stream_layout gives them one (None when not),
    without their rings."""
    if last == first and not single:
        return None
    end = stream_end(graph, first, last, cache)
    if end is None or _latest_read(last_use, first, last, cache) > last:
        return None
    return end


def _stream_layout(graph: Graph, last_use: dict[int, int], first: int, last: int, axis: int, cache: dict):
    end = stream_block_end(graph, last_use, first, last, cache, True)
    if end is None:
        return None
    readers = readers_of(graph, cache)
    rings = {}
    for t in range(first, end + 1 if end < last else end):
        # The stream end writes the block output directly, or, with a tail, one position at a
        # time into a buffer of its own that the tail's accumulator then reads.
        if t == end:
            rings[t] = 1
            continue
        # Every reader of t is in the block (none reads it after `last`).
        consumers = readers.get(t, ())
        key = (t, consumers, axis)
        if key not in cache:
            c = consumers[0]
            if len(consumers) > 1:
                cache[key] = simulate_ring(graph, t, consumers, axis)
            elif graph.nodes[c].op.pattern is Pattern.WINDOW:
                cache[key] = window_ring(graph, t, c, axis)
            else:
                cache[key] = 1
        rings[t] = cache[key]
    return end, rings


def _latest_read(last_use: dict[int, int], first: int, last: int, cache: dict) -> int:
    """The last op reading any of tensors first..last-1 (first - 1 if none), from the running
    maxima of the reads from `first` (one list per first op, memoised in `cache`)."""
    key = ("latest read", first)
    latest = cache.get(key)
    if latest is None or len(latest) < last - first:  # grown to twice as far as asked
        reads = (last_use.get(t, -1) for t in range(first, 2 * last - first))
        latest = cache[key] = list(accumulate(reads, max))
    return latest[last - first - 1] if last > first else first - 1


def position_spans(graph: Graph, consumer: int, tensor: int, axis: int, cache: dict) -> list[tuple[int, int]]:
    """AxisWindow.position_spans of op `consumer`'s window over `tensor` along `axis`, for every
    output position of the op, memoised in `cache` (one dict per graph)."""
    key = ("spans", consumer, tensor, axis)
    spans = cache.get(key)
    if spans is None:
        node = graph.nodes[consumer]
        spans = cache[key] = node.op.axis_window(axis).position_spans(node.shape[axis], graph.shape_of(tensor)[axis])
    return spans


def band_ranges(graph: Graph, first: int, end: int, lo: int, hi: int, axis: int = 0) -> dict[int, tuple[int, int]]:
    """Rows (axis 0) or columns (axis 1) of every streamed tensor first..end that positions
    [lo, hi) of `end` need: the hull of what each tensor's readers up to `end` read."""
    ranges = {end: (lo, hi)}
    for t in range(end - 1, first - 1, -1):
        spans = [needed_range(graph, c, t, *ranges[c], axis)[:2] for c in range(t + 1, end + 1)
                 if t in graph.nodes[c].inputs]
        if not spans:
            break
        ranges[t] = (min(a for a, _ in spans), max(b for _, b in spans))
    return ranges


def band_table(graph: Graph, first: int, end: int, rows: int, cache: dict,
               axis: int = 0) -> dict[int, tuple[list[int], list[int]]]:
    """band_ranges of every band of `rows` positions of `end`, for tensors first..end at least:
    per tensor, the starts and the ends of its ranges, band by band. A tensor's range depends only
    on its readers up to `end`, so one table per (end, rows, axis), extended downwards as blocks
    starting lower ask, serves every block ending at `end`."""
    key = ("table", end, rows, axis)
    table, floor = cache.get(key, (None, end + 1))
    if table is None:
        cut = bands(graph.shape_of(end)[axis], rows)
        table = {end: ([lo for lo, _ in cut], [hi for _, hi in cut])}
        floor = end
    for t in range(floor - 1, first - 1, -1):
        readers = [c for c in readers_of(graph, cache).get(t, ()) if c <= end]
        if not readers:
            break
        table[t] = _hull(graph, t, readers, table, axis, cache)
        floor = t
    cache[key] = (table, floor)
    return table


def _hull(graph: Graph, t: int, readers, ranges: dict, axis: int, cache: dict) -> tuple[list[int], list[int]]:
    """The starts and the ends of tensor t's ranges, band by band: the hull of what its readers'
    windows read of it over their own ranges (AxisWindow.span's arithmetic on the lists)."""
    size = graph.shape_of(t)[axis]
    windows = cache.get(("windows", axis))
    if windows is None:
        windows = cache[("windows", axis)] = [node.op.axis_window(axis) for node in graph.nodes]
    starts = ends = None
    for c in readers:
        window = windows[c]
        stride, pad, kernel = window.stride, window.pad, window.kernel
        los, his = ranges[c]
        if (kernel, stride, pad) == (1, 1, 0) and max(his) <= size:  # the identity window
            a, b = los, his
        else:
            a = [0 if y < 0 else size if y > size else y for y in (lo * stride - pad for lo in los)]
            b = [0 if y < 0 else size if y > size else y for y in ((hi - 1) * stride - pad + kernel for hi in his)]
            if stride > kernel:  # an empty range of outputs must not read an inverted one
                b = [max(x, y) for x, y in zip(a, b)]
        starts, ends = (a, b) if starts is None else (list(map(min, starts, a)), list(map(max, ends, b)))
    return starts, ends


def bands(height: int, rows: int) -> list[tuple[int, int]]:
    return [(lo, min(lo + rows, height)) for lo in range(0, height, rows)]


def powers_of_two_below(extent: int) -> list[int]:
    """1, 2, 4, ... below `extent`, then `extent`: the steps a scheme tries along a map's side."""
    options, rows = [], 1
    while rows < extent:
        options.append(rows)
        rows *= 2
    return options + [extent]


def step_options(graph: Graph, first: int, last: int, extent, cache: dict | None = None) -> list[int]:
    """Rows (or tile sides) per step to try for ops first..last: powers of two below
    extent(stream end's shape), then that extent; [1] when the ops cannot stream together."""
    end = stream_end(graph, first, last, cache)
    return [1] if end is None else powers_of_two_below(extent(graph.shape_of(end)))


def band_profile(graph: Graph, end: int, rows: int, cache: dict, axis: int = 0,
                 first: int = 0) -> dict[int, tuple[int, int]]:
    """For every tensor t that `end` depends on, from `end` down to `first` at least, cutting
    `end` into bands of `rows` positions along `axis`: (positions of t computed over all bands,
    widest band, narrowest band). These depend only on t's readers up to `end`, not on where a block starts, so
    one profile serves every block ending at `end`; it is walked down only as far as blocks start
    (a walk to op 0 for every stream end would take quadratic time and memory on long chains)."""
    key = ("bands", end, rows, axis)
    state = cache.get(key)
    if state is None:
        cut = bands(graph.shape_of(end)[axis], rows)
        state = cache[key] = _Profile({end: ([lo for lo, _ in cut], [hi for _, hi in cut])}, {}, end + 1)
    if state.floor > first:
        state.extend(graph, end, axis, first, cache)
    return state.profile


class _Profile:
    """A band profile walked down to op `floor` (0 or an op no longer depended on: complete), with
    the band ranges (band_ranges of every band at once) of the tensors its walk still needs."""

    __slots__ = ("ranges", "profile", "floor")

    def __init__(self, ranges: dict, profile: dict, floor: int):
        self.ranges, self.profile, self.floor = ranges, profile, floor

    def extend(self, graph: Graph, end: int, axis: int, first: int, cache: dict) -> None:
        readers = readers_of(graph, cache)
        ranges, profile = self.ranges, self.profile
        for t in range(self.floor - 1, first - 1, -1):
            if t < end:
                reading = [c for c in readers.get(t, ()) if c <= end]
                if not reading or not _is_feature_map(graph, t):
                    # nothing below depends on `end`, or no block with stream end `end` reaches
                    # it (none streams through a vector)
                    self.floor = 0
                    return
                ranges[t] = _hull(graph, t, reading, ranges, axis, cache)
                lowest = lowest_inputs(graph, cache)
                for c in reading:
                    if lowest[c] == t:
                        del ranges[c]  # read by no tensor below: its ranges are not needed again
            heights = [hi - lo for lo, hi in zip(*ranges[t])]
            profile[t] = (sum(heights), max(heights), min(heights))
            self.floor = t


def lowest_inputs(graph: Graph, cache: dict) -> list[int]:
    """Per op, the lowest op whose output it reads (-1 if none: it reads the network input only)."""
    lowest = cache.get("lowest inputs")
    if lowest is None:
        lowest = cache["lowest inputs"] = [min((u for u in node.inputs if u >= 0), default=-1)
                                           for node in graph.nodes]
    return lowest


def pixel_macs(graph: Graph, t: int) -> int:
    """MACs of one output pixel (all channels) of feature map t."""
    h, w = graph.shape_of(t)[:2]
    return graph.macs(t) // (h * w)


def streamed_work(graph: Graph, first: int, end: int, last: int,
                  computed: dict[int, int]) -> tuple[int, tuple[float, ...]]:
    """(MACs, recompute factors) of a block whose ops first..end compute `computed[t]` output
    positions (pixels) each, and whose tail ops end+1..last run once."""
    macs = sum(graph.macs(i) for i in range(end + 1, last + 1))
    macs += sum(pixel_macs(graph, t) * computed[t] for t in range(first, end + 1))
    factors = [computed[t] / prod(graph.shape_of(t)[:2]) for t in range(first, end + 1)]
    return macs, tuple(factors) + (1.0,) * (last - end)


def work_table(graph: Graph, end: int, key, computed, cache: dict, first: int = 0) -> tuple[list[int], list]:
    """streamed_work for every block with stream end `end` starting at `first` or above:
    `computed(t)` is the output positions op t computes (None for a tensor `end` does not depend
    on). Returns the suffix sums of the streamed MACs (sums[end + 1 - t]: the MACs of tensors
    t..end) and each tensor's recompute factor (factors[end - t]), memoised in `cache` under
    (`key`, end): the positions depend only on the stream end and the step, not on where a block
    starts. Both lists grow down as blocks starting lower ask."""
    full = ("work", key, end)
    table = cache.get(full)
    if table is None:
        table = cache[full] = ([0], [])
    sums, factors = table
    if end - len(factors) >= first:
        pixels = cache.get("pixels")  # per feature map: (pixel_macs, pixels)
        if pixels is None:
            pixels = cache["pixels"] = [(pixel_macs(graph, t), prod(graph.shape_of(t)[:2]))
                                        if _is_feature_map(graph, t) else None for t in range(len(graph))]
        for t in range(end - len(factors), first - 1, -1):
            n = computed(t)
            if n is None:
                sums.append(sums[-1])
                factors.append(None)
                continue
            macs, area = pixels[t]
            sums.append(sums[-1] + macs * n)
            factors.append(n / area)
    return table


def table_work(graph: Graph, table, first: int, end: int, last: int) -> tuple[int, tuple[float, ...]]:
    """streamed_work of the block first..last from its stream end's `work_table`."""
    factors = table[1]
    return table_macs(graph, table, first, end, last), tuple(factors[end - first::-1]) + (1.0,) * (last - end)


def table_macs(graph: Graph, table, first: int, end: int, last: int) -> int:
    """The MACs of `table_work`."""
    streamed = table[0][end + 1 - first]
    return streamed if end == last else streamed + sum(graph.macs(i) for i in range(end + 1, last + 1))

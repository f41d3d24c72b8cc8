"""The `exact` cost model: the bytes the runtime really holds in its arena.

Every candidate block is lowered by its scheme (`schedule.schemes`), with the same code the fused
executor and the C generator walk, and its RAM is the arena bytes live while it runs: the tensors
it reads and writes, the skip tensors waiting across it, and its scratch buffers. The network
input and output are the caller's buffers and not counted, unless `count_io` puts them in the
arena too (then each counts while it is live). Each edge keeps its lowering, so the chosen plan
is scheduled without lowering it again.
"""

from __future__ import annotations

import gc
import math
from itertools import accumulate

from .. import progress
from ..fusion.dag import Block, FusionDAG
from ..ir import Graph, is_network_input
from ..ops import Pattern
from ..schedule import Liveness, LoweredBlock, loop_kinds, streaming
from ..schedule import schemes as registry
from ..schedule.loop_kinds import FLOOR, handles
from ..schedule.lowered import Channels, Patches, Stream, TimeScan, Whole, stream_input
from ..schedule.schemes.base import FLOORS
from ..schedule.lowered import Chains

NAME = "exact"
SCHEMES = registry.FUSED_SCHEMES  # every fused scheme of the registry


def _edge(live: Liveness, lowered: LoweredBlock) -> Block:
    lowered = stream_input(live.graph, live, lowered)
    scheme = registry.SCHEMES[lowered.scheme]
    # The floor the scheme lets `_Witness` assume must be one its block's loop kind respects.
    floors = loop_kinds.handler(FLOOR, lowered.loops)(lowered)
    if scheme.floor is not None and scheme.floor not in floors:
        raise AssertionError(f"scheme {scheme.name} declares the {scheme.floor!r} floor, which its block "
                             f"{lowered.first}..{lowered.last} ({type(lowered.loops).__name__}) may not respect")
    return Block(lowered.first, lowered.last, lowered.scheme, live.block_ram(lowered), lowered.macs, lowered.rows,
                 lowered, scheme.time_rank)


def build_dag(graph: Graph, schemes=SCHEMES, count_io: bool = False, complete: bool = False,
              input_stream: bool = False) -> FusionDAG:
    """The fusion DAG of `graph`: every op alone, and every block the schemes can run, but for the
    blocks that a path of other blocks provably beats (`_Witness`; no solver's answer changes).
    With `complete`, those too (to test the lowerings of every candidate)."""
    # The build allocates hundreds of thousands of objects and frees almost none: the cyclic
    # collector would walk the growing heap again and again for nothing (a quarter of the time).
    # Paused while it runs; anything cyclic it leaves is collected afterwards as usual.
    paused = gc.isenabled()
    gc.disable()
    try:
        return _build_dag(graph, schemes, Liveness(graph, count_io, input_stream), complete)
    finally:
        if paused:
            gc.enable()


def _build_dag(graph: Graph, schemes, live: Liveness, complete: bool) -> FusionDAG:
    n = len(graph)
    blocks = vanilla_blocks(graph, live)
    cache: dict = {}
    bounds = None if complete else _Bounds(graph, live, blocks, cache)
    # Every fused scheme lowers a block of several ops only as a stream (streaming.stream_layout,
    # which needs streaming.stream_end), and stream_end is None for every block first..last that
    # reaches stream_break(first): its walk stops at that op whatever follows. So no block from
    # `first` reaching it has an edge, and the search stops there (the block of op `first` alone
    # is still tried: `inplace` writes one op over its input without streaming).
    reach = [max(first + 1, streaming.stream_break(graph, first, cache)) for first in range(n)]
    fused = registry.check_fused(schemes)
    chains = _HopPaths.of(graph, live, bounds, blocks, fused, cache)
    progress.count(len(fused) * n)  # first ops, scheme by scheme
    for scheme in (registry.SCHEMES[name] for name in fused):
        if chains is not None:
            chains.start(scheme)
        # First ops from the last down, so that a chain witness (`_HopPaths`) may use the blocks
        # kept after `first`; each first op's blocks are put back in ascending order.
        found: list[list[Block]] = [[] for _ in range(n)]
        for first in range(n - 1, -1, -1):
            progress.advance()
            found[first] = _blocks_from(graph, live, scheme, first, reach, bounds, chains, cache)
            if chains is not None:
                chains.settle(first)
        blocks.extend(block for kept in found for block in kept)
    # The geometry memoised for the candidates (band profiles, work tables: most of the build's
    # memory) is not needed again; the lowerings that share the dict recompute what they ask.
    cache.clear()
    return FusionDAG(n, tuple(blocks))


def _blocks_from(graph: Graph, live: Liveness, scheme: registry.Scheme, first: int, reach: list[int],
                 bounds: "_Bounds | None", chains: "_HopPaths | None", cache: dict) -> list[Block]:
    """The kept blocks of `scheme` from op `first`, by last op and rows."""
    kept = []
    witness = None if bounds is None else bounds.witness(scheme, first)
    chained = chains is not None and chains.applies(witness, first)
    own_reach = scheme.reach(graph, first, cache)
    stop = reach[first] if own_reach is None else own_reach
    for last in range(first, stop):  # one op too, for the schemes that take one
        if witness is not None and witness.beats_all_from(last):
            break  # every block first..last' with last' >= last is beaten: none lowered
        if chained and chains.beats(first, last, witness.least_ram_from(last)):
            break  # so is every one by a chain of kept blocks: none lowered
        if witness is not None and witness.beats(last):
            continue  # the block first..last is beaten: not lowered
        for rows in scheme.rows_options(graph, first, last, cache):
            bound = None if witness is None else scheme.bound(graph, live, first, last, rows, cache)
            if witness is not None and witness.beats_bound(last, rows, bound):
                continue  # the block is beaten: not lowered
            if chained and bound is not None and chains.beats(first, last, witness.least_ram(last, bound)):
                continue  # so is it by a chain
            lowered = chains.lower(scheme, first, last, rows) if chained else None
            lowered = lowered or scheme.lower(graph, live, first, last, rows, cache)
            if lowered is None:
                break  # the ops cannot stream together: no setting of rows changes that
            edge = _edge(live, lowered)
            if witness is not None and not witness.keeps(edge):
                continue
            if chained and chains.beats(first, last, edge.ram_bytes):
                continue
            kept.append(edge)
            if chains is not None:
                chains.add(edge)
    return kept


def vanilla_blocks(graph: Graph, live: Liveness | None = None, count_io: bool = False,
                   input_stream: bool = False) -> list[Block]:
    live = live or Liveness(graph, count_io, input_stream)
    return [_edge(live, registry.SINGLE.lower(graph, live, i, i, 1, {})) for i in range(len(graph))]


# Dominated blocks
# ----------------
# A block e from cut u to cut v is dropped when the DAG keeps a path W from u to v whose last
# block is an unfused op (`single`) and which is no worse than e in RAM (peak(W) <= ram(e)) and in
# every cost the solvers add along a path (today MACs, and the MACs run on slow schemes:
# macs x time_rank; a new additive cost must be compared here too). Then every solver answers the
# same with or without e, plan for plan, whatever the cap:
#
# - Least-MAC paths under a RAM limit L (`solvers._shortest`, behind min-RAM, min-MACs, P1, P2):
#   with L >= ram(e) all of W is allowed, so at cut v the candidate through W's last block
#   (d_W = dist[its source] + its costs <= dist[u] + costs(W) <= d_e, component-wise) is at most
#   e's. On equal costs the solver takes the block with less RAM (W's last block has at most
#   ram(e)), then the block met first: W's last block is unfused, and the unfused blocks come
#   first in the DAG (`vanilla_blocks`). So e is never the block chosen at v, and dropping it
#   changes no distance and no choice. With L < ram(e), e was not allowed anyway.
# - The bottleneck (least peak RAM) is unchanged: a path through e goes through W instead.
# - The thresholds P1 and P2 search: the least MACs under L is the same function of L with or
#   without e (above), and it only changes at the RAM of a block on the chosen paths, never e's:
#   both searches end on the same threshold and the same path.
# - The Pareto front (`solvers.pareto_front`): for every label (r, m) at u, the label set at v's
#   predecessor on W holds one at least as good as the path label + W-minus-its-last-block, so the
#   candidates at v include x <= (max(r, ram(e)), m + macs(e)), the candidate e makes, that comes
#   from an unfused block: it sorts before e's (smaller, or equal and met first), so e's is never
#   kept, and taking it away changes no running minimum: the same labels, the same back pointers.
# - Restricted spaces (the heuristic: fused blocks from op 0 only; the paper's: hcache with
#   R = 1): W is made of unfused ops and at most one block with e's first op, scheme and rows,
#   so W lies in every space e does.
# Dropping blocks one at a time, each with its W made of blocks still kept, every step keeps
# every answer; so does dropping them all.
#
# W is the unfused ops first..last, or a kept block first..k of e's scheme and rows, then the
# unfused ops k+1..last (`_Witness`). Most blocks beaten are not even lowered (`_Witness.beats`,
# `beats_all_from`): their costs are bounded below. A row-streamed block (linebuffer, overlap,
# inplace) computes every row of each of its ops at least once when every op's window reaches
# every row of its inputs (`_covered`), so its MACs are at least the unfused ops' (and its
# slow MACs, time_rank x MACs, at least those of a W of unfused MACs); its RAM is at least the
# rings of its inner tensors (`_ring_floor`) plus what it reads or writes.

# A scheme states the kind of floor bounding its blocks' costs before lowering (`Scheme.floor`:
# row streams; `inplace`'s, whose depthwise rows may live in their input's ring; bands and tiles)
# and the axes along which its buffers grow (`Scheme.growing`: `_Bounds.band_floor`). Each loop
# kind states the floors its blocks respect (its FLOOR handler, below); every lowered block is
# checked against its scheme's (`_edge`).


@handles(FLOOR, Whole, Channels)
def _one_op_floors(block: LoweredBlock) -> tuple[str, ...]:
    """One op: no inner tensor, so every floor (of tensors first..last-1) is nothing."""
    return FLOORS


@handles(FLOOR, Stream)
def _stream_floors(block: LoweredBlock) -> tuple[str, ...]:
    """A row stream keeps a ring of whole rows of each inner tensor (`rows`), but for the ones
    homed in their input's ring (`homes`, which a row stream without homes respects too); a column
    stream a band of rows by a ring of columns (`patches`)."""
    if block.loops.axis == 1:
        return ("patches",)
    return ("homes",) if block.homes else ("rows", "homes")


@handles(FLOOR, TimeScan)
def _time_scan_floors(block: LoweredBlock) -> tuple[str, ...]:
    """Steps of sequences, no rows or tiles of maps: no floor (the timescan scheme declares none)."""
    return ()


@handles(FLOOR, Chains)
def _chains_floors(block: LoweredBlock) -> tuple[str, ...]:
    """Chains keep no tensor inside a chain at all: no floor (the chains scheme declares none)."""
    return ()


@handles(FLOOR, Patches)
def _patches_floors(block: LoweredBlock) -> tuple[str, ...]:
    """A tile of each inner tensor, at least its reader's window on both axes."""
    return ("patches",)


class _Bounds:
    """What the witnesses of one graph share: the unfused ops' RAM and MACs, and ring floors."""

    def __init__(self, graph: Graph, live: Liveness, singles: list[Block], cache: dict):
        n = len(graph)
        self.live, self.graph, self.cache = live, graph, cache
        self.band_sums: dict[tuple, list[int]] = {}
        self.ram = [b.ram_bytes for b in singles]
        self.macs = [0, *accumulate(b.macs for b in singles)]  # prefix sums
        self.after = [0] * (n + 1)  # after[i]: the most RAM of one unfused op i..n-1
        for i in range(n - 1, -1, -1):
            self.after[i] = max(self.ram[i], self.after[i + 1])
        self.floors: dict[str, list[int]] = {}  # kind -> prefix sums of the tensors' floors
        readers = streaming.readers_of(graph, {})
        for kinds, union in ((("rows", "homes"), False), (("patches",), True)):
            if _covered(graph, union):
                for kind in kinds:
                    self.floors[kind] = [0, *accumulate(_ring_floor(graph, t, readers.get(t, ()), kind)
                                                        for t in range(n))]
        self.sides = [_ring_sides(graph, t, readers.get(t, ()), "patches") for t in range(n)]

    def witness(self, scheme: registry.Scheme, first: int) -> "_Witness":
        kind = scheme.floor
        floors = self.floors.get(kind)
        return _Witness(self, first, floors, kind != "patches", (scheme.growing or None) if floors else None)

    def band_floor(self, axes: tuple[int, ...], first: int, last: int) -> int:
        """Bytes that the buffers of tensors first..e-1 take at least in any block first..last'
        (last' >= last, any rows) of a scheme growing along `axes` (`Scheme.growing`), e the stream
        end of first..last (`_covered` holding). Such a block's stream end e' is e or later, and it
        keeps each of those tensors' widest band (along each axis in `axes`; a ring of columns
        along the other, at least `_ring_sides`) over the bands of e'. That band is at least
        the narrowest band that one position of e needs (`streaming.band_profile` of 1 row):
        each band of e' needs a range of e's positions, not empty for some band (the bands of
        e' cover e, `_covered`), and through every reader's window a wider range of a tensor's
        readers needs a wider range of it, while the bands of e' may add readers, never drop
        one. Summed from e down, once per stream end, as far as blocks start."""
        graph, cache = self.graph, self.cache
        end = streaming.stream_end(graph, first, last, cache)
        if end is None or end <= first:
            return 0
        sums = self.band_sums.setdefault((axes, end), [0])  # sums[k]: tensors end-k..end-1
        if end - len(sums) >= first:
            profiles = [streaming.band_profile(graph, end, 1, cache, axis, first) for axis in axes]
            for t in range(end - len(sums), first - 1, -1):
                sums.append(sums[-1] + self._band_bytes(t, axes, profiles))
        return sums[end - first]

    def _band_bytes(self, t: int, axes: tuple[int, ...], profiles: list[dict]) -> int:
        """The least bytes of tensor t's band or tile buffer (`band_floor`)."""
        sides = self.sides[t]
        if sides is None:
            return 0
        sides = list(sides)
        for axis, profile in zip(axes, profiles):
            if t in profile:
                sides[axis] = max(sides[axis], profile[t][2])
        graph = self.graph
        return sides[0] * sides[1] * graph.shape_of(t)[2] * graph.element_of(t).nbytes

    def reads(self, first: int) -> int:
        """Bytes of the arena tensors op `first` reads: any block from it holds them (but the
        network input under --input-stream, which a row stream pulls instead: `stream_input`)."""
        live = self.live
        return sum(live.nbytes(t) for t in set(self.graph.nodes[first].inputs)
                   if live.in_arena(t) and not (live.input_stream and is_network_input(t)))

    def output(self, last: int) -> int:
        live = self.live
        return live.nbytes(last) if live.in_arena(last) else 0


class _Witness:
    """The witnesses W for the blocks of one scheme from op `first`, as the build walks `last` up:
    per rows setting, the staircase of (excess MACs, peak RAM) of the W that no other beats in
    both, where excess = MACs(W) - MACs(unfused ops first..last). The unfused ops are (0, their
    peak); a kept block first..k of excess x and RAM r adds (x, max(r, RAM of ops k+1..last)).
    A block of excess x and RAM r is beaten when a W has excess <= x and peak <= r: then W costs
    no more MACs, and no more slow MACs (at most its prefix's MACs x time_rank, and the block's
    scheme is the prefix's)."""

    def __init__(self, bounds: _Bounds, first: int, floors: list[int] | None, one_rows: bool,
                 growing: tuple[int, ...] | None):
        self.bounds, self.first, self.floors = bounds, first, floors
        self.growing = growing  # the axes along which the scheme's buffers grow (`Scheme.growing`), if floored
        self.one_rows = one_rows  # the scheme has one rows setting (1)
        self.last = first
        self.vanilla = bounds.ram[first]  # peak of the unfused ops first..self.last
        self.stairs: dict[int, list[tuple[int, int]]] = {}  # rows -> (excess, peak) of prefixed W
        self.fresh: dict[int, list[tuple[int, int]]] = {}  # rows -> (excess, RAM) of kept blocks ending at self.last
        self.reads = bounds.reads(first)

    def _reach(self, last: int) -> None:
        ram = self.bounds.ram
        while self.last < last:
            self.last += 1
            r = ram[self.last]
            self.vanilla = max(self.vanilla, r)
            fresh, self.fresh = self.fresh, {}
            for rows in fresh.keys() - self.stairs.keys():
                self.stairs[rows] = []
            for rows, points in self.stairs.items():
                if rows not in fresh and points[-1][1] >= r:
                    continue  # every peak is at least op last's RAM already
                self.stairs[rows] = _staircase((x, max(peak, r)) for x, peak in points + fresh.get(rows, []))

    def _peak(self, rows: int, excess: int) -> int | None:
        """The least peak of a W for a block of `rows` with `excess` MACs over the unfused ops."""
        best = self.vanilla if excess >= 0 else None
        for x, peak in reversed(self.stairs.get(rows, ())):  # peaks fall as excesses grow
            if x <= excess:
                return peak if best is None or peak < best else best
        return best

    def _floor(self, last: int) -> int:
        """Ring floors of tensors first..last-1."""
        return self.floors[last] - self.floors[self.first]

    def beats(self, last: int) -> bool:
        """Whether the block first..last of the scheme (a row scheme: one rows setting) is beaten
        without being lowered: its MACs are at least the unfused ones (`_covered`), its RAM
        at least the ring floors of its inner tensors plus the larger of what op `first` reads and
        its output (the two share bytes at best when the output is placed over the input, and
        `Liveness.block_ram` counts every arena tensor it reads and writes), and a W of excess
        <= 0 has no more RAM."""
        if self.growing is not None:  # every rows setting at once: the unfused ops are a W for each
            self._reach(last)
            floor = self.bounds.band_floor(self.growing, self.first, last)
            return floor + max(self.reads, self.bounds.output(last)) >= self.vanilla
        if self.floors is None or not self.one_rows:
            return False
        self._reach(last)
        return self._floor(last) + max(self.reads, self.bounds.output(last)) >= self._peak(1, 0)

    def beats_bound(self, last: int, rows: int, bound: tuple[int, int] | None) -> bool:
        """Whether the block first..last of `rows` is beaten without being lowered, from its
        scheme's `bound`: its MACs, and its scratch bytes at least, to which its RAM adds at
        least the larger of what op `first` reads and its output (as in `beats`)."""
        if bound is None:
            return False
        self._reach(last)
        macs = bound[0]
        excess = macs - (self.bounds.macs[last + 1] - self.bounds.macs[self.first])
        peak = self._peak(rows, excess)
        return peak is not None and peak <= self.least_ram(last, bound)

    def least_ram(self, last: int, bound: tuple[int, int]) -> int:
        """The least RAM of the block first..last whose scheme's `bound` this is."""
        return bound[1] + max(self.reads, self.bounds.output(last))

    def beats_all_from(self, last: int) -> bool:
        """Whether every block first..last' (last' >= last) of the scheme, of any rows, is beaten
        without being lowered: its MACs are at least the unfused ones (`_covered`), its RAM at
        least floor(first..last') + reads >= floor(first..last) + reads, while the W of excess
        <= 0 for it (of its rows; the unfused ops for a scheme of several rows settings) peaks at
        most at max(their peak for `last`, the RAM of any unfused op after `last`)."""
        if self.floors is None:
            return False
        self._reach(last)
        peak = self._peak(1, 0) if self.one_rows else self.vanilla
        return self.least_ram_from(last) >= max(peak, self.bounds.after[last + 1])

    def least_ram_from(self, last: int) -> int:
        """The least RAM of any block first..last' (last' >= last, any rows) of the scheme: the
        floors of its inner tensors first..last-1 and what op `first` reads (floored schemes only)."""
        floor = self._floor(last)
        if self.growing is not None:
            floor = max(floor, self.bounds.band_floor(self.growing, self.first, last))
        return floor + self.reads

    def keeps(self, edge: Block) -> bool:
        """Whether a lowered block first..last is kept (no W beats it); a kept block is a witness
        for the longer blocks of its rows."""
        self._reach(edge.last)
        excess = edge.macs - (self.bounds.macs[edge.last + 1] - self.bounds.macs[self.first])
        # What `beats` assumes of the blocks it does not lower, checked on those it does.
        assert self.floors is None or excess >= 0, f"block {self.first}..{edge.last} below the unfused MACs"
        assert self.growing is None or edge.ram_bytes >= self.bounds.band_floor(self.growing, self.first, edge.last) \
            + self.reads, f"block {self.first}..{edge.last} below its band floor"
        peak = self._peak(edge.rows, excess)
        if peak is not None and peak <= edge.ram_bytes:
            return False
        self.fresh.setdefault(edge.rows, []).append((excess, edge.ram_bytes))
        return True


def _staircase(points) -> list[tuple[int, int]]:
    """The (excess, peak) points that no other is at most in both, by excess."""
    stairs = []
    for x, peak in sorted(points):
        if not stairs or peak < stairs[-1][1]:
            stairs.append((x, peak))
    return stairs


# Chains of kept blocks
# ---------------------
# A chain of 1x1 convolutions streams with almost no ring per op: a block of hundreds of them
# keeps less RAM than one unfused op, so no W above (whose tail is unfused ops) beats it and the
# DAG held a quadratic number of blocks. A block e from cut u > 0 is also dropped when, for every
# cut v it may reach, a path W of kept blocks (`_HopPaths.hops`: each of at most SPAN ops and MACs
# no more than its unfused ops) joins u to v with every block of less RAM than e, strictly, and
# e's RAM is above Q(u), the peak of some such path from cut 0 to u. Every block of a floored
# scheme has at least its unfused ops' MACs (`_covered`; `_HopPaths.of` needs every scheme floored),
# so W costs no more MACs than e, nor slow MACs: its blocks rank no higher (`_HopPaths.admits`).
#
# - `solvers._shortest` under a limit L >= ram(e): the candidate at v through W's last block
#   costs at most e's (as above) and has less RAM: e is never the block chosen at v.
# - Bottleneck and thresholds: as above.
# - `solvers.pareto_front`: a label (r, m) at u has r <= Q(u), since the label of least MACs
#   (the unfused MACs) has the least peak among the paths of those MACs. So e's candidate is
#   (ram(e), m + macs(e)), and one through W has less RAM and no more MACs: e's is never kept.
# - Restricted spaces: u > 0 keeps e out of the heuristic's; for the paper's space (an hcache
#   block of one row), W and Q use unfused ops and hcache blocks of one row only.
# The scan from u stops once the least RAM of every longer block of the scheme
# (`_Witness.least_ram_from`) is so beaten; the build walks first ops down so that the blocks
# after u are known. Q may use lowered blocks later dropped: each has a W of kept blocks no worse.


class _HopPaths:
    """The hops (short kept blocks of no excess MACs) of one build, the peaks their paths reach
    from each cut to all later ones (`tails`), and from cut 0 to each cut (`reached`)."""

    SPAN = 6  # ops of a hop at most: longer blocks are left out (the bounds are then only looser)
    GAP = 3  # tails[g][c]: the least peak joining cut c to each cut c + g and beyond, for g <= GAP

    def __init__(self, graph: Graph, live: Liveness, macs: list[int], cache: dict):
        self.graph, self.live, self.macs, self.cache = graph, live, macs, cache
        self.n = len(graph)
        # class -> cut -> {destination cut: least RAM of a hop}
        self.hops = {hop_class: [{} for _ in range(self.n + 1)] for hop_class in ("paper", "rank0", "rank1")}
        self.probes: dict[tuple[int, int], LoweredBlock] = {}
        self.hop_class = "rank1"

    @classmethod
    def of(cls, graph: Graph, live: Liveness, bounds: "_Bounds | None", singles: list[Block], fused, cache: dict):
        """The chains of a build, or None when some block may cost fewer MACs than its unfused
        ops (a scheme without a floor, or whose floor `_covered` does not grant)."""
        schemes = [registry.SCHEMES[name] for name in fused]
        if bounds is None or any((s.floor is None or s.floor not in bounds.floors) and not _blockless(graph, s, cache)
                                 for s in schemes):
            return None
        chains = cls(graph, live, bounds.macs, cache)
        for block in singles:
            chains.add(block)
        if registry.PAPER_SCHEME in fused:
            chains._probe(registry.SCHEMES[registry.PAPER_SCHEME])
        return chains

    def _probe(self, scheme: registry.Scheme) -> None:
        """Lowers the blocks of two and three ops of one row of the paper's scheme first, for the
        peaks from cut 0 (`reached`) of its pass; the pass takes their lowerings back (`lower`)."""
        graph, live = self.graph, self.live
        for first in range(self.n):
            reach = streaming.stream_break(graph, first, self.cache)
            for last in range(first + 1, min(first + 3, reach, self.n)):
                if 1 not in scheme.rows_options(graph, first, last, self.cache):
                    break
                lowered = scheme.lower(graph, live, first, last, 1, self.cache)
                if lowered is None:
                    break
                self.probes[(first, last)] = lowered
                self._add_hop(_edge(live, lowered))

    def lower(self, scheme: registry.Scheme, first: int, last: int, rows: int) -> LoweredBlock | None:
        """A probed lowering of the block, if there is one."""
        return self.probes.pop((first, last), None) if rows == 1 and scheme.name == registry.PAPER_SCHEME else None

    def admits(self, hop_class: str, block: Block) -> bool:
        if hop_class == "paper":
            return not registry.is_fused(block) or (block.scheme == registry.PAPER_SCHEME and block.rows == 1)
        return block.time_rank <= (0 if hop_class == "rank0" else 1)

    def add(self, block: Block) -> None:
        """A kept block: a hop if it is short and costs no more MACs than its unfused ops."""
        self._add_hop(block)

    def _add_hop(self, block: Block) -> None:
        if block.last - block.first >= self.SPAN or block.macs > self.macs[block.dst] - self.macs[block.src]:
            return
        for hop_class, hops in self.hops.items():
            if self.admits(hop_class, block):
                out = hops[block.src]
                out[block.dst] = min(out.get(block.dst, block.ram_bytes), block.ram_bytes)

    def start(self, scheme: registry.Scheme) -> None:
        """A scheme's pass begins: its class of hops, and the peaks from cut 0 over those known."""
        self.hop_class = "paper" if scheme.name == registry.PAPER_SCHEME else f"rank{min(scheme.time_rank, 1)}"
        hops = self.hops["paper" if self.hop_class == "paper" else "rank1"]
        reached = [math.inf] * (self.n + 1)
        reached[0] = -math.inf
        for cut in range(self.n):
            for dst, ram in hops[cut].items():
                reached[dst] = min(reached[dst], max(reached[cut], ram))
        self.reached = reached
        self.tails = [None] + [[math.inf] * self.n + [-math.inf] for _ in range(self.GAP)]

    def applies(self, witness: "_Witness | None", first: int) -> bool:
        """Whether blocks from `first` may be dropped for a chain (floored, not from the input)."""
        return witness is not None and witness.floors is not None and first > 0

    def _covers(self, cut: int, hops: dict[int, int], v: int) -> float:
        """The least peak of a path from `cut` to v through one of its hops and the tails."""
        best = math.inf
        for dst, ram in hops.items():
            if dst == v:
                best = min(best, ram)
            elif dst < v:
                best = min(best, max(ram, self.tails[min(v - dst, self.GAP)][dst]))
        return best

    def _peaks(self, cut: int, hops: dict[int, int], start: int) -> float:
        """The least peak that joins `cut` to every cut from `start` on (an upper bound)."""
        if not hops:
            return math.inf
        tail = min(max(ram, self.tails[self.GAP][dst]) for dst, ram in hops.items())
        top = min(max(hops) + self.GAP, self.n + 1)
        return max([tail] + [self._covers(cut, hops, v) for v in range(start, top)])

    def settle(self, cut: int) -> None:
        """Every block of the pass's scheme from `cut` is known: its tails."""
        hops = self.hops[self.hop_class][cut]
        for gap in range(1, self.GAP + 1):
            self.tails[gap][cut] = self._peaks(cut, hops, cut + gap)

    def beats(self, first: int, last: int, ram: int) -> bool:
        """Whether a block first..last' of `ram` bytes at least is dropped, for every last' >= last."""
        if ram <= self.reached[first]:
            return False
        hops = {dst: r for dst, r in self.hops[self.hop_class][first].items() if r < ram}
        return self._peaks(first, hops, last + 1) < ram


def _blockless(graph: Graph, scheme: registry.Scheme, cache: dict) -> bool:
    """Whether a scheme makes no block of the graph (its reach from every op is that op)."""
    return all(scheme.reach(graph, first, cache) == first for first in range(len(graph)))


def _covered(graph: Graph, union: bool) -> bool:
    """Whether a stream computes every position of each of its ops at least once, and so at least
    the unfused ops' MACs: every tensor but the output is read, the MACs of a row op are a whole
    number per output pixel (`streaming.pixel_macs`), and its output reads every row of each
    feature-map input: over its whole output (row streams: the hull of the rows one sweep reads),
    or position by position along both axes (`union`: cutting its output into bands or tiles of
    any size then loses no row or column of its input; by induction from the stream end, whose
    bands or tiles cover it, each tensor's ranges over all bands cover it, and the widest range
    spans at least its reader's window, `streaming.window_ring`)."""
    last_use = graph.last_use()
    for c, node in enumerate(graph.nodes):
        if c != graph.output and last_use.get(c, -1) <= c:
            return False
        if node.op.pattern not in streaming.ROW_PATTERNS or len(node.shape) != 3:
            continue
        if graph.macs(c) % (node.shape[0] * node.shape[1]):
            return False
        for u in node.inputs:
            if len(graph.shape_of(u)) != 3:
                continue
            for axis in (0, 1) if union else (0,):
                window, size = node.op.axis_window(axis), graph.shape_of(u)[axis]
                if not union:
                    if window.span(0, node.shape[0], size)[:2] != (0, size):
                        return False
                    continue
                reached = 0  # positions [0, reached) read so far
                for i in range(node.shape[axis]):
                    a, b = window.span(i, i + 1, size)[:2]
                    if a > reached:
                        return False
                    reached = max(reached, b)
                if reached < size:
                    return False
    return True


def _ring_floor(graph: Graph, t: int, readers: tuple[int, ...], kind: str) -> int:
    """The least scratch bytes tensor t takes in any block of the `kind` of scheme that streams it
    (`_covered` holding): a ring of the rows its one reader's window spans by its whole width
    (`rows`; `streaming.window_ring`), or a band or tile of at least that window (`patches`);
    one position along an axis if it has several readers or is not read by a row op (a tail's
    first op reads the stream end a position at a time); none if it is not a feature map, is a
    view, or may live in its input's ring (`homes`: `inplace` homes a depthwise row there)."""
    sides = _ring_sides(graph, t, readers, kind)
    return 0 if sides is None else sides[0] * sides[1] * graph.shape_of(t)[2] * graph.element_of(t).nbytes


def _ring_sides(graph: Graph, t: int, readers: tuple[int, ...], kind: str) -> tuple[int, int] | None:
    """The (rows, columns) of `_ring_floor`, or None when it is none."""
    shape, op = graph.shape_of(t), graph.nodes[t].op
    if len(shape) != 3 or op.is_view or (kind == "homes" and op.in_place_channels()):
        return None
    rows, cols = 1, 1 if kind == "patches" else shape[1]
    if len(readers) == 1:
        reader = graph.nodes[readers[0]]
        if reader.op.pattern is Pattern.WINDOW and len(reader.shape) == 3:
            rows = streaming.window_ring(graph, t, readers[0], 0)
            if kind == "patches":
                cols = streaming.window_ring(graph, t, readers[0], 1)
    return rows, cols

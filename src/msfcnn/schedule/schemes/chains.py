"""`chains`: rows stream through chains of three ops, each chain computed pixel by pixel.

A chain is an op that computes a region (a conv, 3x3 or 1x1), an int8 depthwise conv of multiplier
1, and an op of a 1x1 window (a 1x1 conv). An output pixel of the chain is made from the chain's
input alone: for each kernel row of the depthwise window, the first op computes the values under
it (a short row of pixels, on the stack), the depthwise sums add them tap by tap, and the last op
turns the finished depthwise pixel into the output pixel. So the first op is recomputed for every
depthwise tap over it (counted in MACs), and no tensor inside a chain is ever stored. Only the
chains' inputs are kept, in rings of the rows their chain still reads: the network input pulled
from the caller (under --input-stream, in a block from op 0), and each chain's output that the
next chain reads. The last chain writes the block's output whole.
"""

from __future__ import annotations

from .. import streaming
from ...ir import NETWORK_INPUT, Graph
from ...ops import CCall, Pattern
from ..lowered import Chains, LoweredBlock, Scratch, block_reads
from .base import Scheme

SPATIAL = (Pattern.WINDOW, Pattern.ELEMENTWISE)


def chain_at(graph: Graph, start: int, readers: dict) -> bool:
    """Whether ops start, start + 1 and start + 2 form a chain: int8 feature maps; the first op a
    one-input region kernel; the second a depthwise conv that a kernel may accumulate tap by tap
    (`Op.tap_parts`) reading only the first; the third a one-input region kernel of the identity
    window on both axes reading only the second; the first two tensors read by nothing else."""
    if start + 2 >= len(graph):
        return False
    nodes = graph.nodes[start:start + 3]
    for t, node in zip(range(start, start + 3), nodes):
        if len(node.shape) != 3 or len(node.inputs) != 1 or graph.kernel_element(t).name != "int8" \
                or graph.element_of(t).name != "int8" or node.op.c_call is not CCall.REGION \
                or node.op.pattern not in SPATIAL:
            return False
    if len(graph.shape_of(nodes[0].inputs[0])) != 3:
        return False
    if nodes[1].inputs != (start,) or nodes[2].inputs != (start + 1,) or not nodes[1].op.tap_parts("p", nodes[1].shape[2]):
        return False
    if readers.get(start, ()) != (start + 1,) or readers.get(start + 1, ()) != (start + 2,):
        return False
    last = nodes[2].op
    return all((w.kernel, w.stride, w.pad) == (1, 1, 0) for w in (last.axis_window(0), last.axis_window(1))) \
        and nodes[2].shape[:2] == nodes[1].shape[:2]


def reads_every_row(graph: Graph, start: int) -> bool:
    """Whether the chain's first op reads its input to the last row and column (a VALID window
    whose stride leaves the last ones out reads less): the walker and the C make a chain's rows as
    the next chain reads them, and the block's MACs count every row of every chain."""
    node = graph.nodes[start]
    source, out = graph.shape_of(node.inputs[0]), graph.shape_of(start)
    for axis in (0, 1):
        w = node.op.axis_window(axis)
        if (out[axis] - 1) * w.stride - w.pad + w.kernel < source[axis]:
            return False
    return True


class ChainsScheme(Scheme, name="chains", template="chains", order=50, time_rank=1):
    """rows stream through conv -> depthwise -> 1x1 chains made pixel by pixel; each chain's first op recomputed for every depthwise tap, only chain inputs kept"""

    def reach(self, graph, first, cache):
        """One past the last op of the run of chains from `first` (`first` itself when no chain
        starts there), within the streams' reach: the DAG tries no chains block beyond it, and a
        graph without chains keeps `exact`'s pruning, which a scheme without a floor turns off."""
        key = ("chains reach", first)
        if key not in cache:
            readers = streaming.readers_of(graph, cache)
            chains = cache.setdefault("chains", {})
            limit = streaming.stream_break(graph, first, cache)
            end = first
            while end + 3 <= limit:
                if end not in chains:
                    chains[end] = chain_at(graph, end, readers)
                if not chains[end]:
                    break
                end += 3
                if readers.get(end - 1, ()) != (end,):
                    break  # this chain's output is read by more than the next chain
            cache[key] = end
        return cache[key]

    def lower(self, graph, live, first, last, rows, cache):
        if (last - first + 1) % 3 or rows != 1:
            return None
        readers = streaming.readers_of(graph, cache)
        chains = cache.setdefault("chains", {})
        for start in range(first, last + 1, 3):
            if start not in chains:
                chains[start] = chain_at(graph, start, readers)
            if not chains[start]:
                return None
            if start > first and not reads_every_row(graph, start):
                return None  # the chain before would make rows that no one reads
            # a chain's output is read by the next chain alone, or (the last) is the block output
            if start + 2 < last and readers.get(start + 2, ()) != (start + 3,):
                return None
        if any(live.last_use.get(t, -1) > last for t in range(first, last)):
            return None
        return lower_chains(graph, live, first, last, self.name)

    def explain(self, block):
        return ("chains: rows stream through chains of three ops (a region op, a depthwise conv, a 1x1 op), each "
                "chain output pixel made from the chain's input: the first op is recomputed for every depthwise "
                "tap over it, and only the chains' inputs are kept, in rings of rows.")


def lower_chains(graph: Graph, live, first: int, last: int, scheme: str) -> LoweredBlock:
    """The block of chains first..last (`ChainsScheme.lower` checked them): its rings, MACs and
    recompute factors; under --input-stream a block from op 0 pulls the network input itself."""
    reads = block_reads(graph, first, last)
    source = (live.input_stream and first == 0 and reads == (NETWORK_INPUT,) and len(graph.input_tensors) == 1
              and live.last_use[NETWORK_INPUT] <= first)
    loops = Chains(graph, first, last, source)
    rings = {}
    for start in loops.starts:
        if start > first or source:
            rings[loops.input_of(start)] = loops.ring(start)
    scratch = tuple(Scratch.of(graph, f"ring{t}", (k, *graph.shape_of(t)[1:]), t) for t, k in rings.items())
    macs, factors = 0, []
    for start in loops.starts:
        positions = loops.tap_positions(start)
        macs += streaming.pixel_macs(graph, start) * positions + graph.macs(start + 1) + graph.macs(start + 2)
        h, w = graph.shape_of(start)[:2]
        factors += [positions / (h * w), 1.0, 1.0]
    if source:
        reads = ()
    return LoweredBlock(first, last, scheme, 1, reads, None, scratch, macs, loops, rings, tuple(factors))


SCHEME = ChainsScheme()

"""`inplace` (TinyEngine's in-place depthwise): one op whose output channel c reads only input
channel c (a depthwise conv with multiplier 1) writes its output over its own input, a channel at
a time through one plane of out_h x out_w values.

The output starts where the input starts; channel c's values land on bytes of input channel c
only, which is dead once its plane is computed. RAM: input + one plane, instead of input +
output. As for `overlap`, the input must be the tensor made just before, on top of its end.
"""

from __future__ import annotations

from ..lowered import Channels, LoweredBlock, Scratch, block_reads
from .base import Scheme
from .placement import on_top


class InPlace(Scheme, name="inplace", template="single", order=5, time_rank=1):
    """a depthwise conv written over its own input, a channel at a time through one plane"""

    def lower(self, graph, live, first, last, rows, cache):
        source = first - 1
        node = graph.nodes[first]
        if first != last or node.inputs != (source,) or not on_top(graph, source):
            return None
        if not (node.op.in_place_channels() and live.in_arena(source) and live.in_arena(first)
                and live.last_use[source] == first):
            return None
        (h, w, _), (out_h, out_w, _) = graph.shape_of(source), node.shape
        if out_h * out_w > h * w:
            return None  # a padded map larger than its input would run past it
        plane = Scratch("plane", (out_h, out_w), graph.dtype)
        return LoweredBlock(first, last, self.name, 1, block_reads(graph, first, last), None, (plane,),
                            graph.macs(first), Channels(plane), recompute=(1.0,), placed_on=(source, 0))

    def explain(self, block):
        return ("inplace: the output is written over the input, a channel at a time: each output channel is "
                "computed into a plane, then copied over the input channel it read.")


SCHEME = InPlace()

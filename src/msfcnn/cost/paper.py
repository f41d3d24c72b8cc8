"""The `paper` cost model: msf-CNN's reference numbers (docs/cost-models.md), reproduced to the byte.

The reference defines it for plain chains of conv2d / depthwise_conv2d / pooling layers with
square kernels, equal strides and symmetric padding: there it gives the reference's numbers
exactly. Rectangular kernels and asymmetric (TFLite SAME) padding use the same formulas with
their vertical and horizontal parts taken apart. Activations are one byte per element. Fused blocks use the H-cache scheme with one
output row per step. The reference's quirks are kept on purpose (each is marked "quirk"),
because the paper's Table 1 depends on them.

On other graphs (residual adds, pooling heads, dense layers) every op is a single-op candidate
whose RAM is its inputs, its output and the skip tensors waiting across it, and only runs of
reference layers without skip sources inside can be fused.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import UserError
from ..fusion.dag import Block, FusionDAG
from ..ir import Graph, is_network_input
from ..schedule.schemes import PAPER_SCHEME, SINGLE

NAME = "paper"
SCHEMES = (PAPER_SCHEME,)


@dataclass(frozen=True)
class Layer:
    """One layer as the reference sees it (kernel k, stride s, padding p), generalised to
    rectangular kernels and asymmetric padding: vertical quantities (kh, s, pad_top, pad_bottom)
    drive the row tiling, kw is the width of the H-cache. For square kernels and symmetric padding
    every formula below is the reference's."""

    kh: int
    kw: int
    s: int
    pad_top: int
    pad_bottom: int
    c_in: int
    c_out: int
    h_in: int
    w_in: int
    h_out: int
    w_out: int
    macs_per_element: int  # MACs per output element: C_in*kh*kw for conv, kh*kw otherwise

    @property
    def in_size(self) -> int:
        return self.h_in * self.w_in * self.c_in

    @property
    def out_size(self) -> int:
        return self.h_out * self.w_out * self.c_out


def layer_of(graph: Graph, i: int) -> Layer | None:
    """Node i as a reference layer (conv / depthwise / pooling), or None: only those can be fused."""
    node = graph.nodes[i]
    if node.op.window is None:  # conv, depthwise and pooling layers: the reference's layers
        return None
    win = node.op.window
    (kh, kw), top, bottom = win.extent, win.pads[0], win.pads[2]  # a dilated window's receptive field
    h, w, c = graph.input_shapes(i)[0]
    per_element = graph.macs(i) // graph.elements(i)  # C_in*kh*kw for a conv, kh*kw for the others
    return Layer(kh, kw, win.strides[0], top, bottom, c, node.shape[2], h, w, node.shape[0], node.shape[1],
                 per_element)


def tile_and_stride(layers: list[Layer]) -> tuple[int, int]:
    """Input tile height and tile stride of a block producing one output row per step."""
    tile, stride = 1, 1
    for layer in reversed(layers):
        tile = (tile - 1) * layer.s + layer.kh
        stride *= layer.s
    return tile, stride


def hcache_buffers(layers: list[Layer], tile: int, stride: int) -> int:
    """Sum over layers of kw * tile rows * C_in for the last tile the reference visits.

    Quirk: the reference sizes each layer's cache from the bottom tile of its sweep, whose row
    count includes the bottom padding (and the top padding when the tile's row index, divided by
    the stride accumulated *including* this layer, is 0).
    """
    row = ((layers[0].h_in - tile) // stride) * stride
    rows, cum_stride, total = tile, 1, 0
    for layer in layers:
        cum_stride *= layer.s
        total += layer.kw * rows * layer.c_in
        row_here = row // cum_stride
        out_rows = rows - layer.kh
        if row_here == 0:
            out_rows += layer.pad_top
        if row_here + rows >= layer.h_in:
            out_rows += layer.pad_bottom
        rows = out_rows // layer.s + 1
    return total


def hcache_macs(layers: list[Layer], tile: int, stride: int) -> int:
    """MACs of a block, recomputing the vertical overlap of consecutive row tiles (reference formula)."""
    total = 0
    for layer in layers:
        tile_rows = (layer.h_in + layer.pad_top + layer.pad_bottom - tile) // stride + 1
        rows_per_tile = (tile - layer.kh) // layer.s + 1
        total += tile_rows * layer.w_out * rows_per_tile * layer.c_out * layer.macs_per_element
        tile = rows_per_tile
        stride //= layer.s
    return total


class _Liveness:
    """Which activation tensors occupy RAM while ops first..last run (paper model conventions).

    The network input is the caller's buffer and never counts; the network output counts only when
    asked (the reference's vanilla figure). A skip tensor produced before the ops and read after
    them is charged to every block that runs while it waits for its add. On a plain chain this is
    exactly the reference's "input + output".
    """

    def __init__(self, graph: Graph):
        self.graph = graph
        self.last_use = graph.last_use()

    def waiting(self, first: int, last: int) -> int:
        """Bytes of tensors produced before `first` (other than the block input) read after `last`."""
        return sum(self.graph.elements(t) for t in range(first - 1)
                   if self.last_use.get(t, -1) > last)

    def single_ram(self, i: int, count_output: bool) -> int:
        reads = {t for t in self.graph.nodes[i].inputs if not is_network_input(t)}
        ram = sum(self.graph.elements(t) for t in reads)
        if i < len(self.graph) - 1 or count_output:
            ram += self.graph.elements(i)
        return ram + sum(self.graph.elements(t) for t in range(i)
                         if t not in reads and self.last_use.get(t, -1) > i)


def single_block(graph: Graph, live: _Liveness, i: int, count_output: bool = False) -> Block:
    """An unfused op: its inputs, its output and the skip tensors waiting across it."""
    return Block(i, i, SINGLE.name, live.single_ram(i, count_output), graph.macs(i))


def hcache_block(graph: Graph, live: _Liveness, layers: list[Layer], first: int, last: int) -> Block | None:
    """A fused H-cache block over layers[first..last] (reference layers of ops first..last), or None
    when its input tile exceeds the block input (not a candidate)."""
    inner = layers[first:last + 1]
    tile, stride = tile_and_stride(inner)
    if tile > inner[0].h_in or tile > inner[0].w_in:
        return None
    ram = hcache_buffers(inner, tile, stride) + live.waiting(first, last)
    if first > 0:
        ram += inner[0].in_size
    if last < len(graph) - 1:
        ram += inner[-1].out_size
    return Block(first, last, PAPER_SCHEME, ram, hcache_macs(inner, tile, stride))


def _fusable_runs(graph: Graph, layers: list[Layer | None], live: _Liveness):
    """(first, last) pairs of consecutive reference layers forming a chain whose inner tensors
    are read only by the next op (skip sources and adds end a block; they run unfused)."""
    n = len(graph)
    for first in range(n):
        if layers[first] is None:
            continue
        for last in range(first + 1, n):
            if (layers[last] is None or graph.nodes[last].inputs != (last - 1,)
                    or live.last_use.get(last - 1) != last):
                break
            yield first, last


def _with_io(blocks: list[Block], graph: Graph, count_io: bool) -> list[Block]:
    """--count-io under the paper's conventions: the caller's input and output for every block (and
    a stateful graph's state buffers, which every block keeps, whatever the option)."""
    io = (graph.nbytes(-1) + graph.nbytes(graph.output) if count_io else 0) + graph.state_bytes
    return [replace(b, ram_bytes=b.ram_bytes + io) for b in blocks] if io else blocks


def build_dag(graph: Graph, schemes=SCHEMES, count_io: bool = False) -> FusionDAG:
    unknown = set(schemes) - set(SCHEMES)
    if unknown:
        raise UserError(f"the paper cost model has only the hcache scheme (got {', '.join(sorted(unknown))})")
    if graph.dtype == "int16" or graph.mixed:  # its formulas count one byte a value
        raise UserError("the paper cost model counts one byte a value: use the exact cost model for int16 "
                        "(16x8) models and models with float32 islands")
    live = _Liveness(graph)
    layers = [layer_of(graph, i) for i in range(len(graph))]
    blocks = [single_block(graph, live, i) for i in range(len(graph))]
    for first, last in _fusable_runs(graph, layers, live) if PAPER_SCHEME in schemes else ():
        block = hcache_block(graph, live, layers, first, last)
        if block is not None:
            blocks.append(block)
    return FusionDAG(len(graph), tuple(_with_io(blocks, graph, count_io)))


def vanilla_blocks(graph: Graph, count_io: bool = False) -> list[Block]:
    """Every op unfused. Quirk: the reference's vanilla figure counts the network output."""
    live = _Liveness(graph)
    return _with_io([single_block(graph, live, i, count_output=True) for i in range(len(graph))], graph, count_io)

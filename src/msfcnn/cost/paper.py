"""The `paper` cost model: msf-CNN's reference numbers (SPEC 3.1), reproduced to the byte.

Defined for plain chains of conv2d / depthwise_conv2d / pooling layers with square kernels,
equal strides and symmetric padding. Activations are one byte per element. Fused blocks use the
H-cache scheme with one output row per step. The reference's quirks are kept on purpose (each is
marked "quirk"), because the paper's Table 1 depends on them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UserError
from ..fusion.dag import Block, FusionDAG
from ..ir import Graph
from ..ops import AvgPool2D, Conv2D, DepthwiseConv2D, MaxPool2D

NAME = "paper"
SCHEMES = ("hcache",)
_SPATIAL = (Conv2D, DepthwiseConv2D, MaxPool2D, AvgPool2D)


@dataclass(frozen=True)
class Layer:
    """One layer as the reference sees it: square kernel k, stride s, symmetric padding p."""

    k: int
    s: int
    p: int
    c_in: int
    c_out: int
    h_in: int
    w_in: int
    h_out: int
    w_out: int
    macs_per_element: int  # MACs per output element: C_in*k^2 for conv, k^2 otherwise

    @property
    def in_size(self) -> int:
        return self.h_in * self.w_in * self.c_in

    @property
    def out_size(self) -> int:
        return self.h_out * self.w_out * self.c_out

    @property
    def macs(self) -> int:
        return self.h_out * self.w_out * self.c_out * self.macs_per_element


def layers_of(graph: Graph) -> list[Layer]:
    """The graph as the reference's layer list; UserError if it is not such a chain."""
    if not graph.is_chain():
        raise UserError("the paper cost model takes plain chains only (no residual adds); use --cost-model exact")
    layers = []
    for i, node in enumerate(graph.nodes):
        op = node.op
        if not isinstance(op, _SPATIAL):
            raise UserError(f"the paper cost model takes conv2d/depthwise_conv2d/pooling chains; "
                            f"layer {i} is {op.kind}; use --cost-model exact")
        win = op.window
        (kh, kw), (sh, sw), pads = win.kernel, win.strides, win.pads
        if kh != kw or sh != sw or len(set(pads)) != 1:
            raise UserError(f"the paper cost model needs square kernels and strides and symmetric padding "
                            f"(layer {i}); use --cost-model exact")
        h, w, c = graph.input_shapes(i)[0]
        per_element = c * kh * kh if isinstance(op, Conv2D) else kh * kh
        layers.append(Layer(kh, sh, pads[0], c, node.shape[2], h, w, node.shape[0], node.shape[1], per_element))
    return layers


def tile_and_stride(layers: list[Layer]) -> tuple[int, int]:
    """Input tile height and tile stride of a block producing one output row per step."""
    tile, stride = 1, 1
    for layer in reversed(layers):
        tile = (tile - 1) * layer.s + layer.k
        stride *= layer.s
    return tile, stride


def hcache_buffers(layers: list[Layer], tile: int, stride: int) -> int:
    """Sum over layers of k * tile rows * C_in for the last tile the reference visits.

    Quirk: the reference sizes each layer's cache from the bottom tile of its sweep, whose row
    count includes the bottom padding (and the top padding when the tile's row index, divided by
    the stride accumulated *including* this layer, is 0).
    """
    row = ((layers[0].h_in - tile) // stride) * stride
    rows, cum_stride, total = tile, 1, 0
    for layer in layers:
        cum_stride *= layer.s
        total += layer.k * rows * layer.c_in
        row_here = row // cum_stride
        out_rows = rows - layer.k
        if row_here == 0:
            out_rows += layer.p
        if row_here + rows >= layer.h_in:
            out_rows += layer.p
        rows = out_rows // layer.s + 1
    return total


def hcache_macs(layers: list[Layer], tile: int, stride: int) -> int:
    """MACs of a block, recomputing the vertical overlap of consecutive row tiles (reference formula)."""
    total = 0
    for layer in layers:
        tile_rows = (layer.h_in + 2 * layer.p - tile) // stride + 1
        out_cols = (layer.w_in + 2 * layer.p - layer.k) // layer.s + 1
        rows_per_tile = (tile - layer.k) // layer.s + 1
        total += tile_rows * out_cols * rows_per_tile * layer.c_out * layer.macs_per_element
        tile = rows_per_tile
        stride //= layer.s
    return total


def single_block(layers: list[Layer], i: int, count_output: bool = False) -> Block:
    """An unfused layer. The network input never counts; the network output counts only if asked."""
    layer = layers[i]
    ram = layer.out_size + (layer.in_size if i > 0 else 0)
    if i == len(layers) - 1 and not count_output:
        ram -= layer.out_size
    return Block(i, i, "single", ram, layer.macs)


def hcache_block(layers: list[Layer], first: int, last: int) -> Block | None:
    """A fused H-cache block, or None when its input tile exceeds the block input (not a candidate)."""
    inner = layers[first:last + 1]
    tile, stride = tile_and_stride(inner)
    if tile > inner[0].h_in or tile > inner[0].w_in:
        return None
    ram = hcache_buffers(inner, tile, stride)
    if first > 0:
        ram += inner[0].in_size
    if last < len(layers) - 1:
        ram += inner[-1].out_size
    return Block(first, last, "hcache", ram, hcache_macs(inner, tile, stride))


def build_dag(graph: Graph, schemes=SCHEMES) -> FusionDAG:
    unknown = set(schemes) - set(SCHEMES)
    if unknown:
        raise UserError(f"the paper cost model has only the hcache scheme (got {', '.join(sorted(unknown))})")
    layers = layers_of(graph)
    n = len(layers)
    blocks = [single_block(layers, i) for i in range(n)]
    for first in range(n):
        for last in range(first + 1, n):
            block = hcache_block(layers, first, last)
            if block is not None:
                blocks.append(block)
    return FusionDAG(n, tuple(blocks))


def vanilla_blocks(graph: Graph) -> list[Block]:
    """Every layer unfused. Quirk: the reference's vanilla figure counts the network output."""
    layers = layers_of(graph)
    return [single_block(layers, i, count_output=True) for i in range(len(layers))]

"""A small network whose first block can pull the input row by row (--input-stream), and plans of it."""

from msfcnn.frontends.layer_list import graph_from_layer_list
from msfcnn.frontends.random_weights import with_random_weights
from msfcnn.fusion.dag import Block
from msfcnn.schedule import lower_block


def chain(h=12, w=7, c=3):
    """conv 3x3/2, depthwise 3x3, conv 1x1 and a pool + dense head: a first block that can stream."""
    return with_random_weights(graph_from_layer_list({"name": "chain", "input": [h, w, c], "layers": [
        {"op": "conv2d", "filters": 8, "kernel": 3, "stride": 2, "padding": "same", "act": "relu6"},
        {"op": "depthwise_conv2d", "kernel": 3, "stride": 1, "padding": "same", "act": "relu"},
        {"op": "conv2d", "filters": 4, "kernel": 1, "stride": 1, "padding": 0},
        {"op": "global_avg_pool"},
        {"op": "dense", "units": 5}]}))


def edges(graph, live, specs):
    blocks = [lower_block(graph, live, first, last, scheme, rows) for first, last, scheme, rows in specs]
    return [Block(b.first, b.last, b.scheme, live.block_ram(b), b.macs, b.rows, b) for b in blocks]

"""Calibrating a target's latency model: micro-benchmark networks, their measured instructions
block by block, and the fit of the coefficients (`scripts/calibrate_latency.py` runs it).

The micro-benchmarks are seeded random layer lists in the shape of TinyML networks (a strided
stem, inverted bottlenecks with 3x3 to 7x7 depthwise convolutions and residual adds, plain
convolutions and pools, a pooling and dense head), each under several plans (unfused, least RAM,
P1 at F <= 1.2 and random paths through the fusion DAG, with and without the network's input and
output in the arena). Each plan's generated C runs on the target with its instructions counted per
block (`codegen/icount.py`); each block is one row of a non-negative least-squares fit of the
counts (`latency.features`) to the instructions. None of the built-in models or test fixtures is
among them: those are what the predictions are checked on.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..frontends.layer_list import graph_from_layer_list
from ..frontends.random_weights import with_random_weights
from ..fusion.dag import FusionDAG
from ..ir import Graph
from .features import BlockCounter, Features
from .model import KERNEL_SOURCE_FAMILIES, LatencyModel, calibrated_sources, schedule_features


def _channels(rng: random.Random) -> int:
    """Channel counts of every residue mod 4 and 16 (the kernels' quads and blocks), few to many."""
    return rng.choice([rng.randint(1, 16), rng.randint(8, 40), rng.randint(24, 96), rng.randint(64, 240)])


# From this seed on, `network` rounds every channel count it draws down to a multiple of 8 (at
# least 8), as trained models have them: Helium's loops run whole vectors and 16-value patches
# apart from the predicated ones, which the other draws make most of. The draws themselves stay
# as they were, so the networks of earlier seeds do too.
ALIGNED_SEED = 5000


def network(seed: int) -> dict:
    """A random TinyML-shaped layer list (seeded; channel counts multiples of 8 from ALIGNED_SEED;
    from INPLACE_LINE_SEED, inplace_line_network's)."""
    if seed >= INPLACE_LINE_SEED:
        return inplace_line_network(seed)
    rng = random.Random(seed)
    aligned = (lambda c: max(8, c // 8 * 8)) if seed >= ALIGNED_SEED else (lambda c: c)
    size = rng.choice([6, 8, 10, 12, 16, 20, 24, 32, 40, 48])
    h, w = size, rng.choice([size, size, size - 2, size + 4])
    c = in_c = rng.choice([1, 2, 3, 3, 5, 8])
    layers = [{"op": "conv2d", "filters": (c := aligned(rng.randint(4, 32))), "kernel": rng.choice([3, 3, 5]),
               "stride": rng.choice([1, 2]), "padding": "same", "act": "relu6"}]
    for _ in range(rng.randint(1, 4)):
        part = rng.choice(["bottleneck", "bottleneck", "bottleneck", "conv", "pool"])
        if part == "bottleneck":
            expand = c * rng.choice([1, 2, 3, 4, 6])
            if expand > 400:
                expand = c
            k = rng.choice([3, 3, 5, 7])
            stride = rng.choice([1, 1, 2])
            out = aligned(rng.choice([c, c, _channels(rng)]))
            source = len(layers) - 1
            if expand != c:
                layers.append({"op": "conv2d", "filters": expand, "kernel": 1, "act": "relu6"})
            layers.append({"op": "depthwise_conv2d", "kernel": k, "stride": stride, "padding": "same", "act": "relu6"})
            layers.append({"op": "conv2d", "filters": out, "kernel": 1})
            if stride == 1 and out == c:
                layers.append({"op": "add", "from": source})
            c = out
        elif part == "conv":
            k = rng.choice([1, 3, 3, 5])
            c = aligned(_channels(rng))
            layer = {"op": "conv2d", "filters": c, "kernel": k, "stride": rng.choice([1, 1, 2]),
                     "padding": rng.choice(["same", "valid", 1]) if k > 1 else 0}
            act = rng.choice(["relu", "relu6", None])
            layers.append(layer if act is None else {**layer, "act": act})
        else:
            layers.append({"op": rng.choice(["max_pool2d", "avg_pool2d"]), "kernel": rng.choice([2, 3]),
                           "stride": 2, "padding": rng.choice(["valid", "same"])})
    if rng.random() < 0.6:
        layers.append({"op": "global_avg_pool"})
        layers.append({"op": "dense", "units": rng.choice([2, 10, 12, 100])})
        if rng.random() < 0.5:
            layers.append({"op": "softmax"})
    return {"name": f"calibration{seed}", "input": [h, w, in_c], "layers": layers}


# Element-wise layers of the other operators (see op_network).
_MAP_LAYERS = [{"op": "relu"}, {"op": "relu6"}, {"op": "logistic"}, {"op": "hard_swish"},
               {"op": "mul", "const": "channel"}, {"op": "mul", "const": "scalar"},
               {"op": "add", "const": "channel"}, {"op": "add", "const": "scalar", "act": "relu"}]
# Element-wise layers of the kernels added later (sub.c, min_max.c, prelu.c), drawn instead of
# the ones above half of the time (a draw of its own, so the choice among those stays as it was).
# PRELU's negative values take a multiply more: it follows a depthwise convolution without an
# activation, so that about half its values are negative, as after the convolutions it follows
# in models (after the first convolution's RELU6 none would be).
_PRELU = [{"op": "depthwise_conv2d", "kernel": 3, "padding": "same"}, {"op": "prelu"}]
_LATER_MAP_LAYERS = [[{"op": "sub", "const": "channel"}], [{"op": "sub", "const": "scalar", "reversed": True, "act": "relu"}],
                     [{"op": "squared_difference", "const": "channel"}], [{"op": "squared_difference", "const": "scalar"}],
                     [{"op": "maximum", "const": "scalar"}], [{"op": "maximum", "const": "channel"}],
                     [{"op": "minimum", "const": "scalar"}], [{"op": "minimum", "const": "channel"}], _PRELU, _PRELU]
# Joins of two maps of one shape: MUL, or (by a draw of its own) one of the later kernels'.
# joins of two maps: (layer, whether the order of its operands matters)
_LATER_JOINS = [("sub", True), ("squared_difference", False), ("maximum", False), ("minimum", False)]


def op_network(seed: int) -> dict:
    """A random layer list (seeded) that runs the kernels `network` never does: element-wise maps
    (standalone RELU / RELU6, LOGISTIC, HARD_SWISH, PRELU, MUL, ADD, SUB, SQUARED_DIFFERENCE,
    MAXIMUM and MINIMUM of a constant), MUL, SUB, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM and
    CONCATENATION of two maps, PAD, squeeze-and-excite (a map times the LOGISTIC of a dense layer
    on its mean), MEAN over one axis and TRANSPOSE, between convolutions."""
    if seed >= NARROW_OPS_SEED:
        return narrow_op_network(seed)
    rng = random.Random(seed)
    size = rng.choice([6, 8, 10, 12, 16, 20, 24, 32])
    c = rng.choice([1, 3, 3, 8])
    layers = [{"op": "conv2d", "filters": (c := _channels(rng)), "kernel": 3, "stride": rng.choice([1, 2]),
               "padding": "same", "act": "relu6"}]
    for _ in range(rng.randint(2, 6)):
        here = len(layers) - 1
        part = rng.choice(["map", "map", "map", "padding", "squeeze_excite", "branch_concat", "branch_gate", "conv"])
        if part == "map":
            later = rng.random() < 0.5
            layers += [dict(layer) for layer in rng.choice(_LATER_MAP_LAYERS)] if later else [dict(rng.choice(_MAP_LAYERS))]
        elif part == "padding":
            layers.append({"op": "pad", "pads": [rng.randint(0, 2) for _ in range(4)]})
        elif part == "squeeze_excite":
            layers += [{"op": "global_avg_pool"}, {"op": "dense", "units": max(c // 4, 1), "act": "relu"},
                       {"op": "dense", "units": c}, {"op": "logistic"}, {"op": "mul", "from": here}]
        elif part in ("branch_concat", "branch_gate"):  # a 1x1 branch off this map, joined back
            gate = part == "branch_gate"  # joined by an element-wise op, not concatenated
            width = c if gate else _channels(rng)
            join = {"op": "mul" if gate else "concat", "from": here}
            if gate and rng.random() < 0.6:
                join["op"], ordered = rng.choice(_LATER_JOINS)
                if ordered:
                    join["reversed"] = rng.random() < 0.5
            layers += [{"op": "conv2d", "filters": width, "kernel": 1, "act": "relu"}, join]
            c = c if gate else c + width
        else:
            layers.append({"op": "depthwise_conv2d", "kernel": 3, "stride": rng.choice([1, 2]), "padding": "same"})
    head = rng.choice(["none", "mean", "transposed_means", "pool"])
    if head == "mean":
        layers.append({"op": "mean", "axes": rng.choice([[0], [1], [0, 1]])})
    elif head == "transposed_means":  # an MCUNet-style head: a mean over W, then over H after a transpose
        layers += [{"op": "mean", "axes": [1]}, {"op": "transpose", "perm": [2, 0, 1]}, {"op": "mean", "axes": [1]}]
    elif head == "pool":
        layers += [{"op": "global_avg_pool"}, {"op": "dense", "units": 10}, {"op": "softmax"}]
    return {"name": f"calibration_ops{seed}", "input": [size, size + rng.choice([0, 0, 4]), 3], "layers": layers}


# Seeds of op_network from which it draws narrow networks (narrow_op_network).
NARROW_OPS_SEED = 3000
# From this seed on, `network` draws inplace_line_network's (the networks before stay as they were).
INPLACE_LINE_SEED = 20000


def inplace_line_network(seed: int) -> dict:
    """A random layer list (seeded) of Conv1D-style depthwise convolutions (multiplier 1, 1 x k
    windows of 2 to 7 taps) on a line of 12 to 64 steps and 1 to 16 channels, behind and before a
    1x1 convolution. The in-place kernel runs each row of a window through a loop of its own
    (kernels/depthwise_inplace.c), so a window's inner pixel costs per row and per tap: the main
    networks' square 5x5 and 7x7 windows alone cannot tell the two apart, these short rows can."""
    rng = random.Random(seed * 23 + 1)
    c, width = rng.randint(1, 16), rng.randint(12, 64)
    layers = [{"op": "conv2d", "filters": c, "kernel": 1, "act": "relu"}]
    for _ in range(rng.randint(1, 3)):
        k = rng.choice([2, 3, 3, 4, 5, 7])
        layers.append({"op": "depthwise_conv2d", "kernel": [1, k], "stride": rng.choice([1, 1, 2]),
                       "padding": rng.choice(["same", "same", "valid"]), "act": rng.choice(["relu", None])})
    layers.append({"op": "conv2d", "filters": rng.randint(1, 16), "kernel": 1})
    return {"name": f"calibration_inplace_line_{seed}", "input": [1, width, c],
            "layers": [{k: v for k, v in layer.items() if v is not None} for layer in layers]}
# Map sizes of the narrow op networks: lines (a 1-D signal), strips and small maps.
_NARROW_SIZES = [(1, 20), (1, 40), (1, 64), (2, 5), (3, 7), (4, 16), (4, 64), (6, 6), (8, 12)]


def narrow_op_network(seed: int) -> dict:
    """A random layer list (seeded) of the op networks' element-wise maps (LOGISTIC and HARD_SWISH
    more often) and PAD on maps of 1 to
    3 channels: lines, strips and small maps, where a kernel's cost per pixel and per call outweighs
    its cost per value (the one-channel sweeps, 1-D signals, small tensors), which the wide maps
    of `op_network` leave ill-determined. The first layer reads the network's input; convolutions
    of 1 to 3 filters (1 x k on a line) come between."""
    rng = random.Random(seed)
    h, w = rng.choice(_NARROW_SIZES)
    line = h == 1
    layers = []
    for _ in range(rng.randint(2, 5)):
        part = rng.choice(["lookup", "lookup", "map", "map", "padding", "conv"])
        if part == "lookup":  # LOGISTIC's table kernel (and TANH's, ELU's...) or HARD_SWISH's
            layers.append({"op": rng.choice(["logistic", "logistic", "hard_swish"])})
        elif part == "map":
            later = rng.random() < 0.5
            maps = [dict(layer) for layer in rng.choice(_LATER_MAP_LAYERS)] if later else [dict(rng.choice(_MAP_LAYERS))]
            # (PRELU's depthwise 3x3, the only map layer with a kernel, does not fit a line: 1 x 3 there)
            layers += [{**layer, "kernel": [1, 3]} if line and "kernel" in layer else layer for layer in maps]
        elif part == "padding":
            layers.append({"op": "pad", "pads": [0, rng.randint(0, 2), 0, rng.randint(0, 2)] if line
                           else [rng.randint(0, 2) for _ in range(4)]})
        else:
            layers.append({"op": "conv2d", "filters": rng.randint(1, 3), "kernel": [1, rng.choice([3, 5])] if line
                           else rng.choice([1, 3]), "padding": "same", "act": "relu"})
    return {"name": f"calibration_ops{seed}", "input": [h, w, rng.randint(1, 3)], "layers": layers}


# ---- networks of the kernels the op networks do not run (`--cover`) ------------------------------
# Element-wise layers of both element types' op networks, drawn in cover networks (whose float32
# versions run these ops' float kernels, which no other calibration network does).
_COVER_MAPS = [*[[layer] for layer in _MAP_LAYERS], *_LATER_MAP_LAYERS]
# Layers of float32 kernels only (ONNX's HardSigmoid and the float LeakyRelu / Tanh / Elu).
_FLOAT_MAPS = [{"op": "hard_sigmoid"}, {"op": "float_unary", "function": "leaky_relu", "alpha": 0.1},
               {"op": "float_unary", "function": "tanh"}, {"op": "float_unary", "function": "elu", "alpha": 1.0}]


def _cover_layer(rng: random.Random, c: int, hw: tuple[int, int], float32: bool) -> tuple[list, int, tuple[int, int]]:
    """One random layer (or a few) of a kernel `network` and `op_network` never run, on a map of
    `c` channels and size `hw`: the layers and the channels and size after them."""
    parts = ["slice", "shuffle", "blocks_to_depth", "depth_to_blocks", "multiplier", "nearest_resize",
             "bilinear_resize", "branch_join", "padding"]
    parts += ["map", "map", "map", "float_map", "float_map", "se"] if float32 else ["rescale", "rescale", "residual"]
    part = rng.choice(parts)
    h, w = hw
    if part == "slice" and c > 1:
        n = rng.randint(1, c - 1)
        return [{"op": "channel_slice", "begin": rng.randint(0, c - n), "channels": n}], n, hw
    if part == "shuffle" and any(c % g == 0 for g in (2, 3, 4)):
        return [{"op": "channel_shuffle", "groups": rng.choice([g for g in (2, 3, 4) if c % g == 0])}], c, hw
    if part == "blocks_to_depth" and h % 2 == 0 and w % 2 == 0 and h > 2:
        return [{"op": "space_to_depth", "block": 2}], 4 * c, (h // 2, w // 2)
    if part == "depth_to_blocks" and h * w <= 256:  # after a 1x1 convolution to 4k channels, where needed
        width = c if c % 4 == 0 else 4 * rng.randint(1, 8)
        widen = [] if width == c else [{"op": "conv2d", "filters": width, "kernel": 1, "act": "relu"}]
        return [*widen, {"op": "depth_to_space", "block": 2}], width // 4, (2 * h, 2 * w)
    if part == "multiplier" and c <= 48:
        m = rng.choice([2, 3])
        layer = {"op": "depthwise_conv2d", "kernel": rng.choice([3, 5]), "stride": rng.choice([1, 2]),
                 "padding": "same", "depth_multiplier": m}
        return [layer], c * m, (-(-h // layer["stride"]), -(-w // layer["stride"]))
    if part in ("nearest_resize", "bilinear_resize") and h * w <= 144:
        size = [rng.choice([h, 2 * h, h + 3, max(h // 2, 1)]), rng.choice([w, 2 * w, w + 1, max(w // 2, 1)])]
        align = rng.random() < 0.3
        layer = {"op": "resize_" + part.removesuffix("_resize"), "size": size, "align_corners": align, "half_pixel_centers": not align and rng.random() < 0.5}
        return [layer], c, tuple(size)
    if part == "padding":
        pads = [rng.randint(0, 2) for _ in range(4)]
        return [{"op": "pad", "pads": pads}], c, (h + pads[0] + pads[2], w + pads[1] + pads[3])
    if part == "rescale":
        return [{"op": "requantize"}], c, hw
    if part == "branch_join":  # a concatenation, or a third of the time another join of two maps of one shape
        join, concatenated = rng.choice([*[("concat", True)] * 3, ("mul", False), ("add", False), ("add", False),
                                         *((name, False) for name, _ in _LATER_JOINS)])
        width = _channels(rng) if concatenated else c
        return ([{"op": "conv2d", "filters": width, "kernel": 1, "act": "relu"}, {"op": join, "from": -2}],
                c + width if concatenated else c, hw)
    if part == "residual":  # an ADD of two maps, and of a constant
        return [{"op": "conv2d", "filters": c, "kernel": 1, "act": "relu"}, {"op": "add", "from": -2},
                {"op": "add", "const": rng.choice(["scalar", "channel"])}], c, hw
    if part == "float_map":
        return [dict(_FLOAT_MAPS[0] if rng.random() < 0.4 else rng.choice(_FLOAT_MAPS[1:]))], c, hw
    if part == "se":  # squeeze-and-excite: MUL of the map by a per-channel vector
        return [{"op": "global_avg_pool"}, {"op": "dense", "units": max(c // 4, 1), "act": "relu"},
                {"op": "dense", "units": c}, {"op": "logistic"}, {"op": "mul", "from": -2}], c, hw
    return [dict(layer) for layer in rng.choice(_COVER_MAPS)], c, hw


def cover_network(seed: int, float32: bool = False) -> dict:
    """A random layer list (seeded) of the kernels `network` and `op_network` never run in int8,
    between convolutions: channel slices, channel shuffles (a channel gather), PAD, SPACE_TO_DEPTH,
    DEPTH_TO_SPACE, depthwise convolutions with a depth multiplier, RESIZE_NEAREST_NEIGHBOR and
    RESIZE_BILINEAR, REQUANTIZE; and, for their float32 kernels, the op networks' element-wise
    maps and CONCATENATION (and float32's HardSigmoid and LeakyRelu / Tanh / Elu). `float32`: the
    network is measured in float32 (the float-only maps may be drawn). A layer `"from": -2` of
    `_cover_layer` reads the map before its layers (made absolute here)."""
    rng = random.Random(seed * 7 + 1)
    size = rng.choice([4, 6, 8, 10, 12, 16])
    hw = first = (size, size + rng.choice([0, 0, 2]))
    c = _channels(rng)
    layers = [{"op": "conv2d", "filters": c, "kernel": 3, "padding": "same", "act": "relu6"}]
    for _ in range(rng.randint(2, 5)):
        extra, c, hw = _cover_layer(rng, c, hw, float32)
        here = len(layers) - 1
        for layer in extra:
            if layer.get("from") == -2:
                layer["from"] = here
            layers.append(layer)
        if rng.random() < 0.4:
            c = _channels(rng)
            layers.append({"op": "conv2d", "filters": c, "kernel": 1, "act": "relu"})
    head = rng.choice(["none", "pool", "mean", "transposed_mean"])
    if head == "pool":
        layers += [{"op": "global_avg_pool"}, {"op": "dense", "units": 10}]
    elif head == "mean":
        layers.append({"op": "mean", "axes": rng.choice([[0], [1]])})
    elif head == "transposed_mean":
        layers += [{"op": "transpose", "perm": [1, 0, 2]}, {"op": "mean", "axes": [1]}]
    doc = {"name": f"calibration_cover{seed}", "input": [*first, 3], "layers": layers}
    # a third of the int8 networks run their ADDs as LiteRT's vector code does (in the script)
    return {**doc, "litert_adds": True} if not float32 and rng.random() < 0.35 else doc


# ---- windows the other networks leave ill-determined (`--sweep`) ---------------------------------
# Windows of more taps than MSF_MAX_RUNS (25), which window.c gathers a batch at a time.
_LARGE_WINDOWS = [(5, 6), (6, 5), (6, 6), (7, 7), (10, 8), (8, 10), (9, 4), (4, 9), (10, 4)]


# From this seed on, sweep networks end in a dense layer over the whole map (a Flatten -> Dense),
# which a stream runs as its tail: an accumulate per streamed region, a finish once.
DENSE_HEAD_SEED = 100
# From this seed on, float32 networks of the float Tanh or Elu between convolutions: the cover
# networks of some targets drew no float Tanh.
FLOAT_UNARY_SEED = 200
# From this seed on, a depthwise convolution (multiplier 1) over a 5x5 to 7x7 window on 1 to 8
# channels: the other networks draw such windows on wider maps only, so the window loop's scalar
# path (fewer than four channels) and its batches of taps on few channels were ill-determined.
DEPTHWISE_WINDOW_SEED = 300
# From this seed on, a depthwise convolution (multiplier 1) over a 1x1, 1 x k or k x 1 window:
# window.c's gather locates each in-bounds kernel row before its taps, and only these windows
# (and clipped ones) tell that cost per kernel row from the costs per tap and per pixel.
DEPTHWISE_ROW_SEED = 400
# From this seed on, one_pixel_network's: few-channel windows and activations that a least-RAM
# stream calls one pixel at a time, which pins a one-pixel call's cost apart from a pixel's.
ONE_PIXEL_SEED = 500
# From this seed on, gate_network's: a ConvLSTM-like gate block (a few-channel CONV_2D into LOGISTIC
# or TANH, a MUL with another branch, an ADD) that a least-RAM stream calls one pixel at a time,
# several calls a position, so a position's and a pull's costs are no longer one call's.
GATE_SEED = 600
# From this seed on, pool_network's: an int8 average or max pool over windows of 1 to 5 taps a side
# (the main networks draw 2 and 3 only, which leaves a tap's cost and a channel block's one).
POOL_SEED = 700
# From this seed on, elementwise_network's: streams of element-wise layers alone (no convolution),
# on 1 to 8 channels, some reading two streamed maps, so one-pixel element-wise calls of every
# width are measured apart from the convolutions' (the other streams fuse them with one).
ELEMENTWISE_SEED = 800
# From this seed on, column_network's: windows of k x 1 on one-column maps, whose whole-map runs
# make one kernel call for a whole map and whose row streams make one a row, which pins a call's
# cost apart from a row's (bin_conv1d_reshape's line buffer is such a chain).
COLUMN_SEED = 900


def sweep_network(seed: int) -> dict:
    """A random layer list (seeded) of one window layer on a small input, then a 1x1 convolution:
    a depthwise convolution with a depth multiplier (2 to 8) over a window of more than 25 taps on 1
    to 4 channels, as TFLite Micro's micro_speech runs (10 x 8, multiplier 8), which no other
    network draws; or a 1 x k convolution on a line of 1 to 16 channels, whose streamed plans call
    the kernel on one pixel at a time (the one-pixel path of the paired DSP loop). From
    DENSE_HEAD_SEED, dense_head_network's instead; from FLOAT_UNARY_SEED, float_unary_network's; from
    DEPTHWISE_WINDOW_SEED, depthwise_window_network's; from DEPTHWISE_ROW_SEED, depthwise_row_network's;
    from ONE_PIXEL_SEED, one_pixel_network's; from GATE_SEED, gate_network's; from POOL_SEED,
    pool_network's; from ELEMENTWISE_SEED, elementwise_network's; from COLUMN_SEED, column_network's."""
    if seed >= COLUMN_SEED:
        return column_network(seed)
    if seed >= ELEMENTWISE_SEED:
        return elementwise_network(seed)
    if seed >= POOL_SEED:
        return pool_network(seed)
    if seed >= GATE_SEED:
        return gate_network(seed)
    if seed >= ONE_PIXEL_SEED:
        return one_pixel_network(seed)
    if seed >= DEPTHWISE_ROW_SEED:
        return depthwise_row_network(seed)
    if seed >= DEPTHWISE_WINDOW_SEED:
        return depthwise_window_network(seed)
    if seed >= FLOAT_UNARY_SEED:
        return float_unary_network(seed)
    if seed >= DENSE_HEAD_SEED:
        return dense_head_network(seed)
    rng = random.Random(seed * 11 + 5)
    if rng.random() < 0.6:
        c = rng.randint(1, 4)
        kh, kw = rng.choice(_LARGE_WINDOWS)
        h, w = rng.randint(kh, 24), rng.randint(kw, 24)
        layer = {"op": "depthwise_conv2d", "kernel": [kh, kw], "stride": rng.choice([1, 2, 2]),
                 "padding": rng.choice(["same", "same", "valid"]), "depth_multiplier": rng.choice([2, 3, 4, 8]),
                 "act": "relu"}
    else:
        c, h, w = rng.randint(1, 16), 1, rng.randint(16, 64)
        layer = {"op": "conv2d", "filters": rng.randint(1, 24), "kernel": [1, rng.choice([3, 5, 7])],
                 "stride": rng.choice([1, 1, 2]), "padding": rng.choice(["same", "valid"]), "act": "relu"}
    layers = [layer, {"op": "conv2d", "filters": rng.randint(1, 8), "kernel": 1, "act": "relu"}]
    return {"name": f"calibration_sweep{seed}", "input": [h, w, c], "layers": layers}


def depthwise_window_network(seed: int) -> dict:
    """A random layer list (seeded) of a depthwise convolution (multiplier 1) over a 5x5, 6x6 or 7x7
    window (its taps batched past MSF_MAX_RUNS) or a 3x3 one, on a small map of 1 to 8 channels,
    then a 1x1 convolution."""
    rng = random.Random(seed * 17 + 3)
    c, k = rng.randint(1, 8), rng.choice([3, 5, 5, 6, 7, 7])
    h, w = rng.randint(k, 16), rng.randint(k, 16)
    layers = [{"op": "depthwise_conv2d", "kernel": k, "stride": rng.choice([1, 1, 2]),
               "padding": rng.choice(["same", "valid"]), "act": rng.choice(["relu", "relu6"])},
              {"op": "conv2d", "filters": rng.randint(1, 8), "kernel": 1, "act": "relu"}]
    return {"name": f"calibration_sweep{seed}", "input": [h, w, c], "layers": layers}


def depthwise_row_network(seed: int) -> dict:
    """A random layer list (seeded) of a depthwise convolution (multiplier 1) over a 1x1 window or
    a window of one row or one column (1 x k, k x 1, k of 2 to 7), on a small map of 1 to 24
    channels, then a 1x1 convolution: a kernel row per tap, or k taps to a row, where the square
    windows of depthwise_window_network have k."""
    rng = random.Random(seed * 13 + 7)
    c, k = rng.randint(1, 24), rng.randint(2, 7)
    kernel = rng.choice([[1, 1], [1, 1], [1, k], [k, 1]])
    h, w = rng.randint(max(kernel[0], 2), 16), rng.randint(max(kernel[1], 2), 16)
    layers = [{"op": "depthwise_conv2d", "kernel": kernel, "stride": rng.choice([1, 1, 2]),
               "padding": rng.choice(["same", "valid"]), "act": rng.choice(["relu", "relu6"])},
              {"op": "conv2d", "filters": rng.randint(1, 8), "kernel": 1, "act": "relu"}]
    return {"name": f"calibration_sweep{seed}", "input": [h, w, c], "layers": layers}


_ONE_PIXEL_ACTS = [{"op": "relu"}, {"op": "relu6"}, {"op": "logistic"}, {"op": "hard_swish"}]


def _one_pixel_window(rng: random.Random, c: int) -> dict:
    """A CONV_2D or DEPTHWISE_CONV_2D (multiplier 1) over a 1x1 to 5x5 window, square, one row or
    one column, at stride 1 or 2, SAME or VALID."""
    k = rng.randint(1, 5)
    kernel = rng.choice([[k, k], [k, k], [1, k], [k, 1]])
    layer = {"kernel": kernel, "stride": rng.choice([1, 1, 2]), "padding": rng.choice(["same", "valid"]),
             "act": rng.choice(["relu", "relu6", None])}
    if rng.random() < 0.35:
        return {"op": "depthwise_conv2d", **layer}
    return {"op": "conv2d", "filters": rng.randint(1, 8), **layer}


def one_pixel_network(seed: int) -> dict:
    """A random layer list (seeded) on a small map of 1 to 8 channels: a few-channel window (CONV_2D
    or DEPTHWISE_CONV_2D, 1x1 to 5x5, stride 1 or 2) or an activation, sometimes after an
    activation of the input, then a global pool and a dense layer. Its least-RAM plan streams them
    into the pool's accumulate one pixel a call, so each call's own cost (the kernel's set-up, the
    stream's pull) is most of its time, which the wide main networks cannot tell from a pixel's."""
    rng = random.Random(seed * 23 + 13)
    c = rng.randint(1, 8)
    h, w = rng.randint(3, 12), rng.randint(4, 24)
    layers = [dict(rng.choice(_ONE_PIXEL_ACTS))] if rng.random() < 0.4 else []
    if not layers or rng.random() < 0.75:
        layers.append(_one_pixel_window(rng, c))
    if rng.random() < 0.3:
        layers.append(dict(rng.choice(_ONE_PIXEL_ACTS)))
    layers += [{"op": "global_avg_pool"}, {"op": "dense", "units": rng.randint(2, 8)}]
    return {"name": f"calibration_sweep{seed}", "input": [h, w, c], "layers": layers}


def _gate_conv(rng: random.Random, filters: int) -> dict:
    """A gate's CONV_2D: 1x1 to 3x3, SAME (the map keeps its size for the MUL and ADD)."""
    k = rng.choice([1, 1, 2, 3, 3])
    return {"op": "conv2d", "filters": filters, "kernel": rng.choice([[k, k], [k, k], [1, k], [k, 1]]),
            "padding": "same", "act": None}


def gate_network(seed: int) -> dict:
    """A random int8 layer list (seeded) shaped like a ConvLSTM gate block on a small map of 1 to 8
    channels: a gate's CONV_2D (1x1 to 3x3, 1 to 8 filters) into LOGISTIC or TANH, then some of a
    second gate (CONV_2D into TANH) with the MUL of the two, and an ADD of an earlier branch; then a
    global pool and a dense layer. Its least-RAM plan streams the block into the pool's accumulate
    a column of one output row a call (one pixel, or the 2 or 3 rows a taller window reads), each
    position several calls (a convolution, a lookup, a MUL, an ADD), which tells a position's and a
    pull's costs from a call's (one_pixel_network's make one a position)."""
    rng = random.Random(seed * 29 + 17)
    c, f = rng.randint(1, 8), rng.randint(1, 8)
    h, w = rng.randint(2, 10), rng.randint(3, 16)
    layers = [_gate_conv(rng, f), {"op": rng.choice(["logistic", "logistic", "tanh"])}]
    gate = 1  # the first gate's activation
    shape = rng.choice(["cell", "cell", "product", "sum", "lookups"])
    if shape in ("cell", "product"):
        layers += [_gate_conv(rng, f), {"op": "tanh"}, {"op": "mul", "from": gate}]
    if shape in ("cell", "sum"):
        # the cell's sum: the new product or activation plus an earlier branch of the same shape
        layers.append({"op": "add", "from": rng.choice([0, gate]) if len(layers) - 1 > gate else 0})
    if shape == "lookups":
        layers.append({"op": "tanh"})
    layers += [{"op": "global_avg_pool"}, {"op": "dense", "units": rng.randint(2, 8)}]
    return {"name": f"calibration_sweep{seed}", "input": [h, w, c], "layers": layers}


def _column_window(rng: random.Random) -> dict:
    """A CONV_2D (1 to 8 filters; two draws in four), DEPTHWISE_CONV_2D (multiplier 1) or average
    pool over a k x 1 window (k of 2 to 6), at stride 1 or 2, SAME or VALID."""
    window = {"kernel": [rng.randint(2, 6), 1], "stride": [rng.choice([1, 1, 2]), 1],
              "padding": rng.choice(["same", "valid"])}
    draw = rng.choice([0, 0, 1, 2])  # convolution, depthwise, pool
    if draw == 2:
        return {"op": "avg_pool2d", **window}
    act = {"act": rng.choice(["relu", "relu6", None])}
    if draw == 1:
        return {"op": "depthwise_conv2d", **window, **act}
    return {"op": "conv2d", "filters": rng.randint(1, 8), **window, **act}


def column_network(seed: int) -> dict:
    """A random int8 layer list (seeded) on a one-column map (W = 1, H of 6 to 40, 1 to 8 channels):
    a chain of 1 to 3 windows of k x 1, then a 1x1 convolution. A whole-map run calls each kernel
    once for H rows and a row stream once a row, so the two tell a call's cost from a row's, which
    the square maps of the other networks (W pixels a row) leave confounded."""
    rng = random.Random(seed * 31 + 19)
    c, h = rng.randint(1, 8), rng.randint(6, 40)
    layers = [_column_window(rng) for _ in range(rng.randint(1, 3))]
    layers.append({"op": "conv2d", "filters": rng.randint(1, 8), "kernel": 1, "act": "relu"})
    return {"name": f"calibration_sweep{seed}", "input": [h, 1, c], "layers": layers}


def pool_network(seed: int) -> dict:
    """A random int8 layer list (seeded): a 1x1 CONV_2D to 1 to 24 channels, then an AVERAGE_POOL_2D
    (three draws in four) or a MAX_POOL_2D over a window of 1 to 5 taps a side (square, 1 x k or
    k x 1), stride 1 or 2, SAME or VALID; then a global pool and a dense layer. Each output of an
    average divides its sum by its taps (a library division on Armv6-M); varied windows tell a
    tap's cost from an output's and a channel block's."""
    rng = random.Random(seed * 31 + 5)
    c, h, w = rng.randint(1, 8), rng.randint(5, 16), rng.randint(5, 16)
    k = rng.randint(1, 5)
    kernel = rng.choice([[k, k], [k, k], [1, k], [k, 1]])
    pool = {"op": rng.choice(["avg_pool2d", "avg_pool2d", "avg_pool2d", "max_pool2d"]), "kernel": kernel,
            "stride": rng.choice([1, 2]), "padding": rng.choice(["same", "valid"])}
    layers = [{"op": "conv2d", "filters": rng.randint(1, 24), "kernel": 1, "act": rng.choice(["relu", None])}, pool,
              {"op": "global_avg_pool"}, {"op": "dense", "units": rng.randint(2, 8)}]
    return {"name": f"calibration_sweep{seed}", "input": [h, w, c], "layers": layers}


_ELEMENTWISE_ACTS = ["relu", "relu", "relu6", "logistic", "tanh", "hard_swish"]


def elementwise_network(seed: int) -> dict:
    """A random int8 layer list (seeded) of 2 to 5 element-wise layers on a map of 1 to 8 channels
    and 8 to 48 columns: activations (RELU, RELU6, table lookups) and ADDs or MULs of the previous
    layer with an earlier one or the network input; half of them then a global pool and a dense
    layer. A least-RAM plan streams them a column a call with no convolution in the stream, so a
    one-pixel element-wise call's cost is measured at every width, and a position pulls from zero
    to two streamed maps."""
    rng = random.Random(seed * 37 + 19)
    c, h, w = rng.randint(1, 8), rng.randint(1, 6), rng.randint(8, 48)
    layers: list[dict] = [{"op": rng.choice(_ELEMENTWISE_ACTS)}]
    for _ in range(rng.randint(1, 4)):
        if rng.random() < 0.4:  # the previous layer with an earlier one (-1: the network input)
            layers.append({"op": rng.choice(["add", "mul"]), "from": rng.randint(-1, len(layers) - 2)})
        else:
            layers.append({"op": rng.choice(_ELEMENTWISE_ACTS)})
    if rng.random() < 0.5:
        layers += [{"op": "global_avg_pool"}, {"op": "dense", "units": rng.randint(2, 8)}]
    return {"name": f"calibration_sweep{seed}", "input": [h, w, c], "layers": layers}


# The windows of few_channel_network: squares, the rectangles of spectrogram stems (10 x 4) and
# their transposes; never 1 x k (the line networks' own counts).
_FEW_CHANNEL_WINDOWS = [(3, 3), (3, 3), (5, 5), (5, 5), (7, 7), (2, 2), (3, 5), (5, 3), (10, 4), (4, 10), (8, 3)]


def few_channel_network(seed: int) -> dict:
    """A random layer list (seeded) of a convolution on 1 to 3 input channels, as a network's stem
    reads an image or a spectrogram: a k x k or rectangular window, SAME or VALID, sometimes after a
    RELU of the input or with a RELU and an ADD reading its output twice, then a pooled dense head,
    a 1x1 convolution or nothing. A gathered patch row of so few channels is a few bytes, copied
    and filled a byte at a time past its last whole word, which the main networks' wide layers
    seldom show (their stems are whole layers, never a pixel a call of a stream)."""
    rng = random.Random(seed * 19 + 11)
    c = rng.randint(1, 3)
    kh, kw = rng.choice(_FEW_CHANNEL_WINDOWS)
    h, w = rng.randint(kh + 1, 24), rng.randint(kw + 1, 24)
    layers = [{"op": "relu"}] if rng.random() < 0.25 else []
    layers.append({"op": "conv2d", "filters": rng.randint(1, 16), "kernel": [kh, kw], "stride": rng.choice([1, 1, 2]),
                   "padding": rng.choice(["same", "same", "valid"]), "act": rng.choice(["relu", "relu6", None])})
    if rng.random() < 0.25:
        layers += [{"op": "relu"}, {"op": "add", "from": len(layers) - 1}]
    head = rng.choice(["pool", "pool", "conv", "none"])
    if head == "pool":
        layers += [{"op": "global_avg_pool"}, {"op": "dense", "units": rng.randint(2, 12)}]
    elif head == "conv":
        layers.append({"op": "conv2d", "filters": rng.randint(1, 12), "kernel": 1, "act": "relu"})
    return {"name": f"calibration_few{seed}", "input": [h, w, c], "layers": layers}


def dense_head_network(seed: int) -> dict:
    """A random layer list (seeded) of a convolution (k x k on a small map, or 1 x k on a line),
    sometimes a 1x1 one, then a dense layer of 2 to 48 units over the whole map: no other network
    streams a dense layer (the main ones pool before theirs), so its accumulate and finish had no
    costs. Odd seeds in float32 (the doc says its element type)."""
    rng = random.Random(seed * 13 + 7)
    if rng.random() < 0.5:
        c, h, w = rng.randint(1, 16), 1, rng.randint(12, 64)
        kernel = [1, rng.choice([3, 5, 7])]
    else:
        c, h, w = rng.randint(1, 8), rng.randint(3, 14), rng.randint(3, 14)
        kernel = rng.choice([1, 3, 3, 5])
    layers = [{"op": "conv2d", "filters": rng.randint(1, 24), "kernel": kernel, "stride": rng.choice([1, 1, 2]),
               "padding": "same", "act": "relu"}]
    if rng.random() < 0.4:
        layers.append({"op": "conv2d", "filters": rng.randint(1, 16), "kernel": 1, "act": "relu"})
    layers.append({"op": "dense", "units": rng.choice([2, 4, 6, 10, 16, 32, 48])})
    return {"name": f"calibration_sweep{seed}", "input": [h, w, c], "layers": layers,
            "dtype": "float32" if seed % 2 else "int8"}


# The float unary layer of `float_unary_network`, by seed % 3.
_FLOAT_UNARY_SWEEP = ({"function": "tanh"}, {"function": "tanh"}, {"function": "elu", "alpha": 1.0})


def float_unary_network(seed: int) -> dict:
    """A random float32 layer list (seeded): a convolution, the float Tanh (two seeds in three) or
    Elu, a 1x1 convolution, on a line, a strip or a small map of 1 to 24 channels."""
    rng = random.Random(seed * 17 + 3)
    h, w = rng.choice([(1, 16), (1, 48), (2, 8), (4, 12), (6, 6), (8, 8), (12, 12)])
    unary = _FLOAT_UNARY_SWEEP[seed % 3]
    layers = [{"op": "conv2d", "filters": rng.randint(1, 24), "kernel": rng.choice([1, 3]), "padding": "same"},
              {"op": "float_unary", **unary},
              {"op": "conv2d", "filters": rng.randint(1, 8), "kernel": 1}]
    return {"name": f"calibration_sweep{seed}", "input": [h, w, rng.randint(1, 8)], "layers": layers,
            "dtype": "float32"}


def graph_of(doc: dict, dtype: str = "int8", build=graph_from_layer_list) -> Graph | None:
    """The layer list's graph with random int8 (or float32) weights, or None when its shapes do
    not work out. `build`: the layer list's reader (the calibration script's knows layers the
    layer-list format has no name for, which the cover networks draw)."""
    from ..errors import UserError
    try:
        graph = build(doc)
    except UserError:
        return None
    return with_random_weights(graph, seed=0) if dtype == "int8" else with_random_float_weights(graph, seed=0)


def with_random_float_weights(graph: Graph, seed: int = 0) -> Graph:
    """A float32 copy of `graph` (as the ONNX frontend makes them): variance-preserving random
    weights and biases, no quantisation."""
    rng = np.random.default_rng(seed)
    out = Graph(graph.name, graph.input_shape, dtype="float32")
    for node in graph.nodes:
        op, src = node.op, node.inputs[0]
        consts = {}
        weights = op.weights_shape(graph.shape_of(src), node.shape)
        if weights is not None:
            shape, fan_in = weights
            consts = {"weights": rng.normal(0, 1 / np.sqrt(fan_in), size=shape).astype(np.float32),
                      "bias": rng.normal(0, 0.1, size=node.shape[-1]).astype(np.float32)}
        elif "operand" in node.consts:  # MUL or ADD of a constant: one value or one per channel
            consts = {"operand": rng.uniform(-2, 2, size=node.consts["operand"].shape).astype(np.float32)}
        elif "alpha" in node.consts:  # PRELU's slopes, one per channel
            consts = {"alpha": rng.uniform(-0.5, 0.5, size=node.consts["alpha"].shape).astype(np.float32)}
        out.append(op, node.inputs, consts)
    return out


def random_path(dag: FusionDAG, seed: int) -> list:
    """A uniformly random complete path through the fusion DAG."""
    rng = random.Random(seed)
    outgoing: dict[int, list] = {}
    for b in dag.blocks:
        outgoing.setdefault(b.src, []).append(b)
    reach = {dag.target}
    for cut in range(dag.target - 1, -1, -1):
        if any(b.dst in reach for b in outgoing.get(cut, [])):
            reach.add(cut)
    path, cut = [], 0
    while cut != dag.target:
        block = rng.choice([b for b in outgoing[cut] if b.dst in reach])
        path.append(block)
        cut = block.dst
    return path


@dataclass(frozen=True)
class Sample:
    """One block of one measured plan: its counts and its measured instructions."""

    features: Features
    instructions: int
    where: str  # network, plan and block, for reports


def fit(samples: list[Sample], target: str, dsp: bool, fixed: LatencyModel | None = None,
        key: str = "extension", mve: bool = False) -> LatencyModel:
    """Non-negative least squares of instructions on counts, rows weighted by 1/sqrt(instructions)
    (so that large blocks, which dominate a plan, count more in absolute terms but small blocks
    are not ignored), columns scaled to unit norm for conditioning. With `fixed`, its coefficients
    stay as they are and only the counts it has none for are fitted, to what the fixed ones leave
    unexplained (so adding kernels changes no prediction for networks without them); the
    statistics of such a fit go to the model's `calibration[key]`."""
    from scipy.optimize import nnls

    known = fixed.coefficients if fixed is not None else {}
    names = sorted({name for s in samples for name, v in s.features.items() if v and name not in known})
    index = {name: j for j, name in enumerate(names)}
    a = np.zeros((len(samples), len(names)))
    explained = np.array([fixed.predict(s.features) if fixed is not None else 0.0 for s in samples])
    y = np.array([s.instructions for s in samples], dtype=float) - explained
    for i, s in enumerate(samples):
        for name, v in s.features.items():
            if v and name in index:
                a[i, index[name]] = v
    measured = y + explained
    weight = 1.0 / np.sqrt(np.maximum(measured, 1.0))
    aw, yw = a * weight[:, None], y * weight
    scale = np.linalg.norm(aw, axis=0)
    scale[scale == 0] = 1.0
    # (nothing to fit, as where no block runs a refitted family's new counts: scipy's nnls aborts
    # the process on a problem without columns)
    x = nnls(aw / scale, yw, maxiter=50 * len(names))[0] if names else np.zeros(0)
    coefficients = {**known, **{name: float(v) for name, v in zip(names, x / scale)}}
    predicted = a @ (x / scale) + explained
    error = (predicted - measured) / np.maximum(measured, 1.0)
    stats = {"samples": len(samples), "features": len(names),
             "worst_block_error": float(np.max(np.abs(error))) if len(error) else 0.0,
             "mean_abs_block_error": float(np.mean(np.abs(error))) if len(error) else 0.0}
    if fixed is None:
        return LatencyModel(target, dsp, coefficients, calibrated_sources(coefficients), stats, mve)
    # The fixed coefficients vouch for the sources they were fitted on (the shared ones too), the
    # new ones for their own kernels' sources as they are now.
    own = {name: digest for name, digest in calibrated_sources({name: 0.0 for name in names}).items()
           if name in KERNEL_SOURCE_FAMILIES}
    return LatencyModel(target, dsp, coefficients, {**fixed.kernel_digests, **own},
                        {**fixed.calibration, key: {**stats, "fitted": names}}, fixed.mve)


# Count families of msfcnn_invoke's and a block's own loops, not of a kernel.
BOOKKEEPING = frozenset({"block", "invoke"})


def alone(samples: list[Sample], family: str) -> list[Sample]:
    """The samples of unfused blocks of `family`'s kernel: blocks that run it and no other kernel
    nor a scheme's loops."""
    return [s for s in samples if {name.split(":")[0] for name, v in s.features.items() if v} - BOOKKEEPING == {family}]


def refit(samples: list[Sample], model: LatencyModel, families, key: str, only_alone: bool = False,
          only_new: bool = False) -> LatencyModel:
    """`model` with the coefficients of `families` fitted again on top of every other coefficient,
    on the blocks of `samples` that run them, or (`only_alone`) on their unfused blocks. A fit over
    fused blocks mixes a kernel's cost per pixel and per value with the errors of the kernels and
    loops fused with it; on its own blocks a kernel whose cost does not depend on its values (a
    table lookup) is determined exactly. Counts that none of these blocks has keep their
    coefficients; with `only_new`, so do all those that have one (only the families' new counts
    are fitted, and no prediction without them moves)."""
    runs = ([s for family in families for s in alone(samples, family)] if only_alone else
            [s for s in samples if any(v and name.split(":")[0] in families for name, v in s.features.items())])
    refitted = {name for s in runs for name, v in s.features.items() if v and name.split(":")[0] in families
                and not (only_new and name in model.coefficients)}
    fixed = LatencyModel(model.target, model.dsp, {k: v for k, v in model.coefficients.items() if k not in refitted},
                         model.kernel_digests, {k: v for k, v in model.calibration.items() if k != key}, model.mve)
    # (counts of other families that have no coefficient stay without one: only `families` are fitted)
    runs = [Sample(Counter({name: v for name, v in s.features.items()
                            if name in fixed.coefficients or name.split(":")[0] in families}), s.instructions, s.where)
            for s in runs]
    return fit(runs, model.target, model.dsp, fixed=fixed, key=key)


def block_samples(graph: Graph, schedule, counts: tuple[int, ...], dsp: bool, where: str,
                  mve: bool = False, values=None) -> list[Sample]:
    """`values`: the graph's value profile on the input measured (values.value_profile), on a
    core without an FPU."""
    features = schedule_features(schedule, BlockCounter(graph, dsp, mve=mve, values=values))
    return [Sample(Counter(f), n, f"{where} block {k}") for k, (f, n) in enumerate(zip(features, counts))]

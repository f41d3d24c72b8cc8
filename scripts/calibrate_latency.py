"""Calibrate a target's latency model: run micro-benchmark networks on the target, count their
instructions block by block, fit the coefficients and store them with the package.

    python scripts/calibrate_latency.py --target cortex-m4 [--networks 60] [--samples FILE]
    python scripts/calibrate_latency.py --target cortex-m4 --cover [--float | --int16 | --uint8 | --islands | --abs]
    python scripts/calibrate_latency.py --target cortex-m4 --cover --lstm [--float]
    python scripts/calibrate_latency.py --target cortex-m4 --recurrent
    python scripts/calibrate_latency.py --target cortex-m4 --keyword | --pad16
    python scripts/calibrate_latency.py --target cortex-m4 --windows [--float | --int16]
    python scripts/calibrate_latency.py --target cortex-m4 --scan [--float]
    python scripts/calibrate_latency.py --target cortex-m4 --streaming
    python scripts/calibrate_latency.py --target cortex-m4 --clamped [--networks 12]
    python scripts/calibrate_latency.py --target cortex-m4 --few-channels [--networks 24] [--refit]
    python scripts/calibrate_latency.py --target cortex-m4 --lines [--refit]
    python scripts/calibrate_latency.py --target cortex-m0plus --lines16 [--networks 24] [--refit]
    python scripts/calibrate_latency.py --target cortex-m0plus --dense-signed
    python scripts/calibrate_latency.py --target cortex-m4 --chains [--networks 10] [--refit]
    python scripts/calibrate_latency.py --target cortex-m4 --vectors [--networks 40] [--refit]
    python scripts/calibrate_latency.py --target cortex-m4 --sweep [--refit]
    python scripts/calibrate_latency.py --target cortex-m4 --remeasure add,mean [--limit 40] [--check]
    python scripts/calibrate_latency.py --target cortex-m4 --remeasure conv_f32,conv_1x1_f32 --refit --fit-counts run_channel,mac
    python scripts/calibrate_latency.py --target cortex-m55 --remeasure activation --refit --fit-counts call --one-pixel

Measurements go to --samples (JSON lines: network, plan, measured counts) and are reused when the
file exists, so a change to the feature counts only needs `--refit`. The coefficients are written
to src/msfcnn/latency/coefficients/<target>.json with the fit's statistics.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from functools import partial
from pathlib import Path

from msfcnn import pipeline
from msfcnn.codegen import build as c_build
from msfcnn.codegen.build import DoesNotFit
from msfcnn.errors import UserError
from msfcnn.frontends.layer_list import CONVERTERS, graph_from_layer_list
from msfcnn.ir import Graph, with_numerics
from msfcnn.ops.activation import Activation
from msfcnn.ops.float_unary import FloatUnary
from msfcnn.ops.hard_sigmoid import HardSigmoid
from msfcnn.ops.requantize import Requantize
from msfcnn.ops.resize_bilinear import ResizeBilinear
from msfcnn.ops.resize_nearest import ResizeNearest
from msfcnn.ops.transpose_conv import TransposeConv
from msfcnn.fusion.solvers import Path as DagPath
from msfcnn.latency import calibration
from msfcnn.latency.model import KERNEL_SOURCE_FAMILIES, LatencyModel, coefficients_path, kernel_digests
from msfcnn.plan import Plan
from msfcnn.latency.values import value_profile
from msfcnn.targets import TARGETS, get_target
from msfcnn.tensors import random_input

DSP_TARGETS = {"cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55"}
MVE_TARGETS = {"cortex-m55"}  # the int8 kernels' Helium loops too (their own families: BlockCounter's mve)
# Families fitted again last, on top of every other coefficient (`--sweep`; every other fit that can
# change what they stand on does it too): the table lookup of LOGISTIC, TANH, ELU..., the depthwise
# multiplier, ABS, PRELU and uint8's depthwise convolution (weight offset) on their unfused blocks,
# which a fit over fused blocks gets wrong per pixel and per value (ABS's and PRELU's costs also
# depend on their values' signs, which no count sees); on DSP cores, the new counts of CONV_2D's gathering kernel (a window that wraps a column
# ring) on every block that runs it, its other coefficients (the built-in models') kept.
SWEEP_ALONE = ("logistic", "depthwise_multiplier", "abs", "prelu", "depthwise_wofs")
SWEEP_NEW = ("conv_gather",)
# Counts of a family fitted again on every block that runs it (on DSP cores), its other coefficients
# kept: the depthwise window loop's scalar path (a layer of fewer than four channels, which the fits
# had priced as a four-channel pass) and its batches of taps, which the main fit priced on wide maps
# only (calibration.depthwise_window_network draws few channels).
SWEEP_COUNTS = {"sweep_depthwise": ("depthwise", ("batched_", "scalar_"))}
# A dense layer a stream runs as its tail (accumulate per region, finish once): only the sweep's
# dense-head networks run it, so it is fitted on every block that does, on every target.
SWEEP_TAIL = ("dense_accumulate", "dense_finish", "dense_f32_accumulate", "dense_f32_finish")
# Families whose new counts alone are fitted on every block that runs them, on every target: the
# float Tanh's and Elu's libm calls (float_unary_f32:output_tanh, output_elu), which the cover fit
# priced as LeakyRelu's few instructions a value; QUANTIZE's and DEQUANTIZE's values past the vector
# code's end (quantize_f32:output_scalar, dequantize:output_scalar: a double division and rounding in
# software on cores without a double FPU), which the cover fit kept at 0 (the islands' wide maps
# convert a few such values in thousands; the narrow ones from seed 9100 on, a large share).
SWEEP_NEW_ALL = ("float_unary_f32", "quantize_f32", "dequantize")
MIN_ALONE_BLOCKS = 10  # unfused blocks a SWEEP_ALONE family needs to be fitted on them
MAX_MACS = 20_000_000


FIXTURE_MAKERS = Path(__file__).resolve().parent.parent / "fixtures"


def int16_network(seed: int) -> dict:
    """A seeded random 16x8 (int16) network, as a layer list cannot say (its element type): built
    as a .tflite file by the fixture makers' helpers (fixtures/make_*_models.py) when its graph is
    needed (graph_of)."""
    return {"name": f"calibration_i16_{seed}", "generated": "int16", "seed": seed, "pixel_softmax": seed >= 7020,
            "units": seed >= 7030, "litert_add16": seed >= 7040, "pool_windows": seed >= POOL_WINDOWS_SEED}


# From this seed on, a 16x8 network pools its stem's output first, often at stride 1: the other
# draws pool at stride 2, whose windows the border seldom clips, so the pools' cost per clipped
# window was left to a handful of blocks (i16_pool, a 3x3 pool at stride 1, was 11 % high).
POOL_WINDOWS_SEED = 7100


def _units(doc: dict) -> int:
    """The dense head's units: 10, or with "units" one of several (drawn apart from the network's
    other draws, so that the networks measured before it stay as they were)."""
    return random.Random(doc["seed"] * 3 + 1).choice([4, 16, 24, 48]) if doc.get("units") else 10


def _int16_tflite(doc: dict) -> bytes:
    """The .tflite of int16_network(seed): a 3x3 stem, then 2 to 5 random layers of the 16x8
    kernels (convolutions, depthwise with and without a multiplier, pools, a residual ADD, LEAKY_RELU,
    PRELU, RESIZE_BILINEAR, a channel slice, a channel shuffle), and a MEAN, dense and SOFTMAX
    head half of the time; with "pixel_softmax" (seeds from 7020 on), first a SOFTMAX over each
    pixel's channels; with "pool_windows" (from POOL_WINDOWS_SEED), a pool after the stem. The doc holds the seed only: a change here must keep the networks already
    measured as they were."""
    sys.path.insert(0, str(FIXTURE_MAKERS))
    import numpy as np
    from make_int16_models import RELU, _schema, act16, add16, conv16, dw16, fc16, mean16, pool16, softmax16
    from make_op_models import Model
    from make_resize_bilinear_models import _resize_bilinear
    from make_shuffle_models import channel_shuffle
    from make_split_models import slice_

    rng = random.Random(doc["seed"])
    m = Model(doc["name"])
    h = rng.choice([6, 8, 10, 12, 16])
    w = h + rng.choice([0, 0, 2])
    x = act16(m, (1, h, w, 3), 1 / 4096)
    c = rng.randint(4, 24)
    y = conv16(m, x, c, 1 / 2048, activation=RELU)
    if doc.get("litert_add16"):  # (its draws come from another generator: the others stay as they were)
        y = add16(m, y, conv16(m, y, c, 1 / 2048, k=1), 1 / 1024, activation=random.Random(-doc["seed"]).choice([0, RELU]))
    if doc.get("pool_windows"):  # (another generator's draws too)
        draw = random.Random(doc["seed"] * 5 + 3)
        y = pool16(m, draw.choice(["AVERAGE_POOL_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D"]), y, draw.choice([2, 3, 3]),
                   draw.choice([1, 1, 2]), draw.random() < 0.7)
    for _ in range(rng.randint(2, 5)):
        _, h, w, c = m.tensors[y][0]
        kind = rng.choice(["conv", "conv", "dw", "pool", "add", "leaky", "prelu", "resize", "slice", "shuffle"])
        if kind == "conv":
            k = rng.choice([1, 1, 3, 5])
            y = conv16(m, y, rng.randint(2, 32), 1 / 2048, k=k, stride=rng.choice([1, 1, 2]),
                       same=k == 1 or rng.random() < 0.7, activation=rng.choice([0, RELU]))
        elif kind == "dw":
            y = dw16(m, y, 1 / 2048, k=rng.choice([3, 3, 5]), stride=rng.choice([1, 2]),
                     multiplier=rng.choice([1, 1, 2]))
        elif kind == "pool" and min(h, w) >= 3:
            y = pool16(m, rng.choice(["MAX_POOL_2D", "AVERAGE_POOL_2D"]), y, rng.choice([2, 3]), 2, rng.random() < 0.5)
        elif kind == "add":
            y = add16(m, y, conv16(m, y, c, 1 / 2048, k=1), 1 / 1024, activation=rng.choice([0, RELU]))
        elif kind == "leaky":
            out = act16(m, (1, h, w, c), rng.choice([1 / 1024, 0.00037]))
            opt = _schema().LeakyReluOptionsT()
            opt.alpha = rng.choice([0.1, 0.25])
            m.op("LEAKY_RELU", [y], [out], ("LeakyReluOptions", opt), version=2)
            y = out
        elif kind == "prelu":
            alpha = m.const(m.rng.integers(-60, 100, (1, 1, c)).astype(np.int8), "INT8", ([1 / 64], [0]))
            out = act16(m, (1, h, w, c), 1 / 1024)
            m.op("PRELU", [y, alpha], [out])
            y = out
        elif kind == "resize" and h * w <= 144:
            size = (rng.choice([h + 3, 2 * h, max(h // 2, 1)]), rng.choice([w + 1, 2 * w, max(w // 2, 1)]))
            align = rng.random() < 0.3
            y = _resize_bilinear(m, y, size, c, align_corners=align, half_pixel_centers=not align and rng.random() < 0.5,
                                 out=act16(m, (1, *size, c), m.tensors[y][2][0][0]))
        elif kind == "slice" and c > 1:
            n = rng.randint(1, c - 1)
            begin = rng.randint(0, c - n)
            y = slice_(m, y, [0, 0, 0, begin], [-1, h, w, n], (1, h, w, n))
        elif kind == "shuffle" and c % 2 == 0:
            y = channel_shuffle(m, y, rng.choice([g for g in (2, 4) if c % g == 0]))
    head = rng.random() < 0.5
    if doc.get("pixel_softmax"):  # (a draw after the others: the networks measured before it stay as they were)
        y = softmax16(m, y, rng.choice([0.5, 1.0]))
    if head:
        y = softmax16(m, fc16(m, mean16(m, y, 1 / 2048, keep=False), _units(doc), 1 / 1000), 1.0)
    return m.build([x], [y])


def uint8_network(seed: int) -> dict:
    """A seeded random uint8 network (uint8 activations and per-tensor uint8 weights, whose
    kernels add the weight offset): built as int16_network's are."""
    return {"name": f"calibration_u8_{seed}", "generated": "uint8", "seed": seed, "resize": 8026 <= seed < 8100,
            "units": seed >= 8036, "windows": seed >= 8046}


def _uint8_tflite(doc: dict) -> bytes:
    """The .tflite of uint8_network(seed): a 3x3 stem, then 2 to 5 random convolutions, depthwise
    convolutions (with and without a multiplier), pools and residual ADDs, and a dense head half
    of the time; with "resize" (seeds from 8026 on), first a RESIZE_BILINEAR; with "windows" (seeds
    from 8046 on), depthwise windows of 1x1 to 7x7 and always the dense head; from seed 8100 on,
    without the RESIZE_BILINEAR, so that streams run the dense head's accumulate (for several
    numbers of units)."""
    sys.path.insert(0, str(FIXTURE_MAKERS))
    from make_resize_bilinear_models import _resize_bilinear
    from make_uint8_models import RELU, SAME, VALID, U8Model

    rng = random.Random(doc["seed"])
    m = U8Model(doc["name"])
    h = rng.choice([6, 8, 10, 12, 16])
    quant = lambda: (rng.choice([0.03, 0.05, 0.06]), rng.randint(80, 140))  # noqa: E731
    x = m.act((1, h, h + rng.choice([0, 0, 2]), 3), 0.0078125, 128)
    y = m.conv(x, rng.randint(4, 24), quant(), activation=RELU)
    for _ in range(rng.randint(2, 5)):
        _, h, w, c = m.shape_of(y)
        kind = rng.choice(["conv", "conv", "dw", "pool", "add"])
        if kind == "conv":
            k = rng.choice([1, 1, 3, 5])
            y = m.conv(y, rng.randint(2, 32), quant(), k=k, stride=rng.choice([1, 1, 2]),
                       padding=SAME if k == 1 or rng.random() < 0.7 else VALID, w_zp=rng.randint(100, 150))
        elif kind == "dw":
            out_quant, k = quant(), rng.choice([3, 3, 5])  # (in the order of the draws measured before)
            if doc.get("windows"):  # 1x1 to 7x7 (a draw of its own: earlier seeds stay as measured)
                k = random.Random(doc["seed"] * 11 + len(m.tensors)).choice([1, 3, 5, 7])
            y = m.depthwise(y, out_quant, k=k, stride=rng.choice([1, 2]),
                            multiplier=rng.choice([1, 1, 2]), w_zp=rng.randint(100, 150))
        elif kind == "pool" and min(h, w) >= 3:
            y = m.pool(rng.choice(["MAX_POOL_2D", "AVERAGE_POOL_2D"]), y, rng.choice([2, 3]), 2,
                       rng.choice([SAME, VALID]), m.tensors[y][2][0] + m.tensors[y][2][1])
        elif kind == "add":
            y = m.add(y, m.conv(y, c, quant(), k=1), quant(), activation=rng.choice([0, RELU]))
    head = rng.random() < 0.5 or doc.get("windows", False)  # (a dense head always from seed 8046 on)
    if doc.get("resize"):  # (a draw after the others: the networks measured before it stay as they were)
        _, h, w, c = m.shape_of(y)
        size = (rng.choice([h + 3, 2 * h, max(h // 2, 1)]), rng.choice([w + 1, 2 * w, max(w // 2, 1)]))
        align = rng.random() < 0.3
        scale, zero_point = m.tensors[y][2][0][0], m.tensors[y][2][1][0]
        y = _resize_bilinear(m, y, size, c, align_corners=align, half_pixel_centers=not align and rng.random() < 0.5,
                             out=m.act((1, *size, c), scale, zero_point))
    if head:
        _, h, w, c = m.shape_of(y)
        y = m.softmax(m.fully_connected(m.reshape(y, (1, h * w * c)), _units(doc), quant()))
    return m.build([x], [y])


def clamped_network(seed: int) -> dict:
    """A seeded random int8 network of convolutions whose ReLU or ReLU6 clamps inside int8: each
    output's zero point is drawn above -128 (_with_clamped_outputs), as in models whose activation
    was folded into a convolution quantised before it. Random weights give -128 (a full range), so
    no other network runs the clamped fast output stage (conv_gather:output_ruy, requant_*_ruy)."""
    rng = random.Random(seed * 17 + 3)
    size = rng.choice([4, 6, 8, 10, 12])
    c = rng.choice([rng.randint(1, 8), rng.randint(8, 24)])
    layers = [{"op": "conv2d", "filters": c, "kernel": rng.choice([1, 3]), "padding": "same",
               "act": rng.choice(["relu", "relu6"])} for _ in range(rng.randint(1, 3))]
    for layer in layers:
        layer["filters"] = rng.choice([rng.randint(1, 8), rng.randint(8, 24)])
    return {"name": f"calibration_clamped{seed}", "input": [size, size + rng.choice([0, 2]), c], "layers": layers,
            "clamped": True, "seed": seed}


def rows_network(seed: int) -> dict:
    """A seeded random int8 network of a 1x1 convolution and a SOFTMAX over each pixel's channels:
    1 to 128 rows (a label per step or pixel, as rows_softmax_int8) of 2 to 40 classes. softmax.c
    runs its loops and the sum's reciprocal once per row, which the other networks, whose SOFTMAX
    is a classifier head of one row, leave without a cost (`softmax:extra_row`)."""
    rng = random.Random(seed * 29 + 7)
    h, w = rng.choice([1, 1, 2, 4, 8]), rng.choice([1, 2, 5, 8, 16])
    return {"name": f"calibration_rows{seed}", "seed": seed, "input": [h, w, rng.randint(1, 8)],
            "layers": [{"op": "conv2d", "filters": rng.choice([2, 3, 6, 10, 16, 24, 40]), "kernel": 1},
                       {"op": "softmax"}]}


def _with_clamped_outputs(graph, seed: int):
    """The graph with each ReLU or ReLU6 convolution's output zero point drawn in [-110, 20] (its
    scale kept), so that the activation clamps inside int8."""
    rng = random.Random(seed)
    for t, node in enumerate(graph.nodes):
        if getattr(node.op, "activation", None) in ("relu", "relu6") and node.quant is not None:
            graph.nodes[t] = replace(node, quant=replace(node.quant, zero_point=rng.randint(-110, 20)))
    return graph


# The seed of the chains networks' one stream of draws: chain_network(k) is its k-th network, so
# the networks first measured (by a loop over that stream) are seeds 0 to 9.
CHAIN_DRAWS = 7


def _chain_layers(rng: random.Random) -> tuple[list, list]:
    """One draw of chain_network: its input shape and its one or two chains."""
    shape = [rng.randint(8, 20), rng.randint(8, 20), rng.randint(1, 4)]
    layers = []
    for _ in range(rng.randint(1, 2)):
        k, width = rng.choice([1, 3]), rng.choice([4, 8, 12, 16, 24])
        layers += [{"op": "conv2d", "filters": width, "kernel": k, "stride": rng.randint(1, 2) if k > 1 else 1,
                    "padding": "same" if k > 1 else 0, "act": "relu6"},
                   {"op": "depthwise_conv2d", "kernel": rng.choice([3, 5, 7]), "stride": rng.randint(1, 2),
                    "padding": "same", "act": "relu"},
                   {"op": "conv2d", "filters": rng.choice([4, 8, 16]), "kernel": 1, "stride": 1, "padding": 0}]
    return shape, layers


def chain_network(seed: int) -> dict:
    """A random network of one or two chains (`--chains`): a convolution (1x1, or 3x3 of stride 1
    or 2; ReLU6), a depthwise convolution (3x3 to 7x7, stride 1 or 2; ReLU) and a 1x1 convolution,
    on an 8 to 20 by 8 to 20 input of 1 to 4 channels. Under LiteRT's numerics (its depthwise
    convolution, whose channels the chain sums in two parts), as pipeline.load gives a model.
    Measured under the chains scheme's least-RAM plan with the input streamed (plans_of's
    "chains"), whose first block is a chains block."""
    rng = random.Random(CHAIN_DRAWS)
    for _ in range(seed + 1):  # (the seed-th draw of the stream)
        shape, layers = _chain_layers(rng)
    return {"name": f"calibration_chains{seed}", "input": shape, "layers": layers, "numerics": "litert"}


def island_network(seed: int) -> dict:
    """A seeded random int8 network with float32 islands (DEQUANTIZE ... QUANTIZE): built as
    int16_network's are."""
    return {"name": f"calibration_fi_{seed}", "generated": "islands", "seed": seed, "narrow": seed >= 9100}


# Maps of the "narrow" island networks: lines, strips and small maps, whose QUANTIZE and DEQUANTIZE
# convert few values, a share of them (n % 8) by the interpreter's scalar code.
_NARROW_ISLAND_SHAPES = [(1, 5), (1, 7), (1, 13), (2, 5), (2, 7), (3, 3), (1, 23), (3, 5)]


def _narrow_islands(m, rng: random.Random):
    """A float32 input (a line, strip or small map of 1 to 3 channels) through 1 or 2 float ops (an
    ADD of a constant, RELU, LOGISTIC, HARD_SWISH) into a QUANTIZE, then half of the time a
    DEQUANTIZE, one more float op and a QUANTIZE again: the scalar code's values are a large share
    of the conversions' (on the wide networks they are a few in thousands, which no fit sees)."""
    import numpy as np
    from make_float_island_models import _schema, dequantize, float_act, float_unary, quantize

    def float_op(f: int) -> int:
        kind = rng.choice(["add", "RELU", "LOGISTIC", "HARD_SWISH"])
        if kind != "add":
            return float_unary(m, kind, f)
        out = float_act(m, m.tensors[f][0])
        m.op("ADD", [f, m.const(np.array([rng.uniform(-0.5, 0.5)], np.float32), "FLOAT32")], [out],
             ("AddOptions", _schema().AddOptionsT()))
        return out

    x = float_act(m, (1, *rng.choice(_NARROW_ISLAND_SHAPES), rng.randint(1, 3)))
    f = x
    for _ in range(rng.randint(1, 2)):
        f = float_op(f)
    y = quantize(m, f, rng.choice([1 / 256, 0.05, 0.1]), rng.choice([-128, 0, 4]))
    if rng.random() < 0.5:
        y = quantize(m, float_op(dequantize(m, y)), rng.choice([0.05, 0.1]), rng.choice([0, 4]))
    return m.build([x], [y])


def _islands_tflite(doc: dict) -> bytes:
    """The .tflite of island_network(seed): int8 convolutions with 1 or 2 float32 islands between
    them (float convolutions, residual ADDs, LOGISTIC, HARD_SWISH, RELU), and a float32 head (a
    DEQUANTIZE into MEAN, dense, SOFTMAX) half of the time; with "narrow" (seeds from 9100 on),
    _narrow_islands' float32 line or small map instead."""
    sys.path.insert(0, str(FIXTURE_MAKERS))
    from make_float_island_models import dequantize, float_add, float_conv, float_dense, float_mean, float_softmax, float_unary, quantize
    from make_op_models import Model

    rng = random.Random(doc["seed"])
    m = Model(doc["name"])
    if doc.get("narrow"):
        return _narrow_islands(m, rng)
    h = rng.choice([6, 8, 10, 12, 16])
    x = m.act((1, h, h + rng.choice([0, 0, 2]), 3), 0.02, -3)
    y = m.conv(x, m.tensors[x][0], rng.randint(4, 24), 0.05, 4)
    for _ in range(rng.randint(1, 2)):
        f = dequantize(m, y)
        for _ in range(rng.randint(1, 3)):
            kind = rng.choice(["conv", "add", "LOGISTIC", "HARD_SWISH", "RELU"])
            c = m.tensors[f][0][3]
            if kind == "conv":
                f = float_conv(m, f, c, k=rng.choice([1, 3]), depthwise=rng.random() < 0.3)
            elif kind == "add":
                f = float_add(m, f, float_conv(m, f, c, k=1))
            else:
                f = float_unary(m, kind, f)
        y = quantize(m, f, rng.choice([1 / 256, 0.05, 0.1]), rng.choice([-128, 0, 4]))
        y = m.conv(y, m.tensors[y][0], rng.randint(4, 24), 0.05, rng.randint(-5, 5))
    if rng.random() < 0.5:
        y = float_softmax(m, float_dense(m, float_mean(m, dequantize(m, y)), 10))
    return m.build([x], [y])


def abs_network(seed: int) -> dict:
    """A seeded random network of ABS layers (int8; 16x8 for odd seeds): built as
    int16_network's are (ABS has no layer-list name)."""
    return {"name": f"calibration_abs_{seed}", "generated": "abs", "seed": seed, "int16": seed % 2 == 1,
            "narrow": seed >= 10012, "direct": seed >= 10020}


# Input shapes of the "direct" ABS networks: lines, strips and small maps of 1 to 3 channels.
_DIRECT_SHAPES = [(1, 20), (1, 64), (2, 5), (4, 16), (4, 64), (6, 6), (8, 12)]


def _abs_tflite(doc: dict) -> bytes:
    """The .tflite of abs_network(seed): a 3x3 stem, then 1 to 3 ABS layers (half of them with
    the input's scale, which only moves the zero point, the others rescaled), each followed by a
    convolution (1x1 or 3x3) to a drawn number of channels; with "narrow" (seeds from 10012 on),
    the stem has 1 to 3 channels; with "direct" (seeds from 10020 on), there is no stem: the first ABS
    reads the input, a line, strip or small map of 1 to 3 channels."""
    sys.path.insert(0, str(FIXTURE_MAKERS))
    from make_abs_rsqrt_models import unary
    from make_int16_models import act16, conv16
    from make_op_models import Model

    rng = random.Random(doc["seed"])
    m = Model(doc["name"])
    h = rng.choice([4, 6, 8, 10, 12, 16])
    shape = (1, h, h + rng.choice([0, 0, 2]), 3)
    c = rng.randint(4, 48)
    if doc.get("narrow"):  # 1 to 3 channels into the first ABS (a draw of its own: earlier seeds stay as measured)
        c = random.Random(doc["seed"] * 3 + 2).randint(1, 3)
    if doc.get("direct"):  # the first ABS on the input itself, as the ABS sweeps run it (draws of their own)
        draw = random.Random(doc["seed"] * 5 + 3)
        c = draw.randint(1, 3)
        shape = (1, *draw.choice(_DIRECT_SHAPES), c)
    if doc["int16"]:
        x = act16(m, shape, 1 / 4096)
        y = x if doc.get("direct") else conv16(m, x, c, 1 / 2048)
    else:
        x = m.act(shape, 0.02, -3)
        y = x if doc.get("direct") else m.conv(x, shape, c, 0.05, rng.randint(-10, 10))
    for _ in range(rng.randint(1, 3)):
        in_scale = m.tensors[y][2][0][0]
        scale = in_scale * rng.choice([1.0, 1.0, 0.75, 0.5, 1.3])
        y = unary(m, "ABS", y, scale, 0 if doc["int16"] else rng.randint(-128, -60))
        width, k = rng.randint(4, 48), rng.choice([1, 3])
        if doc["int16"]:
            y = conv16(m, y, width, 1 / 2048, k=k)
        else:
            y = m.conv(y, (1, *shape[1:3], c), width, 0.05, rng.randint(-10, 10), k=k)
        c = width
    return m.build([x], [y])


def svdf_network(seed: int) -> dict:
    """A seeded random network of SVDF layers behind a QUANTIZE of an int16 input (odd seeds: an
    int8 input straight into them), built as int16_network's are (SVDF has no layer-list name)."""
    return {"name": f"calibration_svdf_{seed}", "generated": "svdf", "seed": seed, "int16": seed % 2 == 0}


def _svdf_tflite(doc: dict) -> bytes:
    """The .tflite of svdf_network(seed): 1 to 3 SVDF layers (int16 state) of drawn sizes (4 to 64
    inputs, 2 to 40 units, rank 1 to 3, memory 2 to 16), a FULLY_CONNECTED head half of the time."""
    sys.path.insert(0, str(FIXTURE_MAKERS))
    from make_op_models import Model
    from make_svdf_models import dense, quantize, svdf

    rng = random.Random(doc["seed"])
    m = Model(doc["name"])
    n_input = rng.randint(4, 64)
    if doc["int16"]:
        x = m.tensor((1, n_input), "INT16", quant=([1 / 1600], [0]))
        y = quantize(m, x, 0.02, rng.randint(-10, 10))
    else:
        x = y = m.act((1, n_input), 0.02, rng.randint(-10, 10))
    for _ in range(rng.randint(1, 3)):
        y = svdf(m, y, rng.randint(2, 40), rng.randint(1, 3), rng.randint(2, 16), 0.05, rng.randint(-10, 10))
    if rng.random() < 0.5:
        y = dense(m, y, rng.randint(2, 12), 0.05, 0)
    return m.build([x], [y])



def keyword_network(seed: int) -> dict:
    """A seeded random keyword model's head (TFLite Micro's keyword models): an SVDF behind a
    QUANTIZE of an int16 input, a FULLY_CONNECTED of 2 to 64 classes, a SOFTMAX from int8 to int16
    and a QUANTIZE from int16 to int32; LiteRT's numerics for even seeds, TFLite Micro's for odd
    ones (their SOFTMAX paths differ: two kernel families). One seed in four (3 mod 4) ends in a
    SOFTMAX from int8 to int8 instead, over 1 to 8 rows of the classes, under TFLite Micro's
    numerics (a third family). From KEYWORD_ROWS_SEED on, the even seeds (LiteRT's numerics) end in
    a SOFTMAX from int8 to int8 over 1 to 64 rows of 2 to 16 classes each (LiteRT's int8 kernel,
    whose per-row work the other networks' one-row heads cannot tell from its call). From
    KEYWORD_ROW_HEADS_SEED on, every seed ends in the int8 SOFTMAX over 1 to 8 rows under LiteRT's
    numerics (`softmax:extra_row`)."""
    if seed >= KEYWORD_ROW_HEADS_SEED:
        return {"name": f"calibration_keyword_{seed}", "generated": "keyword", "seed": seed, "numerics": "litert",
                "softmax_int8": True}
    return {"name": f"calibration_keyword_{seed}", "generated": "keyword", "seed": seed,
            "numerics": "tflm" if seed % 2 else "litert", "softmax_int8": seed % 4 == 3,
            **({"softmax_rows": True} if seed >= KEYWORD_ROWS_SEED and seed % 2 == 0 else {})}


# From this seed on, keyword_network's even seeds end in LiteRT's int8 SOFTMAX over many rows
# (a draw after the others: the networks measured before stay as they were).
KEYWORD_ROWS_SEED = 200


# From this seed on, keyword_network draws every head as an int8 SOFTMAX over rows under LiteRT's
# numerics: the main and op networks' int8 SOFTMAX is one row after a dense layer, so its cost per
# row cannot be told from its cost per call there (rows_softmax_int8 was 5.7 % low on esp32c3).
KEYWORD_ROW_HEADS_SEED = 2000


def _keyword_tflite(doc: dict) -> bytes:
    sys.path.insert(0, str(FIXTURE_MAKERS))
    from make_op_models import Model
    from make_svdf_models import dense, quantize, rows_of, softmax_to_int8, softmax_to_int16, svdf

    rng = random.Random(doc["seed"])
    m = Model(doc["name"])
    x = m.tensor((1, rng.randint(4, 48)), "INT16", quant=([1 / 1600], [0]))
    y = svdf(m, quantize(m, x, 0.02, 0), rng.randint(2, 24), 1, rng.randint(2, 8), 0.05, rng.randint(-10, 10))
    classes = rng.randint(2, 64)
    rows = rng.randint(1, 64) if doc.get("softmax_rows") else 1
    if doc.get("softmax_rows"):
        classes = rows * rng.randint(2, 16)
    logits = dense(m, y, classes, rng.choice([0.02, 0.05, 0.1]), 0)
    if doc.get("softmax_rows"):
        return m.build([x], [softmax_to_int8(m, rows_of(m, logits, rows))])
    if doc.get("softmax_int8"):  # rows of a few classes each: the kernel's per-row work counts too
        rows = rng.choice([r for r in range(1, 9) if classes % r == 0])
        return m.build([x], [softmax_to_int8(m, rows_of(m, logits, rows))])
    probabilities = softmax_to_int16(m, logits)
    out = m.tensor((1, classes), "INT32", quant=([1 / 32767], [0]))
    m.op("QUANTIZE", [probabilities], [out])
    return m.build([x], [out])


def pad16_network(seed: int) -> dict:
    """A seeded random 16x8 network of PAD layers (the int16 PAD: a TCN's causal padding)."""
    return {"name": f"calibration_pad16_{seed}", "generated": "pad16", "seed": seed}


def _pad16_tflite(doc: dict) -> bytes:
    """The .tflite of pad16_network(seed): a 16x8 input of drawn shape, 1 or 2 PADs of H and W
    (0 to 3 on each side; half the time a 1-row map padded by 1 to 8 steps on the left), a 1x1
    convolution."""
    sys.path.insert(0, str(FIXTURE_MAKERS))
    import numpy as np
    from make_int16_models import _schema, act16, conv16
    from make_op_models import Model

    rng = random.Random(doc["seed"])
    m = Model(doc["name"])
    line = rng.random() < 0.5  # a sequence: one row, padded before its steps (a causal Conv1D's PAD)
    y = x = act16(m, (1, 1 if line else rng.randint(2, 12), rng.randint(1, 40), rng.randint(1, 16)), 1 / 4096)
    for _ in range(rng.randint(1, 2)):
        _, h, w, c = m.tensors[y][0]
        pads = [[0, 0], [0, 0], [rng.randint(1, 8), 0], [0, 0]] if line else \
            [[0, 0], [rng.randint(0, 3), rng.randint(0, 3)], [rng.randint(0, 3), rng.randint(0, 3)], [0, 0]]
        out = act16(m, (1, h + sum(pads[1]), w + sum(pads[2]), c), 1 / 4096)
        m.op("PAD", [y, m.const(np.array(pads, np.int32), "INT32")], [out], ("PadOptions", _schema().PadOptionsT()))
        y = out
    return m.build([x], [conv16(m, y, rng.randint(1, 8), 1 / 2048, k=1)])


def lines16_network(seed: int) -> dict:
    """A seeded random 16x8 Conv1D-style network (`--lines16`)."""
    return {"name": f"calibration_lines16_{seed}", "generated": "lines16", "seed": seed}


def _lines16_tflite(doc: dict) -> bytes:
    """The .tflite of lines16_network(seed): a 1 x T x C int16 map, a 1 x k convolution, then 1 to 3
    of 1 x k convolutions, MAX_POOL_2D and AVERAGE_POOL_2D (SAME or VALID, stride 1 or 2), as a
    16x8 Conv1D model has them. Their column streams call each window one pixel at a time, which
    the 2-D networks of --cover --int16 (whole rows a call) leave ill-determined per call."""
    sys.path.insert(0, str(FIXTURE_MAKERS))
    from make_binop_models import conv, pool
    from make_op_models import Model

    if doc["seed"] >= LINES16_TCN_SEED:
        return _tcn16(doc)
    rng = random.Random(doc["seed"])
    m = Model(doc["name"])
    y = x = m.tensor((1, 1, rng.choice([12, 16, 24, 30, 40, 48]), rng.choice([1, 2, 4, 8, 12])), "INT16",
                     quant=([1 / 4096], [0]))
    for n in range(rng.randint(2, 4)):
        w = m.tensors[y][0][2]
        kind = "conv" if n == 0 else rng.choice(["conv", "conv", "max", "avg"])
        k = rng.choice([1, 3, 5]) if kind == "conv" else rng.choice([2, 3])
        padding = rng.choice(["SAME", "SAME", "VALID"]) if w > k + 1 else "SAME"
        stride = (1, rng.choice([1, 1, 2]) if w >= 6 else 1)
        if kind == "conv":
            y = conv(m, y, (1, k), rng.choice([2, 4, 6, 8, 12, 16]), (1 / 2048, 0), stride, padding)
        else:
            y = pool(m, y, "MAX_POOL_2D" if kind == "max" else "AVERAGE_POOL_2D", (1, k), stride, padding)
    return m.build([x], [y])


# From this seed on, lines16_network draws causal TCNs (_tcn16): a draw of its own, so that the
# networks before stay as they were measured.
LINES16_TCN_SEED = 100


def _tcn16(doc: dict) -> bytes:
    """lines16_network's draws from LINES16_TCN_SEED on: a 16x8 causal TCN, as Keras writes one.
    Per layer a PAD of (k - 1) * d steps on the left and a VALID 1 x k CONV_2D of dilation d (1 for
    the first), some closed by a residual ADD (LiteRT's int16 ADD) of an earlier layer's output.
    Its column stream calls the PAD, the window and the ADD once per step."""
    import numpy as np
    from make_int16_models import RELU, _schema, _weights, act16, add16
    from make_op_models import Model

    schema = _schema()
    rng = random.Random(doc["seed"] * 7 + 5)
    m = Model(doc["name"])
    steps, filters = rng.choice([16, 24, 32, 40]), rng.choice([4, 8, 12, 16])
    y = x = act16(m, (1, 1, steps, rng.choice([1, 2, 4, 8])), 1 / 4096)
    same = []  # the outputs of steps x filters an ADD may take
    for n in range(rng.randint(2, 4)):
        k, d, c, scale = rng.choice([2, 3, 3, 5]), 1 if n == 0 else rng.choice([1, 2, 4]), m.tensors[y][0][3], \
            m.tensors[y][2][0][0]
        padded = act16(m, (1, 1, steps + (k - 1) * d, c), scale)
        pads = m.const(np.array([[0, 0], [0, 0], [(k - 1) * d, 0], [0, 0]], np.int32), "INT32")
        m.op("PAD", [y, pads], [padded], ("PadOptions", schema.PadOptionsT()))
        weights, bias = _weights(m, (filters, 1, k, c), 0, filters, scale)
        y = act16(m, (1, 1, steps, filters), 1 / 2048)
        opt = schema.Conv2DOptionsT()
        opt.padding, opt.strideH, opt.strideW = schema.Padding.VALID, 1, 1
        opt.dilationHFactor, opt.dilationWFactor = 1, d
        opt.fusedActivationFunction = rng.choice([0, RELU, RELU])
        m.op("CONV_2D", [padded, weights, bias], [y], ("Conv2DOptions", opt), version=4)
        if same and rng.random() < 0.5:
            y = add16(m, y, rng.choice(same), 1 / 1024, activation=rng.choice([0, RELU]))
        same.append(y)
    return m.build([x], [y])


# The 16x8 window kernels a Conv1D model's column stream calls per pixel, and the PAD and ADD a
# causal TCN's stream calls per step: --lines16 fits them again.
LINES16_FAMILIES = ("conv_s16", "depthwise_s16", "max_pool2d_s16", "avg_pool2d_s16", "pad_s16", "add_litert_s16")


def lstm_network(seed: int) -> dict:
    """A seeded random LSTM layer (no layer-list name, no converter-free .tflite): steps, features
    and units drawn, its whole sequence or its last step; int8 under LiteRT's numerics for even
    seeds and TFLite Micro's for odd ones (their gate functions differ: two kernel families), or
    float32 (--float). Built as a graph with random weights (_lstm_graph)."""
    rng = random.Random(seed)
    return {"name": f"calibration_lstm_{seed}", "generated": "lstm", "seed": seed,
            "steps": rng.choice([1, 4, 8, 12, 20, 32]), "features": rng.choice([1, 3, 8, 13, 24, 40]),
            "units": rng.choice([2, 4, 8, 16, 24, 40, 64]), "return_sequences": rng.random() < 0.5,
            "numerics": "tflm" if seed % 2 else "litert", **({"rectified": True} if seed >= RECTIFIED_SEED else {})}


def recurrent_network(seed: int) -> dict:
    """A seeded random float32 GRU (even seeds) or RNN (odd seeds) layer, as ONNX's (ops/gru.py,
    ops/rnn.py): steps, features, units, the direction and the GRU's linear_before_reset or the
    RNN's activation drawn. Built as a graph with random weights (_recurrent_graph)."""
    rng = random.Random(seed)
    doc = {"name": f"calibration_recurrent_{seed}", "generated": "recurrent", "seed": seed,
           "kind": "rnn" if seed % 2 else "gru", "steps": rng.choice([1, 4, 8, 12, 20, 32]),
           "features": rng.choice([1, 3, 8, 13, 24, 40]), "units": rng.choice([2, 4, 8, 16, 24, 40, 64]),
           "reverse": rng.random() < 0.3, "variant": rng.random() < 0.5,
           **({"rectified": True} if seed >= RECTIFIED_SEED else {})}
    if RECURRENT_STACK_SEED <= seed < RECTIFIED_SEED:  # a forward stack, which the timescan scheme runs a step at a time
        stack = random.Random(-seed)
        doc.update(reverse=False, steps=max(doc["steps"], 4),
                   stack=[stack.choice([4, 8, 16, 24, 40]) for _ in range(stack.choice([1, 2]))])
    return doc


# From this seed on, recurrent_network draws stacks of 2 or 3 layers (`stack`: the later layers'
# units). Run whole, a layer copies each step's state to its output sequence; in a time scan it
# does not (`output_copy`): the stacks' scan blocks tell the two apart.
RECURRENT_STACK_SEED = 1000
# The counts `--scan --float` fits: run whole, a float LSTM copies h to its output sequence every
# step (`output_copy`, a library memcpy of a size the compiler does not know); a time scan's cell
# does not, and the scan copies each step with a memcpy of a constant size (`copy`, inline up to
# 64 bytes, `library_copy` past them). Without stacks, a fit puts the whole layer's copy in `step`.
SCAN_FLOAT_LOOPS = ("step", "output_copy", "output_copy_byte", "copy", "copy_byte", "library_copy", "library_copy_byte")
# From this seed on, lstm_network and recurrent_network put a float32 layer behind a ReLU (one
# layer, no stack): about half of its input is 0, whose soft-float products take the short path
# (`value_rectified`, features._count_signed_macs), as the LSTMs after a Conv1D + ReLU read theirs.
RECTIFIED_SEED = 2000


# The element-wise float32 kernels an unrolled Keras GRU runs on its gate vectors (`--vectors`),
# with the layer-list fields each is drawn with (`from`: a map of the same shape before it).
VECTOR_LAYERS = ({"op": "logistic"}, {"op": "float_unary", "function": "tanh"}, {"op": "add", "from": True}, {"op": "mul", "from": True},
                 {"op": "sub", "const": "scalar", "reversed": True}, {"op": "sub", "const": "scalar"},
                 {"op": "add", "const": "channel"}, {"op": "add", "const": "scalar"},
                 {"op": "mul", "const": "scalar"}, {"op": "mul", "const": "channel"}, {"op": "channel_slice"})
VECTOR_FAMILIES = ("logistic_f32", "float_unary_f32", "add_f32", "mul_f32", "sub_const_f32", "add_const_f32",
                   "mul_const_f32", "channel_slice_f32", "pad_f32")
# From this seed on, a vector network may draw a PAD of its steps too (a causal Conv1D's, which a
# fused TCN block calls pixel by pixel): a draw of its own, so the networks before stay as they were.
VECTOR_PAD_SEED = 100
# From this seed on, vector_network draws int8 networks (no float Tanh): an unrolled int8 GRU calls
# the int8 element-wise kernels and channel slices on vectors of 8 to 64 values, whose per-call
# cost the cover and op networks' maps leave ill-determined (gru_seq_int8 8.8 % low on cortex-m7).
VECTOR_INT8_SEED = 1000
VECTOR_INT8_FAMILIES = ("add", "mul", "add_const", "mul_const", "channel_slice")
# Cores without a floating-point unit: their exp and tanh (float_math.h's, in soft float) take a time
# that depends on the values (esp32c3's LOGISTIC from 30 % under to 290 % over on these networks' blocks), so the
# table functions keep their cover fit there and only the other VECTOR_FAMILIES are fitted.
SOFT_FLOAT_TARGETS = {name for name, target in TARGETS.items() if not target.fpu}
VALUE_TIMED_FAMILIES = ("logistic_f32", "float_unary_f32")
# Soft-float targets whose table functions are fitted all the same, with their values of a signed
# input counted apart (`output_signed`, `output_tanh_signed`: no zero among them): on
# xtensa-lx106 a tanh of a ReLU's output costs about 1,400 instructions, of a gate's sum 2,300.
VALUE_TIMED_FITTED = {"xtensa-lx106"}
# The float32 VECTOR_FAMILIES that keep their cover fit per target: the PAD, which only the TCNs
# run (fitted with their convolutions). esp32c3's others were kept too while its GRUs' Tanh,
# priced too low, hid their ADDs priced too high. On xtensa-lx106 only the kernels whose values
# of a signed input are counted apart are fitted (the cover networks' read a ReLU's output, the
# GRUs' gates do not); the kernels of a constant keep their cover fit.
FLOAT_VECTORS_KEPT = {"esp32c3": ("pad_f32",), "fe310": ("pad_f32",),
                      "xtensa-lx106": ("pad_f32", "sub_const_f32", "add_const_f32", "mul_const_f32", "channel_slice_f32")}
# Targets whose int8 VECTOR_INT8_FAMILIES were fitted again after --vectors (esp32c3 and fe310:
# `--remeasure add`): --vectors --refit leaves them as they are there.
INT8_VECTORS_KEPT = {"esp32c3", "fe310"}


def vector_network(seed: int) -> dict:
    """A seeded random float32 layer list of element-wise kernels on a gate-sized map (1 x 1 x C
    half the time, else 1 x W x C with W up to 8; C from 1 to 96), after a 1x1 convolution: the
    per-call work of these kernels, which the cover networks' larger maps leave ill-determined
    (an unrolled GRU calls each on 8 to 64 values); from VECTOR_PAD_SEED on, then a PAD of its
    steps. Measured layer by layer (`--vectors`)."""
    rng = random.Random(seed * 13 + 5)
    w = 1 if rng.random() < 0.5 else rng.choice([2, 3, 4, 8])
    c = rng.choice([1, 2, 4, 8, 8, 12, 16, 24, 32, 48, 64, 96])
    layers = [{"op": "conv2d", "filters": c, "kernel": 1}]
    same = [0]  # the layers whose output has the current shape
    int8 = seed >= VECTOR_INT8_SEED
    drawn = [layer for layer in VECTOR_LAYERS if not (int8 and layer["op"] == "float_unary")]
    for _ in range(rng.randint(4, 10)):
        layer = dict(rng.choice(drawn))
        if layer["op"] == "channel_slice":
            if c < 2:
                continue
            part = rng.randint(1, c - 1)
            layer.update(begin=rng.randint(0, c - part), channels=part)
            c, same = part, []
        elif layer.pop("from", False):
            if len(same) < 2:
                continue
            layer["from"] = rng.choice(same[:-1])
        layers.append(layer)
        same.append(len(layers) - 1)
    if seed >= VECTOR_PAD_SEED:  # the steps padded on the left
        layers.append({"op": "pad", "pads": [0, random.Random(-seed).randint(1, 8), 0, 0]})
    return {"name": f"calibration_vector_{seed}", "seed": seed, "dtype": "int8" if int8 else "float32",
            "input": [1, w, 4], "layers": layers}


def _calibrate_vectors(args, samples_path: Path) -> None:
    """--vectors: measure vector_network's networks layer by layer, then fit VECTOR_FAMILIES again
    on every stored unfused block of theirs (the cover networks' and these), on top of every
    other coefficient, and store only theirs (_write_only)."""
    if not args.refit:
        samples_path.parent.mkdir(parents=True, exist_ok=True)
        measure(args.target, range(args.first_seed, args.first_seed + (args.networks or 40)), samples_path,
                "float32", "vanilla", vector_network)
    samples = stored_samples(args.target)
    families = tuple(f for f in VECTOR_FAMILIES if f not in FLOAT_VECTORS_KEPT.get(args.target, ())
                     and (args.target not in SOFT_FLOAT_TARGETS - VALUE_TIMED_FITTED or f not in VALUE_TIMED_FAMILIES))
    if (not args.refit or args.target not in INT8_VECTORS_KEPT) and samples_path.exists() and \
            any(json.loads(line)["seed"] >= VECTOR_INT8_SEED for line in samples_path.read_text().splitlines() if line):
        families += VECTOR_INT8_FAMILIES  # (int8 vector networks measured: their kernels too)
    model = calibration.refit(samples, _stored(args.target, ("vectors",)), families, "vectors", only_alone=True)
    for name in [args.target, *args.also]:
        _write_only(model, model.calibration["vectors"], name, "vectors", lambda k: k.split(":")[0] in families, ())


def _recurrent_graph(doc: dict) -> Graph:
    """The graph of recurrent_network(seed): the gates' sums of unit variance."""
    import numpy as np
    from msfcnn.ops.gru import Gru
    from msfcnn.ops.rnn import Rnn

    rng = np.random.default_rng(doc["seed"])
    steps, features, units = doc["steps"], doc["features"], doc["units"]
    gates = 3 if doc["kind"] == "gru" else 1
    graph = Graph(doc["name"], (1, steps, features), dtype="float32")
    consts = {"input_weights": rng.normal(0, 1 / np.sqrt(features), (gates, units, features)).astype(np.float32),
              "recurrent_weights": rng.normal(0, 1 / np.sqrt(units), (gates, units, units)).astype(np.float32),
              "input_bias": rng.normal(0, 0.3, (gates, units)).astype(np.float32),
              "recurrent_bias": rng.normal(0, 0.3, (gates, units)).astype(np.float32)}
    op = Gru(units, doc["reverse"], linear_before_reset=doc["variant"]) if gates == 3 else \
        Rnn(units, doc["reverse"], activation="relu" if doc["variant"] else "tanh")
    graph.append(op, (_rectify(graph, doc),), consts)
    for more in doc.get("stack", ()):  # (recurrent_network from RECURRENT_STACK_SEED)
        consts = {"input_weights": rng.normal(0, 1 / np.sqrt(units), (gates, more, units)).astype(np.float32),
                  "recurrent_weights": rng.normal(0, 1 / np.sqrt(more), (gates, more, more)).astype(np.float32),
                  "input_bias": rng.normal(0, 0.3, (gates, more)).astype(np.float32),
                  "recurrent_bias": rng.normal(0, 0.3, (gates, more)).astype(np.float32)}
        graph.append(replace(op, units=more), (len(graph) - 1,), consts)
        units = more
    return graph


def _rectify(graph: Graph, doc: dict) -> int:
    """The input of a float32 recurrent layer: the network's, or a ReLU of it (doc's `rectified`)."""
    if not doc.get("rectified"):
        return -1
    graph.append(Activation("relu"), (-1,))
    return 0


def _lstm_graph(doc: dict, dtype: str) -> Graph:
    """The graph of lstm_network(seed): one LSTM with random weights (float32: the gates' sums of
    unit variance; int8: scales that keep them in the int16 gates' range)."""
    import numpy as np
    from msfcnn.ir import Quant, with_numerics
    from msfcnn.ops.lstm import Lstm

    rng = np.random.default_rng(doc["seed"])
    steps, features, units = doc["steps"], doc["features"], doc["units"]
    float32 = dtype == "float32"
    graph = Graph(doc["name"], (1, steps, features), input_quant=None if float32 else Quant(1 / 128, 0),
                  dtype=dtype)
    if float32:
        consts = {"input_weights": rng.normal(0, 1 / np.sqrt(features), (4, units, features)).astype(np.float32),
                  "recurrent_weights": rng.normal(0, 1 / np.sqrt(units), (4, units, units)).astype(np.float32),
                  "bias": rng.normal(0, 0.3, (4, units)).astype(np.float32)}
        graph.append(Lstm(units, doc["return_sequences"], cell_clip=10.0), (_rectify(graph, doc),), consts)
        return graph
    consts = {"input_weights": rng.integers(-127, 128, (4, units, features), dtype=np.int8),
              "recurrent_weights": rng.integers(-127, 128, (4, units, units), dtype=np.int8),
              "bias": rng.integers(-20000, 20000, (4, units)).astype(np.int32),
              "input_scales": (2 / (127 * np.sqrt(features)) * rng.uniform(0.5, 1.5, 4)).astype(np.float32),
              "recurrent_scales": (2 / (127 * np.sqrt(units)) * rng.uniform(0.5, 1.5, 4)).astype(np.float32)}
    hidden = Quant(1 / 128, int(rng.integers(-8, 8)))
    op = Lstm(units, doc["return_sequences"], cell_clip=10.0, cell_log2=-11, hidden_scale=hidden.scale,
              hidden_zero=hidden.zero_point, litert_hidden_scale=hidden.scale, litert_hidden_zero=hidden.zero_point)
    graph.append(op, (-1,), consts, hidden)
    return with_numerics(graph, doc["numerics"])


def scan_network(seed: int) -> dict:
    """A seeded random stack of 2 or 3 LSTM layers, which the `timescan` scheme runs one step at a
    time: steps, features and units drawn, the last layer's whole sequence or its last step; int8
    under LiteRT's numerics for even seeds and TFLite Micro's for odd ones."""
    rng = random.Random(seed)
    return {"name": f"calibration_scan_{seed}", "generated": "scan", "seed": seed,
            "steps": rng.choice([2, 5, 8, 16, 30]), "features": rng.choice([1, 3, 8, 16]),
            "units": [rng.choice([2, 4, 8, 16, 32]) for _ in range(rng.choice([2, 3]))],
            "return_sequences": rng.random() < 0.5, "numerics": "tflm" if seed % 2 else "litert"}


def _scan_graph(doc: dict, dtype: str) -> Graph:
    """The graph of scan_network(seed): its LSTM layers one after the other, each built as
    _lstm_graph builds one."""
    from msfcnn.ir import with_numerics

    graph = None
    for k, units in enumerate(doc["units"]):
        last = k == len(doc["units"]) - 1
        layer = {**doc, "seed": doc["seed"] * 7 + k, "units": units,
                 "return_sequences": doc["return_sequences"] or not last,
                 "features": doc["features"] if graph is None else doc["units"][k - 1]}
        one = _lstm_graph(layer, dtype)
        if graph is None:
            graph = one
            continue
        node = one.nodes[0]
        graph.append(node.op, (len(graph) - 1,), node.consts, one.quant_of(0))
    return graph if dtype == "float32" else with_numerics(graph, doc["numerics"])


def streaming_network(seed: int) -> dict:
    """A seeded random sliding-window model (`--streaming`): VALID convolutions or depthwise
    convolutions along time, dilated or not, on a T x 1 x C map (time along H) or a 1 x T x C one
    (along W), then a global average pool and a dense layer, or a dense layer over the last
    rows. Measured as one call of its streaming graph (frontends/sliding.py) with a hop drawn:
    its time rings (time_ring) and running sums (time_mean) beside kernels fitted elsewhere."""
    rng = random.Random(seed * 13 + 5)
    frames, channels, along_w = rng.choice([8, 12, 16, 24, 32, 49]), rng.choice([1, 4, 8, 16, 40]), rng.random() < 0.5
    layers, rows = [], frames
    for _ in range(rng.randint(1, 3)):
        k, d = rng.choice([2, 3, 5]), rng.choice([1, 1, 2])
        if rows - (k - 1) * d < 2:
            break
        window = {"kernel": [1, k] if along_w else [k, 1], "dilation": [1, d] if along_w else [d, 1], "padding": "valid"}
        kind = rng.choice(["conv2d", "depthwise_conv2d"])
        layers.append({"op": kind, **window, "act": "relu", **({"filters": rng.choice([4, 8, 16, 32])}
                                                                 if kind == "conv2d" else {})})
        rows -= (k - 1) * d
    head = [{"op": "global_avg_pool"}] if seed % 3 else []  # else a dense layer over every remaining row
    return {"name": f"calibration_streaming_{seed}", "generated": "streaming", "seed": seed,
            "hop": rng.choice([1, 1, 2]), "input": [1, frames, channels] if along_w else [frames, 1, channels],
            "layers": layers + head + [{"op": "dense", "units": rng.choice([3, 12])}]}


def line_network(seed: int, streaming: bool = False) -> dict:
    """A seeded random Conv1D-style network (`--lines`): 1 x k convolutions, dilated or not, VALID
    or SAME, on a 1 x T x C map, then a global average pool and a dense layer, in int8 (even
    seeds) or float32 (odd ones). Measured under the cover plans, whose column streams of one row
    call a window per pixel, and (with the hop drawn, when it can stream) as one call of its
    streaming graph: the one-row windows' own counts (Conv2D's line_*) beside kernels fitted
    elsewhere."""
    if seed >= TCN_SEED and not streaming:
        return tcn_network(seed)
    rng = random.Random(seed * 17 + 9)
    frames, channels = rng.choice([12, 16, 24, 32, 40, 49, 64]), rng.choice([1, 3, 4, 8, 12, 16, 40])
    layers, width = [], frames
    for _ in range(rng.randint(1, 3)):
        k, d = rng.choice([2, 3, 3, 5]), rng.choice([1, 1, 2, 4])
        padding = rng.choice(["valid", "valid", "same"])
        padding = "valid" if streaming else padding  # (a window along time streams VALID only)
        if padding == "valid" and width - (k - 1) * d < 2:
            break
        layers.append({"op": "conv2d", "kernel": [1, k], "dilation": [1, d], "padding": padding,
                       "filters": rng.choice([4, 8, 12, 16, 24, 32]), "act": rng.choice(["relu", None])})
        width -= (k - 1) * d if padding == "valid" else 0
    layers += [{"op": "global_avg_pool"}, {"op": "dense", "units": rng.choice([3, 12])}]
    return {"name": f"calibration_line_{seed}", "generated": "line", "seed": seed, "hop": rng.choice([1, 1, 2]),
            **({"streaming": True} if streaming else {}),
            "dtype": "float32" if seed % 2 else "int8", "input": [1, frames, channels],
            "layers": [{k: v for k, v in layer.items() if v is not None} for layer in layers]}


# From this seed on, line_network draws TCNs (tcn_network): a draw of its own, so that the
# networks before stay as they were measured.
TCN_SEED = 1000


def tcn_network(seed: int) -> dict:
    """A seeded random causal TCN, as Keras and PyTorch write one: per layer a PAD of (k - 1) * d
    steps on the left and a VALID 1 x k convolution of dilation d, some of them closed by a
    residual ADD of an earlier layer's output, then a global average pool and a dense layer; int8
    (even seeds) or float32 (odd ones). Its column streams call the PAD, the convolution (a struct
    copy per call when dilated), the ADD and the pool's running sum once per step."""
    rng = random.Random(seed * 19 + 7)
    frames, channels = rng.choice([16, 24, 32, 40, 49]), rng.choice([1, 2, 4, 8, 16])
    filters = rng.choice([4, 8, 8, 12, 16, 24])
    layers, same = [], []  # same: the layers whose output is frames x filters
    for n in range(rng.randint(2, 4)):
        k, d = rng.choice([2, 3, 3, 5]), 1 if n == 0 else rng.choice([1, 2, 4, 8])
        layers.append({"op": "pad", "pads": [0, (k - 1) * d, 0, 0]})
        layers.append({"op": "conv2d", "kernel": [1, k], "dilation": [1, d], "padding": "valid",
                       "filters": filters, "act": rng.choice(["relu", "relu", None])})
        if same and rng.random() < 0.5:
            layers.append({"op": "add", "from": rng.choice(same), "act": rng.choice(["relu", None])})
        same.append(len(layers) - 1)
    layers += [{"op": "global_avg_pool"}, {"op": "dense", "units": rng.choice([3, 12])}]
    return {"name": f"calibration_tcn_{seed}", "generated": "line", "seed": seed, "hop": 1,
            "dtype": "float32" if seed % 2 else "int8", "input": [1, frames, channels],
            "layers": [{k: v for k, v in layer.items() if v is not None} for layer in layers]}


def _line_graph(doc: dict, dtype: str):
    """line_network's whole graph, or (doc "streaming") the graph of one call of it, or None."""
    whole = calibration.graph_of({k: doc[k] for k in ("name", "input", "layers")}, dtype)
    if whole is None or not doc.get("streaming"):
        return whole
    from msfcnn.frontends.sliding import sliding_window
    try:
        return sliding_window(whole, doc["hop"])
    except UserError:
        return None


def streaming_line_network(seed: int) -> dict:
    """line_network(seed) as one call of its streaming graph (a window of one or two output pixels)."""
    return line_network(seed, streaming=True)


def _streaming_graph(doc: dict, dtype: str):
    """The graph of one call of streaming_network(seed), or None when its hop cannot stream."""
    from msfcnn.frontends.sliding import sliding_window
    whole = calibration.graph_of({k: doc[k] for k in ("name", "input", "layers")}, dtype)
    try:
        return None if whole is None else sliding_window(whole, doc["hop"])
    except UserError:
        return None


def windows_network(seed: int) -> dict:
    """A seeded random layer list of dilated convolutions and depthwise convolutions (whose
    kernels are the plain ones' but on Arm's DSP extension, where a dilated CONV_2D runs the
    portable loop, conv_dilated) and TRANSPOSE_CONV layers, between plain convolutions; measured in
    int8 or (--float) float32. Seeds from 1000 on draw dilated convolutions only."""
    rng = random.Random(seed * 11 + 3)
    h = rng.choice([4, 6, 8, 10, 12])
    layers = [{"op": "conv2d", "filters": rng.randint(1, 16), "kernel": 3, "padding": "same"}]
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["conv", "depthwise", "transpose_conv", "transpose_conv"])
        if seed >= 1000:  # seeds from 1000 on: dilated convolutions only (the DSP cores' conv_dilated)
            kind = "conv"
        if kind == "conv":
            layers.append({"op": "conv2d", "filters": rng.randint(1, 24), "kernel": rng.choice([2, 3]),
                           "padding": "same" if seed < 1000 or rng.random() < 0.7 else "valid",
                           "dilation": rng.choice([2, 3]), "act": rng.choice([None, "relu"])})
        elif kind == "depthwise":
            layers.append({"op": "depthwise_conv2d", "kernel": 3, "padding": "same", "dilation": rng.choice([2, 3, 4]),
                           "stride": rng.choice([1, 1, 2])})
        else:
            layers.append({"op": "transpose_conv", "filters": rng.randint(1, 24), "kernel": rng.choice([2, 3, 4]),
                           "stride": rng.choice([1, 2, 2]), "same": rng.random() < 0.6})
    layers.append({"op": "conv2d", "filters": rng.randint(2, 16), "kernel": 1})
    return {"name": f"calibration_windows_{seed}", "input": [h, h + rng.choice([0, 0, 2]), rng.randint(1, 8)],
            "layers": [{k: v for k, v in layer.items() if v is not None} for layer in layers]}


def windows16_network(seed: int) -> dict:
    """A seeded random 16x8 network of TRANSPOSE_CONV layers (the 16x8 dilated convolutions run
    the calibrated 16x8 convolutions' loops), built as a .tflite as int16_network's are."""
    return {"name": f"calibration_windows16_{seed}", "generated": "windows16", "seed": seed}


def _windows16_tflite(doc: dict) -> bytes:
    """The .tflite of windows16_network(seed): a 3x3 stem, 1 or 2 TRANSPOSE_CONV layers (SAME or
    VALID, stride 1 or 2), a 1x1 convolution; from seed 100 on, dilated layers (_dilated16)."""
    sys.path.insert(0, str(FIXTURE_MAKERS))
    import numpy as np
    from make_int16_models import _schema, _weights, act16, conv16
    from make_op_models import Model

    rng = random.Random(doc["seed"])
    m = Model(doc["name"])
    h = rng.choice([4, 6, 8])
    x = act16(m, (1, h, h + rng.choice([0, 2]), rng.randint(1, 6)), 1 / 4096)
    y = conv16(m, x, rng.randint(1, 16), 1 / 2048)
    if doc["seed"] >= 100:  # seeds from 100 on: dilated 16x8 convolutions and depthwise instead
        return _dilated16(m, x, y, rng)
    for _ in range(rng.randint(1, 2)):
        _, h, w, c = m.tensors[y][0]
        out_c, k, stride, same = rng.randint(1, 24), rng.choice([2, 3, 4]), rng.choice([1, 2, 2]), rng.random() < 0.6
        weights, bias = _weights(m, (out_c, k, k, c), 0, out_c, m.tensors[y][2][0][0])
        size = (h * stride, w * stride) if same else ((h - 1) * stride + k, (w - 1) * stride + k)
        shape = m.const(np.array([1, *size, out_c], np.int32), "INT32")
        out = act16(m, (1, *size, out_c), 1 / 2048)
        opt = _schema().TransposeConvOptionsT()
        opt.padding = _schema().Padding.SAME if same else _schema().Padding.VALID
        opt.strideH = opt.strideW = stride
        m.op("TRANSPOSE_CONV", [shape, weights, y, bias], [out], ("TransposeConvOptions", opt), version=3)
        y = out
    y = conv16(m, y, rng.randint(2, 12), 1 / 2048, k=1)
    return m.build([x], [y])


def _dilated16(m, x: int, y: int, rng: random.Random) -> bytes:
    """windows16_network's layers from seed 100 on: 1 to 3 dilated CONV_2D / DEPTHWISE_CONV_2D
    (3x3 or 2x2, dilation 2 or 3, SAME, stride 1), then a 1x1 convolution."""
    from make_int16_models import _schema, _weights, act16, conv16

    schema = _schema()
    for _ in range(rng.randint(1, 3)):
        _, h, w, c = m.tensors[y][0]
        depthwise, k = rng.random() < 0.5, rng.choice([2, 3])
        c_out = c if depthwise else rng.randint(1, 24)
        shape, axis = ((1, k, k, c_out), 3) if depthwise else ((c_out, k, k, c), 0)
        weights, bias = _weights(m, shape, axis, c_out, m.tensors[y][2][0][0])
        out = act16(m, (1, h, w, c_out), 1 / 2048)
        opt = (schema.DepthwiseConv2DOptionsT if depthwise else schema.Conv2DOptionsT)()
        opt.padding, opt.strideH, opt.strideW = schema.Padding.SAME, 1, 1
        opt.dilationHFactor = opt.dilationWFactor = rng.choice([2, 3])
        if depthwise:
            opt.depthMultiplier = 1
            m.op("DEPTHWISE_CONV_2D", [y, weights, bias], [out], ("DepthwiseConv2DOptions", opt), version=5)
        else:
            m.op("CONV_2D", [y, weights, bias], [out], ("Conv2DOptions", opt), version=4)
        y = out
    return m.build([x], [conv16(m, y, rng.randint(2, 12), 1 / 2048, k=1)])


GENERATED = {"int16": _int16_tflite, "uint8": _uint8_tflite, "islands": _islands_tflite, "abs": _abs_tflite,
             "svdf": _svdf_tflite, "windows16": _windows16_tflite, "keyword": _keyword_tflite,
             "pad16": _pad16_tflite, "lines16": _lines16_tflite}


def _with_litert_adds(graph):
    """The graph with each int8 ADD (of two maps, of a constant) as LiteRT's vector code runs it
    (ops/add_litert.py, ops/add_const_litert.py): the kernels LiteRT numerics choose for the
    scale sets where it rounds otherwise, which random weights seldom give."""
    from msfcnn.ops.add import Add
    from msfcnn.ops.add_const import AddConst
    from msfcnn.ops.add_const_litert import AddConstLitert, AddConstLitertTail
    from msfcnn.ops.add_litert import VECTOR_BLOCK, AddLitert, AddLitertTail
    for t, node in enumerate(graph.nodes):
        whole = graph.elements(t) % VECTOR_BLOCK == 0
        if type(node.op) is Add:
            graph.nodes[t] = replace(node, op=(AddLitert if whole else AddLitertTail)(node.op.activation))
        elif type(node.op) is AddConst:
            # a constant per channel is never a tail's (its scalar values are channels, not the
            # tensor's last ones); such networks failed before, so no stored one changes
            per_channel = len(graph.kernel_context(t).consts["operand"].reshape(-1)) > 1
            op = AddConstLitert if whole or per_channel else AddConstLitertTail
            graph.nodes[t] = replace(node, op=op(node.op.operand_scale, node.op.operand_zero_point, node.op.activation))
    return graph


def _extra_converter(layer: dict, graph: Graph, index: int):
    """The calibration's layers the layer-list format has no name for (None for the others)."""
    kind = layer["op"]
    if kind in ("resize_nearest", "resize_bilinear"):
        resize = ResizeNearest if kind == "resize_nearest" else ResizeBilinear
        h, w = graph.shape_of(index - 1)[:2]
        return resize((h, w), tuple(layer["size"]), layer["align_corners"], layer["half_pixel_centers"]), (index - 1,)
    if kind == "requantize":
        return Requantize(), (index - 1,)
    if kind == "hard_sigmoid":
        return HardSigmoid(), (index - 1,)
    if kind == "float_unary":
        return FloatUnary(layer["function"], layer.get("alpha", 0.0)), (index - 1,)
    if kind == "transpose_conv":  # SAME: the output stride x the input (TFLite's padding); VALID: the taps' reach
        h, w = graph.shape_of(index - 1)[:2]
        k, s = layer["kernel"], layer["stride"]
        size = (h * s, w * s) if layer["same"] else ((h - 1) * s + k, (w - 1) * s + k)
        pad = max(k - s, 0) // 2 if layer["same"] else 0
        return TransposeConv(layer["filters"], (k, k), (s, s), (pad, pad), size), (index - 1,)
    return None


_EXTRA_LAYERS = ("resize_nearest", "resize_bilinear", "requantize", "hard_sigmoid", "float_unary", "transpose_conv")


def _graph_with_extras(doc: dict) -> Graph:
    """graph_from_layer_list of a layer list, knowing the cover networks' own layers too
    (calibration.cover_network, _extra_converter)."""
    if not any(layer.get("op") in _EXTRA_LAYERS for layer in doc["layers"]):
        return graph_from_layer_list(doc)
    graph = Graph(doc["name"], tuple(doc["input"]))
    for index, layer in enumerate(doc["layers"]):
        op, inputs, *consts = _extra_converter(layer, graph, index) or CONVERTERS[layer["op"]](layer, graph, index)
        graph.append(op, inputs, *consts)
    return graph


def graph_of(doc: dict, dtype: str):
    """The graph of a calibration network's doc (a layer list, or a generated .tflite), or None."""
    if doc.get("generated") == "lstm":
        return _lstm_graph(doc, dtype)
    if doc.get("generated") == "scan":
        return _scan_graph(doc, dtype)
    if doc.get("generated") == "recurrent":
        return _recurrent_graph(doc)
    if doc.get("generated") == "streaming":
        return _streaming_graph(doc, dtype)
    if doc.get("generated") == "line":
        return _line_graph(doc, dtype)
    if doc.get("generated") not in GENERATED:
        graph = calibration.graph_of(doc, dtype, _graph_with_extras)
        if graph is not None and doc.get("clamped"):
            return _with_clamped_outputs(graph, doc["seed"])
        if graph is not None and doc.get("numerics"):  # the ops of those numerics, as pipeline.load gives them
            return with_numerics(graph, doc["numerics"])
        return _with_litert_adds(graph) if graph is not None and doc.get("litert_adds") else graph
    with tempfile.TemporaryDirectory(prefix="msfcnn-calibrate-") as tmp:
        path = Path(tmp) / f"{doc['name']}.tflite"
        path.write_bytes(GENERATED[doc["generated"]](doc))
        try:
            graph = pipeline.load(str(path), weights=True, numerics=doc.get("numerics", "litert"))
        except UserError as err:
            print(f"{doc['name']}: {err}", file=sys.stderr)
            return None
    if doc["generated"] == "int16" and not doc.get("litert_add16"):
        return _with_scalar_int16_adds(graph)
    return graph


def _with_scalar_int16_adds(graph):
    """The graph with LiteRT's int16 ADDs as TFLite's scalar ADD (int16.c), the kernel that the
    16x8 networks measured before add_litert_s16.c ran."""
    from msfcnn.ops.add import Add
    from msfcnn.ops.add_litert import AddLitert
    for t, node in enumerate(graph.nodes):
        if isinstance(node.op, AddLitert) and graph.kernel_element(t).name == "int16":
            graph.nodes[t] = replace(node, op=Add(node.op.activation))
    return graph


def plans_of(graph, seed: int, kind: str = "all"):
    """(name, count_io, plan) for the plans measured on one network; kind="inplace": only the
    unfused plan with every op that can be written over its input whole (the `inplace` scheme's
    channel-by-channel kernel) written so; kind="cover": only the plans without the network's
    input and output in the arena; kind="chains": only the chains scheme's least-RAM plan with
    the input streamed."""
    if kind == "chains":  # the chains scheme's least RAM, the input pulled row by row (as plan --input-stream)
        plan = pipeline.planner(graph, schemes=("chains",), input_stream=True).min_ram()
        yield "chains", plan.io_counted, plan
        return
    if kind == "vanilla":  # one op a block: a sliding window's rings and sums are never fused
        yield "vanilla", False, pipeline.planner(graph).vanilla()
        return
    if kind == "inplace":
        planner = pipeline.planner(graph)
        swap = {b.first: b for b in planner.dag.blocks if b.scheme == "inplace" and b.first == b.last}
        if swap:
            blocks = tuple(swap.get(b.first, b) for b in planner.vanilla().blocks)
            yield "inplace", False, planner._plan(DagPath(blocks))
        return
    for count_io in (False,) if kind == "cover" else (False, True):  # (the io copies are calibrated)
        planner = pipeline.planner(graph, count_io=count_io)
        yield "vanilla", count_io, planner.vanilla()
        yield "min-ram", count_io, planner.min_ram()
        yield "p1-1.2", count_io, planner.p1(1.2)
        for k in range(2):
            path = calibration.random_path(planner.dag, seed * 10 + k + 5 * count_io)
            yield f"random{k}", count_io, planner._plan(DagPath(tuple(path)))


def measure(target_name: str, seeds, samples_path: Path, dtype: str, kind: str = "all", make=None) -> None:
    target = get_target(target_name)
    done = set()
    if samples_path.exists():
        done = {json.loads(line)["seed"] for line in samples_path.read_text().splitlines() if line}
    with tempfile.TemporaryDirectory(prefix="msfcnn-calibrate-") as tmp, samples_path.open("a") as out:
        lib = None
        for seed in seeds:
            if seed in done:
                continue
            doc = (make or calibration.network)(seed)
            dtype = doc.get("dtype", dtype)  # a network that says its element type (dense_head_network)
            graph = graph_of(doc, dtype)
            if graph is None or sum(graph.macs(t) for t in range(len(graph))) > MAX_MACS:
                continue  # shapes that do not work out, or too slow to run many plans of
            x = random_input(graph, seed)
            started = time.time()
            for name, count_io, plan in plans_of(graph, seed, kind):
                schedule = pipeline.lower(graph, plan)
                if lib is None:
                    folder = Path(tmp) / "lib"
                    pipeline.write_c(folder, graph, schedule, plan, target)
                    lib = c_build.build_kernel_library(folder, target)
                try:
                    result = pipeline.verify(graph, plan, schedule, x, target, kernel_lib=lib, count_instructions=True)
                except DoesNotFit:
                    continue  # a plan larger than the board's RAM
                except UserError as err:  # C the target cannot build
                    print(f"seed {seed} plan {name}: {err}: left out", file=sys.stderr)
                    break
                if not result.passed:
                    raise SystemExit(f"seed {seed} plan {name}: the C does not match numpy")
                out.write(json.dumps({"seed": seed, "dtype": dtype, "doc": doc, "plan_name": name, "plan": plan.to_dict(),
                                      "count_io": count_io, "blocks": list(result.block_instructions)}) + "\n")
                out.flush()
            print(f"seed {seed}: {len(graph)} ops, {time.time() - started:.1f} s", file=sys.stderr)


def runs_families(features, families) -> bool:
    """Whether a block's counts run a kernel of one of `families` (exact family names: "mean"
    is not "mean_f32" nor "mean_accumulate")."""
    return any(v and name.split(":")[0] in families for name, v in features.items())


def stored_rows(samples_path: Path):
    """(line number, row, graph, plan, schedule) of each stored measurement; graph None (and no
    schedule) when the frontend now makes another graph of it (a generated .tflite)."""
    graphs: dict = {}
    for number, line in enumerate(samples_path.read_text().splitlines()):
        row = json.loads(line)
        key = json.dumps([row["doc"], row.get("dtype", "int8")], sort_keys=True)
        if key not in graphs:  # a network's plans are consecutive rows: its graph is made once
            graphs.clear()
            graphs[key] = graph_of(row["doc"], row.get("dtype", "int8"))
        graph = graphs[key]
        plan = Plan.from_dict(row["plan"])
        plan = Plan(plan.model, plan.cost_model, plan.vanilla_macs, plan.blocks, io_counted=row["count_io"],
                    input_streamed=plan.input_streamed)
        if graph is None or plan.blocks[-1].last != len(graph) - 1:
            yield number, row, None, plan, None
            continue
        yield number, row, graph, plan, pipeline.lower(graph, plan)


def stale_rows(samples_path: Path, families, dsp: bool):
    """stored_rows whose plans run a kernel of `families` (the rows a change to those kernels
    makes stale)."""
    from msfcnn.latency.features import BlockCounter
    from msfcnn.latency.model import schedule_features

    for number, row, graph, plan, schedule in stored_rows(samples_path):
        if graph is not None and any(runs_families(f, families)
                                     for f in schedule_features(schedule, BlockCounter(graph, dsp))):
            yield number, row, graph, plan, schedule


def remeasure(target_name: str, families, limit: int | None, check: bool) -> None:
    """Measure again, on the target, the stored rows (build/latency/TARGET*.jsonl) whose plans run
    a kernel of `families`, and write them back in place, every other row as it was. With `limit`,
    at most that many rows of each file, spread evenly over its matching rows; the blocks of the
    others that run those kernels are marked stale (the row's "stale" families) and left out of
    every fit (load_samples), their other blocks kept. With `check`, nothing is written: stored
    and new counts are printed (are the stored counts still the kernels'?)."""
    target, dsp = get_target(target_name), target_name in DSP_TARGETS
    sources = family_sources(families)
    with tempfile.TemporaryDirectory(prefix="msfcnn-calibrate-") as tmp:
        lib = None
        for path in samples_files(target_name):
            lines, rows = path.read_text().splitlines(), list(stale_rows(path, families, dsp))
            current = {r[0] for r in rows if all(r[1].get("sources", {}).get(name) == digest for name, digest in sources.items())}
            rows = [r for r in rows if r[0] not in current]  # (measured with these sources already)
            step = max(len(rows) / limit, 1.0) if limit else 1.0
            chosen = {int(k * step) for k in range(min(len(rows), limit or len(rows)))}
            changed = 0
            for k, (number, row, graph, plan, schedule) in enumerate(rows):
                if k not in chosen:
                    row["stale"] = sorted({*row.get("stale", ()), *families})
                    lines[number] = json.dumps(row)
                    continue
                if lib is None:
                    pipeline.write_c(Path(tmp) / "lib", graph, schedule, plan, target)
                    lib = c_build.build_kernel_library(Path(tmp) / "lib", target)
                result = pipeline.verify(graph, plan, schedule, random_input(graph, row["seed"]), target,
                                         kernel_lib=lib, count_instructions=True)
                if not result.passed:
                    raise SystemExit(f"{path.name} seed {row['seed']} plan {row['plan_name']}: the C does not match numpy")
                blocks = list(result.block_instructions)
                changed += blocks != row["blocks"]
                print(f"{path.name} seed {row['seed']} {row['plan_name']}: stored {sum(row['blocks'])}, now "
                      f"{sum(blocks)}", file=sys.stderr, flush=True)
                stale = sorted(set(row.get("stale", ())) - set(families))
                lines[number] = json.dumps({**{k: v for k, v in row.items() if k != "stale"}, "blocks": blocks,
                                            "sources": {**row.get("sources", {}), **sources},
                                            **({"stale": stale} if stale else {})})
            print(f"{path.name}: {len(rows) + len(current)} rows run {','.join(families)}, {len(current)} measured "
                  f"with these sources: {len(chosen)} measured again, {changed} changed, {len(rows) - len(chosen)} "
                  "marked stale", file=sys.stderr, flush=True)
            if not check and rows:
                path.write_text("\n".join(lines) + "\n")


def family_sources(families) -> dict[str, str]:
    """Digest of each kernel source that holds one of `families`' code (KERNEL_SOURCE_FAMILIES),
    recorded with a row measured again: a later run skips rows measured with these sources. A
    float32 family's code is its int8 family's source (softmax_f32 is softmax.c's, as
    calibrated_sources reads it): without the suffix, no source matched it, so every row of it
    counted as measured already and nothing was measured again."""
    from msfcnn.latency.model import KERNEL_SOURCE_FAMILIES, kernel_digests
    now = kernel_digests()
    named = {*families, *(f.removesuffix("_f32") for f in families)}
    return {name: now[name] for name, owners in KERNEL_SOURCE_FAMILIES.items() if set(owners) & named and name in now}


def main_samples_file(target: str) -> Path:
    return Path("build/latency") / f"{target}.jsonl"


def samples_files(target: str) -> list[Path]:
    """Every stored measurement file of the target (build/latency/TARGET.jsonl, TARGET-*.jsonl)."""
    return [p for p in sorted(Path("build/latency").glob(f"{target}*.jsonl"))
            if p.stem == target or p.stem.startswith(f"{target}-")]


def stored_samples(target: str) -> list:
    """Every stored measurement of the target, as samples (the blocks of samples_files' files)."""
    dsp, mve = target in DSP_TARGETS, target in MVE_TARGETS
    return [s for path in samples_files(target) for s in load_samples(path, dsp, mve)]


def refit_families(target: str, families, also: list[str]) -> None:
    """The stored coefficients with `families`' fitted again on every stored measurement of the
    target, on top of every other coefficient (calibration.refit); then, for each family with at
    least MIN_ALONE_BLOCKS unfused blocks, again on those alone (as --sweep fits SWEEP_ALONE): a
    kernel's cost does not depend on what it is fused with, and over fused blocks the fit takes
    up the other kernels' errors."""
    samples = stored_samples(target)
    key = "remeasure_" + "_".join(families)  # (each refit's statistics kept apart from the earlier ones')
    if "memmove" in families and target in SHORT_LIBRARY_MOVES:
        samples = [_library_moves(s) for s in samples]
    model = calibration.refit(samples, _stored(target, ()), families, key)
    alone = tuple(f for f in families if len(calibration.alone(samples, f)) >= MIN_ALONE_BLOCKS)
    if alone:
        # A family whose unfused blocks all make one call (PAD's) keeps its cost per call from the
        # fit over every block (column streams call it a column at a time): on those blocks alone
        # it cannot be told from the cost per row.
        runs = [s for f in alone for s in calibration.alone(samples, f)]
        single = {f"{f}:call" for f in alone if all(s.features.get(f"{f}:call") == 1 for s in calibration.alone(samples, f))}
        counted = {k for s in runs for k, v in s.features.items() if v and k.split(":")[0] in alone} - single
        kept = {k: v for k, v in model.coefficients.items() if k not in counted}
        model = calibration.refit(samples, replace(model, coefficients=kept), alone, f"{key}_alone", only_alone=True,
                                  only_new=True)
    if "memmove" in families and target in SHORT_LIBRARY_MOVES:
        model = _with_short_library_moves(model)
    _write(model, target, also)


# Targets whose compiler calls the C library for the moves the Arm compilers expand inline
# (codegen/moves.py: short_library_move). Every calibration move is a library call there, so the
# fit cannot tell an inline move's bytes from a library call's: the inline ones (at most four
# pieces) count as nothing, as on the Arm cores, and a short library move costs a library move's.
SHORT_LIBRARY_MOVES = {"xtensa-lx106"}


def _library_moves(sample):
    """The sample with its inline move counts left out (fitted as 0) and its short library moves
    counted as library moves."""
    f = Counter({k: v for k, v in sample.features.items() if k not in ("memmove:call", "memmove:byte")})
    for part in ("call", "byte"):
        f[f"memmove:library_{part}"] += f.pop(f"memmove:short_library_{part}", 0)
    return calibration.Sample(f, sample.instructions, sample.where)


def _with_short_library_moves(model: LatencyModel) -> LatencyModel:
    """The library moves' costs for the short library moves too, the inline moves' at 0."""
    c = dict(model.coefficients)
    c.update({"memmove:call": 0.0, "memmove:byte": 0.0, "memmove:short_library_call": c.get("memmove:library_call", 0.0),
              "memmove:short_library_byte": c.get("memmove:library_byte", 0.0)})
    return replace(model, coefficients=c)


def one_pixel(features, families) -> bool:
    """Whether every call the block makes of `families`' kernels is of one pixel (and it makes some)."""
    calls = [(features.get(f"{f}:call", 0), features.get(f"{f}:pixel", 0)) for f in families]
    return any(c for c, _ in calls) and all(c == p for c, p in calls)


def fit_counts(target: str, families, loops, also: list[str], *, only_one_pixel: bool = False,
               only_alone: bool = False, pinned: dict[str, float] | None = None,
               samples_path: Path | None = None, without: tuple[str, ...] = ()) -> None:
    """The stored coefficients with only the `loops` counts of `families` fitted (again), on every
    stored block that runs those families (`only_alone`: on their unfused blocks, whose values
    no other kernel's error blurs), on top of every other coefficient (the other counts'
    costs stay as fitted: a new count of a kernel's loop, such as the float accumulate's per
    channel, is fitted without moving the rest). The families' coefficients of counts that no
    stored block has any more (a count the kernel's loops no longer make) are dropped. With
    `only_one_pixel`, only on the blocks whose calls of the families are each of one pixel (a
    stream's): there a cost per call or per channel and call is most of the time, where over whole
    maps the fit uses it to take up other counts' errors. `pinned` counts cost what it says (a loop
    read off the object code), set before the fit and kept. `samples_path`: fit on that file's
    blocks only (networks drawn to pin these counts, where the other stored blocks' errors come
    from other counts). `without`: the stored files of these names (TARGET-NAME.jsonl) left out
    of the fit (networks whose blocks the families' counts do not describe)."""
    samples = stored_samples(target)
    counted = {k for s in samples for k, v in s.features.items() if v}
    if samples_path is not None:
        samples = load_samples(samples_path, target in DSP_TARGETS, target in MVE_TARGETS)
    elif without:
        dsp, mve = target in DSP_TARGETS, target in MVE_TARGETS
        samples = [s for path in samples_files(target) if path.stem not in {f"{target}-{name}" for name in without}
                   for s in load_samples(path, dsp, mve)]
    pinned = pinned or {}
    names = {f"{family}:{loop}" for family in families for loop in loops} - set(pinned)
    stored = _stored(target, ())
    stored = replace(stored, coefficients={**stored.coefficients, **pinned})
    dead = {k for k in stored.coefficients if k.split(":")[0] in families and k not in counted}
    kept = {k: v for k, v in stored.coefficients.items() if k not in names and k not in dead}
    fixed = replace(stored, coefficients=kept)
    if only_alone:
        samples = [s for family in families for s in calibration.alone(samples, family)]
    runs = [calibration.Sample(Counter({k: v for k, v in s.features.items() if k in kept or k in names}),
                               s.instructions, s.where)
            for s in samples if runs_families(s.features, families)
            and (not only_one_pixel or one_pixel(s.features, families))]
    key = "counts_" + "_".join(families) + ("_one_pixel" if only_one_pixel else "") + ("_alone" if only_alone else "")
    model = calibration.fit(runs, target, target in DSP_TARGETS, fixed=fixed, key=key)
    model.calibration[key]["dropped"] = sorted(dead)
    if pinned:
        model.calibration[key]["pinned"] = dict(sorted(pinned.items()))
    print(f"dropped: {' '.join(sorted(dead))}", file=sys.stderr)
    _write(model, target, also)


def _pins(text: str | None) -> dict[str, float]:
    """--pin's COUNT=COST pairs."""
    pairs = [item.split("=") for item in (text or "").split(",") if item]
    return {name: float(cost) for name, cost in pairs}


def _seeds(args: argparse.Namespace) -> range:
    """The seeds a measuring mode draws: --networks of them from --first-seed."""
    return range(args.first_seed, args.first_seed + args.networks)


def refit_dense_signed(target: str, also: list[str]) -> None:
    """--dense-signed: the float dense layer (dense_f32) fitted in two steps on every stored block
    that runs it, on top of every other coefficient. First its cost per call, unit and product on
    the blocks whose input is signed (every product on soft float's long path, no zeros); then, the
    call and unit kept, its products' base cost and a pooled one's extra on the others (rectified
    and pooled inputs, whose share of zeros depends on the network's values and had pulled the
    cost per unit down). A signed product costs what the first fit gives."""
    family = "dense_f32"
    samples = [s for s in stored_samples(target) if s.features.get(f"{family}:mac")]
    signed = [s for s in samples if s.features.get(f"{family}:value_signed", 0) == s.features[f"{family}:mac"]]

    def fit(runs, loops, model, key):
        names = {f"{family}:{loop}" for loop in loops}
        fixed = replace(model, coefficients={k: v for k, v in model.coefficients.items() if k not in names})
        runs = [calibration.Sample(Counter({k: v for k, v in s.features.items() if k in fixed.coefficients or k in names}),
                                   s.instructions, s.where) for s in runs]
        return calibration.fit(runs, target, target in DSP_TARGETS, fixed=fixed, key=key)

    first = fit([calibration.Sample(Counter({k: v for k, v in s.features.items() if k != f"{family}:value_signed"}),
                                    s.instructions, s.where) for s in signed],
                ("call", "output", "mac"), _stored(target, ()), "dense_signed")
    model = fit([s for s in samples if s not in signed], ("mac", "value_pooled"), first, "dense_unsigned")
    coefficients = dict(model.coefficients)
    coefficients[f"{family}:value_signed"] = first.coefficients[f"{family}:mac"] - coefficients[f"{family}:mac"]
    _write(replace(model, coefficients=coefficients), target, also)


# The target's core has no FPU (set by main): a float graph's counts then profile the values of the
# input each row measured, random_input(graph, row["seed"]) (latency/values.py).
SOFT_FLOAT = {"on": False}


def load_samples(samples_path: Path, dsp: bool, mve: bool = False):
    samples = []
    for _, row, graph, _, schedule in stored_rows(samples_path):
        if graph is None:  # not the graph measured
            print(f"{samples_path.name}: {row['doc']['name']} is no longer the graph measured: left out", file=sys.stderr)
            continue
        values = value_profile(graph, row["seed"]) if SOFT_FLOAT["on"] else None
        blocks = calibration.block_samples(graph, schedule, tuple(row["blocks"]), dsp,
                                           f"seed {row['seed']} {row['plan_name']}{' io' if row['count_io'] else ''}",
                                           mve, values)
        # blocks of kernels changed since the row was measured (remeasure's "stale" families)
        samples += [s for s in blocks if not runs_families(s.features, row.get("stale", ()))]
    # a block of no instructions (a RESHAPE the C aliases, of a generated .tflite) has nothing to fit
    return [s for s in samples if s.instructions > 0]


def _stored(target: str, fits=("extension", "coverage")) -> LatencyModel:
    """The target's stored coefficients, without what earlier fits on top of them added (`fits`:
    "extension" of --ops, "coverage" of --cover)."""
    model = LatencyModel.from_dict(json.loads(Path(str(coefficients_path(target))).read_text()))
    calibration_stats = dict(model.calibration)
    added = {name for key in fits for name in calibration_stats.pop(key, {}).get("fitted", ())}
    return LatencyModel(model.target, model.dsp, {k: v for k, v in model.coefficients.items() if k not in added},
                        model.kernel_digests, calibration_stats, model.mve)


def _without(model: LatencyModel, key: str) -> LatencyModel:
    """`model` without the coefficients its fit `key` added (to fit them again on top of the rest)."""
    stats = dict(model.calibration)
    added = set(stats.pop(key, {}).get("fitted", ()))
    return LatencyModel(model.target, model.dsp, {k: v for k, v in model.coefficients.items() if k not in added},
                        model.kernel_digests, stats, model.mve)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", required=True)
    parser.add_argument("--networks", type=int, help="networks to measure (default 120; with --remeasure: main "
                        "networks from --first-seed to add to TARGET.jsonl, none by default)")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--samples", type=Path, help="JSON lines of measurements (default build/latency/TARGET.jsonl; "
                        "with --fit-counts: fit on this file's blocks only)")
    parser.add_argument("--refit", action="store_true", help="only fit the stored measurements again")
    parser.add_argument("--inplace", action="store_true", help="measure only each network's plan of whole-map "
                        "in-place depthwise blocks (to --samples, default build/latency/TARGET-inplace.jsonl)")
    parser.add_argument("--float", action="store_true", help="measure float32 versions of the networks "
                        "(to --samples, default build/latency/TARGET-f32.jsonl); every fit reads both files")
    parser.add_argument("--ops", action="store_true", help="measure networks of the other operators "
                        "(calibration.op_network: element-wise maps, MUL, CONCATENATION, PAD, MEAN, TRANSPOSE; to "
                        "--samples, default build/latency/TARGET-ops[-f32].jsonl) and fit only their kernels' "
                        "coefficients (on both files), keeping the stored ones")
    parser.add_argument("--cover", action="store_true", help="measure networks of the kernels the other "
                        "networks never run (calibration.cover_network: channel slices and shuffles, SPACE_TO_DEPTH, "
                        "DEPTH_TO_SPACE, depth multipliers, resizes, REQUANTIZE; with --float the float32 kernels of "
                        "the other operators; to --samples, default build/latency/TARGET-cover[-f32].jsonl) and fit "
                        "only their kernels' coefficients (on both files), keeping every stored one")
    parser.add_argument("--int16", action="store_true", help="with --cover: measure 16x8 networks instead "
                        "(int16_network; to --samples, default build/latency/TARGET-cover-s16.jsonl)")
    parser.add_argument("--uint8", action="store_true", help="with --cover: measure uint8 networks instead "
                        "(uint8_network; to --samples, default build/latency/TARGET-cover-u8.jsonl)")
    parser.add_argument("--islands", action="store_true", help="with --cover: measure int8 networks with float32 "
                        "islands instead (island_network; to --samples, default build/latency/TARGET-cover-fi.jsonl)")
    parser.add_argument("--abs", action="store_true", help="with --cover: measure networks of ABS layers instead "
                        "(abs_network, int8 and 16x8; to --samples, default build/latency/TARGET-cover-abs.jsonl)")
    parser.add_argument("--svdf", action="store_true", help="measure networks of SVDF layers (svdf_network, "
                        "behind a QUANTIZE of an int16 input or on an int8 one; to --samples, default "
                        "build/latency/TARGET-svdf.jsonl) and fit only their kernels' coefficients (SVDF's and the "
                        "int16 QUANTIZE's), keeping every stored one")
    parser.add_argument("--keyword", action="store_true", help="measure keyword models' heads (keyword_network: "
                        "SOFTMAX from int8 to int16 under both numerics and to int8 under TFLite Micro's, QUANTIZE from int16 "
                        "to int32; to --samples, "
                        "default build/latency/TARGET-keyword.jsonl) and fit only those kernels' coefficients, "
                        "keeping every stored one")
    parser.add_argument("--pad16", action="store_true", help="measure 16x8 networks of PAD layers (pad16_network; "
                        "to --samples, default build/latency/TARGET-pad16.jsonl) and fit only the int16 PAD's "
                        "coefficients, keeping every stored one")
    parser.add_argument("--lstm", action="store_true", help="with --cover: measure networks of one LSTM instead "
                        "(lstm_network, int8 under both numerics, or float32 with --float; to --samples, default "
                        "build/latency/TARGET-cover-lstm[-f32].jsonl)")
    parser.add_argument("--scan", action="store_true", help="measure stacks of int8 LSTM layers (scan_network, "
                        "under both numerics; to --samples, default build/latency/TARGET-scan.jsonl) and fit only "
                        "the time scan's own coefficients (scan:*), keeping every stored one; with --float, float32 "
                        "stacks to build/latency/TARGET-cover-lstm-f32.jsonl, then only the float LSTM's and the scan's "
                        "step and copy counts (SCAN_FLOAT_LOOPS) fitted again on every stored block that runs them")
    parser.add_argument("--recurrent", action="store_true", help="measure networks of one float32 GRU or RNN "
                        "(recurrent_network; to --samples, default build/latency/TARGET-recurrent.jsonl) and fit only "
                        "their kernels' coefficients, keeping every stored one")
    parser.add_argument("--windows", action="store_true", help="measure networks of dilated and transposed "
                        "convolutions (windows_network; --float: float32, --int16: windows16_network; to --samples, "
                        "default build/latency/TARGET-windows[-f32|-s16].jsonl) and fit only their kernels' "
                        "coefficients (on the three files), keeping every stored one")
    parser.add_argument("--sweep", action="store_true", help="measure networks of the windows the other networks "
                        "leave ill-determined (calibration.sweep_network: depth multipliers over windows of more than "
                        "25 taps, 1 x k convolutions on lines; to --samples, default build/latency/TARGET-sweep.jsonl) "
                        "and fit the families of SWEEP_FAMILIES again on every stored measurement, keeping every other "
                        "coefficient")
    parser.add_argument("--clamped", action="store_true", help="measure networks of convolutions whose ReLU "
                        "clamps inside int8 (clamped_network; to --samples, default build/latency/TARGET-clamped.jsonl) "
                        "and fit on them only the counts of the convolutions' families that have no coefficient yet "
                        "(their clamped output stage), keeping every stored coefficient")
    parser.add_argument("--rows", action="store_true", help="measure networks of a SOFTMAX over many rows "
                        "(rows_network; to --samples, default build/latency/TARGET-rows.jsonl, with --float in float32 "
                        "to TARGET-rows-f32.jsonl) and fit on them only SOFTMAX's count of rows past the first "
                        "(softmax:extra_row, softmax_f32:extra_row), keeping every stored coefficient")
    parser.add_argument("--few-channels", action="store_true", help="measure convolutions on 1 to 3 input "
                        "channels (calibration.few_channel_network; to --samples, default "
                        "build/latency/TARGET-few.jsonl) and fit only the convolutions' counts that have no "
                        "coefficient yet, on every stored block that runs them, keeping every other stored one")
    parser.add_argument("--streaming", action="store_true", help="measure one call of sliding-window models "
                        "(streaming_network, int8 and --float float32; to --samples, default "
                        "build/latency/TARGET-streaming[-f32].jsonl) and fit only the time rings' and running sums' "
                        "coefficients (time_ring, time_mean) on both files, keeping every other stored one")
    parser.add_argument("--lines", action="store_true", help="measure Conv1D-style networks (line_network: 1 x k "
                        "convolutions on a 1 x T x C map, int8 and float32, whole under the cover plans and as one "
                        "streaming call; to build/latency/TARGET-lines[-streaming].jsonl) and fit only the one-row "
                        "windows' counts (line_*) on every stored block that has them, keeping every other coefficient")
    parser.add_argument("--lines16", action="store_true", help="measure 16x8 Conv1D-style networks (lines16_network, "
                        "under the cover plans; to build/latency/TARGET-lines16.jsonl) and fit the 16x8 window "
                        "kernels (LINES16_FAMILIES) again on every stored block, then on their unfused ones, as "
                        "--remeasure FAMILIES --refit does")
    parser.add_argument("--dense-signed", action="store_true", help="fit the float dense layer (dense_f32) again "
                        "on the stored blocks: its costs per call, unit and product on those whose input is signed, "
                        "then its products' on the others (refit_dense_signed)")
    parser.add_argument("--chains", action="store_true", help="measure networks of conv -> depthwise -> 1x1 "
                        "chains (chain_network, under the chains scheme's least-RAM plan with the input streamed; to "
                        "--samples, default build/latency/TARGET-chains.jsonl) and fit only the chains block's own "
                        "coefficients (chain:*) on their chains blocks, keeping every other stored one")
    parser.add_argument("--vectors", action="store_true", help="measure networks of element-wise float32 kernels "
                        "on gate-sized maps (vector_network, layer by layer; to --samples, default "
                        "build/latency/TARGET-vectors.jsonl) and fit only those kernels' coefficients again on "
                        "their unfused blocks (every stored file's), keeping every other coefficient")
    parser.add_argument("--remeasure", metavar="FAMILY[,FAMILY]", help="after a change to these kernel families: "
                        "measure again the stored rows (build/latency/TARGET*.jsonl) whose plans run them, then fit "
                        "only their coefficients again on every stored row, keeping every other one")
    parser.add_argument("--fit-counts", metavar="LOOP[,LOOP]", help="with --remeasure: fit only these loops' "
                        "counts of the families (e.g. run_channel,mac: FAMILY:run_channel...), on every stored block "
                        "that runs them, keeping every other coefficient; the families' coefficients of counts that "
                        "no stored block has any more are dropped (after a change to the counts alone, with --refit)")
    parser.add_argument("--one-pixel", action="store_true", help="with --fit-counts: fit on the stored blocks "
                        "whose calls of the families are each of one pixel only (streams' calls, where a cost per "
                        "call or per channel and call is most of the time)")
    parser.add_argument("--alone", action="store_true", help="with --fit-counts: fit on the families' unfused "
                        "blocks only (as --remeasure's second fit does), not on every block that runs them")
    parser.add_argument("--pin", metavar="COUNT=COST[,COUNT=COST]", help="with --fit-counts: these counts cost "
                        "what is given, set before the fit and kept (loops whose instructions the object code gives, "
                        "e.g. memmove:library_byte=4, picolibc's memcpy byte loop)")
    parser.add_argument("--without", metavar="NAME[,NAME]", help="with --fit-counts: leave the stored files "
                        "TARGET-NAME.jsonl out of the fit (e.g. lines-streaming,streaming-f32: their convolutions read "
                        "rings that hold the reset state's zeros on the one call measured)")
    parser.add_argument("--limit", type=int, metavar="N", help="with --remeasure: measure again at most N rows of "
                        "each file (spread over them); the others' blocks that run the families are marked stale and "
                        "left out of every fit")
    parser.add_argument("--check", action="store_true", help="with --remeasure: print stored against new counts "
                        "and write nothing (with --limit: a few rows)")
    parser.add_argument("--also", action="append", default=[], metavar="TARGET",
                        help="write the same coefficients for TARGET too: a target that runs the same "
                             "instructions (fe310 for esp32c3; tests/targets checks their counts agree)")
    args = parser.parse_args()
    SOFT_FLOAT["on"] = args.target in SOFT_FLOAT_TARGETS
    if args.remeasure:
        families = tuple(args.remeasure.split(","))
        if not args.refit:
            remeasure(args.target, families, args.limit, args.check)
        if args.networks and not args.refit:  # main networks (a target without stored rows has nothing to refit)
            measure(args.target, _seeds(args), main_samples_file(args.target),
                    "int8")
        if args.fit_counts and not args.check:
            fit_counts(args.target, families, tuple(args.fit_counts.split(",")), args.also,
                       only_one_pixel=args.one_pixel, only_alone=args.alone, pinned=_pins(args.pin),
                       samples_path=args.samples, without=tuple(filter(None, (args.without or "").split(","))))
        elif not args.check:
            refit_families(args.target, families, args.also)
        return
    if args.vectors:  # (40 networks by default)
        _calibrate_vectors(args, args.samples or Path("build/latency") / f"{args.target}-vectors.jsonl")
        return
    if args.chains:  # (10 networks by default)
        _calibrate_chains(args, args.samples or Path("build/latency") / f"{args.target}-chains.jsonl")
        return
    args.networks = args.networks or 120
    folder = Path("build/latency")
    files = [folder / f"{args.target}.jsonl", folder / f"{args.target}-f32.jsonl",
             folder / f"{args.target}-inplace.jsonl"]
    ops_files = [folder / f"{args.target}-ops.jsonl", folder / f"{args.target}-ops-f32.jsonl"]
    cover_files = [folder / f"{args.target}-cover.jsonl", folder / f"{args.target}-cover-f32.jsonl",
                   folder / f"{args.target}-cover-s16.jsonl", folder / f"{args.target}-cover-u8.jsonl",
                   folder / f"{args.target}-cover-fi.jsonl", folder / f"{args.target}-cover-abs.jsonl",
                   folder / f"{args.target}-cover-lstm.jsonl", folder / f"{args.target}-cover-lstm-f32.jsonl"]
    windows_files = [folder / f"{args.target}-windows{suffix}.jsonl" for suffix in ("", "-f32", "-s16")]
    samples_path = args.samples or (windows_files[2 if args.int16 else int(args.float)] if args.windows else
                                    ops_files[int(args.float)] if args.ops else
                                    cover_files[(7 if args.float else 6) if args.lstm else 5 if args.abs else 4 if args.islands
                                                else 3 if args.uint8 else 2 if args.int16 else int(args.float)]
                                    if args.cover else files[2 if args.inplace else int(args.float)])
    own_fit = ("svdf" if args.svdf else "recurrent" if args.recurrent else "keyword" if args.keyword
               else "pad16" if args.pad16 else None)
    if own_fit:
        samples_path = args.samples or folder / f"{args.target}-{own_fit}.jsonl"
    if args.sweep:
        samples_path = args.samples or folder / f"{args.target}-sweep.jsonl"
    samples_path.parent.mkdir(parents=True, exist_ok=True)
    if args.streaming:
        _calibrate_streaming(args, folder)
        return
    if args.clamped:
        _calibrate_clamped(args, args.samples or folder / f"{args.target}-clamped.jsonl")
        return
    if args.rows:
        _calibrate_rows(args, args.samples or folder / f"{args.target}-rows{'-f32' if args.float else ''}.jsonl")
        return
    if args.few_channels:
        _calibrate_few_channels(args, args.samples or folder / f"{args.target}-few.jsonl")
        return
    if args.lines:
        _calibrate_lines(args, folder)
        return
    if args.dense_signed:
        refit_dense_signed(args.target, args.also)
        return
    if args.lines16:
        if not args.refit:
            measure(args.target, _seeds(args),
                    args.samples or folder / f"{args.target}-lines16.jsonl", "int16", "cover", lines16_network)
        refit_families(args.target, LINES16_FAMILIES, args.also)
        return
    if args.scan and args.float:  # stacks that tell a whole layer's copies of h from a scan's
        if not args.refit:
            measure(args.target, _seeds(args),
                    args.samples or folder / f"{args.target}-cover-lstm-f32.jsonl", "float32", "cover", scan_network)
        fit_counts(args.target, ("lstm_f32", "scan"), SCAN_FLOAT_LOOPS, args.also)
        return
    if args.scan:  # its own fit, on top of every stored coefficient (none of the other fits sees its file)
        # int8 stacks only: the loop's own costs do not depend on the element type (copies count
        # bytes), and a float32 LSTM's time depends on its values (expf, tanhf), which the
        # stored lstm_f32 costs over-predict on these stacks by 2 % on average.
        samples_path = args.samples or folder / f"{args.target}-scan.jsonl"
        samples_path.parent.mkdir(parents=True, exist_ok=True)
        if not args.refit:
            measure(args.target, _seeds(args), samples_path, "int8",
                    "cover", scan_network)
        dsp = args.target in DSP_TARGETS
        _write(calibration.fit(load_samples(samples_path, dsp, args.target in MVE_TARGETS), args.target, dsp, fixed=_stored(args.target, ("scan",)),
                               key="scan"), args.target, args.also)
        return
    if own_fit:  # its own fit, on top of every stored coefficient (no other fit sees its files)
        if not args.refit:
            make = {"svdf": svdf_network, "keyword": keyword_network, "pad16": pad16_network,
                    "recurrent": recurrent_network}[own_fit]
            dtype = {"pad16": "int16", "recurrent": "float32"}.get(own_fit, "int8")
            measure(args.target, _seeds(args), samples_path, dtype, "cover",
                    make)
        samples = load_samples(samples_path, args.target in DSP_TARGETS, args.target in MVE_TARGETS)
        if own_fit == "keyword":  # then the dense layer's TFLite Micro rounding (_dense_tflm), on top
            model = calibration.fit([_without_counts(s, DOUBLE_GENERAL) for s in samples], args.target,
                                    args.target in DSP_TARGETS, fixed=_stored(args.target, (own_fit, "dense_tflm")),
                                    key=own_fit)
            model = calibration.refit(samples, model, ("dense",), "dense_tflm", only_new=True)
        else:
            model = calibration.fit(samples, args.target, args.target in DSP_TARGETS,
                                    fixed=_stored(args.target, (own_fit,)), key=own_fit)
        _write(model, args.target, args.also)
        return
    if not args.refit:
        make = (windows16_network if args.windows and args.int16 else windows_network if args.windows else
                calibration.op_network if args.ops else int16_network if args.cover and args.int16 else
                uint8_network if args.cover and args.uint8 else island_network if args.cover and args.islands else
                abs_network if args.cover and args.abs else lstm_network if args.cover and args.lstm else
                partial(calibration.cover_network, float32=args.float) if args.cover else
                calibration.sweep_network if args.sweep else None)
        measure(args.target, _seeds(args), samples_path,
                "float32" if args.float else "int16" if args.int16 else "uint8" if args.uint8 else "int8",
                "inplace" if args.inplace else "cover" if args.cover or args.windows or args.sweep else "all",
                make)
    dsp, mve = args.target in DSP_TARGETS, args.target in MVE_TARGETS

    def samples_of(paths, measured: bool):
        return [s for path in ({samples_path} if measured else set()) | {f for f in paths if f.exists()}
                for s in load_samples(path, dsp, mve)]

    # every measurement of the target, for the SWEEP_ families' fit (the last one of every run)
    every_file = sorted({*files, *ops_files, *cover_files, *windows_files, folder / f"{args.target}-sweep.jsonl"})
    if args.sweep:  # every stored coefficient stays; the SWEEP_ families' are fitted again on top
        _write(_sweep_refit(_stored(args.target, ("sweep",)), samples_of(every_file, True), dsp), args.target, args.also)
        return
    if args.lstm:  # every stored coefficient stays; the LSTM kernels' are fitted on top of them
        lstm_files = cover_files[6:]
        model = calibration.fit(samples_of(lstm_files, True), args.target, dsp, fixed=_stored(args.target, ("lstm",)),
                                key="lstm")
        _write(model, args.target, args.also)
        return
    ops_samples, cover_samples = samples_of(ops_files, args.ops), samples_of(cover_files[:6], args.cover)
    windows_samples = samples_of(windows_files, args.windows)
    if args.windows:  # every stored coefficient stays; the dilated and transposed kernels' are fitted on top
        model, cover_samples = _stored(args.target, ("windows",)), []
    elif args.cover:  # every stored coefficient stays; the uncovered kernels' are fitted on top
        model = _stored(args.target, ("coverage",))
    elif args.ops:  # the main coefficients stay; the other operators' are fitted on top of them
        model = calibration.fit(ops_samples, args.target, dsp, fixed=_stored(args.target))
    else:
        samples = [s for path in ({samples_path} | {f for f in files if f.exists()}) for s in load_samples(path, dsp, mve)]
        model = calibration.fit(samples, args.target, dsp, mve=mve)
        if ops_samples:  # fit the other operators again on top of the new coefficients
            model = calibration.fit(ops_samples, args.target, dsp, fixed=model)
    if cover_samples:  # and the kernels of the cover networks on top of those
        model = calibration.fit(cover_samples, args.target, dsp, fixed=model, key="coverage")
    if windows_samples:  # and the dilated and transposed convolutions' on top of everything
        model = calibration.fit(windows_samples, args.target, dsp, fixed=_without(model, "windows"), key="windows")
    _write(_sweep_refit(model, samples_of(every_file, False), dsp), args.target, args.also)


# The general output stage's values under TFLite Micro's rounding (latency/features.py): 0 under
# LiteRT's numerics. --keyword fits the dense layer's (its odd seeds run TFLite Micro's numerics)
# after its own kernels, on top of every other coefficient, as calibration.dense_tflm.
DOUBLE_GENERAL = ":output_general_double"


def _without_counts(sample, suffix: str):
    return calibration.Sample(Counter({k: v for k, v in sample.features.items() if not k.endswith(suffix)}),
                              sample.instructions, sample.where)


def _line_count(name: str) -> bool:
    """A one-row window's own count (Conv2D's line_pixel, ...: 0 on every k x k window)."""
    return name.split(":")[-1].startswith("line_")


# Kernels that a causal TCN's column stream calls once per step besides its convolutions: the
# PAD before each one and the pool's running sum. Once TCNs are measured (tcn_network), --lines
# fits them again with the one-row windows' counts, on every stored block that runs them.
TCN_FAMILIES = ("pad_f32", "mean_f32_accumulate")


def _calibrate_lines(args, folder: Path) -> None:
    """--lines: measure line_network (whole, under the cover plans) and its streaming call, then
    fit only the one-row windows' counts and the dilated windows' per-call copy (dilated_call) on
    every stored block that has them (the narrow --ops and --sweep networks' 1 x k convolutions
    too), on top of every other coefficient; with TCNs measured, TCN_FAMILIES' counts too."""
    files = [folder / f"{args.target}-lines.jsonl", folder / f"{args.target}-lines-streaming.jsonl"]
    if not args.refit:
        seeds = _seeds(args)
        measure(args.target, seeds, files[0], "int8", "cover", line_network)
        measure(args.target, seeds, files[1], "int8", "vanilla", streaming_line_network)
    dsp = args.target in DSP_TARGETS
    tcns = files[0].exists() and any(json.loads(line)["seed"] >= TCN_SEED for line in files[0].read_text().splitlines() if line)
    families = TCN_FAMILIES if tcns else ()

    def fitted(name: str) -> bool:
        return _line_count(name) or name.endswith(":dilated_call") or name.split(":")[0] in families

    stored = _stored(args.target, ("lines",))
    fixed = replace(stored, coefficients={k: v for k, v in stored.coefficients.items() if not fitted(k)})
    # (a block's other counts that have no coefficient stay without one: only the line counts are fitted)
    samples = [calibration.Sample(Counter({k: v for k, v in s.features.items() if k in fixed.coefficients or fitted(k)}),
                                  s.instructions, s.where)
               for s in stored_samples(args.target)
               if any(v and fitted(k) for k, v in s.features.items())]
    _write(calibration.fit(samples, args.target, dsp, fixed=fixed, key="lines"), args.target, args.also)


STREAMING_FAMILIES = ("time_ring", "time_mean")  # (and their float32 kernels', "_f32")


def _calibrate_streaming(args, folder: Path) -> None:
    """--streaming: measure, then fit the streaming families on top of every other coefficient."""
    files = [folder / f"{args.target}-streaming{suffix}.jsonl" for suffix in ("", "-f32")]
    samples_path = args.samples or files[int(args.float)]
    if not args.refit:
        measure(args.target, _seeds(args), samples_path,
                "float32" if args.float else "int8", "vanilla", streaming_network)
    dsp = args.target in DSP_TARGETS
    stored = _stored(args.target, ("streaming",))
    kept = {k: v for k, v in stored.coefficients.items() if k.split(":")[0].removesuffix("_f32") not in STREAMING_FAMILIES}
    fixed = LatencyModel(stored.target, stored.dsp, kept, stored.kernel_digests, stored.calibration, stored.mve)
    samples = [s for path in {samples_path, *files} if path.exists() for s in load_samples(path, dsp, stored.mve)]
    model = calibration.fit(samples, args.target, dsp, fixed=fixed, key="streaming")
    fitted = {k: v for k, v in model.coefficients.items() if _streaming_key(k)}
    # The statistics of the blocks that run a streaming kernel (the others' kernels are not refitted).
    errors = [sum(fitted.get(k, model.coefficients.get(k, 0.0)) * v for k, v in s.features.items()) / s.instructions - 1
              for s in samples if any(v and _streaming_key(k) for k, v in s.features.items())]
    stats = {"samples": len(errors), "features": len(fitted), "worst_block_error": max(map(abs, errors)),
             "mean_abs_block_error": sum(map(abs, errors)) / len(errors), "fitted": sorted(fitted)}
    for name in [args.target, *args.also]:
        _write_streaming(model, stats, name)


def _streaming_key(key: str) -> bool:
    """A coefficient of a streaming family (time_ring:copied, time_ring_f32:call, ...)."""
    return key.split(":")[0].removesuffix("_f32") in STREAMING_FAMILIES


def _write_streaming(model: LatencyModel, stats: dict, target: str) -> None:
    """Store only the streaming families' coefficients, kernel digests and fit statistics."""
    sources = [f"{family}.{ext}" for family in STREAMING_FAMILIES for ext in ("c", "h")]
    _write_only(model, stats, target, "streaming", _streaming_key, sources)


def _write_only(model: LatencyModel, stats: dict, target: str, key: str, owned, sources) -> None:
    """Store only the coefficients that `owned` names, the digests of the kernel `sources` and the
    fit's statistics (calibration[key]) in the target's file, every other entry as it was (in its
    order: a small diff beside other fits)."""
    path = Path(str(coefficients_path(target)))
    doc = json.loads(path.read_text())
    fitted = model.to_dict()
    doc["coefficients"] = {k: v for k, v in doc["coefficients"].items() if not owned(k)}
    doc["coefficients"].update({k: v for k, v in sorted(fitted["coefficients"].items()) if owned(k)})
    for name in sources:
        doc["kernel_digests"][name] = fitted["kernel_digests"][name]
    doc["calibration"][key] = stats
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps(doc["calibration"][key]), file=sys.stderr)


CHAIN_SOURCES = ("chain.c", "chain.h", "chains.c.j2")  # the depthwise sums and the block's loops


def _chain_key(key: str) -> bool:
    """A coefficient of the chains block's own loops (chain:tap_channel, ...)."""
    return key.split(":")[0] == "chain"


def _calibrate_chains(args, samples_path: Path) -> None:
    """--chains: measure chain_network's networks (default 10), then fit only the chain:* counts
    on their chains blocks, on top of every other stored coefficient (the chains block's first and
    last ops are counted as their own kernels), and store them alone (_write_only)."""
    if not args.refit:
        samples_path.parent.mkdir(parents=True, exist_ok=True)
        measure(args.target, range(args.first_seed, args.first_seed + (args.networks or 10)), samples_path, "int8",
                "chains", chain_network)
    model = fit_chains(load_samples(samples_path, args.target in DSP_TARGETS, args.target in MVE_TARGETS), args.target)
    for name in [args.target, *args.also]:
        _write_only(model, model.calibration["chains"], name, "chains", _chain_key, CHAIN_SOURCES)


def fit_chains(samples, target: str) -> LatencyModel:
    """The target's stored coefficients with the chain:* ones fitted again on the samples' blocks
    that count them (the chains blocks), on top of every other one (calibration.chains)."""
    model = calibration.refit(samples, _stored(target, ("chains",)), ("chain",), "chains")
    # (the measurements ran the block template and the sums as they are now)
    return replace(model, kernel_digests={**model.kernel_digests, **{k: v for k, v in kernel_digests().items()
                                                                        if k in CHAIN_SOURCES}})


def _sweep_refit(model: LatencyModel, samples, dsp: bool) -> LatencyModel:
    """`model` with SWEEP_NEW's new counts fitted on every block that runs them (on DSP cores) and
    SWEEP_NEW_ALL's (on every core),
    SWEEP_TAIL's on every block that runs them (where any does), then SWEEP_ALONE's coefficients
    again on their unfused blocks (calibration.refit)."""
    if dsp:
        model = calibration.refit(samples, model, SWEEP_NEW, "sweep", only_new=True)
        for key, (family, counts) in SWEEP_COUNTS.items():
            kept = {k: v for k, v in model.coefficients.items() if not k.startswith(tuple(f"{family}:{c}" for c in counts))}
            model = calibration.refit(samples, replace(model, coefficients=kept), (family,), key, only_new=True)
    if any(v and name.split(":")[0] in SWEEP_NEW_ALL for s in samples for name, v in s.features.items()):
        model = calibration.refit(samples, _without(model, "sweep_new"), SWEEP_NEW_ALL, "sweep_new", only_new=True)
    if any(v and name.split(":")[0] in SWEEP_TAIL for s in samples for name, v in s.features.items()):
        model = calibration.refit(samples, model, SWEEP_TAIL, "sweep_tail")
    # a family with few unfused blocks (xtensa-lx106 has one PRELU block alone) keeps its fused fit
    alone = tuple(family for family in SWEEP_ALONE if len(calibration.alone(samples, family)) >= MIN_ALONE_BLOCKS)
    return calibration.refit(samples, model, alone, "sweep_alone", only_alone=True)


CLAMPED_FAMILIES = KERNEL_SOURCE_FAMILIES["conv2d.c"]  # the convolution's, on every kind of core


def _calibrate_clamped(args, samples_path: Path) -> None:
    """--clamped: measure clamped_network's networks, then fit on them the convolutions' counts
    that have no coefficient (calibration.refit with only_new), keeping every other one."""
    _measure_cover(args, samples_path, clamped_network, args.networks)
    samples = load_samples(samples_path, args.target in DSP_TARGETS, args.target in MVE_TARGETS)  # (only these run the clamped stage)
    _fit_only_new(args, samples, CLAMPED_FAMILIES, "clamped")


def _calibrate_rows(args, samples_path: Path) -> None:
    """--rows: measure rows_network's networks, then fit on them SOFTMAX's count that has no
    coefficient (its rows past the first), keeping every other one: the predictions of one-row heads
    do not move."""
    if args.float:  # the float kernel runs the same loops per row (its own key: the int8 fit stays)
        if not args.refit:
            measure(args.target, _seeds(args), samples_path, "float32",
                    "cover", rows_network)
    else:
        _measure_cover(args, samples_path, rows_network, args.networks)
    samples = load_samples(samples_path, args.target in DSP_TARGETS, args.target in MVE_TARGETS)
    _fit_only_new(args, samples, ("softmax_f32",) if args.float else ("softmax",), "rows_f32" if args.float else "rows")


def _calibrate_few_channels(args, samples_path: Path) -> None:
    """--few-channels: measure few_channel_network's networks (the cover plans, 24 by default), then
    fit the convolutions' counts that have no coefficient yet (calibration.refit with only_new) on
    every stored block that runs them, keeping every other coefficient. The main networks' stems
    are whole layers; these also stream a stem a pixel a call, and draw the rectangular and VALID
    windows on 1 to 3 channels that the counts of a gathered patch must be checked on."""
    _measure_cover(args, samples_path, calibration.few_channel_network, args.networks or 24)
    samples = stored_samples(args.target)
    _fit_only_new(args, samples, CLAMPED_FAMILIES, "few_channels")


def _measure_cover(args, samples_path: Path, make, networks: int) -> None:
    """Measure `networks` int8 networks of `make` from --first-seed under the cover plans (not with --refit)."""
    if not args.refit:
        measure(args.target, range(args.first_seed, args.first_seed + networks), samples_path, "int8", "cover", make)


def _fit_only_new(args, samples: list, families: tuple[str, ...], key: str) -> None:
    """Fit on `samples` the counts of `families` that have no coefficient yet, keeping every stored
    one (calibration.refit with only_new), and store the result as calibration[key]."""
    model = calibration.refit(samples, _stored(args.target, (key,)), families, key, only_new=True)
    print(f"fitted: {' '.join(model.calibration[key].get('fitted', []))}", file=sys.stderr)
    _write(model, args.target, args.also)


def _write(model: LatencyModel, target: str, also: list[str]) -> None:
    """Store the coefficients for `target` (and the targets `also` that run the same instructions)."""
    for name in [target, *also]:
        doc = model.to_dict()
        doc["target"] = name
        doc["calibration"] = {**doc["calibration"], "calibrated_on": target}
        Path(str(coefficients_path(name))).write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps(model.calibration), file=sys.stderr)


if __name__ == "__main__":
    main()

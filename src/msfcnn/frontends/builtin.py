"""Built-in models shipped inside the package (`msfcnn models` lists them).

The paper's three networks are plain layer chains (models/*.json, docs/models.md). Beside them,
real architectures with residual adds, a pooling head and a classifier are built here as layer
lists. All of them get deterministic random int8 weights when they are run or compiled.
"""

from __future__ import annotations

import json
from importlib import resources

from ..ir import Graph
from .layer_list import graph_from_layer_list

PAPER_MODELS = {
    "mbv2-w0.35": "MobileNetV2 w0.35 at 144x144 as the paper's plain chain",
    "mcunet-vww5": "MCUNetV2 VWW 5fps at 80x80 as the paper's plain chain",
    "mcunet-320kb": "MCUNet 320kB ImageNet at 176x176 as the paper's plain chain",
}


def _mbconv(c_in: int, c_out: int, expand: int, stride: int, kernel: int, first: int) -> list[dict]:
    """Inverted residual: [1x1 expand], kxk depthwise, 1x1 project, + add when shapes allow.
    `first` is the index the block's first layer will have (for the add's source)."""
    layers = []
    if expand != 1:
        layers.append({"op": "conv2d", "filters": c_in * expand, "kernel": 1, "stride": 1, "padding": 0,
                       "act": "relu6"})
    layers.append({"op": "depthwise_conv2d", "kernel": kernel, "stride": stride, "padding": kernel // 2,
                   "act": "relu6"})
    layers.append({"op": "conv2d", "filters": c_out, "kernel": 1, "stride": 1, "padding": 0})
    if stride == 1 and c_in == c_out:
        layers.append({"op": "add", "from": first - 1})
    return layers


def _network(name: str, size: int, stem: int, blocks: list[tuple], head: int | None, classes: int) -> dict:
    """Stem conv 3x3/2, inverted residual blocks (c_out, expand, stride, kernel), optional 1x1 head
    conv, global average pooling, dense classifier, softmax."""
    layers = [{"op": "conv2d", "filters": stem, "kernel": 3, "stride": 2, "padding": 1, "act": "relu6"}]
    c = stem
    for c_out, expand, stride, kernel in blocks:
        layers += _mbconv(c, c_out, expand, stride, kernel, len(layers))
        c = c_out
    if head:
        layers.append({"op": "conv2d", "filters": head, "kernel": 1, "stride": 1, "padding": 0, "act": "relu6"})
    layers += [{"op": "global_avg_pool"}, {"op": "dense", "units": classes}, {"op": "softmax"}]
    return {"name": name, "input": [size, size, 3], "layers": layers}


def _mobilenetv2_035() -> dict:
    # Keras MobileNetV2(alpha=0.35): channels rounded to multiples of 8, 1280-wide head.
    stages = [(8, 1, 1, 1), (8, 6, 2, 2), (16, 6, 2, 3), (24, 6, 2, 4), (32, 6, 1, 3), (56, 6, 2, 3), (112, 6, 1, 1)]
    blocks = [(c, t, s if i == 0 else 1, 3) for c, t, s, n in stages for i in range(n)]
    return _network("mobilenetv2-0.35", 144, 16, blocks, 1280, 1000)


def _mcunet_vww() -> dict:
    # The mcunet-vww5 backbone (models/mcunet-vww5.json) with its residual adds and a 2-class head.
    blocks = [(8, 1, 1, 3), (16, 6, 2, 3), (16, 3, 1, 3), (16, 3, 1, 3), (24, 3, 2, 7), (24, 6, 1, 3),
              (24, 5, 1, 5), (40, 6, 2, 7), (40, 6, 1, 7), (48, 6, 1, 3), (48, 4, 1, 3), (96, 5, 2, 5),
              (96, 5, 1, 3), (96, 4, 1, 3), (160, 3, 1, 7)]
    return _network("mcunet-vww-res", 80, 16, blocks, None, 2)


REAL_MODELS = {
    "mobilenetv2-0.35": (_mobilenetv2_035, "full MobileNetV2-0.35 at 144x144: residuals, pooling head, dense 1000"),
    "mcunet-vww-res": (_mcunet_vww, "MCUNet-style VWW net at 80x80 with residual adds and a 2-class head"),
}


def builtin_names() -> dict[str, str]:
    return {**PAPER_MODELS, **{name: doc for name, (_, doc) in REAL_MODELS.items()}}


def builtin_layer_list(name: str) -> dict:
    """A built-in model's layer list."""
    if name in REAL_MODELS:
        return REAL_MODELS[name][0]()
    return json.loads(resources.files("msfcnn.models").joinpath(f"{name}.json").read_text())


def load_builtin(name: str) -> Graph:
    return graph_from_layer_list(builtin_layer_list(name), name)

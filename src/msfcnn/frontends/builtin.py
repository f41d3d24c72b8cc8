"""Built-in models shipped inside the package (`msfcnn models` lists them)."""

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


def builtin_names() -> dict[str, str]:
    return dict(PAPER_MODELS)


def load_builtin(name: str) -> Graph:
    text = resources.files("msfcnn.models").joinpath(f"{name}.json").read_text()
    return graph_from_layer_list(json.loads(text), name)

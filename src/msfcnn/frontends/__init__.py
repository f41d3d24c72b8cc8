"""Model frontends: a MODEL argument (built-in name or file) becomes a Graph."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..errors import UserError
from ..ir import Graph
from .builtin import builtin_names, load_builtin
from .layer_list import load_layer_list

# File suffix -> loader. Later frontends (.tflite, .onnx) register here.
LOADERS: dict[str, Callable[[Path], Graph]] = {".json": load_layer_list}


def load_model(model: str) -> Graph:
    if model in builtin_names():
        return load_builtin(model)
    path = Path(model)
    loader = LOADERS.get(path.suffix.lower())
    if loader is None:
        known = ", ".join(builtin_names())
        raise UserError(f"unknown model {model!r}: give a built-in name ({known}) or a "
                        f"{'/'.join(LOADERS)} file")
    if not path.is_file():
        raise UserError(f"{model}: no such file")
    return loader(path)


__all__ = ["LOADERS", "builtin_names", "load_model"]

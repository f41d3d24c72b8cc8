"""Cost models: each turns a graph into the fusion DAG's weighted edges.

A cost model module provides NAME, SCHEMES, build_dag(graph, schemes, count_io) and
vanilla_blocks(graph, count_io=...).
"""

from __future__ import annotations

from types import ModuleType

from ..errors import UserError
from . import exact, paper

COST_MODELS: dict[str, ModuleType] = {exact.NAME: exact, paper.NAME: paper}
DEFAULT_COST_MODEL = exact.NAME


def get_cost_model(name: str) -> ModuleType:
    try:
        return COST_MODELS[name]
    except KeyError:
        raise UserError(f"unknown cost model {name!r} (available: {', '.join(COST_MODELS)})") from None

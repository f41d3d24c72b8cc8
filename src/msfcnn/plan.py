"""A fusion plan: the blocks of one path through the fusion DAG, and its JSON form (SPEC 4.3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .fusion.dag import Block


@dataclass(frozen=True)
class Plan:
    model: str
    cost_model: str
    vanilla_macs: int
    blocks: tuple[Block, ...] = ()
    constraint: dict[str, Any] = field(default_factory=dict)  # e.g. {"max_overhead": 1.2}
    note: str = ""  # why an infeasible plan is infeasible
    io_counted: bool = False  # block RAM includes the network's input and output buffers

    @property
    def feasible(self) -> bool:
        return bool(self.blocks)

    @property
    def peak_ram_bytes(self) -> int:
        return max(b.ram_bytes for b in self.blocks)

    @property
    def macs(self) -> int:
        return sum(b.macs for b in self.blocks)

    @property
    def overhead(self) -> float:
        """MACs over the unfused network's (1.0 for a network without MACs, e.g. only a pad)."""
        return self.macs / self.vanilla_macs if self.vanilla_macs else 1.0

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"model": self.model, "cost_model": self.cost_model, "feasible": self.feasible}
        if self.feasible:
            doc.update({
                "peak_ram_bytes": self.peak_ram_bytes,
                "macs": self.macs,
                "vanilla_macs": self.vanilla_macs,
                "overhead": round(self.overhead, 4),
                "io_counted": self.io_counted,
                "blocks": [{"first": b.first, "last": b.last, "scheme": b.scheme, "rows": b.rows,
                            "ram_bytes": b.ram_bytes, "macs": b.macs} for b in self.blocks],
            })
        else:
            doc["vanilla_macs"] = self.vanilla_macs
            doc["reason"] = self.note
        doc.update({k: _json_number(v) for k, v in self.constraint.items()})
        return doc


def _json_number(value):
    """JSON has no infinity: an unbounded cap is written as the string "inf"."""
    return "inf" if value == float("inf") else value

"""A fusion plan: the blocks of one path through the fusion DAG, and its JSON form (docs/json.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .version import __version__
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
    # With a target's latency model: the target, and the instructions predicted for the whole plan
    # (its blocks, the moves between them and msfcnn_invoke's own; each Block has its share).
    target: str | None = None
    predicted_instructions: int | None = None  # None where the target's model misses a kernel's costs
    latency_missing: tuple[str, ...] = ()  # the kernels the target's latency model has no costs for
    # A stateful model's state buffers (Graph.state_bytes): part of every block's RAM, kept between
    # invocations at the arena's start. 0 for a model without state.
    state_bytes: int = 0
    # --input-stream: the blocks that can pull the network input row by row from the caller do,
    # holding only the rows they still need; the input is not an arena buffer for them.
    input_streamed: bool = False
    # On a board of several RAM regions (`fit`): each region's name and the arena it holds
    # (schedule/placement.py), in the board's order; () for one arena.
    region_arenas: tuple[tuple[str, int], ...] = ()

    # The sha256 of the model's bytes (frontends.model_digest), written with the tool's version so
    # that a saved plan is never used with another model.
    model_sha256: str | None = None
    # What a plan file recorded besides its blocks (RECORDED), to compare with what the model costs.
    recorded: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def latency_complete(self) -> bool:
        """The target's latency model costs every kernel of the plan: its prediction is given."""
        return self.target is not None and not self.latency_missing

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
                **({"input_streamed": True} if self.input_streamed else {}),
                "blocks": [{**block_name(b), "ram_bytes": b.ram_bytes, "macs": b.macs,
                            **({"predicted_instructions": b.instructions} if self.latency_complete else {})}
                           for b in self.blocks],
            })
            if self.target:
                doc.update({"target": self.target, "predicted_instructions": self.predicted_instructions,
                            "latency_complete": self.latency_complete, "latency_missing": list(self.latency_missing)})
            if self.state_bytes:
                doc["state_bytes"] = self.state_bytes
            if self.region_arenas:
                doc["region_arena_bytes"] = dict(self.region_arenas)
        else:
            doc["vanilla_macs"] = self.vanilla_macs
            doc["reason"] = self.note
        doc.update({k: _json_number(v) for k, v in self.constraint.items()})
        if self.model_sha256:
            doc.update({"model_sha256": self.model_sha256, "msfcnn_version": __version__})
        return doc

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> "Plan":
        """The plan `to_dict` wrote (a feasible one). Raises KeyError, TypeError or ValueError on a
        document that is not one; the blocks are not checked against any model here."""
        blocks = tuple(Block(int(b["first"]), int(b["last"]), str(b["scheme"]), int(b["ram_bytes"]), int(b["macs"]),
                             int(b.get("rows", 1))) for b in doc["blocks"])
        constraint = {key: _from_json_number(doc[key]) for key in CONSTRAINT_KEYS if key in doc}
        sha = doc.get("model_sha256")
        return cls(str(doc["model"]), str(doc["cost_model"]), int(doc["vanilla_macs"]), blocks, constraint,
                   io_counted=bool(doc.get("io_counted", False)), input_streamed=bool(doc.get("input_streamed", False)),
                   state_bytes=int(doc.get("state_bytes", 0)),
                   region_arenas=tuple((str(k), int(v)) for k, v in doc.get("region_arena_bytes", {}).items()),
                   model_sha256=None if sha is None else str(sha), recorded={key: doc[key] for key in RECORDED if key in doc})


def unfused_doc(plan: Plan, vanilla: "Plan | None") -> dict:
    """The plan's predicted instructions against the unfused network's, where both are predicted
    (`vanilla`: the unfused plan on the same target, or None); the MACs' factor is `overhead`."""
    doc = {}  # (the MACs' factor is the plan's `overhead`)
    if vanilla is not None and plan.latency_complete and vanilla.predicted_instructions:
        doc.update({"unfused_predicted_instructions": vanilla.predicted_instructions,
                    "instructions_vs_unfused": round(plan.predicted_instructions / vanilla.predicted_instructions, 4)})
    return doc


CONSTRAINT_KEYS = ("max_overhead", "max_ram_bytes")
# The whole-plan figures a plan file records, checked against the model when it is read.
RECORDED = ("peak_ram_bytes", "macs", "overhead", "msfcnn_version")


def block_name(block: Block) -> dict[str, Any]:
    """The fields that name a block in every JSON document: its ops, its scheme and its rows."""
    return {"first": block.first, "last": block.last, "scheme": block.scheme, "rows": block.rows}


def _json_number(value):
    """JSON has no infinity: an unbounded cap is written as the string "inf"."""
    return "inf" if value == float("inf") else value


def _from_json_number(value):
    if value is None:
        return None
    return float("inf") if value == "inf" else float(value) if isinstance(value, float) else int(value)

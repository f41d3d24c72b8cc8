"""Turns a graph, a cost model and a constraint into plans: the solvers behind the CLI."""

from __future__ import annotations

import math

from .cost import get_cost_model
from .errors import UserError
from .fusion import solvers
from .fusion.dag import FusionDAG
from .ir import Graph
from .plan import Plan
from .schedule.schemes import is_fused


class Planner:
    """Builds one model's fusion DAG once and answers every question about it."""

    def __init__(self, graph: Graph, cost_model: str, schemes: tuple[str, ...] | None = None, count_io: bool = False):
        self.graph = graph
        self.cost = get_cost_model(cost_model)
        self.schemes = tuple(schemes or self.cost.SCHEMES)
        self.count_io = count_io  # the network's input and output are counted as the cost model says
        self.dag: FusionDAG = self.cost.build_dag(graph, self.schemes, count_io)
        self._vanilla = self.cost.vanilla_blocks(graph, count_io=count_io)
        self.vanilla_macs = sum(b.macs for b in self._vanilla)

    def _plan(self, path: solvers.Path | None, constraint: dict | None = None, note: str = "") -> Plan:
        blocks = path.blocks if path is not None else ()
        return Plan(self.graph.name, self.cost.NAME, self.vanilla_macs, blocks, constraint or {}, note, self.count_io)

    def least_ram(self) -> int:
        return solvers.min_peak_ram(self.dag).peak_ram

    def _infeasible(self, constraint: dict, what: str) -> Plan:
        least = self.least_ram()
        return self._plan(None, constraint, f"no plan has {what}; the least RAM reachable is {least} B")

    def vanilla(self) -> Plan:
        return Plan(self.graph.name, self.cost.NAME, self.vanilla_macs, tuple(self._vanilla), io_counted=self.count_io)

    def heuristic(self) -> Plan:
        """MCUNetV2-style: one fused block from op 0, every later op unfused; least peak RAM."""
        restricted = self.dag.restricted(lambda b: b.first == 0 or not is_fused(b))
        return self._plan(solvers.min_peak_ram(restricted))

    def min_ram(self) -> Plan:
        return self._plan(solvers.min_peak_ram(self.dag))

    def min_macs(self) -> Plan:
        return self._plan(solvers.min_macs(self.dag))

    def p1(self, max_overhead: float) -> Plan:
        constraint = {"max_overhead": max_overhead}
        # inf * 0 would be NaN for a network without MACs: an unbounded cap stays unbounded.
        path = solvers.p1(self.dag, math.inf if math.isinf(max_overhead) else max_overhead * self.vanilla_macs)
        if path is None:
            return self._infeasible(constraint, f"MAC overhead <= {max_overhead}")
        return self._plan(path, constraint)

    def p2(self, max_ram: int) -> Plan:
        constraint = {"max_ram_bytes": max_ram}
        path = solvers.p2(self.dag, max_ram)
        if path is None:
            return self._infeasible(constraint, f"peak RAM < {max_ram} B")
        return self._plan(path, constraint)

    def pareto(self, keep=None) -> list[Plan]:
        """The Pareto front, over the blocks for which keep(block) holds (default: all)."""
        dag = self.dag if keep is None else self.dag.restricted(keep)
        return [self._plan(path) for path in solvers.pareto_front(dag)]

    def solve(self, strategy: str = "optimal", objective: str = "min-ram",
              max_overhead: float | None = None, max_ram: int | None = None) -> Plan:
        """One plan for the CLI's `plan` command; an infeasible constraint raises UserError."""
        if strategy == "vanilla":
            plan = self.vanilla()
        elif strategy == "heuristic":
            plan = self.heuristic()
        elif objective == "min-ram":
            plan = self.p1(max_overhead if max_overhead is not None else math.inf)
            if max_ram is not None and plan.feasible and plan.peak_ram_bytes >= max_ram:
                plan = self._infeasible({"max_overhead": max_overhead, "max_ram_bytes": max_ram},
                                        f"peak RAM < {max_ram} B within MAC overhead {max_overhead}")
        else:
            plan = self.p2(max_ram if max_ram is not None else math.inf)
            if max_overhead is not None and plan.feasible and plan.macs > max_overhead * self.vanilla_macs:
                plan = self._infeasible({"max_overhead": max_overhead, "max_ram_bytes": max_ram},
                                        f"MAC overhead <= {max_overhead} with peak RAM < {max_ram} B")
        if not plan.feasible:
            raise UserError(plan.note)
        return plan

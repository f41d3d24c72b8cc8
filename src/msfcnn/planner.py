"""Turns a graph, a cost model and a constraint into plans: the solvers behind the CLI."""

from __future__ import annotations

import math
from dataclasses import replace

from .cost import get_cost_model
from .errors import UserError
from .fusion import solvers
from .fusion.dag import FusionDAG
from .ir import Graph
from .plan import Plan
from .schedule.schemes import is_fused


class Planner:
    """Builds one model's fusion DAG once and answers every question about it."""

    def __init__(self, graph: Graph, cost_model: str, schemes: tuple[str, ...] | None = None, count_io: bool = False,
                 latency=None, input_stream: bool = False):
        self.graph = graph
        self.cost = get_cost_model(cost_model)
        self.schemes = tuple(self.cost.SCHEMES if schemes is None else schemes)  # () = no fusion
        self.count_io = count_io or input_stream  # the network's input and output are counted as the cost model says
        self.input_stream = input_stream  # ... but the input is pulled row by row where a block can (stream_input)
        if input_stream and self.cost.NAME != "exact":
            raise UserError("--input-stream needs the exact cost model, whose blocks pull the input's rows")
        if input_stream and (len(graph.input_tensors) != 1 or len(graph.input_shape) != 3):
            raise UserError(f"--input-stream takes a model with one input feature map (H, W, C); {graph.name} has "
                            + (f"{len(graph.input_tensors)} inputs" if len(graph.input_tensors) != 1
                               else f"an input of shape {list(graph.input_shape)}"))
        io = {"input_stream": True} if input_stream else {}
        # The exact cost model leaves out blocks that a path of other blocks beats in RAM and MACs;
        # in time such a block may win, so a latency model weighs every candidate.
        complete = {"complete": True} if latency is not None and self.cost.NAME == "exact" else {}
        self.dag: FusionDAG = self.cost.build_dag(graph, self.schemes, self.count_io, **complete, **io)
        self._vanilla = self.cost.vanilla_blocks(graph, count_io=self.count_io, **io)
        self.latency = latency  # a latency.LatencyModel: every block also weighs its predicted instructions
        if latency is not None:
            self._timed(latency)
        self.vanilla_macs = sum(b.macs for b in self._vanilla)

    def _timed(self, latency) -> None:
        """Every block with its predicted instructions on the latency model's target."""
        if any(b.lowered is None for b in self.dag.blocks):
            raise UserError(f"the latency model needs the blocks' lowering: use --cost-model exact, not {self.cost.NAME}")
        # Kernels whose time the model cannot predict (they would cost 0): with any, no time is
        # predicted and every time ranking falls back to MACs (`ranking_weight`).
        self.uncovered = tuple(latency.uncovered(self.graph))
        self._counter = latency.counter(self.graph)
        predict = self._counter.block
        self.dag = FusionDAG(self.dag.n_ops, tuple(replace(b, instructions=round(predict(b.lowered)))
                                                   for b in self.dag.blocks))
        self._vanilla = [replace(b, instructions=round(predict(b.lowered))) for b in self._vanilla]

    @property
    def latency_complete(self) -> bool:
        """A latency model that costs every kernel of the graph: its predictions may rank plans."""
        return self.latency is not None and not self.uncovered

    def ranking_weight(self, weight: str) -> str:
        """The block weight a ranking by `weight` uses: predicted instructions only where the
        latency model is complete, MACs instead where a kernel has no costs (a block of it would
        weigh too little and win for that alone)."""
        return "macs" if weight == "instructions" and not self.latency_complete else weight

    def _plan(self, path: solvers.Path | None, constraint: dict | None = None, note: str = "") -> Plan:
        blocks = path.blocks if path is not None else ()
        plan = Plan(self.graph.name, self.cost.NAME, self.vanilla_macs, blocks, constraint or {}, note, self.count_io,
                    state_bytes=self.graph.state_bytes, input_streamed=self.input_stream)
        return self._with_latency(plan)

    def _with_latency(self, plan: Plan) -> Plan:
        """The plan with its predicted instructions, scheduled as the C will run it (moves included)."""
        if self.latency is None or not plan.feasible:
            return plan
        if self.uncovered:  # predictions are calibrated or not given
            return replace(plan, target=self.latency.target, latency_missing=self.uncovered)
        from .schedule import schedule_plan
        schedule = schedule_plan(self.graph, list(plan.blocks), plan.io_counted, plan.input_streamed)
        total = round(sum(self._counter.schedule(schedule)))
        return replace(plan, target=self.latency.target, predicted_instructions=total)

    def least_ram(self, max_overhead: float | None = None, dag: FusionDAG | None = None) -> int:
        """The least peak RAM of any plan (of `dag`, default all) with MACs <= max_overhead x vanilla."""
        return solvers.p1(self.dag if dag is None else dag, self._max_macs(max_overhead)).peak_ram

    def _max_macs(self, max_overhead: float | None) -> float:
        # inf * 0 would be NaN for a network without MACs: an unbounded cap stays unbounded.
        return math.inf if max_overhead is None or math.isinf(max_overhead) else max_overhead * self.vanilla_macs

    def vanilla(self) -> Plan:
        return self._with_latency(Plan(self.graph.name, self.cost.NAME, self.vanilla_macs, tuple(self._vanilla),
                                       io_counted=self.count_io, state_bytes=self.graph.state_bytes,
                                       input_streamed=self.input_stream))

    def heuristic(self) -> Plan:
        """MCUNetV2-style: one fused block from op 0, every later op unfused; least peak RAM."""
        return self._plan(solvers.min_peak_ram(self._heuristic_dag()))

    def _heuristic_dag(self) -> FusionDAG:
        return self.dag.restricted(lambda b: b.first == 0 or not is_fused(b))

    def min_ram(self) -> Plan:
        return self._plan(solvers.min_peak_ram(self.dag))

    def min_macs(self) -> Plan:
        return self._plan(solvers.min_macs(self.dag))

    def p1(self, max_overhead: float) -> Plan:
        """P1: least peak RAM with MACs <= max_overhead x vanilla. The unfused ops are always in
        the DAG, so every cap F >= 1 has a plan."""
        return self._plan(solvers.p1(self.dag, self._max_macs(max_overhead)), {"max_overhead": max_overhead})

    def p2(self, max_ram: float) -> Plan:
        """P2: fewest MACs with peak RAM <= max_ram (the plan fits in max_ram bytes)."""
        constraint = {"max_ram_bytes": max_ram}
        path = solvers.p2(self.dag, max_ram + 1)  # RAM is whole bytes: <= max_ram is < max_ram + 1
        if path is None:
            return self._plan(None, constraint, f"no plan has peak RAM <= {max_ram} B; "
                                                f"the least RAM reachable is {self.least_ram()} B")
        return self._plan(path, constraint)

    def pareto(self, keep=None, weight: str = "macs") -> list[Plan]:
        """The Pareto front of (peak RAM, weight: MACs or predicted instructions), over the blocks
        for which keep(block) holds (default: all)."""
        dag = self.dag if keep is None else self.dag.restricted(keep)
        return [self._plan(path) for path in solvers.pareto_front(dag, self.ranking_weight(weight))]

    def solve(self, strategy: str = "optimal", objective: str = "min-ram",
              max_overhead: float | None = None, max_ram: int | None = None,
              max_latency: int | None = None) -> Plan:
        """One plan for the CLI's `plan` command that meets every cap given (MACs <= max_overhead x
        vanilla, peak RAM <= max_ram, predicted instructions <= max_latency), among the strategy's
        plans: all (`optimal`), MCUNetV2-style ones (`heuristic`: one fused block from op 0, every
        later op unfused) or the unfused one (`vanilla`). Objectives: min-ram, min-mac, and with a
        latency model min-latency (fewest predicted instructions). A cap that none of them meets
        raises UserError naming the least RAM they reach under the other caps: passed back as
        max_ram, that figure gives a plan."""
        if (objective == "min-latency" or max_latency is not None) and self.latency is None:
            raise UserError("--objective min-latency and --max-latency need a target's latency model: pass --target")
        if max_latency is not None and not self.latency_complete:
            raise UserError(f"--max-latency cannot be checked: the {self.latency.target} latency model has no costs for "
                            f"{', '.join(self.uncovered)} (not calibrated); cap the compute with --max-overhead instead")
        if objective == "min-latency" and not self.latency_complete:
            objective = "min-mac"  # the ranking falls back to MACs; the plan says why (latency_missing)
        if max_latency is not None and (max_overhead is not None or objective == "min-mac"):
            raise UserError("--max-latency is a compute cap of its own: give it without --max-overhead, with "
                            "--objective min-ram or min-latency")
        dag, kind, by = self._space(strategy)
        weight, cap = ("instructions", max_latency) if max_latency is not None else ("macs", self._max_macs(max_overhead))
        within = "" if max_overhead is None else f" within MAC overhead {max_overhead}"
        if max_latency is not None:
            within = f" within {max_latency} predicted instructions"
        if objective == "min-ram":
            path = solvers.p1(dag, math.inf if cap is None else cap, weight)
            constraint = ({"max_instructions": max_latency} if max_latency is not None
                          else {"max_overhead": math.inf if max_overhead is None else max_overhead})
        else:
            weight = "instructions" if objective == "min-latency" else "macs"
            path = solvers.p2(dag, math.inf if max_ram is None else max_ram + 1, weight)
            constraint = {"max_ram_bytes": math.inf if max_ram is None else max_ram}
            if path is not None and (path.macs > self._max_macs(max_overhead)
                                     or (max_latency is not None and path.total("instructions") > max_latency)):
                path = None
        if path is None or (max_ram is not None and path.peak_ram > max_ram):
            if max_latency is None:
                least = self.least_ram(max_overhead, dag)
            else:
                fastest = solvers.min_macs(dag, "instructions").total("instructions")
                if fastest > max_latency:
                    raise UserError(f"no {kind} runs in {max_latency} predicted instructions; the fewest "
                                    f"reachable{by} is {fastest}")
                least = solvers.p1(dag, max_latency, "instructions").peak_ram
            raise UserError(f"no {kind} has peak RAM <= {max_ram} B{within}; the least RAM reachable{by}{within} "
                            f"is {least} B")
        return self._plan(path, constraint)

    def _space(self, strategy: str) -> tuple[FusionDAG, str, str]:
        """The plans a strategy chooses from, as a DAG; what to call one, and how to say 'by one'."""
        if strategy == "vanilla":  # one path, of overhead 1
            return FusionDAG(len(self.graph), tuple(self._vanilla)), "unfused plan (--strategy vanilla)", " unfused"
        if strategy == "heuristic":
            return self._heuristic_dag(), "heuristic plan (one fused block from op 0)", " by one"
        return self.dag, "plan", ""

    def advice_to_fit(self, strategy: str, max_overhead: float | None, cap: int) -> str:
        """What to pass for a plan of the strategy with peak RAM <= cap: --max-ram alone if the
        overhead cap allows it, with the least --max-overhead that does if not, or why no plan fits."""
        dag, kind, by = self._space(strategy)
        least = self.least_ram(None, dag)
        if cap < least:
            return f"no {kind} fits: the least RAM reachable{by} is {least} B, {least - cap} B more than fits"
        path = solvers.p2(dag, cap + 1)
        if max_overhead is None or path.macs <= self._max_macs(max_overhead):
            return f"a {kind} of at most {cap} B fits: pass --max-ram {cap}"
        steps = math.ceil(path.macs / self.vanilla_macs * 10_000)  # F in steps of 1e-4, rounded up
        while self._max_macs(steps / 10_000) < path.macs:  # and enough in float arithmetic too
            steps += 1
        overhead = steps / 10_000
        return (f"no {kind} within MAC overhead {max_overhead} fits (the least RAM reachable{by} within it is "
                f"{self.least_ram(max_overhead, dag)} B), one of at most {cap} B with more compute does: "
                f"pass --max-ram {cap} --max-overhead {overhead:.4f}")

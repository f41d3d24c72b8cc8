"""The exact cost model's DAG build: its search bound drops no edge, and the blocks it drops as
beaten change no plan."""

import importlib.util
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.marks import split_examples

from msfcnn.cost import exact
from msfcnn.errors import UserError
from msfcnn.frontends import load_model
from msfcnn.frontends.layer_list import graph_from_layer_list
from msfcnn.schedule import Liveness, streaming
from msfcnn.schedule import schemes as registry

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "models"
MODELS = ["mobilenetv2-0.35", "mcunet-vww-res", str(FIXTURES / "onnx_gap_linear.onnx"),
          str(FIXTURES / "op_flatten_dense_b1.tflite")]
# Built-ins whose DAGs take about 2 s of CPU a case (slow tier, with few exceptions).
LARGE_DAGS = {"mobilenetv2-0.35", "mcunet-vww-res"}


def edges(dag):
    return [(b.first, b.last, b.scheme, b.rows, b.ram_bytes, b.macs, b.time_rank,
             b.lowered.placed_on, sorted(b.lowered.homes.items())) for b in dag.blocks]


@pytest.mark.parametrize("model", MODELS)
def test_no_block_reaching_the_stream_break_lowers(model):
    graph = load_model(model)
    live, cache = Liveness(graph), {}
    n = len(graph)
    for first in range(n):
        stop = streaming.stream_break(graph, first)
        for last in range(max(first + 1, stop), n):
            assert streaming.stream_end(graph, first, last) is None
            for name in registry.FUSED_SCHEMES:
                scheme = registry.SCHEMES[name]
                for rows in scheme.rows_options(graph, first, last):
                    assert scheme.lower(graph, live, first, last, rows, cache) is None, (first, last, name, rows)


@pytest.mark.parametrize("model", [pytest.param(m, marks=pytest.mark.slow) if m in LARGE_DAGS else m for m in MODELS])
def test_the_bound_drops_no_edge(model, monkeypatch):
    graph = load_model(model)
    bounded = edges(exact.build_dag(graph, count_io=True, complete=True))
    monkeypatch.setattr(streaming, "stream_break", lambda graph, first, cache=None: len(graph))
    assert bounded == edges(exact.build_dag(graph, count_io=True, complete=True))


def fingerprint_script():
    spec = importlib.util.spec_from_file_location("dag_fingerprint", ROOT / "scripts" / "dag_fingerprint.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def solver_answers(dag, vanilla_macs):
    """Every solver's plan on `dag` (scripts/dag_fingerprint.py --solvers)."""
    return fingerprint_script().solver_lines(dag, vanilla_macs)


# The two built-ins' DAGs take about 2 s of CPU a case: slow, but for mcunet-vww-res with the io counted.
BEATEN_BLOCK_CASES = [pytest.param(m, io, marks=pytest.mark.slow) if m in LARGE_DAGS and (m, io) != ("mcunet-vww-res", True)
                      else (m, io) for m in MODELS for io in (False, True)]


@pytest.mark.parametrize("model, count_io", BEATEN_BLOCK_CASES)
def test_dropping_beaten_blocks_changes_no_plan(model, count_io):
    """The DAG drops blocks that a path of kept blocks beats (cost.exact._Witness): every solver
    (min-RAM, min-MACs, P1, P2, the Pareto front, the heuristic, the paper's space) gives the same
    plans, block for block, as on the complete DAG."""
    graph = load_model(model)
    vanilla = sum(graph.macs(i) for i in range(len(graph)))
    pruned = exact.build_dag(graph, count_io=count_io)
    complete = exact.build_dag(graph, count_io=count_io, complete=True)
    assert len(pruned.blocks) <= len(complete.blocks)
    assert set(pruned.blocks) <= set(complete.blocks)
    assert solver_answers(pruned, vanilla) == solver_answers(complete, vanilla)


def check_dropping_beaten_blocks(seed):
    """As above, on random chains (with residual adds and pool-dense tails for some seeds)."""
    module = fingerprint_script()
    try:
        graph = graph_from_layer_list(module.random_layer_list(seed))
    except UserError:
        return
    vanilla = sum(graph.macs(i) for i in range(len(graph)))
    for count_io in (False, True):
        pruned = exact.build_dag(graph, count_io=count_io)
        complete = exact.build_dag(graph, count_io=count_io, complete=True)
        assert solver_answers(pruned, vanilla) == solver_answers(complete, vanilla)



# 40 random chains in all (about 0.1 s of CPU each): 10 in the fast tier, 30 in the slow.
(test_dropping_beaten_blocks_changes_no_plan_on_random_graphs,
 test_dropping_beaten_blocks_changes_no_plan_on_more_random_graphs) = split_examples(
    check_dropping_beaten_blocks, 10, 30, st.integers(0, 10 ** 6))


def random_graph(seed):
    try:
        return graph_from_layer_list(fingerprint_script().random_layer_list(seed))
    except UserError:
        return None


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10 ** 6))
def test_the_band_floor_bounds_every_longer_block(seed):
    """cost.exact._Bounds.band_floor(first, last) is at most the RAM, less what op `first` reads,
    of every hcache or recompute block first..last' with last' >= last, of any rows: checked on
    every such block of the complete DAG, against the floor of each of its prefixes."""
    graph = random_graph(seed)
    if graph is None:
        return
    for count_io in (False, True):
        live = Liveness(graph, count_io)
        cache = {}
        bounds = exact._Bounds(graph, live, exact.vanilla_blocks(graph, live), cache)
        if "patches" not in bounds.floors:
            continue  # not covered: no floor is used
        for block in exact.build_dag(graph, count_io=count_io, complete=True).blocks:
            axes = registry.SCHEMES[block.scheme].growing
            if not axes:
                continue
            for last in range(block.first, block.last + 1):
                floor = bounds.band_floor(axes, block.first, last)
                assert floor + bounds.reads(block.first) <= block.ram_bytes, (block, last)


@pytest.mark.parametrize("model", ["mobilenetv2-0.35", "mcunet-vww-res"])
def test_order_of_is_the_order_restricted(model):
    """Stream.order_of(ops), taken from a shared order through an index, is the stream's own pull
    order restricted to those ops, for every row stream of the model and a few op sets."""
    graph = load_model(model)
    live, shared = Liveness(graph), {}
    for first in range(len(graph) - 1, -1, -1):  # later firsts first: the shared order is re-based
        for last in range(first + 1, min(first + 12, len(graph))):
            block = registry.SCHEMES["linebuffer"].lower(graph, live, first, last, 1, shared)
            if block is None:
                continue
            loops = block.loops
            own = loops._order()
            ops = range(loops.first, loops.end + 1)
            for chosen in (set(ops), {loops.end}, set(ops[::3]) | {loops.first}):
                assert loops.order_of(chosen) == [e for e in own if e[0] in chosen]


def walk_by_definition(graph, first, last):
    """stream_end's walk op by op, as its docstring defines it: the leading run of row ops on
    feature maps, then at most one op that consumes the map (accumulates, or a view), then vector
    ops each reading the op before. Returns (the run's last op, the op where the walk stops)."""
    end = first - 1
    for i in range(first, last + 1):
        op = graph.nodes[i].op
        if op.pattern in streaming.ROW_PATTERNS and len(graph.shape_of(i)) == 3:
            if end != i - 1:
                return end, i  # a row op after the tail started
            end = i
        elif end == i - 1 and end >= first and (op.accumulates or op.is_view):
            pass
        elif not (op.pattern is streaming.Pattern.VECTOR and end < i - 1 and graph.nodes[i].inputs == (i - 1,)):
            return end, i
    return end, last + 1


@pytest.mark.parametrize("model", [*MODELS, str(FIXTURES / "op_dense_softmax.tflite"), str(FIXTURES / "op14_transpose_mean.tflite"), "mcunet-vww5"])
def test_the_stream_walk_follows_its_definition(model):
    """The walks from every op are kept as (run end, stop) pairs, shared along a run of row ops, so
    that planning memory grows linearly with depth: they must give the op-by-op walk's answer."""
    graph = load_model(model)
    cache = {}
    for first in range(len(graph)):
        for last in range(first, len(graph)):
            expected = walk_by_definition(graph, first, last)
            assert streaming._scan(graph, first, last, cache) == expected, (first, last)
            assert streaming._scan(graph, first, last) == expected, (first, last)


def pointwise_chain(depth: int, mixed: bool = False):
    """A chain of 1x1 convolutions (with a depthwise 3x3 after each when `mixed`)."""
    layers = []
    for _ in range(depth):
        layers.append({"op": "conv2d", "filters": 4, "kernel": 1, "stride": 1, "padding": 0})
        if mixed:
            layers.append({"op": "depthwise_conv2d", "kernel": 3, "stride": 1, "padding": 1})
    return graph_from_layer_list({"name": "pointwise", "input": [12, 12, 4], "layers": layers})


@pytest.mark.parametrize("mixed", [False, True])
@pytest.mark.parametrize("count_io", [False, True])
def test_chains_of_kept_blocks_change_no_plan(mixed, count_io):
    """A chain of 1x1 convolutions keeps less RAM in a block of many ops than in one unfused op:
    only the chains of shorter kept blocks beat the long ones (cost.exact._HopPaths). Dropping them
    changes no solver's plan, and the DAG grows linearly with depth (it held every block)."""
    graph = pointwise_chain(6 if mixed else 16, mixed)
    vanilla = sum(graph.macs(i) for i in range(len(graph)))
    pruned = exact.build_dag(graph, count_io=count_io)
    complete = exact.build_dag(graph, count_io=count_io, complete=True)
    assert set(pruned.blocks) <= set(complete.blocks)
    assert solver_answers(pruned, vanilla) == solver_answers(complete, vanilla)
    if not mixed:
        assert len(pruned.blocks) < len(complete.blocks) / 2
        longer = exact.build_dag(pointwise_chain(32), count_io=count_io)
        assert len(longer.blocks) < 2.5 * len(pruned.blocks)  # linear: the complete DAG's grows 4 times

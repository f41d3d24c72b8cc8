"""Keras' unrolled GRU on an emulated microcontroller: the generated C of the int8 GRU with a dense
head, built for Cortex-M4 and run under QEMU, gives TFLite Micro's bytes under `--numerics tflm`
(the numpy and host C runs match LiteRT too: tests/integration/test_gru.py)."""

from __future__ import annotations

import numpy as np
import pytest

from support import litert_oracle, micro_oracle
from support.paths import FIXTURES
from support.toolchains import require_target
from msfcnn import pipeline
from msfcnn.cost import exact
from msfcnn.fusion import solvers
from msfcnn.plan import Plan
from msfcnn.schedule import schedule_plan
from msfcnn.tensors import random_input


@pytest.mark.slow
def test_unrolled_gru_on_cortex_m4_gives_tflite_micros_output():
    target = require_target("cortex-m4")
    path = FIXTURES / "sequence" / "gru_last_dense_int8.tflite"
    graph = pipeline.load(str(path), numerics="tflm")
    plan = pipeline.solve(pipeline.planner(graph), "optimal")
    schedule = pipeline.lower(graph, plan)
    x = random_input(graph, 7)
    want = micro_oracle.run_jobs([(path, [x])], "tflm")[0][0]
    check = pipeline.verify(graph, plan, schedule, x, target)
    assert check.bit_exact and check.arena_bytes == plan.peak_ram_bytes
    np.testing.assert_array_equal(np.asarray(check.output).reshape(-1), np.asarray(want).reshape(-1))


@pytest.mark.qemu
def test_an_onnx_gru_stack_fused_in_time_on_cortex_m4():
    """nn.GRU(4, 8, num_layers=2) over 6 steps as one `timescan` block: numpy's values (float32;
    the target's expf and tanhf may differ from the host's in the last bit), the arena the plan
    predicted, and fewer instructions than the two layers run one after the other (the same
    per-step function, F = 1, one copy of each step less)."""
    target = require_target("cortex-m4")
    graph = pipeline.load(str(FIXTURES / "sequence" / "onnx_gru_batch_first_2.onnx"))
    dag = exact.build_dag(graph)
    runs = []
    for blocks in (solvers.min_peak_ram(dag).blocks, solvers.Path(dag.blocks[:len(graph)]).blocks):
        plan = Plan(graph.name, "exact", sum(graph.macs(t) for t in range(len(graph))), tuple(blocks))
        schedule = schedule_plan(graph, blocks)
        check = pipeline.verify(graph, plan, schedule, random_input(graph, 3), target, count_instructions=True)
        assert check.arena_bytes == schedule.arena_bytes
        np.testing.assert_allclose(np.asarray(check.output), np.asarray(check.expected), rtol=1e-5, atol=1e-6)
        runs.append((blocks[0].scheme, schedule.arena_bytes, check.instructions))
    (scan, scan_ram, scan_instructions), (_, layers_ram, layers_instructions) = runs
    assert scan == "timescan" and scan_ram < layers_ram
    assert scan_instructions < layers_instructions


@pytest.mark.qemu
def test_a_keras_gru_stack_run_step_major_on_cortex_m4():
    """Two unrolled Keras GRUs (int8, 8 units, 6 steps), their ops run step by step
    (frontends/unrolled.py): LiteRT's bytes, the arena the plan predicted, and the instructions
    within 3 % of the latency model (-0.8 % measured), each pack step's as its fit. (Under
    `--numerics tflm`: the next test.)"""
    from msfcnn import latency

    target = require_target("cortex-m4")
    path = FIXTURES / "sequence" / "gru_stack_int8.tflite"
    graph = pipeline.load(str(path), numerics="litert")
    plan = pipeline.solve(pipeline.planner(graph), "optimal")
    schedule = pipeline.lower(graph, plan)
    x = random_input(graph, 5)
    want = litert_oracle.run_jobs([(path, [x])])[0].outputs[0]
    check = pipeline.verify(graph, plan, schedule, x, target, count_instructions=True)
    assert check.bit_exact and check.arena_bytes == plan.peak_ram_bytes
    np.testing.assert_array_equal(np.asarray(check.output).reshape(-1), np.asarray(want).reshape(-1))
    predicted = latency.load("cortex-m4").counter(graph).schedule(schedule)
    assert abs(sum(predicted) / check.instructions - 1) <= 0.03
    packs = [k for k, block in enumerate(schedule.blocks) if graph.nodes[block.first].op.kind == "pack_step"]
    assert len(packs) == 6
    assert all(abs(predicted[k] - check.block_instructions[k]) <= 1.5 for k in packs)


@pytest.mark.qemu
def test_a_keras_gru_stack_under_tflite_micro_numerics_on_cortex_m4():
    """The same stack under `--numerics tflm` (TFLite Micro's bytes: test_gru.py on the host): the
    C gives the numpy executor's bytes, and the instructions are within 3 % of the latency model.
    Its dense layers round as TFLite's reference kernels do (dense:output_general_double, fitted by
    calibrate_latency.py --keyword): without that count they were 7 % low."""
    from msfcnn import latency

    target = require_target("cortex-m4")
    graph = pipeline.load(str(FIXTURES / "sequence" / "gru_stack_int8.tflite"), numerics="tflm")
    plan = pipeline.solve(pipeline.planner(graph), "optimal")
    schedule = pipeline.lower(graph, plan)
    check = pipeline.verify(graph, plan, schedule, random_input(graph, 5), target, count_instructions=True)
    assert check.bit_exact and check.arena_bytes == plan.peak_ram_bytes
    predicted = latency.load("cortex-m4").counter(graph).schedule(schedule)
    assert abs(sum(predicted) / check.instructions - 1) <= 0.03

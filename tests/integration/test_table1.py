"""The paper's Table 1 (docs/cost-models.md), every value, from one `msfcnn sweep --json` run."""

import json

import pytest

from msfcnn.cli import main

INF = float("inf")
OVERHEADS = [1.1, 1.2, 1.3, 1.4, 1.5, INF]
RAMS = [16000, 32000, 64000, 128000, 256000]
TABLE1 = {
    # model: (vanilla RAM, vanilla MACs, heuristic RAM, P1 RAMs per overhead cap, P2 RAMs per RAM cap)
    "mbv2-w0.35": (194400, 18909490, 32076, [67905, 67905, 21288, 15340, 15340, 7887],
                   [15340, 25674, 63741, 83065, 181440]),
    "mcunet-vww5": (96000, 11578496, 24000, [32792, 26128, 17760, 13376, 13376, 12000],
                    [13376, 26128, 38576, 89600, 89600]),
    "mcunet-320kb": (309760, 81625520, 90307, [190096, 186736, 186032, 156672, 94184, 42643],
                     [None, None, 62880, 94184, 247808]),
}


@pytest.fixture(scope="module")
def sweep(capsys_module=None):
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["sweep", *TABLE1, "--cost-model", "paper", "--max-overhead", "1.1,1.2,1.3,1.4,1.5,inf",
                     "--max-ram", "16kB,32kB,64kB,128kB,256kB", "--json"])
    assert code == 0
    return {entry["model"]: entry for entry in json.loads(out.getvalue())}


@pytest.mark.parametrize("model", TABLE1)
def test_table1_row(sweep, model):
    v_ram, v_macs, h_ram, p1_rams, p2_rams = TABLE1[model]
    entry = sweep[model]
    assert (entry["vanilla"]["peak_ram_bytes"], entry["vanilla"]["macs"]) == (v_ram, v_macs)
    assert entry["heuristic"]["peak_ram_bytes"] == h_ram
    assert [p.get("peak_ram_bytes") for p in entry["p1"]] == p1_rams
    assert [p["max_overhead"] for p in entry["p1"]] == [1.1, 1.2, 1.3, 1.4, 1.5, "inf"]
    assert [p.get("peak_ram_bytes") for p in entry["p2"]] == p2_rams
    assert [p["max_ram_bytes"] for p in entry["p2"]] == RAMS
    for plan, cap in zip(entry["p1"], OVERHEADS):
        assert plan["macs"] <= cap * v_macs and plan["overhead"] == round(plan["macs"] / v_macs, 4)
    for plan, cap in zip(entry["p2"], RAMS):
        assert not plan["feasible"] or plan["peak_ram_bytes"] < cap


def test_plan_fields_and_spec_example(sweep):
    """The example plan of docs/cli.md: mbv2-w0.35 at F <= 1.3 is 21288 B and 24536110 MACs."""
    plan = sweep["mbv2-w0.35"]["p1"][2]
    assert (plan["peak_ram_bytes"], plan["macs"], plan["vanilla_macs"]) == (21288, 24536110, 18909490)
    assert plan["overhead"] == 1.2976 and plan["cost_model"] == "paper" and plan["feasible"] is True
    blocks = plan["blocks"]
    assert blocks[0]["first"] == 0 and blocks[-1]["last"] == 52
    assert all(a["last"] + 1 == b["first"] for a, b in zip(blocks, blocks[1:]))
    assert max(b["ram_bytes"] for b in blocks) == 21288 and sum(b["macs"] for b in blocks) == 24536110
    assert set(blocks[0]) == {"first", "last", "scheme", "rows", "ram_bytes", "macs"}


def test_infeasible_point_is_reported_with_its_constraint(sweep):
    point = sweep["mcunet-320kb"]["p2"][0]
    assert point["feasible"] is False and point["max_ram_bytes"] == 16000
    assert "42643" in point["reason"]  # the least RAM reachable

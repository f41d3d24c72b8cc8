"""The `paper` cost model against golden numbers from the msf-CNN reference implementation.

tests/fixtures/reference_costs.json is produced by scripts/gen_reference_costs.py, which runs the
reference (a scratch checkout, not part of this repository) on random plain chains and on the
three paper models. For every block i..j the reference gives a RAM figure and a MAC count, or
null when the block is not a fusion candidate.
"""

from __future__ import annotations

import json
import pytest

from msfcnn.cost.paper import build_dag, vanilla_blocks
from msfcnn.frontends.layer_list import graph_from_layer_list
from support.paths import FIXTURES

FIXTURE = FIXTURES / "reference_costs.json"
RECORDS = json.loads(FIXTURE.read_text())


def _record_id(record: dict) -> str:
    chain = record["chain"]
    h, w, c = chain["input"]
    return f"{chain['name']}-{len(chain['layers'])}L-{h}x{w}x{c}"


@pytest.fixture(params=RECORDS, ids=[_record_id(r) for r in RECORDS])
def record(request) -> dict:
    return request.param


def _ours(record: dict) -> dict[tuple[int, int], tuple[int, int]]:
    graph = graph_from_layer_list(record["chain"])
    blocks = build_dag(graph).blocks
    ours: dict[tuple[int, int], tuple[int, int]] = {}
    for block in blocks:
        key = (block.first, block.last)
        assert key not in ours, f"two blocks for layers {key}"
        assert block.scheme == ("single" if block.first == block.last else "hcache"), block
        ours[key] = (block.ram_bytes, block.macs)
    return ours


def test_fixture_is_not_trivial():
    assert len(RECORDS) >= 50
    fused = [b for r in RECORDS for b in r["blocks"] if b[0] < b[1]]
    assert any(b[2] is None for b in fused) and any(b[2] is not None for b in fused)


def test_blocks_match_reference(record):
    ours = _ours(record)
    n = len(record["chain"]["layers"])
    expected_keys = {(i, j) for i in range(n) for j in range(i, n)}
    assert {(b[0], b[1]) for b in record["blocks"]} == expected_keys  # the fixture covers all i <= j

    mismatches = []
    for i, j, ram, macs in record["blocks"]:
        if ram is None or macs is None:
            assert ram is None and macs is None, f"reference block {i}..{j}: only one cost is inf"
            if (i, j) in ours:
                mismatches.append(f"{i}..{j}: reference has no candidate, ours {ours[i, j]}")
        elif (i, j) not in ours:
            mismatches.append(f"{i}..{j}: missing, reference (ram, macs) = {(ram, macs)}")
        elif ours[i, j] != (ram, macs):
            mismatches.append(f"{i}..{j}: ours (ram, macs) = {ours[i, j]}, reference {(ram, macs)}")
    extra = set(ours) - expected_keys
    assert not extra, f"blocks outside the chain: {sorted(extra)}"
    assert not mismatches, "\n".join(mismatches)


def test_vanilla_matches_reference(record):
    blocks = vanilla_blocks(graph_from_layer_list(record["chain"]))
    assert [(b.first, b.last) for b in blocks] == [(i, i) for i in range(len(record["chain"]["layers"]))]
    assert max(b.ram_bytes for b in blocks) == record["vanilla_ram"]
    assert sum(b.macs for b in blocks) == record["vanilla_macs"]

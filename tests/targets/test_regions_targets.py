"""A plan over several RAM regions linked as its board under QEMU: each region at an address of
its own, each arena inside its region, bit-exact (one tiny model, one target)."""

import json

from msfcnn.cli import main
from support.paths import FIXTURES
from support.toolchains import require_target


def test_each_arena_links_inside_its_own_region_and_runs_bit_exact(capsys, tmp_path):
    require_target("cortex-m4")
    model = str(FIXTURES / "models" / "i16_chain.tflite")
    code = main(["verify", model, "--strategy", "vanilla", "--count-io", "--board", "nucleo-f412zg",
                 "--region", "fast:3KiB:1", "--region", "slow:4KiB:3", "-o", str(tmp_path), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["pass"] and doc["bit_exact"]
    placed = {r["region"]: r for r in doc["region_arenas"]}
    assert set(placed) == {"fast", "slow"} and all(r["inside"] for r in placed.values())
    assert placed["fast"]["origin"] + placed["fast"]["length"] <= placed["slow"]["origin"]  # distinct
    assert sum(r["bytes"] for r in placed.values()) == doc["arena_bytes"]
    assert "INCLUDE msfcnn_regions.ld" in (tmp_path / "msfcnn_memory.ld").read_text()

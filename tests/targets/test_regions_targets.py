"""Plans over several RAM regions linked as their board under QEMU: each region at an address of
its own, each arena inside its region, bit-exact (tiny models, one target): one network, and two
sharing one arena per region (verify A B --board)."""

import json

from msfcnn.cli import main
from support.paths import FIXTURES
from support.toolchains import require_target

REGIONS = ("--board", "nucleo-f412zg", "--region", "fast:3KiB:1", "--region", "slow:4KiB:3")


def test_each_arena_links_inside_its_own_region_and_runs_bit_exact(capsys, tmp_path):
    require_target("cortex-m4")
    model = str(FIXTURES / "models" / "i16_chain.tflite")
    code = main(["verify", model, "--strategy", "vanilla", "--count-io", *REGIONS, "-o", str(tmp_path), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["pass"] and doc["bit_exact"]
    placed = {r["region"]: r for r in doc["region_arenas"]}
    assert set(placed) == {"fast", "slow"} and all(r["inside"] for r in placed.values())
    assert placed["fast"]["origin"] + placed["fast"]["length"] <= placed["slow"]["origin"]  # distinct
    assert sum(r["bytes"] for r in placed.values()) == doc["arena_bytes"]
    assert "INCLUDE msfcnn_regions.ld" in (tmp_path / "msfcnn_memory.ld").read_text()
    # Two networks in one program: each region's shared arena linked inside it, both bit-exact.
    tiny = str(FIXTURES / "models" / "act_sweep_relu_0_to_1_0.tflite")
    code = main(["verify", model, tiny, "--strategy", "vanilla", "--count-io", *REGIONS, "--json"])
    shared = json.loads(capsys.readouterr().out)
    assert code == 0 and shared["pass"] and all(n["bit_exact"] for n in shared["networks"])
    placed = {r["region"]: r for r in shared["region_arenas"]}
    assert set(placed) == {"fast", "slow"} and all(r["inside"] for r in placed.values())
    assert placed["fast"]["origin"] + placed["fast"]["length"] <= placed["slow"]["origin"]
    assert sum(-(-r["bytes"] // 4) * 4 for r in placed.values()) == shared["shared_arena_bytes"]

"""The exact cost model behind the CLI: schemes, caller's buffers, plots."""

import json

import pytest

from msfcnn.cli import main
from msfcnn.frontends import load_model
from msfcnn.ir import NETWORK_INPUT
from msfcnn.schedule import Liveness, lower_block


def plan(capsys, *argv):
    assert main(["plan", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow
def test_schemes_restrict_the_search(capsys):
    only_lines = plan(capsys, "mbv2-w0.35", "--schemes", "linebuffer")
    assert {b["scheme"] for b in only_lines["blocks"]} <= {"single", "linebuffer"} and only_lines["overhead"] == 1.0
    only_hcache = plan(capsys, "mbv2-w0.35", "--schemes", "hcache")
    assert {b["scheme"] for b in only_hcache["blocks"]} <= {"single", "hcache"}
    both = plan(capsys, "mbv2-w0.35")
    assert both["peak_ram_bytes"] <= min(only_lines["peak_ram_bytes"], only_hcache["peak_ram_bytes"])
    assert any(b["rows"] > 1 for b in plan(capsys, "mbv2-w0.35", "--max-overhead", "1.1")["blocks"])


@pytest.mark.slow
def test_count_io_counts_the_input_and_output_while_they_are_live(capsys):
    """With --count-io each block also pays for the network input while it is still to be read
    and for the output once written, and nothing else changes: recomputed here block by block from
    the io-excluded lowering (without the schemes that put an output over its input)."""
    graph = load_model("mcunet-vww5")
    image, result = graph.nbytes(-1), graph.nbytes(graph.output)
    without = plan(capsys, "mcunet-vww5", "--schemes", "linebuffer,hcache,recompute")
    with_io = plan(capsys, "mcunet-vww5", "--count-io", "--schemes", "linebuffer,hcache,recompute")
    assert with_io["io_counted"] is True
    assert max(without["peak_ram_bytes"], image) <= with_io["peak_ram_bytes"] <= without["peak_ram_bytes"] + image + result
    live, live_io = Liveness(graph), Liveness(graph, count_io=True)
    for b in with_io["blocks"]:
        lowered = lower_block(graph, live, b["first"], b["last"], b["scheme"], b["rows"])
        reads_image = NETWORK_INPUT in lowered.reads or live.last_use[NETWORK_INPUT] > b["last"]
        writes_result = b["last"] == graph.output and lowered.alias is None
        separate = live.block_ram(lowered) + image * reads_image + result * writes_result
        if lower_block(graph, live_io, b["first"], b["last"], b["scheme"], b["rows"]).placed_on is None:
            assert b["ram_bytes"] == separate
        else:  # an hcache block writing its output over the image it consumed: their union
            assert b["ram_bytes"] <= separate
    # A RAM cap then applies to the arena with the input and output in it.
    capped = plan(capsys, "mcunet-vww5", "--count-io", "--max-ram", str(with_io["peak_ram_bytes"] + 1))
    assert capped["peak_ram_bytes"] <= with_io["peak_ram_bytes"]


@pytest.mark.slow
def test_pareto_plot_overlays_fronts_and_timeline(tmp_path, capsys):
    png, timeline = tmp_path / "front.png", tmp_path / "timeline.png"
    assert main(["pareto", "mcunet-vww5", "--plot", str(png)]) == 0
    assert main(["plan", "mcunet-vww5", "--max-overhead", "1.2", "--timeline", str(timeline)]) == 0
    capsys.readouterr()
    for image in (png, timeline):
        assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_all_schemes_never_worse_than_the_papers_space(capsys):
    """Under the exact model, adding schemes can only lower the least RAM at every cap."""
    from msfcnn.planner import Planner
    planner = Planner(load_model("mcunet-vww5"), "exact")
    paper_space = planner.pareto(lambda b: b.scheme == "single" or (b.scheme == "hcache" and b.rows == 1))
    full = planner.pareto()
    for point in paper_space:
        assert min(p.peak_ram_bytes for p in full if p.macs <= point.macs) <= point.peak_ram_bytes

"""`fit`'s boards of the user's own (--ram, --target, --clock, --flash, or a board file), its
objectives, and "did you mean" for the names a user types: boards, targets, built-in models."""

import json
from pathlib import Path

import pytest

from msfcnn import pipeline
from msfcnn.boards import BOARDS, custom_board, get_board
from msfcnn.errors import UserError
from msfcnn.fit import NoFit, fit
from msfcnn.sizes import parse_clock
from support.cli import run_cli
from support.toolchains import require_target

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "models"


@pytest.mark.parametrize("text,hertz", [("100MHz", 100_000_000), ("32.768kHz", 32_768), ("16000000", 16_000_000),
                                        ("1.2GHz", 1_200_000_000), ("80M", 80_000_000)])
def test_clocks_parse(text, hertz):
    assert parse_clock(text) == hertz


@pytest.mark.parametrize("text", ["fast", "0MHz", "100MB", "-5MHz"])
def test_bad_clocks_are_refused(text):
    with pytest.raises(UserError, match="bad clock"):
        parse_clock(text)


@pytest.mark.parametrize("argv,message", [
    (["plan", "mbv2-w035"], "unknown model 'mbv2-w035' (did you mean 'mbv2-w0.35'?)"),
    (["fit", "mbv2-w0.35", "--board", "nucleo-f41zg"], "unknown board 'nucleo-f41zg' (did you mean 'nucleo-f412zg'?)"),
    (["compile", "mbv2-w0.35", "--target", "cortexm4", "-o", "out"], "unknown target 'cortexm4' (did you mean 'cortex-m4'?)"),
    (["plan", "mbv2-w0.35", "--target", "cortex_m7"], "no latency model for target 'cortex_m7' (did you mean 'cortex-m7'?)"),
    (["fit", "mbv2-w0.35", "--ram", "64KiB", "--target", "fe31"], "'fe31' is not a microcontroller target (did you mean 'fe310'?)"),
    (["fit", "mbv2-w0.35", "--ram", "64KiB", "--target", "host"], "'host' is not a microcontroller target"),
    (["fit", "mbv2-w0.35"], "fit needs a board: --board NAME"),
    (["fit", "mbv2-w0.35", "--ram", "64KiB"], "needs its RAM and the target that stands for its core"),
    (["fit", "mbv2-w0.35", "--clock", "80MHz", "--target", "cortex-m4"], "needs its RAM"),
])
def test_mistyped_names_get_one_line_and_a_suggestion(argv, message, capsys):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and message in err


def test_nothing_close_suggests_nothing(capsys):
    code, _, err = run_cli(capsys, "fit", "mbv2-w0.35", "--board", "zzzz")
    assert code == 2 and "did you mean" not in err


def test_a_board_of_your_own_replaces_only_what_is_given():
    base = BOARDS["nucleo-f412zg"]
    smaller = custom_board(128 * 1024, None, None, None, base)
    assert smaller.ram_bytes == 128 * 1024 and (smaller.clock_hz, smaller.target, smaller.flash_bytes) == (
        base.clock_hz, base.target, base.flash_bytes) and smaller.exact_core
    other = custom_board(None, "cortex-m7", 200_000_000, None, base)
    assert other.target == "cortex-m7" and other.clock_hz == 200_000_000 and not other.exact_core
    own = custom_board(48 * 1024, "esp32c3", None, 4 << 20)
    assert (own.name, own.ram_bytes, own.target, own.clock_hz, own.flash_bytes) == ("custom", 49152, "esp32c3", None, 4 << 20)


def test_a_board_file_gives_a_board(tmp_path):
    path = tmp_path / "my.json"
    path.write_text(json.dumps({"name": "my-board", "ram": "48KiB", "target": "cortex-m7", "clock": "200MHz",
                                "flash": 1048576, "note": "DTCM only"}))
    board = get_board(str(path))
    assert (board.name, board.ram_bytes, board.target, board.clock_hz, board.flash_bytes, board.note) == (
        "my-board", 49152, "cortex-m7", 200_000_000, 1048576, "DTCM only")


def test_a_board_files_regions_are_its_ram_and_fit_places_over_them(tmp_path, capsys):
    path = tmp_path / "two.json"
    path.write_text(json.dumps({"target": "cortex-m4", "regions": [
        {"name": "tcm", "size": "3KiB", "kind": "tcm", "dma": False, "cost": 1, "base": "0x10000000"},
        {"name": "ext", "size": 8192, "kind": "external", "cost": 8, "base": 0x60000000}]}))
    board = get_board(str(path))
    assert [r.to_dict() for r in board.ram_regions] == [
        {"name": "tcm", "size": 3072, "kind": "tcm", "dma": False, "cost": 1.0, "base": 0x10000000},
        {"name": "ext", "size": 8192, "kind": "external", "dma": True, "cost": 8.0, "base": 0x60000000}]
    assert board.ram_bytes == 8192 and board.several_regions  # ram left out: the largest region
    graph = pipeline.load(str(FIXTURES / "i16_chain.tflite"), weights=True)
    plan = pipeline.planner(graph, pipeline.SCHEDULABLE_COST_MODEL, count_io=True).vanilla()
    placed = pipeline.lower_on_regions(graph, plan, board, 0, True)
    assert [name for name, _, _ in placed.regions] == ["tcm", "ext"] and placed.regions[0][2] <= 3072
    path.write_text(json.dumps({"target": "cortex-m4", "regions": [{"name": "tcm", "size": "3KiB", "cost": -1}]}))
    code, out, err = run_cli(capsys, "fit", "mbv2-w0.35", "--board", str(path))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and '"cost" is a positive' in err


@pytest.mark.parametrize("doc,message", [
    ({"ram": "48KiB", "targt": "cortex-m4"}, "unknown key 'targt' (did you mean 'target'?)"),
    ({"target": "cortex-m4", "regions": {"a": 1}}, '"regions" is a list of objects'),
    ({"target": "cortex-m4", "regions": [{"name": "a", "size": "1KiB", "speed": 1}]}, "region 0: unknown key 'speed'"),
    ({"target": "cortex-m4", "regions": [{"name": "9a", "size": "1KiB"}]}, 'region 0: its "name" is a C identifier'),
    ({"target": "cortex-m4", "regions": [{"name": "a"}]}, "region 'a': its \"size\" is needed"),
    ({"target": "cortex-m4", "regions": [{"name": "a", "size": "1KB"}]}, "region 'a': bad size '1KB'"),
    ({"target": "cortex-m4", "regions": [{"name": "a", "size": 9, "kind": "flash"}]}, 'its "kind" is one of tcm'),
    ({"target": "cortex-m4", "regions": [{"name": "a", "size": 9, "dma": "no"}]}, 'its "dma" is true or false'),
    ({"target": "cortex-m4", "regions": [{"name": "a", "size": 9, "cost": 0}]}, 'its "cost" is a positive number'),
    ({"target": "cortex-m4", "regions": [{"name": "a", "size": 9, "base": "here"}]}, 'its "base" is an address'),
    ({"target": "cortex-m4", "regions": [{"name": "a", "size": 9}, {"name": "a", "size": 9}]}, "given twice"),
    ({"ram": "48KB", "target": "cortex-m4"}, "bad size '48KB'"),
    ({"target": "cortex-m4"}, "needs its RAM"),
    ([1, 2], "a board file is a JSON object"),
])
def test_bad_board_files_are_one_line(tmp_path, doc, message):
    path = tmp_path / "b.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        get_board(str(path))


@pytest.mark.slow  # bounds the stack of every plan it measures: compiles C for cortex-m4
def test_min_ram_is_the_least_ram_that_fits_exactly(capsys):
    """fit --objective min-ram needs no more RAM than the fastest plan; a board of exactly its RAM
    (and reserve) fits it with no headroom, one byte less fits nothing, and the error names that
    same least RAM."""
    require_target("cortex-m4")
    graph = pipeline.load(str(FIXTURES / "i16_chain.tflite"), weights=True)
    roomy = custom_board(256 * 1024, "cortex-m4", 100_000_000)
    fastest, least = fit(graph, roomy), fit(graph, roomy, objective="min-ram")
    assert least.used_bytes <= fastest.used_bytes and least.objective == "min-ram"
    assert fastest.plan.predicted_instructions <= least.plan.predicted_instructions
    exact = custom_board(least.used_bytes + 1024, "cortex-m4")
    assert fit(graph, exact, objective="min-ram").headroom_bytes == 0
    assert fit(graph, exact).headroom_bytes == 0  # the fastest that fits is then a least-RAM plan
    with pytest.raises(NoFit) as refused:
        fit(graph, custom_board(least.used_bytes + 1023, "cortex-m4"), objective="min-ram")
    assert refused.value.least.used_bytes == least.used_bytes
    code, out, _ = run_cli(capsys, "fit", str(FIXTURES / "i16_chain.tflite"), "--ram", str(least.used_bytes + 1024),
                           "--target", "cortex-m4", "--objective", "min-ram", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["objective"] == "min-ram" and doc["headroom_bytes"] == 0
    assert doc["board"] == "custom" and doc["predicted_ms_lower_bound"] is None

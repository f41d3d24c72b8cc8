"""`msfcnn fit`: the plans it calls fitting fit (every part summed) and really run linked as their
board (its RAM the linker's region) with a measured stack within the planned bound, what does
not fit is one line naming the exact least RAM reachable."""

import json
import re

import pytest

from msfcnn import pipeline
from msfcnn.boards import BOARDS
from msfcnn.cli import main
from msfcnn.codegen.stack import footprint
from msfcnn.fit import fit as fit_plan
from msfcnn.fit import linked_report, run_linked
from msfcnn.frontends import builtin_names
from msfcnn.latency import calibrated_targets
from msfcnn.tensors import random_input
from support import cache
from support.toolchains import require_target

FIT_BOARDS = ("nucleo-f767zi", "nrf52840dk", "esp32-c3-devkit", "hifive1-revb")
LEAST = re.compile(r"^msfcnn: error: (\S+) does not fit (\S+): the least RAM reachable is (\d+) B \(.*\), "
                   r"\d+ B more than the (\d+) B available")


def fit(capsys, *argv):
    code = main(["fit", *argv, "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


def parts(doc):
    return doc["arena_bytes"] + doc["io_bytes"] + doc["stack_bytes"] + doc["static_bytes"]


# Each model once and each of FIT_BOARDS at least once, plans that fit and models that do not
# (benchmarks/fit_boards.py runs every pair; each pair here costs 10 to 90 s of CPU).
FIT_PAIRS = (("mcunet-320kb", "hifive1-revb"), ("mcunet-vww5", "hifive1-revb"), ("mbv2-w0.35", "esp32-c3-devkit"),
             ("mobilenetv2-0.35", "nucleo-f767zi"), ("mcunet-vww-res", "nrf52840dk"))


def test_fit_pairs_cover_every_model_and_board():
    assert {name for name, _ in FIT_PAIRS} == set(builtin_names()) and {b for _, b in FIT_PAIRS} == set(FIT_BOARDS)


@pytest.mark.parametrize("name, board", FIT_PAIRS)
def test_fit_gives_plans_that_fit_or_the_least_ram(name, board, capsys):
    require_target(BOARDS[board].target)
    flash = ["--input-in-flash"] if board == "hifive1-revb" else []
    code, doc, err = fit(capsys, name, "--board", board, *flash)
    ram = BOARDS[board].ram_bytes
    if code == 0:
        assert doc["fits"] and doc["board_ram_bytes"] == ram and doc["reserve_bytes"] == 1024
        assert parts(doc) + doc["reserve_bytes"] + doc["headroom_bytes"] == ram
        assert parts(doc) <= ram - doc["reserve_bytes"] and doc["headroom_bytes"] >= 0
        assert doc["arena_bytes"] >= doc["plan"]["peak_ram_bytes"] and doc["stack_bytes"] > 0
        assert (doc["predicted_instructions"] is not None) == (BOARDS[board].target in calibrated_targets())
    else:
        assert code == 2 and len(err.strip().splitlines()) == 1
        least = LEAST.match(err.strip())
        assert least and int(least.group(3)) > int(least.group(4)) == ram - 1024


# A fixed subset of built-in model x board: with the CLI test of hifive1-revb below, each board
# once and each model at least once (benchmarks/fit_boards.py runs every pair).
LINKED = (("nucleo-f767zi", "mcunet-320kb"), ("nucleo-f746zg", "mobilenetv2-0.35"), ("nucleo-f412zg", "mcunet-vww5"),
          ("nrf52840dk", "mcunet-vww-res"), ("stm32h743", "mbv2-w0.35"), ("esp32-c3-devkit", "mcunet-vww5"),
          ("esp32-s3-devkit", "mcunet-vww-res"), ("esp8266-nodemcu", "mcunet-vww5"),
          ("raspberry-pi-pico", "mcunet-vww5"), ("alif-ensemble-e3", "mcunet-vww-res"))


@pytest.mark.parametrize("board,name", LINKED)
def test_a_plan_fit_calls_fitting_runs_linked_as_its_board_within_its_bounds(board, name):
    """The fitting plan, built for the board's emulated target with the board's RAM as the linker's
    RAM region and the planned stack bound reserved in it, runs bit-exact; the stack it measures
    is within the bound, and what the program needs beyond fit's terms (the C library's data, the
    start-up code's and main's frames) within the reserve."""
    require_target(BOARDS[board].target)
    graph = cache.model(name, weights=True)
    result = fit_plan(graph, BOARDS[board])
    check = run_linked(result, random_input(graph, 0))
    assert check.bit_exact and check.arena_bytes == result.arena_bytes
    assert 0 < check.stack_bytes <= result.code.stack_bytes
    report = linked_report(check, result.board, result.code, result.io_bytes)
    assert 0 <= report["c_library_bytes"] and 0 < report["frames_bytes"]
    assert report["reserve_used_bytes"] <= result.reserve_bytes


def test_verify_board_runs_the_plan_fit_wrote_on_the_16_kib_fe310(tmp_path, capsys):
    """fit -o, then verify --board: the 16 KiB hifive1-revb, input in flash, as its harness has it."""
    require_target("fe310")
    plan = tmp_path / "plan.json"
    code, doc, err = fit(capsys, "mcunet-vww-res", "--board", "hifive1-revb", "--input-in-flash", "-o", str(plan))
    assert code == 0, err
    assert main(["verify", "mcunet-vww-res", "--board", "hifive1-revb", "--input-in-flash", "--plan", str(plan),
                 "--json"]) == 0
    run = json.loads(capsys.readouterr().out)
    assert run["pass"] and run["bit_exact"] and run["board"] == "hifive1-revb" and run["target"] == "fe310"
    assert run["arena_bytes"] == doc["arena_bytes"] and run["io_bytes"] == doc["io_bytes"]
    assert run["within_stack_bound"] and 0 < run["stack_bytes"] <= run["stack_bound_bytes"] == doc["stack_bytes"]
    assert run["reserve_used_bytes"] == run["c_library_bytes"] + run["frames_bytes"] <= doc["reserve_bytes"]
    assert run["static_ram_bytes"] + doc["stack_bytes"] <= run["board_ram_bytes"] == 16384


def test_a_plan_too_big_for_the_board_fails_to_link(capsys):
    """mcunet-320kb unfused needs a 309760 B arena: linked as the 256 KiB nucleo-f412zg it overflows."""
    require_target("cortex-m4")
    assert main(["verify", "mcunet-320kb", "--strategy", "vanilla", "--board", "nucleo-f412zg"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "does not fit in the 262144 B of RAM of nucleo-f412zg (on cortex-m4)" in err


def test_the_xtensa_link_reserves_the_stack_too(capsys):
    """xtensa-lx106's own linker script (msfcnn's) reserves the planned stack above the static data
    like picolibc.ld: mcunet-320kb's 92928 B input alone overflows the ESP8266's 80 KiB, and the
    error says that no arena can help."""
    require_target("xtensa-lx106")
    assert main(["verify", "mcunet-320kb", "--strategy", "vanilla", "--board", "esp8266-nodemcu"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "81920 B of RAM of esp8266-nodemcu (on xtensa-lx106)" in err
    assert "no plan fits: the rest (io, stack, C library) alone overflows it (try --input-in-flash)" in err


def test_nothing_fits_is_one_line_with_the_least_ram(capsys):
    require_target("fe310")
    code, _, err = fit(capsys, "mcunet-320kb", "--board", "hifive1-revb")
    assert code == 2 and len(err.strip().splitlines()) == 1
    least = LEAST.match(err.strip())
    assert least and least.group(1) == "mcunet-320kb" and least.group(2) == "hifive1-revb"
    # The reserve counts: with all but 1 KiB reserved, even a model that otherwise fits does not.
    code, _, err = fit(capsys, "mcunet-vww-res", "--board", "hifive1-revb", "--input-in-flash", "--reserve", "15KiB")
    least = LEAST.match(err.strip())
    assert code == 2 and least


def test_the_least_ram_reachable_is_exact(capsys):
    """The least RAM fit names is what it needs: a reserve that leaves exactly that much fits (no
    headroom), one byte more reserved does not."""
    require_target("fe310")
    flash = ("mcunet-vww-res", "--board", "hifive1-revb", "--input-in-flash")
    code, _, err = fit(capsys, *flash, "--reserve", "15KiB")
    least = int(LEAST.match(err.strip()).group(3))
    ram = BOARDS["hifive1-revb"].ram_bytes
    code, doc, err = fit(capsys, *flash, "--reserve", str(ram - least))
    assert code == 0 and doc["headroom_bytes"] == 0 and parts(doc) == least, err
    code, _, err = fit(capsys, *flash, "--reserve", str(ram - least + 1))
    assert code == 2 and int(LEAST.match(err.strip()).group(3)) == least


def test_a_plan_with_io_in_the_arena_runs_on_esp32c3_within_its_stack_bound(tmp_path, capsys):
    """Without --input-in-flash the input and output may live in the arena: with a reserve that
    leaves the ESP32-C3 too little RAM for the input and output outside any arena (19 kB and at
    least an 11 kB arena), fit chooses a plan with them inside (21 kB), and it runs."""
    require_target("esp32c3")
    plan = tmp_path / "plan.json"
    inside = pipeline.planner(cache.model("mcunet-vww-res"), count_io=True).min_ram().peak_ram_bytes
    code, doc, err = fit(capsys, "mcunet-vww-res", "--board", "esp32-c3-devkit")
    assert code == 0, err
    reserve = doc["board_ram_bytes"] - (inside + doc["stack_bytes"] + doc["static_bytes"] + 4096)
    code, doc, err = fit(capsys, "mcunet-vww-res", "--board", "esp32-c3-devkit", "--reserve", str(reserve),
                         "-o", str(plan))
    assert code == 0 and doc["io_in_arena"] and doc["io_bytes"] == 0, err
    assert main(["verify", "mcunet-vww-res", "--target", "esp32c3", "--plan", str(plan), "--json"]) == 0
    run = json.loads(capsys.readouterr().out)
    assert run["pass"] and run["arena_bytes"] == doc["arena_bytes"]
    assert 0 < run["stack_bytes"] <= doc["stack_bytes"]


# Every built-in model on the ESP32-C3 (all fit its 400 KiB); on the ESP8266's core, one whose
# softmax calls msfcnn's soft float (counted as a C library call), as its kernels call its
# division and 64-bit multiplication routines.
STACK_CASES = [("esp32c3", name) for name in sorted(builtin_names())] + [("xtensa-lx106", "mcunet-vww-res")]


@pytest.mark.parametrize("target_name, name", STACK_CASES)
def test_the_stack_bound_covers_the_measured_stack(target_name, name):
    """A least-RAM plan: the painted-stack measurement of the harness never exceeds the planned bound."""
    target = require_target(target_name)
    graph = cache.model(name, weights=True)
    plan = pipeline.planner(graph, "exact").min_ram()
    schedule = pipeline.lower(graph, plan)
    bound = footprint(graph, schedule, plan, target)
    check = pipeline.verify(graph, plan, schedule, random_input(graph, 0), target)
    assert check.passed and 0 < check.stack_bytes <= bound.stack_bytes
    assert bound.path[0] == "msfcnn_invoke"


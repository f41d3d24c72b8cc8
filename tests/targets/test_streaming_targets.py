"""`verify --streaming` on an emulated Cortex-M4: the C of one call of the streaming wake-word
structure, or of the TCN whose pool keeps running sums, run under QEMU over every call of a long
input, gives the numpy executor's bytes; every window equals the whole-window model's; the arena
and state are the planned ones; a call takes at most an eighth of the whole window's
instructions. The latency model predicts the wake word's call, and the TCN's call and running
sums, within 3 %."""

from __future__ import annotations

import json

from support.cli import run_cli
from support.paths import FIXTURES
from support.toolchains import require_target


def _verify_streamed(capsys, name: str, state_bytes: int) -> dict:
    """`verify --streaming --instructions` of a fixture on cortex-m4, checked as every streamed run
    must be: exit 0, bit-exact, every window equal to the whole window's, the arena and state the
    planned ones, and a call at most an eighth of the whole window's instructions."""
    require_target("cortex-m4")
    code, out, err = run_cli(capsys, "verify", str(FIXTURES / "streaming" / f"{name}.tflite"), "--streaming",
                             "--target", "cortex-m4", "--instructions", "--json", "-q")
    doc = json.loads(out)
    assert code == 0, err
    assert doc["bit_exact"] and doc["windows"] == doc["windows_equal_whole_window"] == 20
    assert doc["arena_bytes"] == doc["predicted_peak_ram_bytes"] and doc["state_bytes"] == state_bytes
    assert 8 * doc["instructions_per_step"] <= doc["instructions"]
    return doc


def test_streamed_wake_word_on_cortex_m4(capsys):
    doc = _verify_streamed(capsys, "str_ww_int8", 2064)
    assert abs(doc["predicted_instructions_per_step"] / doc["instructions_per_step"] - 1) <= 0.03


def test_running_mean_of_the_tcn_on_cortex_m4(capsys):
    """The int8 TCN's global pool over time keeps running sums (ops/time_mean.py): its C is
    bit-exact over every call, and its block is predicted within 3 %; so is the call, whose 1 x 3
    convolutions of one output pixel each take the one-row windows' own costs (line_*)."""
    doc = _verify_streamed(capsys, "tcn_valid_int8", 284)
    mean = next(b for b in doc["block_instructions"] if b["first"] == b["last"] == 6)  # the TimeMean
    assert abs(mean["predicted_instructions"] / mean["instructions"] - 1) <= 0.03
    assert abs(doc["predicted_instructions_per_step"] / doc["instructions_per_step"] - 1) <= 0.03

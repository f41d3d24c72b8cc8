"""`verify --streaming` on an emulated Cortex-M4: the C of one call of the streaming wake-word
structure, run under QEMU over every call of a long input, gives the numpy executor's bytes; every
window equals the whole-window model's; the arena and state are the planned ones; a call takes at
most an eighth of the whole window's instructions, and the latency model predicts it within 3 %."""

from __future__ import annotations

import json

from support.cli import run_cli
from support.paths import FIXTURES
from support.toolchains import require_target


def test_streamed_wake_word_on_cortex_m4(capsys):
    require_target("cortex-m4")
    code, out, err = run_cli(capsys, "verify", str(FIXTURES / "streaming" / "str_ww_int8.tflite"), "--streaming",
                             "--target", "cortex-m4", "--instructions", "--json", "-q")
    doc = json.loads(out)
    assert code == 0, err
    assert doc["bit_exact"] and doc["windows"] == doc["windows_equal_whole_window"] == 20
    assert doc["arena_bytes"] == doc["predicted_peak_ram_bytes"] and doc["state_bytes"] == 2064
    assert 8 * doc["instructions_per_step"] <= doc["instructions"]
    assert abs(doc["predicted_instructions_per_step"] / doc["instructions_per_step"] - 1) <= 0.03

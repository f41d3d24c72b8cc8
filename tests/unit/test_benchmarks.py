"""The benchmark scripts' own behaviour (not their timings)."""

import importlib.util
import json
import sys
from pathlib import Path

from support.paths import ROOT


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sweep_speed_writes_its_result_only_when_asked(monkeypatch, tmp_path, capsys):
    """A run prints its table; the committed result file is not rewritten unless --json names a file."""
    sweep_speed = load_script("sweep_speed")
    monkeypatch.setattr(sweep_speed, "timed", lambda command: 0.25)
    written = []
    monkeypatch.setattr(Path, "write_text", lambda self, text, *a, **k: written.append((self, text)))
    monkeypatch.setattr(sys, "argv", ["sweep_speed.py", "--repeats", "1"])
    sweep_speed.main()
    assert written == [] and "full Table 1 sweep (median)" in capsys.readouterr().out
    target = tmp_path / "sweep.json"
    monkeypatch.setattr(sys, "argv", ["sweep_speed.py", "--repeats", "1", "--json", str(target)])
    sweep_speed.main()
    assert [path for path, _ in written] == [target] and json.loads(written[0][1])["sweep_median_s"] == 0.25

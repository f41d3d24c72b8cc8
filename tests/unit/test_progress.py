"""Progress on stderr (issue 16): on only on a terminal without --quiet or --json, shown after
2 s, erased when the step ends; every command takes --quiet."""

import io
import time

from support.paths import ROOT
from msfcnn import progress
from msfcnn.cli import main

FIXTURES = ROOT / "tests" / "fixtures" / "models"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_only_on_a_terminal_without_quiet_or_json():
    assert progress.configure(stream=_Terminal())
    assert not progress.configure(quiet=True, stream=_Terminal())
    assert not progress.configure(json_output=True, stream=_Terminal())
    assert not progress.configure(stream=io.StringIO())  # a log file or a pipe: nothing at all
    progress.configure(stream=io.StringIO())


def test_progress_line_after_the_delay(monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    monkeypatch.setattr(progress, "DELAY", 0.05)
    monkeypatch.setattr(progress, "REFRESH", 0.02)
    progress.configure()
    try:
        with progress.step("planning x: enumerating fused blocks"):
            progress.count(10)
            progress.advance(4)
            time.sleep(0.3)
        with progress.step("quick"):
            pass  # over before the delay: never shown
    finally:
        progress.configure(quiet=True)
    text = terminal.getvalue()
    assert "msfcnn: planning x: enumerating fused blocks 4/10" in text
    assert "quick" not in text
    assert text.endswith("\r")  # the line is erased when the step ends


def test_quiet_is_accepted_by_every_command(capsys):
    code, out, err = run(capsys, "plan", FIXTURES / "op_gap.tflite", "--quiet")
    assert code == 0 and not err
    code, out, err = run(capsys, "models", "-q")
    assert code == 0 and not err
    code, out, err = run(capsys, "-q", "plan", FIXTURES / "op_gap.tflite")  # before the command too
    assert code == 0 and not err and "op_gap" in out


def test_quiet_before_the_command_silences_progress(monkeypatch):
    """`msfcnn -q plan ...` configures progress as quiet (what `plan -q` does)."""
    from msfcnn import progress
    seen = []
    monkeypatch.setattr(progress, "configure", lambda quiet, json_output: seen.append(quiet))
    assert main(["-q", "models"]) == 0 and main(["models"]) == 0 and main(["models", "-q"]) == 0
    assert seen == [True, False, True]

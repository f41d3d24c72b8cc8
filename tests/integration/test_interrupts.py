"""An interrupt at any time, also while the command's modules import (its first few tenths of a
second), gives one line on stderr and exit status 130, never a traceback (issue 29)."""

import signal
import subprocess
import sys
import time

import pytest

from support.paths import ROOT

MODEL = str(ROOT / "tests" / "fixtures" / "models" / "act_relu_n1_to_1.tflite")
# The interpreter is started and msfcnn.__main__ imported (os, signal, sys) before the clock starts:
# what comes before msfcnn's first line (Python's start-up, site-packages' .pth files) is not
# msfcnn's to answer.
CHILD = ("import sys, msfcnn.__main__ as entry; sys.argv = ['msfcnn', *sys.argv[1:]]; print('ready', flush=True); "
         "sys.stdin.readline(); print('running', flush=True); entry.run()")


def interrupted_after(delay: float, *argv: str) -> tuple[int, str]:
    child = subprocess.Popen([sys.executable, "-c", CHILD, *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env={"PYTHONPATH": str(ROOT / "src"), "PATH": ""})
    assert child.stdout.readline() == "ready\n"
    child.stdin.write("go\n")
    child.stdin.flush()
    assert child.stdout.readline() == "running\n"
    time.sleep(delay)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    return child.returncode, err


@pytest.mark.parametrize("delay", [0.0, 0.05, 0.15, 0.3])
def test_an_interrupt_while_importing_or_planning_is_one_line(delay):
    code, err = interrupted_after(delay, "plan", MODEL)
    if code == 0:  # finished before the signal came (its report then stands)
        assert err == ""
    else:
        assert (code, err) == (130, "msfcnn: interrupted\n")

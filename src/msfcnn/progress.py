"""Progress on stderr for steps that may take more than 2 seconds (docs/cli.md).

A step is wrapped in `step(label)`; nothing is shown unless progress is on (`configure`: on only
when stderr is a terminal and neither `--quiet` nor `--json` is given) and the step is still
running after 2 seconds. Then a tqdm line (label, count if the step has one, elapsed time) is
redrawn in place twice a second and erased when the step ends, so finished commands leave
nothing behind on stderr. Logs (stderr not a terminal) get nothing: no control characters.
"""

from __future__ import annotations

import contextlib
import sys
import threading

DELAY = 2.0  # seconds before a step shows itself
REFRESH = 0.5

_enabled = False
_current: list["_Step"] = []  # the steps running, innermost last


def configure(quiet: bool = False, json_output: bool = False, stream=None) -> bool:
    """Turn progress on or off for this command; returns whether it is on."""
    global _enabled
    stream = sys.stderr if stream is None else stream
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    _enabled = tty and not quiet and not json_output
    return _enabled


def enabled() -> bool:
    return _enabled


class _Step:
    """What the code inside a step sees: `advance(n)` counts done units of `total`."""

    def __init__(self, label: str, total: int | None):
        self.label, self.total, self.done = label, total, 0

    def advance(self, n: int = 1) -> None:
        self.done += n


def count(total: int) -> None:
    """Deep code's hook: the innermost step has `total` units of work (shown as done/total)."""
    if _current and _current[-1].total is None:
        _current[-1].total, _current[-1].done = total, 0


def advance(n: int = 1) -> None:
    """Deep code's hook: `n` more units of the innermost step are done."""
    if _current:
        _current[-1].done += n


@contextlib.contextmanager
def step(label: str, total: int | None = None):
    """Show `label` (and done/total) on stderr if the block runs for more than 2 seconds."""
    state = _Step(label, total)
    if not _enabled:
        yield state
        return
    stop = threading.Event()
    thread = threading.Thread(target=_draw, args=(state, stop), daemon=True)
    thread.start()
    _current.append(state)
    try:
        yield state
    finally:
        _current.pop()
        stop.set()
        thread.join()


COUNTLESS = "msfcnn: {desc} ({elapsed})"
COUNTED = "msfcnn: {desc} {n_fmt}/{total_fmt} |{bar:20}| ({elapsed}<{remaining})"


def _draw(state: _Step, stop: threading.Event) -> None:
    if stop.wait(DELAY):
        return
    import shutil
    import time
    from tqdm import tqdm
    size = shutil.get_terminal_size((80, 24))  # a pty may report 0 x 0, where tqdm would draw nothing
    start = time.time() - DELAY  # the elapsed time counts from the start of the step
    bar = None
    try:
        while True:
            if bar is None or bar.total != state.total:
                if bar is not None:
                    bar.close()
                bar = tqdm(total=state.total, desc=state.label, file=sys.stderr, leave=False,
                           bar_format=COUNTLESS if state.total is None else COUNTED,
                           ncols=min(size.columns or 80, 100), nrows=size.lines or 24, mininterval=0,
                           delay=1e-9)  # delay: nothing drawn before the clock is set
                bar.start_t = start
            bar.n = state.done
            bar.refresh()
            if stop.wait(REFRESH):
                return
    finally:
        if bar is not None:
            bar.close()

"""`python -m msfcnn` and the `msfcnn` command. This module imports nothing but builtin modules
before it can answer an interrupt: an interrupt at any time, even while the command's modules
import, gives one line and exit status 130, never a traceback. One that comes once the command
is done changes nothing: its exit status stands."""

import os
import signal
import sys

INTERRUPTED = 130  # 128 + SIGINT, as shells report it


def run() -> None:
    try:
        signal.signal(signal.SIGINT, _on_interrupt)
        from .cli import main
        code = main()
    except KeyboardInterrupt:  # main answers its own; this is one during the imports
        code = interrupted()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the command is done
    sys.exit(code)


def _on_interrupt(signum, frame) -> None:
    """An interrupt during an import ends the process at once: a module cut half-way may turn the
    KeyboardInterrupt into another error (numpy reports a broken install), and imports leave
    nothing to clean up. Anywhere else it raises KeyboardInterrupt, so that files being written
    and child processes are cleaned up on the way out (cli.main answers it)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            os._exit(interrupted())
        frame = frame.f_back
    raise KeyboardInterrupt


def interrupted() -> int:
    os.write(2, b"msfcnn: interrupted\n")
    return INTERRUPTED


if __name__ == "__main__":
    run()

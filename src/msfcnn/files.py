"""Output files are written whole or not at all, with normal permissions, and never over a file
the command reads."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from .errors import UserError

# (device, inode) -> name of each file the running command reads: no output may replace one.
_INPUTS: dict[tuple[int, int], str] = {}


@contextlib.contextmanager
def guarding_inputs(paths):
    """While the block runs, `write_atomic` refuses to write over any of these files, by whatever
    name (the same inode). Names that are not existing files (None, built-in model names) are
    skipped."""
    added = {}
    for name in paths:
        try:
            info = os.stat(name) if name else None
        except (OSError, ValueError):
            info = None
        if info is not None and stat.S_ISREG(info.st_mode):
            added[(info.st_dev, info.st_ino)] = str(name)
    fresh = {key: name for key, name in added.items() if key not in _INPUTS}
    _INPUTS.update(fresh)
    try:
        yield
    finally:
        for key in fresh:
            _INPUTS.pop(key, None)


def check_not_input(path: str | Path) -> None:
    """UserError if writing `path` would replace a file the command reads."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return
    name = _INPUTS.get((info.st_dev, info.st_ino))
    if name is not None:
        same = "" if os.path.abspath(name) == os.path.abspath(path) else f" (the same file as {name})"
        raise UserError(f"{path}{same} is the command's input: refusing to write over it")


def write_atomic(path: str | Path, data: bytes | str) -> None:
    """Write to a temporary file beside `path`, then rename it over `path`. Missing folders are
    created; a new file gets 0666 less the umask, a replaced one keeps its mode."""
    path = Path(path)
    check_not_input(path)
    payload = data.encode() if isinstance(data, str) else data
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as err:
        raise UserError(f"cannot write {path}: {err.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), _mode_for(path))
            out.write(payload)
        os.replace(tmp, path)
    except OSError as err:
        os.unlink(tmp)
        raise UserError(f"cannot write {path}: {err.strerror}") from None


def _mode_for(path: Path) -> int:
    """The mode of the file `path` replaces, or what a new file gets: 0666 less the umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mask = os.umask(0)  # the only way to read it; set straight back
        os.umask(mask)
        return 0o666 & ~mask

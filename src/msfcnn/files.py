"""Output files are written whole or not at all, with normal permissions, and never over a file
the command reads. An output that is not a regular file (a device, a FIFO, a /proc or /dev path)
is written as it is, never replaced; `-` is standard output. A folder of files is written into a
staging folder first and moved into place only once every file is written."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
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


# The output name that means standard output.
STDOUT = "-"


def check_not_input(path: str | Path) -> None:
    """UserError if writing `path` would replace a file the command reads."""
    if str(path) == STDOUT:
        return
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
    created; a new file gets 0666 less the umask, a replaced one keeps its mode. `-` writes to
    standard output; a device, FIFO or /proc or /dev path is opened and written as it is; a
    symlink to a regular file has its target replaced, the link kept."""
    payload = data.encode() if isinstance(data, str) else data
    if str(path) == STDOUT:
        _write_stream(sys.stdout.buffer, payload, "standard output")
        return
    path = Path(path)
    check_not_input(path)
    if _written_in_place(path):
        _write_in_place(path, payload)
        return
    path = Path(os.path.realpath(path)) if path.is_symlink() else path
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
    except BaseException as err:  # an interrupt too: no temporary file stays behind
        os.unlink(tmp)
        if isinstance(err, OSError):
            raise UserError(f"cannot write {path}: {err.strerror}") from None
        raise


def _written_in_place(path: Path) -> bool:
    """Whether `path` is written by opening it rather than replaced: an existing file that is not
    a regular one (a device, a FIFO), or a name in /dev or /proc (/dev/stdout, /proc/self/fd/1),
    whatever it leads to. A folder is refused."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return False
    if stat.S_ISDIR(info.st_mode):
        raise UserError(f"cannot write {path}: it is a folder")
    return not stat.S_ISREG(info.st_mode) or os.path.abspath(path).startswith(("/dev/", "/proc/"))


def _write_in_place(path: Path, payload: bytes) -> None:
    try:
        with open(path, "wb") as out:
            _write_stream(out, payload, str(path))
    except OSError as err:
        raise UserError(f"cannot write {path}: {err.strerror}") from None


def _write_stream(out, payload: bytes, name: str) -> None:
    try:
        out.write(payload)
        out.flush()
    except OSError as err:
        raise UserError(f"cannot write {name}: {err.strerror}") from None


def write_folder(folder: str | Path, files: dict[Path, bytes | str], stale=()) -> None:
    """Write `files` (paths inside `folder`) and remove the `stale` ones, all or nothing: every file
    is written into a staging folder inside `folder`, then moved into place with interrupts held
    back. A refusal, a failed write (a full disk) or an interrupt before that leaves `folder`'s
    contents and times as they were. No file is written through a symlinked folder that leads
    outside `folder`, and no existing file that is not a regular one (a symlink too) is replaced."""
    folder = Path(folder)
    for path in files:
        check_not_input(path)
        _check_destination(folder, path)
    created = _missing_folders(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        times = os.stat(folder)
        staging = Path(tempfile.mkdtemp(dir=folder, prefix=".msfcnn-staging-"))
    except OSError as err:
        _remove_folders(created)
        raise UserError(f"cannot write {folder}: {err.strerror}") from None
    try:
        staged = {path: _stage(staging / path.relative_to(folder), text, path) for path, text in files.items()}
    except BaseException as err:
        shutil.rmtree(staging, ignore_errors=True)
        os.utime(folder, ns=(times.st_atime_ns, times.st_mtime_ns))
        _remove_folders(created)
        if isinstance(err, OSError):
            raise UserError(f"cannot write {folder}: {err.strerror}") from None
        raise
    with _interrupts_held():  # renames in one file system: no space needed, nothing to fail but a race
        try:
            _move_into_place(staged, stale)
        except OSError as err:
            raise UserError(f"cannot write {folder}: {err.strerror}") from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def _check_destination(folder: Path, path: Path) -> None:
    """UserError unless `path` can be replaced without writing outside `folder`: each folder on the
    way is a folder inside it (a symlink to one inside is fine), and `path` is a regular file or
    missing. A symlink is refused: writing through it may write outside `folder`, and replacing
    it would drop a link the user made."""
    root = os.path.realpath(folder)
    for parent in reversed(path.relative_to(folder).parents[:-1]):
        where = folder / parent
        if where.is_symlink() and not Path(os.path.realpath(where)).is_relative_to(root):
            raise UserError(f"{where} is a symlink to {os.path.realpath(where)}, outside {folder}: "
                            f"refusing to write through it")
        if where.exists() and not where.is_dir():
            raise UserError(f"cannot write {path}: {where} is not a folder")
    try:
        info = os.lstat(path)
    except OSError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise UserError(f"{path} is a symlink (to {os.readlink(path)}): refusing to write through or replace it")
    if not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise UserError(f"{path} is {kind}: refusing to replace it")


def _missing_folders(folder: Path) -> list[Path]:
    """`folder` and those of its parents that do not exist yet, innermost first."""
    missing = []
    for where in (folder, *folder.parents):
        if where.exists() or where.is_symlink():
            break
        missing.append(where)
    return missing


def _remove_folders(folders: list[Path]) -> None:
    for where in folders:
        with contextlib.suppress(OSError):
            where.rmdir()


def _stage(staged: Path, text: bytes | str, path: Path) -> Path:
    staged.parent.mkdir(parents=True, exist_ok=True)
    with open(staged, "wb") as out:
        os.fchmod(out.fileno(), _mode_for(path, follow=False))
        out.write(text.encode() if isinstance(text, str) else text)
    return staged


def _move_into_place(staged: dict[Path, Path], stale) -> None:
    for path, source in staged.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, path)
    for path in stale:
        path.unlink(missing_ok=True)


@contextlib.contextmanager
def _interrupts_held():
    """SIGINT and SIGTERM wait until the block is done (then they act as usual), so that the moves
    into place are never cut half-way."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _mode_for(path: Path, follow: bool = True) -> int:
    """The mode of the file `path` replaces, or what a new file gets: 0666 less the umask (also
    for a symlink that is not followed)."""
    try:
        info = os.stat(path) if follow else os.lstat(path)
        if stat.S_ISREG(info.st_mode):
            return stat.S_IMODE(info.st_mode)
        raise OSError
    except OSError:
        mask = os.umask(0)  # the only way to read it; set straight back
        os.umask(mask)
        return 0o666 & ~mask

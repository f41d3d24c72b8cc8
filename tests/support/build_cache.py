"""Compiled kernel libraries shared by the test processes (pytest-xdist workers) and by later runs.

A build is keyed by everything it is built from: the source texts, the compiler (its resolved path,
size and modification time), the flags and a label. Another key gives another build, so an edited
kernel, flag or compiler is always compiled afresh; only the compiling is shared, never a result
of a test: each test still runs what it built. The first process to need a build makes it while
holding a file lock, and the others wait for it and reuse it.

The cache lives in $MSFCNN_TEST_BUILD_CACHE, or else in the temporary folder
(msfcnn-test-builds-UID). Builds not used for two days are removed.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable

UNUSED_DAYS = 2
_DONE = ".complete"


def cache_root() -> Path:
    configured = os.environ.get("MSFCNN_TEST_BUILD_CACHE")
    return Path(configured) if configured else Path(tempfile.gettempdir()) / f"msfcnn-test-builds-{os.getuid()}"


@functools.cache
def compiler_identity(command: str) -> str:
    """The compiler's resolved path, size and modification time: an upgraded compiler is another key."""
    found = shutil.which(command)
    if found is None:
        return f"{command}: not found"
    real = os.path.realpath(found)
    info = os.stat(real)
    return f"{real} {info.st_size} {info.st_mtime_ns}"


def key_of(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()[:32]


def files_key(paths) -> str:
    """A key of the names and contents of `paths`."""
    return key_of(*(item for path in sorted(map(Path, paths)) for item in (path.name, path.read_bytes())))


def cached_build(label: str, key: str, build: Callable[[Path], None]) -> Path:
    """The folder of the build `key`: `build(folder)` fills a fresh folder the first time (in this
    process or another); later calls return the same folder."""
    root = cache_root()
    final = root / f"{label}-{key}"
    if (final / _DONE).exists():
        os.utime(final)  # used: not pruned
        return final
    root.mkdir(parents=True, exist_ok=True)
    _prune_once(root)
    with open(root / f"{label}-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process building the same key: wait for it
        if not (final / _DONE).exists():
            staging = Path(tempfile.mkdtemp(prefix=f".{label}-", dir=root))
            try:
                build(staging)
                (staging / _DONE).touch()
                shutil.rmtree(final, ignore_errors=True)  # a build interrupted before its marker
                os.rename(staging, final)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    return final


@functools.cache
def _prune_once(root: Path) -> None:
    """Remove builds (and leftovers of interrupted ones) not used for UNUSED_DAYS."""
    oldest = time.time() - UNUSED_DAYS * 86400
    for entry in root.iterdir():
        try:
            if entry.stat().st_mtime < oldest:
                if entry.is_dir():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink(missing_ok=True)
        except OSError:  # another process pruned it first
            pass

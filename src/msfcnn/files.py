"""Output files are written whole or not at all."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import UserError


def write_atomic(path: str | Path, data: bytes | str) -> None:
    """Write to a temporary file beside `path`, then rename it over `path`."""
    path = Path(path)
    payload = data.encode() if isinstance(data, str) else data
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=f".{path.name}.", suffix=".tmp")
    except OSError as err:
        raise UserError(f"cannot write {path}: {err.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(payload)
        os.replace(tmp, path)
    except OSError as err:
        os.unlink(tmp)
        raise UserError(f"cannot write {path}: {err.strerror}") from None

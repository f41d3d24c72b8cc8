"""JSON the user gives (layer lists, plan files), parsed within bounds: a document nested too
deeply, an integer beyond 32 bits or a NaN / Infinity constant is a ValueError with a message
for the user, never a RecursionError or Python's own integer-size error."""

from __future__ import annotations

import json
from typing import Any

INT_LIMIT = 2**31 - 1  # the generated C counts with 32-bit integers


class JSONLimitError(ValueError):
    """Valid-looking JSON that is out of bounds."""


def _bounded_int(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > len(str(INT_LIMIT)) or abs(int(text)) > INT_LIMIT:
        shown = text if len(text) <= 24 else f"{text[:20]}... ({len(digits)} digits)"
        raise JSONLimitError(f"integer {shown} is too large (at most {INT_LIMIT} in magnitude)")
    return int(text)


def _no_constant(name: str):
    raise JSONLimitError(f"{name} is not JSON (numbers must be finite)")


def loads(text: str) -> Any:
    """json.loads, within the bounds above."""
    try:
        return json.loads(text, parse_int=_bounded_int, parse_constant=_no_constant)
    except RecursionError:
        raise JSONLimitError("JSON nested too deeply") from None

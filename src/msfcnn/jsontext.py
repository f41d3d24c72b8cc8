"""JSON the user gives (layer lists, plan files), parsed within bounds: a document nested too
deeply, an integer beyond a limit (32 bits by default) or a NaN / Infinity constant is a
ValueError with a message for the user, never a RecursionError or Python's own integer-size
error."""

from __future__ import annotations

import json
from typing import Any

INT_LIMIT = 2**31 - 1  # the generated C counts with 32-bit integers
INT64_LIMIT = 2**63 - 1  # for counts that may exceed 32 bits (MACs in plan files)


class JSONLimitError(ValueError):
    """Valid-looking JSON that is out of bounds."""


def _bounded_int(limit: int):
    def parse(text: str) -> int:
        digits = text.lstrip("-")
        if len(digits) > len(str(limit)) or abs(int(text)) > limit:
            shown = text if len(text) <= 24 else f"{text[:20]}... ({len(digits)} digits)"
            raise JSONLimitError(f"integer {shown} is too large (at most {limit} in magnitude)")
        return int(text)
    return parse


def _no_constant(name: str):
    raise JSONLimitError(f"{name} is not JSON (numbers must be finite)")


def loads(text: str, int_limit: int = INT_LIMIT) -> Any:
    """json.loads, within the bounds above."""
    try:
        return json.loads(text, parse_int=_bounded_int(int_limit), parse_constant=_no_constant)
    except RecursionError:
        raise JSONLimitError("JSON nested too deeply") from None

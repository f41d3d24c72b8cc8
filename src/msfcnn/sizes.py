"""Byte sizes on the command line: plain bytes, kB (1000) and KiB (1024); KB is refused as ambiguous."""

import math
import re

from .errors import UserError

_UNITS = {"": 1, "b": 1, "kb": 1000, "kib": 1024, "mb": 1000**2, "mib": 1024**2}
# An upper-case K is not SI (k): "KB" is the JEDEC / datasheet unit (1024) or a misspelt kB (1000).
_AMBIGUOUS = ("KB", "Kb")
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str) -> int:
    """'64kB' -> 64000, '16KiB' -> 16384, '2048' -> 2048. Raises UserError on anything else, and on
    '256KB' (which a datasheet means as 256 KiB) with a hint."""
    match = _SIZE.match(text)
    if match and match.group(2) in _AMBIGUOUS:
        number = match.group(1)
        raise UserError(f"bad size {text!r}: KB means 1024 B on a datasheet but 1000 B in SI; write "
                        f"{number}KiB ({float(number) * 1024:g} B) or {number}kB ({float(number) * 1000:g} B)")
    unit = match.group(2).lower() if match else None
    if match is None or unit not in _UNITS:
        raise UserError(f"bad size {text!r}: expected bytes, or a number with kB, KiB, MB or MiB (e.g. 64kB, 16KiB)")
    value = float(match.group(1)) * _UNITS[unit]
    if value <= 0 or value != math.floor(value):
        raise UserError(f"bad size {text!r}: must be a positive whole number of bytes")
    return int(value)


_HERTZ = {"": 1, "hz": 1, "k": 10**3, "khz": 10**3, "m": 10**6, "mhz": 10**6, "g": 10**9, "ghz": 10**9}


def parse_clock(text: str) -> int:
    """A clock frequency: '100MHz' -> 100000000, '32.768kHz', '16000000'. UserError otherwise."""
    match = _SIZE.match(str(text))
    unit = match.group(2).lower() if match else None
    if match is None or unit not in _HERTZ:
        raise UserError(f"bad clock {text!r}: expected hertz, or a number with kHz, MHz or GHz (e.g. 100MHz)")
    value = round(float(match.group(1)) * _HERTZ[unit])
    if value <= 0:
        raise UserError(f"bad clock {text!r}: must be positive")
    return value


def parse_overhead(text: str) -> float:
    """A compute-overhead cap F >= 1, or 'inf'."""
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"bad overhead {text!r}: expected a number >= 1 or 'inf'") from None
    if math.isnan(value) or value < 1:
        raise UserError(f"bad overhead {text!r}: the MAC overhead cap F must be >= 1 (1 = no recomputation)")
    return value


def split_list(text: str) -> list[str]:
    return [item for item in (part.strip() for part in text.split(",")) if item]

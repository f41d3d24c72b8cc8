"""The fusion schemes, one module each: a module of this package that defines `SCHEME` (an
instance of `base.Scheme`) is registered under `SCHEME.name`. Nothing outside this package
compares scheme names: everything asks the registry."""

from __future__ import annotations

import importlib
import pkgutil

from ...errors import UserError
from .base import Scheme


def _discover() -> dict[str, Scheme]:
    found = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        scheme = getattr(module, "SCHEME", None)
        if scheme is not None:
            found.append(scheme)
    return {s.name: s for s in sorted(found, key=lambda s: s.order)}


SCHEMES: dict[str, Scheme] = _discover()
# The schemes a plan may choose for a fused block (what `--schemes` selects from).
FUSED_SCHEMES: tuple[str, ...] = tuple(name for name, s in SCHEMES.items() if s.fused)
SINGLE: Scheme = next(s for s in SCHEMES.values() if not s.fused)


def get_scheme(name: str) -> Scheme:
    try:
        return SCHEMES[name]
    except KeyError:
        raise UserError(f"unknown fusion scheme {name!r} (available: {', '.join(SCHEMES)})") from None


def is_fused(block) -> bool:
    """True for a block (DAG edge, plan block or lowering) that runs several ops or one streamed."""
    return get_scheme(block.scheme).fused


def in_paper_space(block) -> bool:
    """The paper's own search space: unfused ops and H-cache blocks with one output row per step."""
    return not is_fused(block) or (block.scheme == PAPER_SCHEME and block.rows == 1)


PAPER_SCHEME = "hcache"  # the scheme msf-CNN itself searches (and the `paper` cost model prices)


def check_fused(names) -> tuple[str, ...]:
    """The fused scheme names asked for, or a UserError naming the unknown ones."""
    unknown = sorted(set(names) - set(FUSED_SCHEMES))
    if unknown:
        raise UserError(f"unknown fusion scheme(s) {', '.join(unknown)} (available: {', '.join(FUSED_SCHEMES)})")
    return tuple(names)


__all__ = ["FUSED_SCHEMES", "PAPER_SCHEME", "SCHEMES", "SINGLE", "Scheme", "check_fused", "get_scheme", "in_paper_space",
           "is_fused"]

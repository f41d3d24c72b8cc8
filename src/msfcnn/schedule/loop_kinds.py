"""The registry of loop kinds: the kinds of loop nest a lowered block runs (`lowered.Whole`,
`Stream`, `Patches`, `Channels`), each declared once with `@loop_kind`.

Four consumers handle every kind, each in a role of its own:

- `WALKER`: the fused numpy executor runs the loop nest (`fused_executor.py`);
- `EMITTER`: the C generator prepares the values its template partial shows (`codegen/emit.py`);
- `LATENCY`: the latency model counts the loops its C runs (`latency/features.py`);
- `FLOOR`: the exact cost model states which RAM floors its blocks respect (`cost/exact.py`).

A consumer registers its handler next to the handler's code with `@handles(ROLE, Kind)` and finds
it with `handler(ROLE, loops)`. A kind without a handler for a role is an error naming the kind
and the role at the first block of that kind, never a silent default; tests/unit/test_loop_kinds.py
checks that every kind has all four once the consumers are imported.
"""

from __future__ import annotations

from typing import Callable

WALKER = "walker"
EMITTER = "emitter"
LATENCY = "latency"
FLOOR = "floor"
ROLES = (WALKER, EMITTER, LATENCY, FLOOR)
# Where each role's handlers are registered: named in the errors, so a new kind's author knows
# which file to open. (Names, not imports: this module sits below all four.)
CONSUMERS = {WALKER: "msfcnn.fused_executor", EMITTER: "msfcnn.codegen.emit",
             LATENCY: "msfcnn.latency.features", FLOOR: "msfcnn.cost.exact"}

# kind -> role -> handler
_KINDS: dict[type, dict[str, Callable]] = {}


class MissingHandler(LookupError):
    """A block's loop kind has no handler for a role (or is no registered kind at all)."""


def loop_kind(cls: type) -> type:
    """Class decorator: declares `cls` a loop kind, with no handlers yet."""
    if cls in _KINDS:
        raise TypeError(f"loop kind {cls.__name__} is declared twice")
    _KINDS[cls] = {}
    return cls


def kinds() -> tuple[type, ...]:
    """Every declared loop kind, in the order of declaration."""
    return tuple(_KINDS)


def handles(role: str, *kinds_: type) -> Callable[[Callable], Callable]:
    """Decorator: registers the function as the `role` handler of each of `kinds_`. Registering a
    role twice for one kind, an unknown role or a class that is no loop kind fails at import."""
    if role not in ROLES:
        raise ValueError(f"unknown loop kind role {role!r} (roles: {', '.join(ROLES)})")

    def register(function: Callable) -> Callable:
        for kind in kinds_:
            roles = _KINDS.get(kind)
            if roles is None:
                raise TypeError(f"{kind.__name__} is not a loop kind (declare it with @loop_kind)")
            if role in roles:
                raise TypeError(f"loop kind {kind.__name__} has two {role} handlers: "
                                f"{roles[role].__qualname__} and {function.__qualname__}")
            roles[role] = function
        return function

    return register


def handler(role: str, loops) -> Callable:
    """The `role` handler of the kind of `loops` (a loop nest, or a kind itself)."""
    kind = loops if isinstance(loops, type) else type(loops)
    try:
        return _KINDS[kind][role]
    except KeyError:
        if kind not in _KINDS:
            raise MissingHandler(f"{kind.__name__} is not a registered loop kind (declare it with "
                                 f"schedule.loop_kinds.loop_kind)") from None
        raise MissingHandler(f"loop kind {kind.__name__} has no {role} handler: register one in {CONSUMERS[role]} "
                             f"with @loop_kinds.handles(loop_kinds.{role.upper()}, {kind.__name__})") from None


def handlers(kind: type) -> dict[str, Callable]:
    """The live role -> handler table of `kind` (a test may swap a handler in it)."""
    return _KINDS[kind]


def missing() -> list[tuple[type, str]]:
    """(kind, role) of every handler not registered among the consumers imported so far."""
    return [(kind, role) for kind, roles in _KINDS.items() for role in ROLES if role not in roles]

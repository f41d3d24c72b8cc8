"""Where generated C runs: a target is data (compiler, flags, how to run a program), so emulated
microcontroller targets slot in beside `host`."""

from __future__ import annotations

import shutil
from dataclasses import dataclass

from .errors import UserError


@dataclass(frozen=True)
class Target:
    name: str
    cc: str
    cflags: str
    runner: tuple[str, ...] = ()  # command prefix that runs a built program ('' = run it directly)
    nm: str = "nm"
    description: str = ""


TARGETS = {
    "host": Target("host", "cc", "-std=c99 -O2 -Wall -Wextra -Werror -pedantic",
                   description="this machine's C compiler"),
    "host-sanitize": Target("host-sanitize", "cc",
                            "-std=c99 -O1 -g -Wall -Wextra -Werror -pedantic -fsanitize=address,undefined "
                            "-fno-sanitize-recover=all -fno-omit-frame-pointer",
                            description="host build with AddressSanitizer and UBSan"),
}


def get_target(name: str) -> Target:
    target = TARGETS.get(name)
    if target is None:
        raise UserError(f"unknown target {name!r} (available: {', '.join(TARGETS)})")
    if shutil.which(target.cc) is None:
        raise UserError(f"target {name} needs the C compiler {target.cc!r}, which is not installed")
    return target

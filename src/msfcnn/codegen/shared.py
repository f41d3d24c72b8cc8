"""Several networks in one library, sharing one arena (`msfcnn compile A B ... -o out/`).

The networks run one at a time, so one arena as large as the largest of theirs serves them all:
`msfcnn_arena.c` defines it, and each network's model.c (in its own folder, named by its prefix)
refers to it instead of defining its own. A network's persistent state (Graph.states) stays its own
buffer in its model.c, since another network's call must not overwrite it. The kernels are written
once, with their default names (msf_*), for every network of the folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError
from ..files import write_folder
from ..ir import Graph
from ..plan import Plan
from ..schedule import Schedule
from ..targets import TARGETS, Target
from ..version import __version__
from .build import MANIFEST, _manifest, _stale_files
from .emit import _templates, arena_word, check_prefix, generate, project_kernels, region_scripts

# What each network's folder holds: the network itself, without a harness or build files of its
# own (the folder's CMakeLists.txt builds them all).
NETWORK_FILES = ("model.h", "model.c", "weights.h", "weights.c")
# The folder's own files, rendered from templates/shared/<name>.j2.
SHARED_FILES = ("msfcnn_arena.h", "msfcnn_arena.c", "CMakeLists.txt")
# The shared arena's symbols' prefix (msfcnn_shared_arena, msfcnn_shared_arena_in_<region>).
SHARED_ARENA = "msfcnn_shared"
# Names a network's prefix cannot take: the kernels' folder, and the shared arena's symbols.
_RESERVED = ("kernels", SHARED_ARENA)
_WORDS = {4: "float", 2: "int16_t"}  # the C type aligning the arena for a network's widest element


@dataclass(frozen=True)
class Network:
    """One network of a shared-arena library: its prefix (and folder), its graph, plan and schedule."""

    prefix: str
    graph: Graph
    plan: Plan
    schedule: Schedule

    @property
    def arena_bytes(self) -> int:
        """Its arena less its persistent state: what it needs of the shared arena (over several
        regions: the sum of its arenas there)."""
        if self.schedule.regions:
            return sum(size for _, _, size in self.schedule.regions)
        return self.schedule.arena_bytes - self.graph.state_bytes


def shared_arena_bytes(networks: list[Network]) -> int:
    """The shared arena: the largest of the networks' arenas, their state aside (over several
    regions: the sum over the regions of the largest arena there)."""
    regions = shared_regions(networks)
    if regions:
        return sum(r["bytes"] for r in regions)
    return max((n.arena_bytes for n in networks), default=0)


def derived_prefix(name: str) -> str:
    """A C prefix from a model's name: mcunet-vww5 -> mcunet_vww5, 8bit -> m8bit."""
    words = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_") or "net"
    words = words if words[0].isalpha() else "m" + words
    return words[:32].rstrip("_")


def network_prefixes(names: list[str], given: list[str] | None) -> list[str]:
    """The prefixes of networks named `names`: `given` (one per network), or derived from the names.
    Two prefixes that would give clashing symbols, macros or folders are refused."""
    if given is not None and len(given) != len(names):
        raise UserError(f"--prefix names {len(given)} prefixes for {len(names)} models: give one per model, "
                        f"comma-separated, in the models' order")
    prefixes = [check_prefix(p) for p in given] if given is not None else [derived_prefix(n) for n in names]
    for i, a in enumerate(prefixes):
        for reserved in _RESERVED:
            if a.lower() == reserved or a.lower().startswith(reserved + "_"):
                raise UserError(f"prefix {a!r} clashes with the shared folder's {reserved}: choose others with --prefix")
        for b in prefixes[i + 1:]:
            if a.lower() == b.lower() or a.lower().startswith(b.lower() + "_") or b.lower().startswith(a.lower() + "_"):
                raise UserError(f"prefix clash: {a!r} and {b!r} would name the same C symbols, macros or folders; "
                                f"give each model its own with --prefix A,B,...")
    return prefixes


def _word(networks: list[Network]) -> tuple[str | None, int]:
    """The C type that aligns the shared arena for every network (None: bytes need no alignment),
    and its size."""
    widest = max((arena_word(n.graph).nbytes for n in networks), default=1)
    return _WORDS.get(widest), widest if widest in _WORDS else 1


def generate_shared(networks: list[Network], target: Target = TARGETS["host"]) -> dict[str, str]:
    """The library's files by their paths in its folder: each network's model and weights under
    <prefix>/, the kernels they call under kernels/, the shared arena and a CMakeLists.txt."""
    files, kernels = {}, {}
    for n in networks:
        generated = generate(n.graph, n.schedule, n.plan, target, n.prefix, shared_arena=True)
        files.update({f"{n.prefix}/{name}": generated[name] for name in NETWORK_FILES})
        kernels.update(project_kernels(generated["model.c"]))
    files.update({f"kernels/{name}": text for name, text in sorted(kernels.items())})
    regions = shared_regions(networks)
    arena = shared_arena_bytes(networks)
    word, size = _word(networks)
    values = {"version": __version__, "arena_bytes": arena, "word_ctype": word, "words": -(-arena // size),
              "regions": regions,
              "state_bytes": sum(n.graph.state_bytes for n in networks),
              "networks": [{"prefix": n.prefix, "name": n.graph.name, "arena_bytes": n.arena_bytes,
                            "state_bytes": n.graph.state_bytes} for n in networks],
              "kernel_files": [f"kernels/{name}" for name in sorted(kernels) if name.endswith(".c")]}
    env = _templates()
    files.update({name: env.get_template(f"shared/{name}.j2").render(**values) for name in SHARED_FILES})
    if regions:
        files.update(region_scripts(regions, target))
    return files


def shared_regions(networks: list[Network]) -> list[dict]:
    """Over several RAM regions (every network's schedule placed over the same ones,
    schedule/placement.place_shared): each region's shared arena, the largest of the networks'
    arenas there, as `emit._regions` describes an arena (those of 0 bytes left out)."""
    if not networks or not networks[0].schedule.regions:
        return []
    names = [name for name, _, _ in networks[0].schedule.regions]
    sizes = [max(n.schedule.regions[r][2] for n in networks) for r in range(len(names))]
    return [{"name": name, "NAME": name.upper(), "bytes": size, "words": -(-size // 4)}
            for name, size in zip(names, sizes) if size]


def write_shared(folder: Path, networks: list[Network], target: Target = TARGETS["host"]) -> list[Path]:
    """The library of `networks` written into `folder`, all or nothing; returns the files written."""
    folder = Path(folder)
    files = {folder / name: text for name, text in generate_shared(networks, target).items()}
    files[folder / MANIFEST] = _manifest(folder, files)
    write_folder(folder, files, _stale_files(folder, set(files)))
    return sorted(files)


def harness_source(networks: list[Network]) -> str:
    """A C program running the networks in turn twice (A, B, ..., A, B, ...) on the shared arena:
    argv[1] holds their inputs one after the other, argv[2] gets their first outputs likewise; it
    fails (1) when a second run differs from the first (a network left something in the arena that
    another's call overwrote)."""
    lines = ["#include <stdio.h>", "#include <string.h>", "", '#include "msfcnn_arena.h"']
    lines += [f'#include "{n.prefix}/model.h"' for n in networks] + [""]
    for n in networks:
        upper = n.prefix.upper()
        lines += [f"static {n.prefix}_value {n.prefix}_in[{upper}_INPUT_SIZE];",
                  f"static {n.prefix}_output_value {n.prefix}_out[2][{upper}_OUTPUT_SIZE];"]
    reads = " && ".join(f"fread({n.prefix}_in, 1, sizeof {n.prefix}_in, f) == sizeof {n.prefix}_in" for n in networks)
    runs = " ".join(f"{n.prefix}_invoke({n.prefix}_in, {n.prefix}_out[round]);" for n in networks)
    same = " || ".join(f"memcmp({n.prefix}_out[0], {n.prefix}_out[1], sizeof {n.prefix}_out[0])" for n in networks)
    writes = " && ".join(f"fwrite({n.prefix}_out[0], 1, sizeof {n.prefix}_out[0], f) == sizeof {n.prefix}_out[0]"
                         for n in networks)
    lines += ["", "int main(int argc, char **argv)", "{", "    FILE *f;", "    int round, ok;",
              "    if (argc != 3 || !(f = fopen(argv[1], \"rb\"))) return 2;", f"    ok = {reads};", "    fclose(f);",
              f"    for (round = 0; ok && round < 2; ++round) {{ {runs} }}",
              f"    if (!ok || {same}) return 1;", "    if (!(f = fopen(argv[2], \"wb\"))) return 2;",
              f"    ok = {writes};", "    return fclose(f) == 0 && ok ? 0 : 1;", "}", ""]
    return "\n".join(lines)

"""Boards as data, for `msfcnn fit`: what a network's RAM must fit in, and where its code is
emulated (docs/cli.md). Figures are the chips' datasheet values.

ram_bytes is the data RAM an application can put the arena, the stack and its buffers in, as one
linker region: on chips whose SRAM is several non-adjacent regions, the largest one (the arena is
one array), with the others named in the note. `target` is the emulated target (targets.TARGETS)
whose compiler and instruction counts stand for the board: the same core, or only the nearest
one, which `note` then says. Instruction counts there are not the board's cycles (caches, flash
wait states and bus contention are not emulated).

`regions` lists the board's data RAM as the linker sees it: each contiguous region with its base
address, size, kind (tightly coupled, on-chip SRAM, external), whether DMA reaches it and a
relative access cost (1: read in one cycle; an estimate from the reference manual's buses and wait
states, ordering the regions, not a cycle count). A board given no regions has one, of ram_bytes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

from .errors import UserError, did_you_mean
from .sizes import parse_clock, parse_size

KiB = 1024
MiB = 1024 * KiB


TCM, SRAM, EXTERNAL = "tcm", "sram", "external"  # a region's kind


@dataclass(frozen=True)
class Region:
    """One contiguous data RAM region of a board (the module's docstring)."""

    name: str  # a C identifier: the arena's linker section is .msfcnn_<name>
    size: int
    kind: str = SRAM
    dma: bool = True  # a DMA controller reaches it (a peripheral's buffer may live there)
    cost: float = 1.0  # relative access cost: the cheapest regions take the most-accessed buffers
    base: int | None = None  # its address (None: not given, for a custom region)

    def to_dict(self) -> dict:
        return {"name": self.name, "size": self.size, "kind": self.kind, "dma": self.dma, "cost": self.cost,
                "base": self.base}


@dataclass(frozen=True)
class Board:
    name: str
    chip: str
    core: str
    ram_bytes: int  # data RAM usable by an application (see the module's docstring)
    flash_bytes: int
    clock_hz: int | None  # the core's highest rated clock (None: not given, for a custom board)
    target: str  # the emulated target that stands for it (targets.TARGETS)
    exact_core: bool  # the target emulates this core (ISA and FPU), not only a near one
    note: str = ""
    regions: tuple[Region, ...] = ()  # its data RAM regions; () stands for one of ram_bytes

    @property
    def ram_regions(self) -> tuple[Region, ...]:
        """The regions a plan's buffers may be placed in: the board's, or one of ram_bytes."""
        return self.regions or (Region("ram", self.ram_bytes),)

    @property
    def several_regions(self) -> bool:
        return len(self.ram_regions) > 1

    def to_dict(self) -> dict:
        return {"name": self.name, "chip": self.chip, "core": self.core, "ram_bytes": self.ram_bytes,
                "flash_bytes": self.flash_bytes, "clock_hz": self.clock_hz, "target": self.target,
                "exact_core": self.exact_core, "note": self.note,
                "regions": [region.to_dict() for region in self.ram_regions]}


def _one(size: int, base: int, name: str = "sram", kind: str = SRAM) -> tuple[Region, ...]:
    """The regions of a board whose data RAM is one contiguous range."""
    return (Region(name, size, kind, True, 1.0, base),)


BOARDS = {b.name: b for b in (
    # STM32F767ZI: 512 KB SRAM = 128 KB DTCM + 368 KB SRAM1 + 16 KB SRAM2, one address range
    # from 0x20000000.
    Board("nucleo-f767zi", "STM32F767ZI", "Arm Cortex-M7 (FPv5 double precision)", 512 * KiB, 2 * MiB, 216_000_000,
          "cortex-m7", True, "512 KB SRAM incl. 128 KB DTCM, contiguous; QEMU's M7 without the caches",
          _one(512 * KiB, 0x20000000)),
    # STM32F746ZG: 320 KB SRAM = 64 KB DTCM + 240 KB SRAM1 + 16 KB SRAM2, contiguous.
    Board("nucleo-f746zg", "STM32F746ZG", "Arm Cortex-M7 (FPv5 single precision)", 320 * KiB, 1 * MiB, 216_000_000,
          "cortex-m7", True, "320 KB SRAM incl. 64 KB DTCM, contiguous; QEMU's M7 without the caches",
          _one(320 * KiB, 0x20000000)),
    # STM32F412ZG: 256 KB SRAM in one region.
    Board("nucleo-f412zg", "STM32F412ZG", "Arm Cortex-M4F", 256 * KiB, 1 * MiB, 100_000_000, "cortex-m4", True,
          regions=_one(256 * KiB, 0x20000000)),
    # nRF52840: 256 KB RAM in one region (a SoftDevice, if used, takes some: pass --reserve).
    Board("nrf52840dk", "nRF52840", "Arm Cortex-M4F", 256 * KiB, 1 * MiB, 64_000_000, "cortex-m4", True,
          "a Bluetooth SoftDevice, if linked, takes part of the 256 KB: add it to --reserve", _one(256 * KiB, 0x20000000)),
    # STM32H743: 1 MB of SRAM in separate regions: 512 KB AXI SRAM (counted: the largest), 128 KB
    # DTCM, 288 KB SRAM1-3, 64 KB SRAM4, 64 KB ITCM.
    Board("stm32h743", "STM32H743", "Arm Cortex-M7 (FPv5 double precision)", 512 * KiB, 2 * MiB, 480_000_000,
          "cortex-m7", True, "1 MB of SRAM in four regions (ram_bytes: the largest, the 512 KB AXI SRAM); "
                             "general DMA does not reach the DTCM (the MDMA does); ITCM (64 KB) is for code",
          (Region("dtcm", 128 * KiB, TCM, False, 1.0, 0x20000000),
           Region("axi_sram", 512 * KiB, SRAM, True, 2.0, 0x24000000),
           Region("sram1_3", 288 * KiB, SRAM, True, 3.0, 0x30000000),
           Region("sram4", 64 * KiB, SRAM, True, 3.0, 0x38000000))),
    # STM32U575ZI-Q: 786 KB SRAM = SRAM1 192 KB, SRAM2 64 KB and SRAM3 512 KB in one address range
    # from 0x20000000 (768 KB), SRAM4 16 KB at 0x28000000 and 2 KB of backup SRAM apart.
    Board("nucleo-u575zi", "STM32U575ZI", "Arm Cortex-M33 (DSP, FPv5 single precision, TrustZone)", 768 * KiB,
          2 * MiB, 160_000_000, "cortex-m33", True,
          "SRAM1-3 (768 KB, contiguous); SRAM4 (16 KB) is a separate region; QEMU's M33 without the caches",
          (Region("sram1_3", 768 * KiB, SRAM, True, 1.0, 0x20000000),
           Region("sram4", 16 * KiB, SRAM, True, 1.0, 0x28000000))),
    # nRF5340 application core: Cortex-M33 at 64 or 128 MHz, 1 MB flash, 512 KB RAM in one region (the
    # network core's 256 KB flash and 64 KB RAM are its own).
    Board("nrf5340dk", "nRF5340", "Arm Cortex-M33 application core (DSP, FPv5 single precision)", 512 * KiB,
          1 * MiB, 128_000_000, "cortex-m33", True,
          "the application core's 512 KB RAM; the network core's 64 KB is separate; a Bluetooth stack on the "
          "application core takes part: add it to --reserve", _one(512 * KiB, 0x20000000)),
    # RP2040 (Raspberry Pi Pico): two Cortex-M0+ at 133 MHz, 264 KB SRAM in six banks at one address
    # range from 0x20000000 (four striped 64 KB banks, two 4 KB ones); no internal flash, 2 MB of QSPI
    # flash on the Pico, executed in place through a 16 KB cache.
    Board("raspberry-pi-pico", "RP2040", "Arm Cortex-M0+ (Armv6-M, no FPU)", 264 * KiB, 2 * MiB, 133_000_000,
          "cortex-m0plus", True,
          "264 KB SRAM, contiguous (the Pico SDK's linker script keeps the last 8 KB as the cores' stacks: "
          "add them to --reserve when linking with it); code runs from QSPI flash through the XIP cache; the "
          "SDK's divider and ROM float routines replace libgcc's, so their calls count otherwise",
          _one(264 * KiB, 0x20000000)),
    # Alif Ensemble E3 (AE302F80F55D5), its RTSS-HP Cortex-M55 at 400 MHz: Alif's RAM map gives
    # SRAM0 4 MB at 0x02000000 (counted: the largest region) and SRAM1 2.5 MB at 0x08000000 (bulk
    # SRAM, shared by the cores), the HP core's TCMs (SRAM2: ITCM 256 KB, SRAM3: DTCM 1 MB, the
    # fastest for data), and the HE core's (SRAM4, SRAM5: 256 KB each); 5.5 MB MRAM for code.
    Board("alif-ensemble-e3", "Alif Ensemble E3 (AE302F80F55D5)",
          "Arm Cortex-M55 RTSS-HP core (Helium integer and float, FPv5 double precision)", 4 * MiB,
          5632 * KiB, 400_000_000, "cortex-m55", True,
          "counts SRAM0 (4 MB), the largest region; the HP core's DTCM (1 MB, fastest), ITCM (256 KB) and "
          "SRAM1 (2.5 MB) are separate; QEMU's M55 without the caches or the Ethos-U55",
          _one(4 * MiB, 0x02000000, "sram0")),
    # FE310-G002: 16 KB data scratchpad (DTIM); code runs from the 4 MB off-chip QSPI flash.
    Board("hifive1-revb", "SiFive FE310-G002", "SiFive E31 (RV32IMAC)", 16 * KiB, 4 * MiB, 320_000_000,
          "fe310", True, "16 KB DTIM; code and weights execute in place from the 4 MB QSPI flash",
          _one(16 * KiB, 0x80000000, "dtim", TCM)),
    # ESP32-C3: 400 KB SRAM, of which 16 KB is the flash cache: 384 KB for data and code in RAM.
    Board("esp32-c3-devkit", "ESP32-C3", "RV32IMC (no atomics or FPU emulated)", 384 * KiB, 4 * MiB, 160_000_000,
          "esp32c3", True, "400 KB SRAM less the 16 KB flash cache; ESP-IDF itself uses some: add it to --reserve",
          _one(384 * KiB, 0x3FC80000)),
    # ESP8266EX (NodeMCU v1.0, ESP-12E module): 80 KB of user data RAM (dram0 at 0x3FFE8000), 4 MB
    # flash; the L106 core runs at 80 MHz, or 160 MHz.
    Board("esp8266-nodemcu", "ESP8266EX", "Xtensa LX106 (call0 ABI, no FPU, no divide)", 80 * KiB, 4 * MiB,
          160_000_000, "xtensa-lx106", True,
          "80 KB of user data RAM; with Wi-Fi running the SDK leaves less: add it to --reserve; on the chip "
          "constants in flash read only by aligned 32-bit loads, which the emulation does not enforce",
          _one(80 * KiB, 0x3FFE8000, "dram0")),
    # ESP32-S3 (N8 module, 8 MB flash): of its 512 KB internal SRAM, SRAM0 (32 KB) is on the
    # instruction bus only and the data cache (ESP-IDF's default 32 KB) takes half of SRAM2: 448 KB
    # of data SRAM from 0x3FC88000, as the N8R8 profile below.
    Board("esp32-s3-devkit", "ESP32-S3", "Xtensa LX7 (dual core)", 448 * KiB, 8 * MiB, 240_000_000,
          "esp32c3", False, "nearest emulated target only: esp32c3 is RV32IMC, not Xtensa LX7 (no windowed "
                            "registers, MAC16 or SIMD): its stack and instruction figures are those of RISC-V code; "
                            "448 KB internal data SRAM; ESP-IDF's code in IRAM and its data use some: add them to --reserve",
          _one(448 * KiB, 0x3FC88000)),
    # STM32F407VG/ZG: 192 KB SRAM = SRAM1 112 KB + SRAM2 16 KB contiguous from 0x20000000, and 64 KB
    # core coupled memory (CCM) at 0x10000000 on the D-bus only: no DMA, zero wait states.
    Board("stm32f407", "STM32F407", "Arm Cortex-M4F", 128 * KiB, 1 * MiB, 168_000_000, "cortex-m4", True,
          "SRAM1+2 (128 KB, contiguous; ram_bytes) and the 64 KB CCM apart, which DMA does not reach",
          (Region("sram", 128 * KiB, SRAM, True, 1.0, 0x20000000),
           Region("ccm", 64 * KiB, TCM, False, 1.0, 0x10000000))),
    # ESP32-S3-DevKitC-1 N8R8: of the ESP32-S3's 512 KB internal SRAM, SRAM0 (32 KB) is on the
    # instruction bus only; on the data bus SRAM1 (416 KB, 0x3FC88000-0x3FCEFFFF) and SRAM2 (64 KB)
    # follow one another, and the data cache that the PSRAM needs takes 32 KB of SRAM2 (ESP-IDF's
    # default): 448 KB contiguous. 8 MB octal PSRAM mapped through that cache in the data bus's
    # external window from 0x3C000000 (external: a cache miss costs a bus transfer), 8 MB flash.
    Board("esp32-s3-devkitc-n8r8", "ESP32-S3 (N8R8 module)", "Xtensa LX7 (dual core)", 448 * KiB, 8 * MiB,
          240_000_000, "esp32c3", False,
          "nearest emulated target only: esp32c3 is RV32IMC, not Xtensa LX7; 448 KB internal data SRAM (ram_bytes: "
          "SRAM1 and the half of SRAM2 the 32 KB data cache leaves; ESP-IDF's code in IRAM and its data use some: "
          "add them to --reserve) and 8 MB PSRAM, external and slow, reached through the cache",
          (Region("sram", 448 * KiB, SRAM, True, 1.0, 0x3FC88000),
           Region("psram", 8 * MiB, EXTERNAL, True, 8.0, 0x3C000000))),
    # i.MX RT1060 EVK (MIMXRT1062): Cortex-M7 at 600 MHz; FlexRAM in its default fuse setting (128 KB
    # ITCM for code, 128 KB DTCM at 0x20000000, 256 KB OCRAM at 0x20280000 right after the 512 KB
    # OCRAM2 at 0x20200000: 768 KB contiguous), 32 MB SDRAM at 0x80000000, 8 MB QSPI flash.
    Board("mimxrt1060-evk", "MIMXRT1062", "Arm Cortex-M7 (FPv5 double precision)", 768 * KiB, 8 * MiB,
          600_000_000, "cortex-m7", True,
          "OCRAM (768 KB, contiguous; ram_bytes), DTCM 128 KB and the EVK's 32 MB SDRAM, external and slow; "
          "QEMU's M7 without the caches",
          (Region("dtcm", 128 * KiB, TCM, True, 1.0, 0x20000000),
           Region("ocram", 768 * KiB, SRAM, True, 2.0, 0x20200000),
           Region("sdram", 32 * MiB, EXTERNAL, True, 8.0, 0x80000000))),
)}


def get_board(name: str) -> Board:
    """A board by name, or the board a file describes (`load_board_file`)."""
    if name.lower().endswith(".json"):
        return load_board_file(name)
    board = BOARDS.get(name)
    if board is None:
        raise UserError(f"unknown board {name!r}{did_you_mean(name, BOARDS)} (available: {', '.join(BOARDS)}; "
                        f"or describe your own with --ram and --target, or a board file BOARD.json)")
    return board


# A board file's keys: the two it needs, then the optional ones (docs/cli.md, "Your own board").
BOARD_FILE_KEYS = ("ram", "target", "name", "flash", "clock", "chip", "core", "note", "regions")
REGION_KEYS = ("name", "size", "kind", "dma", "cost", "base")  # a region of a board file: name and size needed


def custom_board(ram: int | None, target: str | None, clock_hz: int | None = None, flash: int | None = None,
                 base: Board | None = None, name: str | None = None, chip: str = "", core: str = "",
                 note: str = "", regions: tuple[Region, ...] = ()) -> Board:
    """A board of the user's: `base` (a known board) with the figures given replaced, or a new one,
    which needs its RAM and the emulated target that stands for its core (its compiler bounds the
    stack, its latency model predicts the time). `regions` (--region) replace the RAM's regions;
    without --ram the largest is ram_bytes. --ram alone makes the RAM one region of that size."""
    if regions:
        ram = ram or max(region.size for region in regions)
    elif ram is not None:
        regions = ()  # one region of --ram, whatever the base board had
    cores = board_targets()
    if target is not None and target not in cores:
        raise UserError(f"{target!r} is not a microcontroller target{did_you_mean(str(target), cores)} (a board "
                        f"runs on one of: {', '.join(cores)})")
    if base is not None:
        changes = {"ram_bytes": ram, "target": target, "clock_hz": clock_hz, "flash_bytes": flash}
        return replace(base, **{k: v for k, v in changes.items() if v is not None},
                       exact_core=base.exact_core and target in (None, base.target),
                       regions=base.regions if ram is None else regions)
    if ram is None or target is None:
        raise UserError("a board of your own needs its RAM and the target that stands for its core: --ram SIZE "
                        f"--target T (targets: {', '.join(cores)}), or --board NAME or BOARD.json")
    return Board(name or "custom", chip or "custom", core or f"as {target}", ram, flash or 0, clock_hz, target,
                 True, note, regions)


_REGION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def parse_regions(texts: list[str]) -> tuple[Region, ...]:
    """--region NAME:SIZE[:COST], repeated: a custom board's RAM regions (cost 1 by default)."""
    regions = tuple(_parse_region(text) for text in texts)
    names = [region.name for region in regions]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UserError(f"--region {twice[0]} is given twice: each region has its own name")
    return regions


def _parse_region(text: str) -> Region:
    parts = text.split(":")
    if len(parts) not in (2, 3) or not _REGION_NAME.match(parts[0]):
        raise UserError(f"bad --region {text!r}: expected NAME:SIZE[:COST], NAME a C identifier (e.g. dtcm:128KiB:1)")
    cost = 1.0
    if len(parts) == 3:
        try:
            cost = float(parts[2])
        except ValueError:
            cost = -1.0
        if not cost > 0 or cost == float("inf"):
            raise UserError(f"bad --region {text!r}: its COST is a positive number (relative: 1 for a TCM)")
    try:
        size = parse_size(parts[1])
    except UserError as err:
        raise UserError(f"bad --region {text!r}: {err}") from None
    return Region(parts[0].lower(), size, SRAM, True, cost)


def board_targets() -> list[str]:
    """The emulated targets that can stand for a board's core: the microcontroller ones."""
    from .targets import TARGETS
    return [name for name in TARGETS if not name.startswith("host")]


def load_board_file(path: str) -> Board:
    """A board described in JSON: {"ram": "128KiB", "target": "cortex-m4"} and optionally name,
    flash, clock ("80MHz"), chip, core, note and regions (a list of {"name", "size"} with
    optionally kind, dma, cost and base; with regions, ram may be left out: the largest). Sizes
    and clocks are numbers or strings."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (OSError, ValueError) as err:
        raise UserError(f"{path}: not a board file ({type(err).__name__}: {err})") from None
    if not isinstance(doc, dict):
        raise UserError(f"{path}: a board file is a JSON object, e.g. {{\"ram\": \"128KiB\", \"target\": \"cortex-m4\"}}")
    unknown = [key for key in doc if key not in BOARD_FILE_KEYS]
    if unknown:
        raise UserError(f"{path}: unknown key {unknown[0]!r}{did_you_mean(unknown[0], BOARD_FILE_KEYS)} "
                        f"(keys: {', '.join(BOARD_FILE_KEYS)})")
    text = {key: str(doc[key]) for key in ("name", "chip", "core", "note") if key in doc}
    regions = _file_regions(path, doc.get("regions", []))
    return custom_board(_figure(doc, "ram", parse_size), doc.get("target"), _figure(doc, "clock", parse_clock),
                        _figure(doc, "flash", parse_size), name=text.get("name", path), chip=text.get("chip", ""),
                        core=text.get("core", ""), note=text.get("note", ""), regions=regions)


def _file_regions(path: str, items) -> tuple[Region, ...]:
    """A board file's "regions": each an object of REGION_KEYS, checked, names unique."""
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise UserError(f"{path}: \"regions\" is a list of objects, e.g. [{{\"name\": \"dtcm\", \"size\": \"128KiB\"}}]")
    regions = tuple(_file_region(path, k, item) for k, item in enumerate(items))
    names = [region.name for region in regions]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UserError(f"{path}: region {twice[0]!r} is given twice: each region has its own name")
    return regions


def _file_region(path: str, k: int, item: dict) -> Region:
    where = f"{path}: region {k}"
    unknown = [key for key in item if key not in REGION_KEYS]
    if unknown:
        raise UserError(f"{where}: unknown key {unknown[0]!r}{did_you_mean(unknown[0], REGION_KEYS)} "
                        f"(keys: {', '.join(REGION_KEYS)})")
    name = item.get("name")
    if not isinstance(name, str) or not _REGION_NAME.match(name):
        raise UserError(f"{where}: its \"name\" is a C identifier (e.g. \"dtcm\"), not {name!r}")
    where = f"{path}: region {name!r}"
    if item.get("size") is None:
        raise UserError(f"{where}: its \"size\" is needed (e.g. \"128KiB\")")
    try:
        size = parse_size(str(item["size"]))
    except UserError as err:
        raise UserError(f"{where}: {err}") from None
    kind = item.get("kind", SRAM)
    if kind not in (TCM, SRAM, EXTERNAL):
        raise UserError(f"{where}: its \"kind\" is one of {TCM}, {SRAM}, {EXTERNAL}, not {kind!r}")
    dma = item.get("dma", True)
    if not isinstance(dma, bool):
        raise UserError(f"{where}: its \"dma\" is true or false, not {dma!r}")
    cost = item.get("cost", 1.0)
    if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not 0 < cost < float("inf"):
        raise UserError(f"{where}: its \"cost\" is a positive number (relative: 1 for a TCM), not {cost!r}")
    return Region(name.lower(), size, kind, dma, float(cost), _base(where, item.get("base")))


def _base(where: str, base) -> int | None:
    """A region's address: a number or a string ("0x20000000"), or None."""
    if base is None:
        return None
    try:
        value = base if isinstance(base, int) and not isinstance(base, bool) else int(str(base), 0)
    except ValueError:
        value = -1
    if value < 0:
        raise UserError(f"{where}: its \"base\" is an address such as \"0x20000000\", not {base!r}")
    return value


def _figure(doc: dict, key: str, parse):
    return None if doc.get(key) is None else parse(str(doc[key]))

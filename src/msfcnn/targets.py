"""Where generated C runs. A target is data: the compiler and its flags, how to run a built program
on an input and an output file, and the binutils that read the arena's size back.

The microcontroller targets run under QEMU's system emulation with semihosting: the harness's
fopen / fread / fwrite and its exit status reach the host through the debugger interface, so the
same main.c runs everywhere. Their C library is picolibc (its startup code fetches argv over
semihosting); all of it comes from Debian packages, listed in each target for the error message.
On Xtensa, where picolibc has no start-up code or semihosting, the start-up, output and exit are
msfcnn's own (`Target.support`), through QEMU's simcall.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, replace

from .errors import UserError, did_you_mean

STRICT = "-std=c99 -O2 -Wall -Wextra -Werror -pedantic"

# picolibc on a board with 4 MiB of code memory at 0 and 4 MiB of RAM at 0x20000000 (the MPS2
# FPGA images' ZBT SSRAM banks, as QEMU models them).
_PICOLIBC_MPS2 = ("--oslib=semihost --crt0=semihost -T picolibc.ld -Wl,--defsym=__flash=0x0 "
                  "-Wl,--defsym=__flash_size=0x400000 -Wl,--defsym=__ram=0x20000000 "
                  "-Wl,--defsym=__ram_size=0x400000")
# QEMU's mps2-an505 (the Cortex-M33 FPGA image) starts in Secure state at the Secure alias of
# its 4 MiB code SRAM, 0x10000000; its two 2 MiB data SRAMs follow each other at 0x38000000 (the
# Secure alias of 0x28000000). Every memory protection controller resets to all-Secure.
_PICOLIBC_AN505 = ("--oslib=semihost --crt0=semihost -T picolibc.ld -Wl,--defsym=__flash=0x10000000 "
                   "-Wl,--defsym=__flash_size=0x400000 -Wl,--defsym=__ram=0x38000000 "
                   "-Wl,--defsym=__ram_size=0x400000")
_ARM_PACKAGES = ("gcc-arm-none-eabi", "picolibc-arm-none-eabi", "qemu-system-arm")

# QEMU's mps3-an547 (SSE-300 with a Cortex-M55), in Secure state as it resets: code and weights in
# 16 MiB of the secure DDR alias at 0x70000000, data in the 4 MiB of ISRAM0/1 at 0x31000000.
# support/mps3-an547/boot.ld puts the reset vector at 0x10000000, where the core reads it.
_PICOLIBC_AN547 = ("--oslib=semihost --crt0=semihost -T picolibc.ld -Wl,--defsym=__flash=0x70000000 "
                   "-Wl,--defsym=__flash_size=0x1000000 -Wl,--defsym=__ram=0x31000000 "
                   "-Wl,--defsym=__ram_size=0x400000 -Wl,-T,support/boot.ld")

# The SiFive FE310 as QEMU's sifive_e models it: 16 KiB of data RAM at 0x80000000, code executed
# in place from the SPI flash at 0x20400000 (where the mask ROM jumps). The harness is the
# embedded one, so the RAM holds the arena, the output, the stack and picolibc's own few buffers.
# The link reserves picolibc's default 2 KiB of stack; the harness measures what the network
# really uses (about 2.1-2.2 KiB for the deepest fused blocks, which then reach into the unused
# heap) and a run fails if the stack ever reached the static data.
FE310_RAM_BYTES = 16 * 1024
_PICOLIBC_FE310 = ("--oslib=semihost --crt0=semihost -T picolibc.ld -Wl,--defsym=__flash=0x20400000 "
                   "-Wl,--defsym=__flash_size=0x1000000 -Wl,--defsym=__ram=0x80000000 "
                   f"-Wl,--defsym=__ram_size={FE310_RAM_BYTES:#x}")

# The ESP32-C3's core and RAM size, not the chip: its ISA (RV32IMC, no atomics, no floating
# point) and its 400 KiB of SRAM, on QEMU's virt board, none of the ESP32-C3's peripherals or
# timing. The virt board's RAM starts at 0x80000000: its first 4 MiB stand for the flash the code,
# the weights and the input run from (picolibc's "flash" region), the next 400 KiB for the SRAM,
# which the linker script enforces. `-cpu rv32,a=off,f=off,d=off` makes QEMU fault on an atomic or
# floating-point instruction, which checks the build. picolibc has no rv32imc multilib: gcc links
# its rv32im build (integer only, no compressed instructions in the library).
ESP32C3_RAM_BYTES = 400 * 1024
_PICOLIBC_ESP32C3 = ("--oslib=semihost --crt0=semihost -T picolibc.ld -Wl,--defsym=__flash=0x80000000 "
                     "-Wl,--defsym=__flash_size=0x400000 -Wl,--defsym=__ram=0x80400000 "
                     f"-Wl,--defsym=__ram_size={ESP32C3_RAM_BYTES:#x}")
_RISCV_PACKAGES = ("gcc-riscv64-unknown-elf", "picolibc-riscv64-unknown-elf", "qemu-system-misc")

# The ESP8266's core, an Xtensa LX106 (call0 ABI, 32-bit MULL, no divide, no floating point, no
# MAC16), on QEMU's sim machine: not an ESP8266 (no flash cache, no peripherals, no timing) and not
# an ESP32 (whose LX6 / LX7 cores have register windows, MAC16 and, on the S3, SIMD). The program
# gets the ESP8266's 80 KiB of user data RAM and runs from the sim's instruction memory, which
# stands for its flash (support/xtensa-lx106/lx106.ld). picolibc has no Xtensa start-up code or
# semihosting layer and Debian's libgcc for the core lacks its division and some soft-float
# routines, so the harness links msfcnn's own (codegen/support/xtensa-lx106/).
XTENSA_LX106_RAM_BYTES = 80 * 1024
_XTENSA_LX106_SPECS = "--specs=/usr/lib/xtensa-lx106-elf/picolibc.specs"
_XTENSA_PACKAGES = ("gcc-xtensa-lx106", "picolibc-xtensa-lx106-elf", "qemu-system-misc")


def _qemu_mps2(board: str) -> tuple[str, ...]:
    return ("qemu-system-arm", "-M", board, "-nographic", "-monitor", "none", "-serial", "none",
            "-semihosting-config", "enable=on,target=native,arg={input},arg={output}", "-kernel", "{program}")


# Semihosting's console on QEMU's stdout, for the embedded harness (it prints its output).
_CONSOLE = ("-chardev", "stdio,id=console", "-semihosting-config", "enable=on,target=native,chardev=console")


@dataclass(frozen=True)
class Target:
    name: str
    cc: str
    cflags: str
    ldflags: str = ""
    # The command that runs a built program: {program}, {input} and {output} are replaced by
    # paths. Inside a QEMU option string (a placeholder with other text around it) commas in a
    # path are doubled, as QEMU's option syntax needs.
    command: tuple[str, ...] = ("{program}", "{input}", "{output}")
    nm: str = "nm"
    description: str = ""
    packages: tuple[str, ...] = ()  # Debian packages that provide the tools
    ram_bytes: int | None = None  # data RAM of the board, when it is small enough to matter
    # The harness takes its input from flash (input.c) and prints its output in hex on stdout: no
    # file I/O, so no heap, for boards whose RAM holds little beyond the arena.
    embedded_harness: bool = False
    # A folder of codegen/support/ whose files (start-up code, C library glue, linker script) the
    # harness is built with, as support/<file> beside it: for a core picolibc does not start.
    support: str | None = None
    input_in_ram: bool = False  # the embedded harness copies its input into a RAM buffer first
    board: str | None = None  # the board it is linked as (for_board)
    # A vector extension whose instructions icount also counts ("mve": Arm's Helium)
    vector_extension: str | None = None
    # Linked as a board of several RAM regions: (name, origin, length) of each, at distinct
    # addresses of the emulated RAM (msfcnn_memory.ld), each arena in its own (for_board).
    region_map: tuple[tuple[str, int, int], ...] = ()
    # The RAM the emulated machine has from picolibc's __ram, where a board's regions may go (None:
    # __ram_size): more than the chip's on QEMU's virt board, whose 128 MiB hold external RAM too.
    region_room: int | None = None
    # The core computes float32 in hardware. Without an FPU a float kernel calls the soft-float
    # library, whose paths depend on the values (a product with a 0 returns early): the latency
    # model then profiles a float graph's values (latency/values.py).
    fpu: bool = True

    def for_board(self, name: str, ram_bytes: int, stack_bytes: int, input_in_ram: bool,
                  regions: tuple[tuple[str, int], ...] = ()) -> Target:
        """This target linked as a board with `ram_bytes` of RAM, `stack_bytes` of which the link
        reserves for the stack: a program whose static data (arena, io, the C library's) and that
        stack do not fit fails to link. It runs the embedded harness (input in flash, or copied
        into a RAM buffer with `input_in_ram`, output printed, stack measured)."""
        linked = self.with_regions(name, regions) if regions else self
        ram_bytes = linked.ram_bytes if regions else ram_bytes
        ldflags = re.sub(r"__ram_size=\w+", f"__ram_size={ram_bytes:#x}", linked.ldflags)
        # main takes no command line: semihosting's start-up code would keep 1.25 KiB of RAM for one
        ldflags = ldflags.replace("--crt0=semihost", "--crt0=hosted")
        command = self.command
        if not self.embedded_harness:  # semihosting's arguments give way to its console
            at = command.index("-semihosting-config")
            command = command[:at] + _CONSOLE + command[at + 2:]
        return replace(self, ldflags=f"{ldflags} -Wl,--defsym=__stack_size={stack_bytes:#x}", command=command,
                       description=f"{name} ({ram_bytes} B of RAM) on {self.name}: {self.description}",
                       ram_bytes=ram_bytes, embedded_harness=True, input_in_ram=input_in_ram, board=name,
                       region_map=linked.region_map)

    def with_regions(self, board: str, regions: tuple[tuple[str, int], ...]) -> Target:
        """This target with a board's RAM regions (name, bytes) linked at addresses of their own
        (`_region_map`, msfcnn_memory.ld), the program's data in the RAM below them; its harness
        unchanged (the file harness of `verify A B --board`)."""
        region_map, below = self._region_map(board, regions)
        ldflags = re.sub(r"__ram_size=\w+", f"__ram_size={below:#x}", self.ldflags) + " -Wl,-T,msfcnn_memory.ld"
        return replace(self, ldflags=ldflags, ram_bytes=below, region_map=region_map)

    def _region_map(self, board: str, regions: tuple[tuple[str, int], ...]):
        """The board's regions (name, bytes) at the top of the emulated RAM, one after the other
        (each from a 4 KiB boundary), and the RAM below them left to the program (its stack, the
        harness's buffers, the C library's data), which must keep at least 64 KiB."""
        found = [re.search(rf"{symbol}=(\w+)", self.ldflags) for symbol in ("__ram", "__ram_size")]
        if None in found:
            raise UserError(f"{board}'s several RAM regions are linked on the targets that link with picolibc's "
                            f"linker script, not on {self.name}")
        base, total = (int(match.group(1), 0) for match in found)
        total = self.region_room or total
        sizes = [-(-size // 4096) * 4096 for _, size in regions]
        below = total - sum(sizes)
        if below < 64 * 1024:
            raise UserError(f"{board}'s RAM regions ({sum(size for _, size in regions)} B) do not fit the "
                            f"{total} B of RAM that {self.name} emulates, with room for the program")
        origins = [base + below + sum(sizes[:k]) for k in range(len(sizes))]
        return tuple((n, origin, size) for (n, size), origin in zip(regions, origins)), below

    def run_command(self, program: str, input_path: str, output_path: str) -> list[str]:
        paths = {"program": program, "input": input_path, "output": output_path}
        words = []
        for word in self.command:
            embedded = word not in ("{program}", "{input}", "{output}")
            words.append(word.format(**{k: v.replace(",", ",,") if embedded else v for k, v in paths.items()}))
        return words

    @property
    def tools(self) -> tuple[str, ...]:
        """The executables the target needs: compiler, binutils, and the runner (if not the program)."""
        runner = () if self.command[0] == "{program}" else (self.command[0],)
        return (self.cc, self.nm, *runner)


TARGETS = {
    "host": Target("host", "cc", STRICT, description="this machine's C compiler"),
    "host-sanitize": Target("host-sanitize", "cc",
                            "-std=c99 -O1 -g -Wall -Wextra -Werror -pedantic -fsanitize=address,undefined "
                            "-fno-sanitize-recover=all -fno-omit-frame-pointer",
                            description="host build with AddressSanitizer and UBSan"),
    "cortex-m4": Target("cortex-m4", "arm-none-eabi-gcc",
                        STRICT + " -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 --specs=picolibc.specs",
                        _PICOLIBC_MPS2, _qemu_mps2("mps2-an386"), "arm-none-eabi-nm",
                        "Arm Cortex-M4F on QEMU's mps2-an386 board (picolibc, semihosting)", _ARM_PACKAGES),
    "cortex-m7": Target("cortex-m7", "arm-none-eabi-gcc",
                        STRICT + " -mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16 --specs=picolibc.specs",
                        _PICOLIBC_MPS2, _qemu_mps2("mps2-an500"), "arm-none-eabi-nm",
                        "Arm Cortex-M7 on QEMU's mps2-an500 board (picolibc, semihosting)", _ARM_PACKAGES),
    # -mcpu=cortex-m55: MVE integer and float, double-precision FPU; gcc links picolibc's
    # thumb/v8-m.main+dp/hard build (its v8.1-m.main+mve multilib has no FPU; neither has MVE code).
    "cortex-m55": Target("cortex-m55", "arm-none-eabi-gcc",
                         STRICT + " -mcpu=cortex-m55 -mthumb -mfloat-abi=hard --specs=picolibc.specs",
                         _PICOLIBC_AN547, _qemu_mps2("mps3-an547"), "arm-none-eabi-nm",
                         "Arm Cortex-M55 with Helium (MVE) on QEMU's mps3-an547 board (picolibc, semihosting)",
                         _ARM_PACKAGES, support="mps3-an547", vector_extension="mve"),
    "cortex-m33": Target("cortex-m33", "arm-none-eabi-gcc",
                         STRICT + " -mcpu=cortex-m33 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16 --specs=picolibc.specs",
                         _PICOLIBC_AN505, _qemu_mps2("mps2-an505"), "arm-none-eabi-nm",
                         "Arm Cortex-M33 (DSP, single-precision FPU) on QEMU's mps2-an505 board (picolibc, "
                         "semihosting)", _ARM_PACKAGES),
    # QEMU has no Cortex-M0+ board with RAM enough for real layers: Armv6-M code (picolibc's v6-m
    # multilib, soft float) runs on mps2-an385's Cortex-M3, which executes every Armv6-M
    # instruction as a Cortex-M0+ does, one for one (tests/targets cross-check the counts against
    # QEMU's Cortex-M0, the microbit).
    "cortex-m0plus": Target("cortex-m0plus", "arm-none-eabi-gcc",
                            STRICT + " -mcpu=cortex-m0plus -mthumb -mfloat-abi=soft --specs=picolibc.specs",
                            _PICOLIBC_MPS2, _qemu_mps2("mps2-an385"), "arm-none-eabi-nm",
                            "Arm Cortex-M0+ code (Armv6-M, soft float) on the Cortex-M3 of QEMU's mps2-an385 board "
                            "(picolibc, semihosting)", _ARM_PACKAGES, fpu=False),
    "fe310": Target("fe310", "riscv64-unknown-elf-gcc",
                    STRICT + " -march=rv32imac -mabi=ilp32 -mcmodel=medlow --specs=picolibc.specs",
                    _PICOLIBC_FE310,
                    ("qemu-system-riscv32", "-M", "sifive_e", "-display", "none", "-monitor", "none", "-serial", "none",
                     "-chardev", "stdio,id=console", "-semihosting-config", "enable=on,target=native,chardev=console",
                     "-kernel", "{program}"),
                    "riscv64-unknown-elf-nm", "SiFive FE310 (RV32IMAC, 16 KiB RAM) on QEMU's sifive_e board",
                    _RISCV_PACKAGES, ram_bytes=FE310_RAM_BYTES, embedded_harness=True, fpu=False),
    "esp32c3": Target("esp32c3", "riscv64-unknown-elf-gcc",
                      STRICT + " -march=rv32imc -mabi=ilp32 -mcmodel=medlow --specs=picolibc.specs",
                      _PICOLIBC_ESP32C3,
                      ("qemu-system-riscv32", "-M", "virt", "-cpu", "rv32,a=off,f=off,d=off", "-bios", "none",
                       "-display", "none", "-monitor", "none", "-serial", "none", "-chardev", "stdio,id=console",
                       "-semihosting-config", "enable=on,target=native,chardev=console", "-kernel", "{program}"),
                      "riscv64-unknown-elf-nm",
                      "the ESP32-C3's ISA (RV32IMC, no A/F/D) and 400 KiB of RAM on QEMU's virt board",
                      _RISCV_PACKAGES, ram_bytes=ESP32C3_RAM_BYTES, embedded_harness=True,
                      region_room=124 * 1024 * 1024, fpu=False),
    "xtensa-lx106": Target("xtensa-lx106", "xtensa-lx106-elf-gcc",
                           f"{STRICT} -ffunction-sections -fdata-sections {_XTENSA_LX106_SPECS}",
                           "-nostartfiles -T support/lx106.ld",  # (the specs come with the CFLAGS)
                           ("qemu-system-xtensa", "-M", "sim", "-cpu", "lx106", "-semihosting", "-display", "none",
                            "-monitor", "none", "-serial", "none", "-kernel", "{program}"),
                           "xtensa-lx106-elf-nm",
                           "the ESP8266's Xtensa LX106 core and 80 KiB of data RAM on QEMU's sim machine",
                           _XTENSA_PACKAGES, ram_bytes=XTENSA_LX106_RAM_BYTES, embedded_harness=True,
                           support="xtensa-lx106", fpu=False),
}


def get_target(name: str) -> Target:
    target = TARGETS.get(name)
    if target is None:
        raise UserError(f"unknown target {name!r}{did_you_mean(name, TARGETS)} (available: {', '.join(TARGETS)})")
    missing = [tool for tool in target.tools if shutil.which(tool) is None]
    if missing:
        hint = f" (Debian: apt-get install {' '.join(target.packages)})" if target.packages else ""
        raise UserError(f"target {name} needs {', '.join(missing)}, which is not installed{hint}")
    return target

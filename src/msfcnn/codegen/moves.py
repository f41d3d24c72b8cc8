"""How the compiler builds the constant-size memmoves the generated C makes, for the latency model.

model.c moves bytes with `memmove(target, source, size)`, `size` a constant: a view op's bytes
(`_Emitter.call`, `vector_call`), a live tensor sliding between blocks (model.c.j2), and a row the
caller's read_rows copies. arm-none-eabi-gcc 12 at -O2 expands such a move inline (word loads and
stores, or LDM/STM) when it is at most one word, or at most 16 words between two arena places it
can tell apart (constant offsets whose bytes do not overlap: it is then a memcpy). Any other
move calls the C library (memcpy between such places), whose memmove and memcpy (picolibc's)
copy a byte at a time, 4 or 5 instructions a byte. A move counts as `memmove:call` and `memmove:byte`, and a library call also
as `memmove:library_call` and `memmove:library_byte`. Only the Arm targets' fits price the
library counts; elsewhere they cost 0 and every move is priced by its bytes alone.

picolibc's memcpy as linked here loops ldrb, strb, cmp, bne: 4 instructions a byte; its memmove
compares the ends first and loops forward or backward, 5 a byte either way (no word path at any
size or alignment). A library call whose ends the compiler cannot tell apart is a memmove (a
live tensor sliding over itself, or the caller's pointers), so it also counts as
`memmove:library_memmove_call` and `memmove:library_memmove_byte`: what it costs above a memcpy.

xtensa-lx106-elf-gcc 12 at -O2 expands fewer moves inline: one between word-aligned arena places
it can tell apart when its words, plus two per halfword and one per byte of its tail, are at most
four (16, 13, 12 or 10 bytes and less), and none between other pointers past a byte. The moves the Arm compilers expand and it does not
count as `memmove:short_library_call` and `memmove:short_library_byte` too, which only its fit
prices (the Arm ones leave them at 0).
"""

from __future__ import annotations

from collections import Counter

INLINE_ANY = 4  # bytes moved inline between any two pointers (one word: unaligned loads are fine)
INLINE_APART = 64  # bytes moved inline between two arena places the compiler tells apart


def library_move(size: int, apart: bool) -> bool:
    """Whether a memmove of `size` bytes calls the C library. `apart`: both ends are arena places
    at constant offsets that do not overlap (not the caller's input or output, not a slide over
    itself)."""
    return size > INLINE_ANY and (not apart or size > INLINE_APART)


def library_memmove(size: int, apart: bool) -> bool:
    """Whether the library call of a move is memmove, not memcpy (the compiler cannot tell its
    ends apart)."""
    return library_move(size, apart) and not apart


def pieces(size: int) -> int:
    """What xtensa-lx106-elf-gcc weighs a move of `size` bytes between word-aligned places as: a
    word load and store each word, two for a halfword and one for a byte of the tail."""
    return size // 4 + 2 * (size % 4 >= 2) + size % 2


def short_library_move(size: int, apart: bool) -> bool:
    """Whether a move the Arm compilers expand inline (not library_move) is a library call on
    xtensa-lx106 (weighing more than four pieces apart, more than a byte otherwise)."""
    return not library_move(size, apart) and (pieces(size) > 4 if apart else size > 1)


def overlap(source: int, target: int, size: int) -> bool:
    """Whether a move of `size` bytes from arena offset `source` to `target` runs over itself."""
    return source < target + size and target < source + size


def count_move(f: Counter, size: int, apart: bool, times: int = 1) -> None:
    """Add `times` memmoves of `size` bytes to the counts `f` (library_move's `apart`)."""
    f["memmove:call"] += times
    f["memmove:byte"] += times * size
    if library_move(size, apart):
        f["memmove:library_call"] += times
        f["memmove:library_byte"] += times * size
        if library_memmove(size, apart):
            f["memmove:library_memmove_call"] += times
            f["memmove:library_memmove_byte"] += times * size
    elif short_library_move(size, apart):
        f["memmove:short_library_call"] += times
        f["memmove:short_library_byte"] += times * size

"""The xtensa-lx106 target's own run-time (codegen/support/xtensa-lx106/): the integer and float
routines msfcnn provides for the core, run on QEMU's LX106 against Python's integers and numpy's
float32 (IEEE single precision, round to nearest even); a fault ends the run with a status."""

import subprocess

import numpy as np

from support.toolchains import require_target, write_runtime

MASK32, MASK64 = (1 << 32) - 1, (1 << 64) - 1

# Float bit patterns at the edges: zeros, subnormals, the normal range's ends, infinities, NaN.
SPECIAL_FLOATS = [0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x00800000, 0x00800001, 0x3f800000, 0xbf800000,
                  0x3f800001, 0x3f7fffff, 0x4b000000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000,
                  0x33800000, 0x34000000, 0x1f800000, 0x5f800000]


def float_cases(rng: np.random.Generator) -> np.ndarray:
    """Pairs of float bit patterns: every pair of the special values, random bit patterns, and
    near-equal or near-opposite pairs (cancellation, ties) of random magnitudes."""
    special = np.array([(a, b) for a in SPECIAL_FLOATS for b in SPECIAL_FLOATS], dtype=np.uint32)
    anything = rng.integers(0, 1 << 32, size=(600, 2), dtype=np.uint64).astype(np.uint32)
    near = rng.integers(0, 1 << 32, size=600, dtype=np.uint64).astype(np.uint32)
    other = (near.astype(np.int64) + rng.integers(-300, 300, size=600)).astype(np.uint32)
    other ^= rng.integers(0, 2, size=600, dtype=np.uint32) << 31
    shifted = (near.astype(np.int64) + (rng.integers(-30, 30, size=600) << 23)).astype(np.uint32)
    return np.concatenate([special, anything, np.stack([near, other], 1), np.stack([near, shifted], 1)])


def integer_cases(rng: np.random.Generator) -> list[tuple[int, int]]:
    edges = [0, 1, 2, 3, 7, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0x80000001, 0xfffffffe, 0xffffffff]
    pairs = [(a, b) for a in edges for b in edges]
    pairs += [tuple(int(v) for v in rng.integers(0, 1 << 32, size=2, dtype=np.uint64)) for _ in range(400)]
    pairs += [(int(rng.integers(0, 1 << 32, dtype=np.uint64)), int(rng.integers(1, 1000))) for _ in range(200)]
    return pairs


PROGRAM = """#include <stdint.h>
#include <stdio.h>

static const uint32_t floats[][2] = {
%(floats)s
};
static const uint32_t integers[][2] = {
%(integers)s
};

typedef union { float value; uint32_t bits; } Single;

static void print_float(float x)
{
    Single s;
    s.value = x;
    printf(" %%08lx", (unsigned long)s.bits);
}

static void print_64(uint64_t x)
{
    printf(" %%08lx%%08lx", (unsigned long)(x >> 32), (unsigned long)(x & 0xffffffffu));
}

int main(void)
{
    size_t i;
    for (i = 0; i < sizeof floats / sizeof floats[0]; ++i) {
        volatile Single a, b;
        a.bits = floats[i][0];
        b.bits = floats[i][1];
        printf("f");
        print_float(a.value + b.value);
        print_float(a.value - b.value);
        print_float(a.value * b.value);
        printf("\\n");
    }
    for (i = 0; i < sizeof integers / sizeof integers[0]; ++i) {
        volatile uint32_t a = integers[i][0], b = integers[i][1];
        volatile int64_t wide_a = (int64_t)(((uint64_t)a << 32) | b), wide_b = (int64_t)(((uint64_t)b << 32) | a);
        printf("i");
        print_float((float)(int32_t)a);
        print_64((uint64_t)a * b);
        print_64((uint64_t)(wide_a * wide_b));
        if (b != 0) {
            printf(" %%08lx %%08lx", (unsigned long)(a / b), (unsigned long)(a %% b));
            if (!(a == 0x80000000u && b == 0xffffffffu)) {
                printf(" %%08lx", (unsigned long)(uint32_t)((int32_t)a / (int32_t)b));
            }
            print_64(((uint64_t)a << 32 | b) / b);
            print_64(((uint64_t)a << 32 | b) %% b);
            print_64((uint64_t)(wide_a / (int32_t)b));
            print_64((uint64_t)(wide_a %% (int32_t)b));
            print_64((uint64_t)(wide_a / wide_b));
            print_64((uint64_t)(wide_a %% wide_b));
        }
        printf("\\n");
    }
    return 0;
}
"""


def expected_float_line(a: int, b: int) -> list:
    x, y = np.array([a, b], dtype=np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        results = [np.float32(x + y), np.float32(x - y), np.float32(x * y)]
    return ["nan" if np.isnan(r) else f"{int(np.array(r).view(np.uint32)):08x}" for r in results]


def expected_integer_line(a: int, b: int) -> list:
    wide_a, wide_b = (a << 32) | b, (b << 32) | a
    converted = np.array([a], dtype=np.uint32).view(np.int32).astype(np.float32).view(np.uint32)[0]
    words = [f"{converted:08x}", f"{a * b:016x}", f"{wide_a * wide_b & MASK64:016x}"]
    if b:
        words += [f"{a // b:08x}", f"{a % b:08x}"]
        signed_a, signed_b = a - (a >> 31 << 32), b - (b >> 31 << 32)
        if (a, b) != (0x80000000, 0xffffffff):
            quotient = abs(signed_a) // abs(signed_b) * (1 if (signed_a < 0) == (signed_b < 0) else -1)
            words.append(f"{quotient & MASK32:08x}")
        words += [f"{wide_a // b:016x}", f"{wide_a % b:016x}"]
        signed_wide_a, signed_wide_b = wide_a - (wide_a >> 63 << 64), wide_b - (wide_b >> 63 << 64)
        for divisor in (signed_b, signed_wide_b):
            quotient, rest = truncated_division(signed_wide_a, divisor)
            words += [f"{quotient & MASK64:016x}", f"{rest & MASK64:016x}"]
    return words


def truncated_division(n: int, d: int) -> tuple[int, int]:
    """C's signed division: the quotient truncated toward zero, the remainder of the dividend's sign."""
    quotient = abs(n) // abs(d) * (1 if (n < 0) == (d < 0) else -1)
    return quotient, n - quotient * d


def run_on_the_core(tmp_path, source: str) -> subprocess.CompletedProcess:
    """Build `source` with the target's flags and run-time (as the generated Makefile does) and run it."""
    target = require_target("xtensa-lx106")
    (tmp_path / "test.c").write_text(source)
    built = subprocess.run([target.cc, *target.cflags.split(), *target.ldflags.split(), "-o", "test.elf", "test.c",
                            *write_runtime(tmp_path, target)], cwd=tmp_path, capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    return subprocess.run(target.run_command(str(tmp_path / "test.elf"), "", ""), capture_output=True, text=True,
                          timeout=120)


def test_the_arithmetic_routines_match_python_and_numpy(tmp_path):
    rng = np.random.default_rng(8266)
    floats, integers = float_cases(rng), integer_cases(rng)
    source = PROGRAM % {"floats": ",\n".join(f"    {{{a:#x}u, {b:#x}u}}" for a, b in floats),
                        "integers": ",\n".join(f"    {{{a:#x}u, {b:#x}u}}" for a, b in integers)}
    done = run_on_the_core(tmp_path, source)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(floats) + len(integers)
    nan = {f"{sign | 0x7f800000 | fraction:08x}" for sign in (0, 1 << 31) for fraction in (0x400000,)}
    for (a, b), line in zip(floats, lines):
        got = ["nan" if word in nan else word for word in line.split()[1:]]
        assert line[0] == "f" and got == expected_float_line(int(a), int(b)), (hex(a), hex(b), line)
    for (a, b), line in zip(integers, lines[len(floats):]):
        assert line[0] == "i" and line.split()[1:] == expected_integer_line(a, b), (hex(a), hex(b), line)


def test_a_fault_ends_the_run_with_128_plus_its_cause(tmp_path):
    """An illegal instruction (EXCCAUSE 0) reaches the exception vectors, which exit with 128 + 0."""
    done = run_on_the_core(tmp_path, '#include <stdio.h>\nint main(void) { puts("before"); '
                                     '__asm__ volatile ("ill"); puts("after"); return 0; }\n')
    assert (done.returncode, done.stdout) == (128, "before\n")


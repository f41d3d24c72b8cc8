/* Measures the stack that each C library and libgcc routine the generated code may call takes,
   on a target, by painting: tests/targets/test_library_stack.py builds it with the target's
   compiler and flags and runs it under QEMU. Each probe is one operation whose code calls such a
   routine (which one depends on the target: a double multiply is __aeabi_dmul on a Cortex-M4F,
   __muldf3 on RV32, an instruction on a Cortex-M7); it runs on every pair of a set of edge-case
   values (zeros, subnormals, the largest finite values, infinities, NaN, expf's overflow and
   underflow thresholds) and prints "probe NAME BYTES", the most stack it used, its own frame
   included. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PAINT 0xa5
#define WINDOW 2048 /* bytes painted below main's frame: a probe that reaches further prints WINDOW */
#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* The stack pointer itself: a probe called from the reading function uses the stack below it. */
#if defined(__arm__)
#define READ_STACK_POINTER(sp) __asm__ volatile("mov %0, sp" : "=r"(sp))
#elif defined(__riscv)
#define READ_STACK_POINTER(sp) __asm__ volatile("mv %0, sp" : "=r"(sp))
#else
#error "library_probes.c reads the stack pointer of Arm and RISC-V only"
#endif

static volatile double dx, dy, dr;
static volatile float fx, fy, fr;
static volatile int ix, iy, ir;
static volatile int64_t lx, ly, lr;
static unsigned char buffer[512];

#define PROBE(name, body) \
    static __attribute__((noinline)) void probe_##name(void) { body; }

PROBE(dadd, dr = dx + dy)
PROBE(dsub, dr = dx - dy)
PROBE(dmul, dr = dx * dy)
PROBE(ddiv, dr = dx / dy)
PROBE(dcmpeq, ir = dx == dy)
PROBE(dcmpne, ir = dx != dy)
PROBE(dcmplt, ir = dx < dy)
PROBE(dcmpgt, ir = dx > dy)
PROBE(dcmpge, ir = dx >= dy)
PROBE(d2i, ir = (int)dx)
PROBE(f2d, dr = fx)
PROBE(fadd, fr = fx + fy)
PROBE(fsub, fr = fx - fy)
PROBE(fmul, fr = fx * fy)
PROBE(fdiv, fr = fx / fy)
PROBE(fcmplt, ir = fx < fy)
PROBE(fcmpgt, ir = fx > fy)
PROBE(fcmpne, ir = fx != fy)
PROBE(fcmpge, ir = fx >= fy)
PROBE(f2i, ir = (int)fx)
PROBE(i2f, fr = (float)ix)
PROBE(floor, dr = floor(dx))
PROBE(roundf, fr = roundf(fx))
PROBE(expf, fr = expf(fx))
PROBE(tanhf, fr = tanhf(fx))
PROBE(fmod, dr = fmod(dx, dy))
PROBE(d2l, lr = (int64_t)dx)
PROBE(f2l, lr = (int64_t)fx)  /* softmax_wide.c: LiteRT's int16 softmax rounds its float into an int64 */
PROBE(i2d, dr = (double)ix)
PROBE(ldiv, lr = lx / ly)
PROBE(lmul, lr = (int64_t)((uint64_t)lx * (uint64_t)ly))  /* __aeabi_lmul on Armv6-M (unsigned: wraps) */
PROBE(idiv, ir = ix / iy)  /* __aeabi_idiv where the core has no divide (Armv6-M) */
PROBE(imod, ir = ix % iy)
PROBE(lmod, lr = lx % ly)
PROBE(memcpy, memcpy(buffer, buffer + 256, (size_t)(ix & 255)))
PROBE(memmove, memmove(buffer + (ix & 7), buffer, (size_t)(ix & 255)))
PROBE(memset, memset(buffer + (ix & 7), ix, (size_t)(ix & 255)))  /* lstm.c's states */

static const struct {
    const char *name;
    void (*run)(void);
} probes[] = {
    {"dadd", probe_dadd}, {"dsub", probe_dsub}, {"dmul", probe_dmul}, {"ddiv", probe_ddiv},
    {"dcmpeq", probe_dcmpeq}, {"dcmpne", probe_dcmpne}, {"dcmplt", probe_dcmplt}, {"dcmpgt", probe_dcmpgt},
    {"dcmpge", probe_dcmpge}, {"d2i", probe_d2i}, {"f2d", probe_f2d}, {"fadd", probe_fadd},
    {"fsub", probe_fsub}, {"fmul", probe_fmul}, {"fdiv", probe_fdiv}, {"fcmplt", probe_fcmplt},
    {"fcmpgt", probe_fcmpgt}, {"fcmpne", probe_fcmpne}, {"fcmpge", probe_fcmpge}, {"f2i", probe_f2i},
    {"i2f", probe_i2f}, {"floor", probe_floor}, {"roundf", probe_roundf}, {"expf", probe_expf},
    {"tanhf", probe_tanhf}, {"fmod", probe_fmod},
    {"d2l", probe_d2l}, {"f2l", probe_f2l}, {"i2d", probe_i2d}, {"ldiv", probe_ldiv}, {"lmod", probe_lmod},
    {"lmul", probe_lmul}, {"idiv", probe_idiv}, {"imod", probe_imod}, {"memcpy", probe_memcpy},
    {"memmove", probe_memmove}, {"memset", probe_memset},
};

static const double doubles[] = {0.0, -0.0, 1.5, -2.75, 0.49999999999999994, 1e-310, 2.2250738585072014e-308,
                                 1e300, -1e300, 2147483648.0, -2147483649.0, 88.8, -104.0, HUGE_VAL, -HUGE_VAL, NAN};
static const float floats[] = {0.0f, -0.0f, 1.5f, -2.5f, 0.49999997f, 1e-40f, 1.17549435e-38f, 3.0e38f, -3.0e38f,
                               2147483648.0f, 88.72f, 88.73f, -103.9f, -104.0f, -87.5f, HUGE_VALF, NAN};
static const int ints[] = {0, 1, -1, 255, 16777217, INT32_MAX, INT32_MIN};

/* The most stack probe k took on any pair of values, its frame included: the window below this
   function's stack pointer is painted before each call. */
static __attribute__((noinline)) unsigned long measure(unsigned k)
{
    unsigned long most = 0;
    uintptr_t top;
    size_t i, j;
    READ_STACK_POINTER(top);
    for (i = 0; i < COUNT(doubles) + COUNT(floats); ++i) {
        for (j = 0; j < COUNT(doubles); ++j) {
            uintptr_t at;
            dx = doubles[i % COUNT(doubles)];
            dy = doubles[j];
            fx = floats[i % COUNT(floats)];
            fy = floats[j % COUNT(floats)];
            ix = ints[(i + j) % COUNT(ints)];
            lx = (int64_t)ints[i % COUNT(ints)] * ints[j % COUNT(ints)] - ints[(i + j) % COUNT(ints)];
            ly = (int64_t)ints[(i + 2 * j) % COUNT(ints)] | 1; /* never 0 */
            iy = (ints[(i + 2 * j) % COUNT(ints)] & 0xffff) | 1; /* positive: never 0, never INT32_MIN / -1 */
            for (at = top - WINDOW; at < top; ++at) {
                *(volatile unsigned char *)at = PAINT;
            }
            probes[k].run();
            for (at = top - WINDOW; at < top && *(volatile unsigned char *)at == PAINT; ++at) {
            }
            if (top - at > most) {
                most = top - at;
            }
        }
    }
    return most;
}

int main(void)
{
    unsigned k;
    for (k = 0; k < COUNT(probes); ++k) {
        printf("probe %s %lu\n", probes[k].name, measure(k));
    }
    return 0;
}

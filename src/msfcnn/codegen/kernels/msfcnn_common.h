/*
 * msfcnn kernel library: the operators a generated network calls, in portable C99. This header
 * holds what every kernel shares (views, copies, the Arm DSP helpers, the element-wise region
 * loop); each kernel source <op>.c has its own header <op>.h with its params struct and kernels.
 *
 * Numerics. The int8 kernels are bit-exact with msfcnn's numpy reference kernels (the
 * `reference` methods in src/msfcnn/ops/), which reproduce the TFLite interpreter's integer
 * arithmetic as it runs on x86: ruy's output stage for CONV_2D and FULLY_CONNECTED, TFLite's own
 * MultiplyByQuantizedMultiplier for the element-wise kernels, and the special cases of
 * AVERAGE_POOL_2D, MEAN and SOFTMAX. The float32 kernels follow the numpy float kernels up to
 * float rounding (summation order). Every multiplier, shift, offset, clamp and table is computed
 * in Python (each op's `c_params` / `c_consts`, with the same helpers as the numpy kernels): the C
 * side only applies them, so the two cannot drift apart.
 *
 * Build: strict C99, no allocation; uses only <stdint.h>, <stddef.h>, <string.h> and <math.h>
 * (roundf, floor; exp and tanh are float_math.h's own). Float code assumes IEEE single
 * precision evaluated as such (FLT_EVAL_METHOD 0) and no contraction of a * b - c into a fused
 * multiply-add (it matters for the bit-exact edge DEQUANTIZE): GCC only contracts under -ffp-contract=fast, which -std=c99
 * does not select; clang contracts by default, so give it -ffp-contract=off. The integer code
 * relies on nothing implementation-defined (no shift of a negative value) and never overflows for
 * operands a real layer produces. It builds without a warning under -Wall -Wextra -Wconversion
 * -Wsign-conversion -Wcast-align -Wshadow -Wundef -Wpedantic (GCC and clang). A byte pointer into
 * a float tensor is cast through (void *): the layout keeps float tensors 4-byte aligned, which
 * -Wcast-align cannot know, and the cast compiles to nothing.
 *
 * Arm cores with the DSP extension (Cortex-M4, M7, M33, M55: __ARM_FEATURE_DSP and _SIMD32) get
 * their own inner loops for CONV_2D and DEPTHWISE_CONV_2D (MSF_ARM_DSP below): four int8 values a
 * word load, sign-extended in pairs by SXTB16 and multiplied-accumulated two at a time by SMLAD,
 * through the ACLE intrinsics of <arm_acle.h>. Cores with Helium (M55, M85: __ARM_FEATURE_MVE)
 * run their own vector loops instead for CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and ADD
 * (MSF_ARM_MVE, <arm_mve.h>). They compute the same integer sums as the portable loops, which
 * every other target runs and which stay the reference; define MSF_PORTABLE to build the portable
 * loops on such a core too.
 *
 * Tensors. A feature map is (H, W, C), channels innermost. Kernels reach it through an
 * `msf_view`, which maps a logical position (row r, column c, channel ch) of the whole tensor to
 * its storage; the same kernel thereby reads and writes whole tensors, ring buffers over rows
 * (linebuffer scheme), ring buffers over columns of a band of rows (hcache scheme) and patch
 * buffers (recompute scheme). A vector (C,) is a 1 x 1 x C map.
 *
 * Regions. Spatial and element-wise kernels compute the output rows [r0, r1) x columns [c0, c1)
 * (all channels) of the op's full output, in the output's logical coordinates. Window kernels
 * read the input positions y = r * stride_h - pad_top + i, x = c * stride_w - pad_left + j; a
 * position outside [0, in_h) x [0, in_w) is padding and is never read, so no padded copy ever
 * exists. Only positions inside the input and needed by the region are read through the view.
 */
#ifndef MSFCNN_COMMON_H
#define MSFCNN_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The names of the kernel headers' external symbols (msf_*): msfcnn compile --prefix NAME writes
   a msfcnn_prefix.h that renames each to NAME_msf_*, so that networks compiled with different
   prefixes link into one program; this one, the default, renames nothing. */
#include "msfcnn_prefix.h"

/* The kernel headers' declarations have C linkage in C++ too. */
#ifdef __cplusplus
#define MSF_BEGIN_DECLS extern "C" {
#define MSF_END_DECLS }
#else
#define MSF_BEGIN_DECLS
#define MSF_END_DECLS
#endif

/* Parameter structs: one per op, shared by its _s8 and _f32 kernels. The int8 kernel reads the
   integer fields and `weights` / `bias`; the float kernel reads `weights_f32` / `bias_f32` and
   `activation`. The op's Python `c_params` fills them; unused fields stay zero. `bias` /
   `bias_f32` may be NULL (no bias). */

MSF_BEGIN_DECLS

/* ---------------------------------------------------------------------------------------------
 * Views
 * ------------------------------------------------------------------------------------------- */

typedef struct {
    void *base;            /* int8_t* (int8 graphs) or float* (float32 graphs) */
    int32_t row_stride;    /* elements between consecutive stored rows */
    int32_t col_stride;    /* elements between consecutive stored columns (usually = channels) */
    int32_t row_origin;    /* logical row held in stored row 0 (band / patch buffers; 0 otherwise) */
    int32_t col_origin;    /* logical column held in stored column 0 */
    int32_t row_ring;      /* > 0: logical row r is stored at row (r - row_origin) % row_ring; 0: no ring */
    int32_t col_ring;      /* same for columns */
} msf_view;
/* element (r, c, ch): base + stored_row*row_stride + stored_col*col_stride + ch, with
   stored_row = row_ring ? (r - row_origin) % row_ring : r - row_origin (same for columns).
   (r - row_origin) and (c - col_origin) are never negative for the positions a kernel touches. */

/* int32 accumulators of int8 networks live in the byte arena at any offset: they are read and
   written through memcpy, which compilers turn into plain loads and stores where the core allows
   unaligned access, and into byte accesses where it does not. */
static inline int32_t msf_load_i32(const void *base, int32_t i)
{
    int32_t value;
    memcpy(&value, (const char *)base + 4 * (ptrdiff_t)i, sizeof value);
    return value;
}

static inline void msf_store_i32(void *base, int32_t i, int32_t value)
{
    memcpy((char *)base + 4 * (ptrdiff_t)i, &value, sizeof value);
}

/* Four int8 values as one word, from any address: one LDR where the core allows unaligned access
   (Cortex-M3 and later, unless built with -mno-unaligned-access). */
static inline uint32_t msf_read_s8x4(const int8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Hides v's value from the optimiser. A loop that only copies or fills is otherwise turned into a
   call of memcpy, memmove or memset; the kernels copy a pixel's channels or a run of a window, a
   few bytes, for which the call costs more than the copy, once per pixel or run. */
#if defined(__GNUC__)
#define MSF_OPAQUE(v) __asm__("" : "+r"(v))
#else
#define MSF_OPAQUE(v) ((void)0)
#endif

/* MSF_NOINLINE: a loop kept out of its caller, so that the register allocator gives it the whole
   register file (the caller's own values are then spilled once, not shuffled around every
   iteration). MSF_ALWAYS_INLINE: a function written once and compiled into each caller, which
   passes it constants (a flag selecting one form of a loop) that fold away there. */
#if defined(__GNUC__)
#define MSF_NOINLINE __attribute__((noinline))
#define MSF_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define MSF_NOINLINE
#define MSF_ALWAYS_INLINE inline
#endif

/* Keeps a local in memory where the optimiser would spread it over registers: for values read once
   a pixel beside a loop that needs every register at every channel (an empty asm statement is
   given the local's address; the compiler must then assume it reads the local there). */
#if defined(__GNUC__)
#define MSF_IN_MEMORY(x) __asm__("" : : "r"(&(x)))
#else
#define MSF_IN_MEMORY(x) ((void)&(x))
#endif

/* Cores whose word loads and stores take any address (Arm's with unaligned access, x86): the int8
   copies move a word at a time there, and a byte at a time elsewhere (on RV32 an unaligned word is
   assembled from four byte loads, which is slower than copying the bytes). */
#if defined(__ARM_FEATURE_UNALIGNED) || defined(__x86_64__) || defined(__i386__)
#define MSF_UNALIGNED_WORDS 1
#endif

/* n values from src to dst, which do not overlap (or are the same): copies of a pixel's channels,
   with no library call. */
static inline void msf_copy_s8(int8_t *dst, const int8_t *src, int32_t n)
{
    int32_t i = 0;
#if defined(MSF_UNALIGNED_WORDS)
    for (; i + 4 <= n; i += 4) {
        uint32_t v = msf_read_s8x4(src + i);
        MSF_OPAQUE(v);
        memcpy(dst + i, &v, sizeof v);
    }
#endif
    for (; i < n; ++i) {
        int8_t v = src[i];
        MSF_OPAQUE(v);
        dst[i] = v;
    }
}

static inline void msf_copy_f32(float *dst, const float *src, int32_t n)
{
    int32_t i;
    for (i = 0; i < n; ++i) {
        float v = src[i];
        MSF_OPAQUE(v);
        dst[i] = v;
    }
}

/* n copies of value at dst, likewise. */
static inline void msf_fill_s8(int8_t *dst, int8_t value, int32_t n)
{
    int32_t i = 0;
#if defined(MSF_UNALIGNED_WORDS)
    uint32_t word = (uint32_t)(uint8_t)value * 0x01010101u;
    for (; i + 4 <= n; i += 4) {
        MSF_OPAQUE(word);
        memcpy(dst + i, &word, sizeof word);
    }
#endif
    for (; i < n; ++i) {
        MSF_OPAQUE(value);
        dst[i] = value;
    }
}

static inline void msf_fill_f32(float *dst, float value, int32_t n)
{
    int32_t i;
    for (i = 0; i < n; ++i) {
        MSF_OPAQUE(value);
        dst[i] = value;
    }
}

/* Armv6-M (Cortex-M0, M0+, M1): no 32 x 32 -> 64-bit multiply (a 64-bit product is a call of
   libgcc's __aeabi_lmul, about 45 instructions), no DSP extension, no saturation, and loads with
   a register offset only for signed bytes. The kernels' output stage and their hottest inner
   loops get Armv6-M forms (MSF_ARMV6M) that compute the same integers; MSF_PORTABLE leaves them
   out too. */
#if defined(__ARM_ARCH_6M__) && !defined(MSF_PORTABLE)
#define MSF_ARMV6M 1
#endif

/* Four int32 accumulators, passed by value between the DSP and Armv6-M loops' inline helpers so that
   they stay in registers: four output channels of one pixel, or two channels of two pixels. */
typedef struct {
    int32_t s0, s1, s2, s3;
} msf_sums4;

/* start[0, 4), or zeros when start is NULL (no bias). */
static inline msf_sums4 msf_sums4_start(const int32_t *start)
{
    msf_sums4 s = { 0, 0, 0, 0 };
    if (start != NULL) {
        s.s0 = start[0];
        s.s1 = start[1];
        s.s2 = start[2];
        s.s3 = start[3];
    }
    return s;
}

/* ---------------------------------------------------------------------------------------------
 * Arm DSP extension
 * ------------------------------------------------------------------------------------------- */

#if defined(__ARM_FEATURE_DSP) && defined(__ARM_FEATURE_SIMD32) && !defined(MSF_PORTABLE)
#define MSF_ARM_DSP 1
#include <arm_acle.h>

/* A 16-bit value in both halves of a word (an int16x2_t). */
static inline int16x2_t msf_dup16(int32_t v)
{
    return (int16x2_t)(((uint32_t)v & 0xffffu) * 0x10001u);
}

/* Bytes 1 and 3 of v sign-extended to 16 bits (plus a's halves): SXTB16 / SXTAB16 with ROR #8.
   ACLE has no rotated form and GCC does not fold a rotate into these instructions, which would
   cost one more instruction per word of four values; so GCC-compatible compilers get the
   instruction itself, others (or any, with MSF_ACLE_ONLY) the intrinsic on the rotated word (the
   same result). */
#if defined(__GNUC__) && !defined(MSF_ACLE_ONLY)
static inline int16x2_t msf_sxtb16_odd(uint32_t v)
{
    int16x2_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
    return r;
}

static inline int16x2_t msf_sxtab16_odd(int16x2_t a, uint32_t v)
{
    int16x2_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(a), "r"(v));
    return r;
}
#else
static inline int16x2_t msf_sxtb16_odd(uint32_t v)
{
    return __sxtb16((int8x4_t)((v >> 8) | (v << 24)));
}

static inline int16x2_t msf_sxtab16_odd(int16x2_t a, uint32_t v)
{
    return __sxtab16(a, (int8x4_t)((v >> 8) | (v << 24)));
}
#endif
#endif /* MSF_ARM_DSP */

/* No load or store moves across this point (it emits nothing): a loop keeps its loads where they
   are written when hoisting them would run out of registers. */
#if defined(__GNUC__)
#define MSF_MEMORY_ORDER() __asm__ volatile("" ::: "memory")
#else
#define MSF_MEMORY_ORDER() ((void)0)
#endif

/* ---------------------------------------------------------------------------------------------
 * Arm M-profile Vector Extension (Helium: Cortex-M55, M85)
 * ------------------------------------------------------------------------------------------- */

/* Kernels with a Helium path (MSF_ARM_MVE) run it instead of their DSP loops: 16 int8 values a
   vector, tail-predicated (VCTP, zeroing loads), through the ACLE intrinsics of <arm_mve.h>. They
   compute the same integer sums as the portable loops; MSF_PORTABLE turns them off too. The other
   kernels keep their DSP loops on these cores. */
#if defined(__ARM_FEATURE_MVE) && !defined(MSF_PORTABLE)
#define MSF_ARM_MVE 1
#include <arm_mve.h>
#endif

static inline int32_t msf_stored_row(const msf_view *v, int32_t r)
{
    int32_t s = r - v->row_origin;
    return v->row_ring > 0 ? s % v->row_ring : s;
}

static inline int32_t msf_stored_col(const msf_view *v, int32_t c)
{
    int32_t s = c - v->col_origin;
    return v->col_ring > 0 ? s % v->col_ring : s;
}

/* Offset in elements of (r, c, ch) from the view's base. */
static inline ptrdiff_t msf_offset(const msf_view *v, int32_t r, int32_t c, int32_t ch)
{
    return (ptrdiff_t)msf_stored_row(v, r) * v->row_stride
         + (ptrdiff_t)msf_stored_col(v, c) * v->col_stride + ch;
}

static inline int8_t *msf_at_s8(const msf_view *v, int32_t r, int32_t c, int32_t ch)
{
    return (int8_t *)v->base + msf_offset(v, r, c, ch);
}

static inline float *msf_at_f32(const msf_view *v, int32_t r, int32_t c, int32_t ch)
{
    return (float *)v->base + msf_offset(v, r, c, ch);
}

/* The same for int16 maps, as a macro: the 16x8 kernels address them with this very expression,
   which compilers schedule otherwise than an inlined call (the object code stays as calibrated). */
#define msf_at_s16(v, r, c, ch) ((int16_t *)(v)->base + msf_offset(v, r, c, ch))

/* The view with its strides in bytes, for values of `element` bytes: msf_offset then counts bytes,
   so that one loop addresses int8 and float maps alike, with no multiplication per pixel. */
static inline msf_view msf_bytes_view(const msf_view *v, int32_t element)
{
    msf_view bytes = *v;
    bytes.row_stride *= element;
    bytes.col_stride *= element;
    return bytes;
}

/* ---------------------------------------------------------------------------------------------
 * Region kernels. A kernel computes the output rows [r0, r1) x columns [c0, c1) (all channels) of
 * its op from one input (MSF_REGION_ARGS) or two (MSF_REGION2_ARGS), given its params struct p:
 *     void msf_activation_s8 MSF_REGION_ARGS(msf_activation_params);
 * Element-wise kernels, whose region is the same in the input(s) and the output, share one loop
 * over it, a macro (so that it compiles into each kernel as if written there) used in the body of
 * a kernel so defined (it reads the kernel's in or in1, out, r0, r1, c0 and c1):
 *     MSF_EACH_PIXEL(IN, OUT, statements)   per pixel (r, c): src at its channel 0 in `in`, dst at
 *                                           its channel 0 in `out` (IN, OUT: s8, s16 or f32)
 *     MSF_EACH_VALUE(IN, OUT, n, statements)   the same per value: channel ch of n, src[ch], dst[ch]
 *     MSF_EACH_VALUE2(T, second, n, statements)   two inputs: a at the pixel in `in1`, b = second
 *                                                  (an expression of r and c), dst in `out`
 * ------------------------------------------------------------------------------------------- */

#define MSF_REGION_ARGS(params) \
    (const params *p, const msf_view *in, msf_view *out, int32_t r0, int32_t r1, int32_t c0, int32_t c1)
#define MSF_REGION2_ARGS(params) \
    (const params *p, const msf_view *in1, const msf_view *in2, msf_view *out, \
     int32_t r0, int32_t r1, int32_t c0, int32_t c1)

/* Defines the kernels msf_<op>_s8, _s16 and _f32 of an op that moves bytes and no values, whose
   loop static void msf_<op>(p, in, out, r0, r1, c0, c1, element bytes) serves every element type. */
#define MSF_BYTE_COPY_KERNELS(op)                                                                       \
    void msf_##op##_s8 MSF_REGION_ARGS(msf_##op##_params)                                               \
    { msf_##op(p, in, out, r0, r1, c0, c1, 1); }                                                        \
    void msf_##op##_s16 MSF_REGION_ARGS(msf_##op##_s16_params)                                          \
    { msf_##op(p, in, out, r0, r1, c0, c1, (int32_t)sizeof(int16_t)); }                                 \
    void msf_##op##_f32 MSF_REGION_ARGS(msf_##op##_params)                                              \
    { msf_##op(p, in, out, r0, r1, c0, c1, (int32_t)sizeof(float)); }

/* The element type of a kernel suffix (msf_at_s8 addresses an MSF_TYPE_s8). */
#define MSF_TYPE_s8 int8_t
#define MSF_TYPE_s16 int16_t
#define MSF_TYPE_f32 float

#define MSF_EACH_PIXEL(IN, OUT, ...)                                          \
    do {                                                                      \
        int32_t r, c;                                                         \
        for (r = r0; r < r1; ++r) {                                           \
            for (c = c0; c < c1; ++c) {                                       \
                const MSF_TYPE_##IN *src = msf_at_##IN(in, r, c, 0);          \
                MSF_TYPE_##OUT *dst = msf_at_##OUT(out, r, c, 0);             \
                __VA_ARGS__                                                   \
            }                                                                 \
        }                                                                     \
    } while (0)

#define MSF_EACH_VALUE(IN, OUT, n, ...) \
    MSF_EACH_PIXEL(IN, OUT, int32_t ch; for (ch = 0; ch < (n); ++ch) { __VA_ARGS__ })

#define MSF_EACH_VALUE2(T, second, n, ...)                                    \
    do {                                                                      \
        int32_t r, c, ch;                                                     \
        for (r = r0; r < r1; ++r) {                                           \
            for (c = c0; c < c1; ++c) {                                       \
                const MSF_TYPE_##T *a = msf_at_##T(in1, r, c, 0);             \
                const MSF_TYPE_##T *b = (second);                             \
                MSF_TYPE_##T *dst = msf_at_##T(out, r, c, 0);                 \
                for (ch = 0; ch < (n); ++ch) {                                \
                    __VA_ARGS__                                               \
                }                                                             \
            }                                                                 \
        }                                                                     \
    } while (0)

MSF_END_DECLS

#endif /* MSFCNN_COMMON_H */

/*
 * msfcnn kernel library: the operators a generated network calls, in portable C99.
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
 * (expf, roundf, floor). Float code assumes IEEE single precision evaluated as such
 * (FLT_EVAL_METHOD 0) and no contraction of a * b - c into a fused multiply-add (it matters for
 * the bit-exact edge DEQUANTIZE): GCC only contracts under -ffp-contract=fast, which -std=c99
 * does not select; clang contracts by default, so give it -ffp-contract=off. The integer code
 * relies on nothing implementation-defined (no shift of a negative value) and never overflows for
 * operands a real layer produces.
 *
 * Arm cores with the DSP extension (Cortex-M4, M7, M33, M55: __ARM_FEATURE_DSP and _SIMD32) get
 * their own inner loops for CONV_2D and DEPTHWISE_CONV_2D (MSF_ARM_DSP below): four int8 values a
 * word load, sign-extended in pairs by SXTB16 and multiplied-accumulated two at a time by SMLAD,
 * through the ACLE intrinsics of <arm_acle.h>. They compute the same integer sums as the portable
 * loops, which every other target runs and which stay the reference; define MSF_PORTABLE to build
 * the portable loops on such a core too.
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
#ifndef MSFCNN_KERNELS_H
#define MSFCNN_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The names of the external symbols below (msf_*): msfcnn compile --prefix NAME writes a
   msfcnn_prefix.h that renames each to NAME_msf_*, so that networks compiled with different
   prefixes link into one program; this one, the default, renames nothing. */
#include "msfcnn_prefix.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* ---------------------------------------------------------------------------------------------
 * Arm DSP extension
 * ------------------------------------------------------------------------------------------- */

#if defined(__ARM_FEATURE_DSP) && defined(__ARM_FEATURE_SIMD32) && !defined(MSF_PORTABLE)
#define MSF_ARM_DSP 1
#include <arm_acle.h>

/* Four int32 accumulators, passed by value between the DSP loops' inline helpers so that they stay
   in registers: four output channels of one pixel, or two channels of two pixels. */
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
 * Windows. Every window kernel (CONV_2D, DEPTHWISE_CONV_2D, MAX_POOL_2D, AVERAGE_POOL_2D, int8 and
 * float32) runs one loop over its output region, msf_window (window.c); an op brings only what it
 * sums over a window and how it turns the sums into output values. The DSP extension's CONV_2D,
 * which works on pairs of pixels, and PAD walk the region with the same pixel iterator.
 * ------------------------------------------------------------------------------------------- */

/* A window op's geometry: output position (r, c) reads the input rows y0 + [0, kh) and columns
   x0 + [0, kw), y0 = r * stride_h - pad_top and x0 = c * stride_w - pad_left; positions outside
   [0, in_h) x [0, in_w) are padding. */
typedef struct {
    int32_t in_h, in_w;
    int32_t kh, kw, stride_h, stride_w, pad_top, pad_left;
} msf_window_shape;

/* The msf_window_shape of a conv, depthwise or pool params struct p, which hold its fields under
   the same names (an initializer). */
#define MSF_WINDOW_SHAPE(p) \
    { (p)->in_h, (p)->in_w, (p)->kh, (p)->kw, (p)->stride_h, (p)->stride_w, (p)->pad_top, (p)->pad_left }

/* An output pixel and its window: the taps (i, j), i in [i_lo, i_hi) and j in [j_lo, j_hi), lie
   inside the input; the others are padding, which no kernel reads. */
typedef struct {
    int32_t r, c;          /* output position */
    int32_t y0, x0;        /* input position of tap (0, 0) */
    int32_t i_lo, i_hi;    /* kernel rows inside the input */
    int32_t j_lo, j_hi;    /* kernel columns inside the input */
} msf_pixel;

/* The pixels of the output region [r0, r1) x [c0, c1), row by row:
       msf_pixels it;
       msf_pixel px;
       msf_pixels_start(&it, &shape, r0, r1, c0, c1);
       while (msf_pixels_next(&it, &px)) { ... px ... }
   A step adds the stride and clips the window's columns; its rows are clipped once per row. What
   a caller does not read of px (the clipping, for a 1x1 convolution without padding) the compiler
   drops where px is a local whose address it does not pass on. */
typedef struct {
    const msf_window_shape *shape;
    int32_t r1, c0, c1;
    int32_t r, c, y0, x0, i_lo, i_hi;  /* the last pixel, and its rows' clipping */
} msf_pixels;

/* The taps [*lo, *hi) of a window of k taps along one axis whose input positions start + tap lie
   inside [0, size). */
static inline void msf_tap_range(int32_t start, int32_t k, int32_t size, int32_t *lo, int32_t *hi)
{
    *lo = start < 0 ? -start : 0;
    *hi = size - start < k ? size - start : k;
}

static inline void msf_pixels_start(msf_pixels *it, const msf_window_shape *shape, int32_t r0, int32_t r1,
                                    int32_t c0, int32_t c1)
{
    it->shape = shape;
    it->r1 = c0 < c1 ? r1 : r0;  /* no columns, no pixels */
    it->c0 = c0;
    it->c1 = c1;
    it->r = r0 - 1;              /* the first step starts row r0 */
    it->c = c1;
    it->y0 = it->x0 = it->i_lo = it->i_hi = 0;
}

/* Moves to the next pixel and describes it in px; 0 when the region is done. */
static inline int msf_pixels_next(msf_pixels *it, msf_pixel *px)
{
    const msf_window_shape *s = it->shape;
    if (++it->c < it->c1) {
        it->x0 += s->stride_w;
    } else {
        if (++it->r >= it->r1) {
            return 0;
        }
        it->c = it->c0;
        it->y0 = it->r * s->stride_h - s->pad_top;
        msf_tap_range(it->y0, s->kh, s->in_h, &it->i_lo, &it->i_hi);
        it->x0 = it->c * s->stride_w - s->pad_left;
    }
    px->r = it->r;
    px->c = it->c;
    px->y0 = it->y0;
    px->x0 = it->x0;
    px->i_lo = it->i_lo;
    px->i_hi = it->i_hi;
    msf_tap_range(px->x0, s->kw, s->in_w, &px->j_lo, &px->j_hi);
    return 1;
}

/* Window kernels compute this many channels per pass over a window, with their int32 / float
   accumulators on the stack (4 * MSF_CHANNEL_BLOCK bytes): the address of each input pixel (ring
   arithmetic included) is then computed once per block of channels instead of once per channel,
   and the innermost loops walk contiguous memory. Any value >= 1 gives the same results. */
#ifndef MSF_CHANNEL_BLOCK
#define MSF_CHANNEL_BLOCK 16
#endif

/* An output pixel's window, cut into runs (window.c): stretches whose input values and weights
   are both contiguous. A pixel's runs are gathered into arrays of MSF_MAX_RUNS on the stack
   (12 bytes a run on a 32-bit core: 300 B, the int8 kernels' largest local, which matters on a
   16 KiB board). 25 holds a 5x5 depthwise window (a run per tap) and a convolution's runs (at most
   two per kernel row); a window with more, such as a 7x7 depthwise, is gathered again for each
   block of output channels, a batch at a time (about 1% more instructions on MCUNet's 7x7 layers).
   Any value >= 1 gives the same results. */
#ifndef MSF_MAX_RUNS
#define MSF_MAX_RUNS 25
#endif

typedef struct {
    const void *src[MSF_MAX_RUNS];    /* the run's first input value (channel 0): int8_t or float */
    int32_t weight[MSF_MAX_RUNS];     /* offset of its first weight from output channel 0's first */
    int32_t length[MSF_MAX_RUNS];     /* input values in the run */
    int32_t count;
} msf_runs;

/* A block's accumulators, as the op's element type wants them. */
typedef union {
    int32_t i32[MSF_CHANNEL_BLOCK];   /* int8 ops */
    float f32[MSF_CHANNEL_BLOCK];     /* float ops */
} msf_block;

/* The output stage of CONV_2D and DEPTHWISE_CONV_2D: int8 requantisation (see
   msf_requantize_block_s8), or the float bias and activation. */
typedef struct {
    const int64_t *multiplier;        /* [out_c] */
    const int32_t *right;             /* [out_c] */
    int32_t rounding, output_offset, act_min, act_max;
    const float *bias_f32;            /* may be NULL */
    int32_t activation;               /* MSF_ACT_* */
} msf_output_stage;

/* The msf_output_stage of a conv or depthwise params struct p (an initializer). */
#define MSF_OUTPUT_STAGE(p) \
    { (p)->multiplier, (p)->right, (p)->rounding, (p)->output_offset, (p)->act_min, (p)->act_max, \
      (p)->bias_f32, (p)->activation }

/* acc = start + the window's reduction over `runs` for output channels oc0 + k, k < n. start is
   NULL for a window's first batch, where the op starts from its own value (0, the least value);
   the block's int8 bias (msf_window_op.bias); or acc itself, for the later batches of a window
   gathered in several (integer sums are exact in any order, float sums keep the taps' order). */
typedef void (*msf_accumulate_fn)(const void *params, const msf_runs *runs, int32_t oc0, int32_t n,
                                  const int32_t *start, msf_block *acc);

/* The output values of channels oc0 + k, k < n, of pixel px from their complete acc; dst is the
   pixel's channel 0 in the output. */
typedef void (*msf_finish_fn)(const void *params, const msf_pixel *px, int32_t oc0, int32_t n,
                              const msf_block *acc, void *dst);

typedef struct {
    msf_window_shape shape;
    int32_t channels;            /* output channels */
    int32_t element;             /* bytes a value: sizeof(int8_t) or sizeof(float) */
    int32_t tap_values;          /* input values a tap reads (conv: in_c; depthwise: 1; pools: all) */
    int32_t tap_weights;         /* weights between consecutive taps (conv: in_c; depthwise: out_c) */
    int merge_taps;              /* a row's taps may form one run (conv: weights follow the inputs) */
    const int32_t *bias;         /* int8: the sums' start, or NULL */
    msf_accumulate_fn accumulate;
    const void *params;          /* the op's params struct, for its accumulate and finish */
    msf_finish_fn finish;        /* NULL: `stage` */
    const msf_output_stage *stage;
} msf_window_op;

void msf_window(const msf_window_op *op, const msf_view *in, msf_view *out,
                int32_t r0, int32_t r1, int32_t c0, int32_t c1);

/* ---------------------------------------------------------------------------------------------
 * Shared numerics (numerics.c), mirroring src/msfcnn/numerics.py
 * ------------------------------------------------------------------------------------------- */

/* Rounding schemes of MultiplyByQuantizedMultiplier (numerics.py DOUBLE / RUY / SINGLE). */
enum {
    MSF_ROUND_DOUBLE = 0,  /* TFLite's own: gemmlowp SaturatingRoundingDoublingHighMul, then
                              RoundingDivideByPOT (ties away from zero): depthwise, ADD, MEAN,
                              RELU, requantise */
    MSF_ROUND_RUY = 1,     /* ruy's x86 output stage (two roundings, ties up): CONV_2D,
                              FULLY_CONNECTED */
    MSF_ROUND_SINGLE = 2   /* TFLITE_SINGLE_ROUNDING: one rounding of the 64-bit product */
};

/* Fused activations of float graphs (numerics.float_activation). int8 kernels clamp to
   [act_min, act_max] instead, computed in Python by numerics.activation_range. */
enum { MSF_ACT_NONE = 0, MSF_ACT_RELU = 1, MSF_ACT_RELU6 = 2 };

/* The fixed-point helpers every int8 kernel calls per output value: static inline, so a kernel's
   inner loop pays no call for them. They compute in int64 without wrapping, as numerics.py does
   (results saturated to int32), and never shift a negative number (undefined in C99). */
#define MSF_INT32_MAX 2147483647
#define MSF_INT32_MIN (-MSF_INT32_MAX - 1)

/* floor(v / 2^n), i.e. an arithmetic right shift, without shifting a negative number. */
static inline int64_t asr64(int64_t v, int32_t n)
{
    return v >= 0 ? v >> n : ~(~v >> n);
}

static inline int32_t saturate32(int64_t v)
{
    if (v > MSF_INT32_MAX) {
        return MSF_INT32_MAX;
    }
    if (v < MSF_INT32_MIN) {
        return MSF_INT32_MIN;
    }
    return (int32_t)v;
}

/* SaturatingRoundingDoublingHighMul with a 64-bit first operand (numpy's x << left does not wrap):
   (a * b + nudge) / 2^31 truncated, the nudge making it round half away from zero. */
static inline int64_t srdhm64(int64_t a, int32_t b)
{
    int64_t ab, nudge;
    if (a == MSF_INT32_MIN && b == MSF_INT32_MIN) {
        return MSF_INT32_MAX;  /* the only overflow of the 32-bit original */
    }
    ab = a * b;
    nudge = ab >= 0 ? ((int64_t)1 << 30) : 1 - ((int64_t)1 << 30);
    return (ab + nudge) / ((int64_t)1 << 31);  /* C division truncates, as gemmlowp's */
}

/* RoundingDivideByPOT on 64 bits: floor shift, plus one when the remainder is above half (ties go
   away from zero: the threshold is one higher for negative x). */
static inline int64_t rdbpot64(int64_t x, int32_t exponent)
{
    int64_t mask = ((int64_t)1 << exponent) - 1;
    int64_t remainder = x & mask;  /* int64_t is two's complement by definition */
    int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return asr64(x, exponent) + (remainder > threshold ? 1 : 0);
}

static inline int32_t msf_saturating_rounding_doubling_high_mul(int32_t a, int32_t b)
{
    return saturate32(srdhm64(a, b));
}

static inline int32_t msf_rounding_divide_by_pot(int32_t x, int32_t exponent)
{
    return saturate32(rdbpot64(x, exponent));
}

static inline int32_t msf_mul_by_quantized_mult_double(int32_t x, int32_t multiplier, int32_t shift)
{
    int32_t left = shift > 0 ? shift : 0;
    int32_t right = shift > 0 ? 0 : -shift;
    int64_t scaled = (int64_t)x * ((int64_t)1 << left);
    return saturate32(rdbpot64(srdhm64(scaled, multiplier), right));
}

static inline int32_t msf_mul_by_quantized_mult_ruy(int32_t x, int32_t multiplier, int32_t shift)
{
    /* ruy's x86 kernels (AVX2 / AVX-512 output stage): left shift, the 64-bit product rounded
       half up to its high 32 bits, then a rounding right shift (half up) that saturates to
       2^(31 - right) when x + nudge would overflow int32. */
    int32_t left = shift > 0 ? shift : 0;
    int32_t right = shift > 0 ? 0 : -shift;
    int64_t scaled = (int64_t)x * ((int64_t)1 << left);
    int64_t high = asr64(scaled * multiplier + ((int64_t)1 << 30), 31);
    int64_t nudge = right > 0 ? ((int64_t)1 << (right - 1)) : 0;
    if (high > MSF_INT32_MAX - nudge) {
        return saturate32((int64_t)1 << (31 - right));
    }
    return saturate32(asr64(high + nudge, right));
}

static inline int32_t msf_mul_by_quantized_mult_single(int32_t x, int32_t multiplier, int32_t shift)
{
    /* TFLITE_SINGLE_ROUNDING: one 64-bit product, one round-half-up shift by 31 - shift. */
    int32_t total = 31 - shift;
    return saturate32(asr64((int64_t)x * multiplier + ((int64_t)1 << (total - 1)), total));
}

static inline int32_t msf_mul_by_quantized_mult(int32_t x, int32_t multiplier, int32_t shift, int32_t rounding)
{
    switch (rounding) {
    case MSF_ROUND_RUY:
        return msf_mul_by_quantized_mult_ruy(x, multiplier, shift);
    case MSF_ROUND_SINGLE:
        return msf_mul_by_quantized_mult_single(x, multiplier, shift);
    default:
        return msf_mul_by_quantized_mult_double(x, multiplier, shift);
    }
}

static inline int8_t msf_clamp_s8(int32_t x, int32_t zero_point, int32_t lo, int32_t hi)
{
    int64_t v = (int64_t)x + zero_point;
    if (v < lo) {
        v = lo;
    }
    if (v > hi) {
        v = hi;
    }
    return (int8_t)v;
}

/* The output stage of CONV_2D and DEPTHWISE_CONV_2D for n channels: dst[k] =
   msf_clamp_s8(msf_mul_by_quantized_mult(acc[k], mult, shift, rounding), zero_point, lo, hi),
   given each channel's (mult, shift) as the Python side's output_stage_consts prepares them:
   multiplier[k] = mult * 2^max(shift, 0) and right[k] = max(-shift, 0) in [0, 31] (for
   MSF_ROUND_SINGLE, multiplier[k] = mult and right[k] = 31 - shift). It runs once per output
   value, so in a thin layer (a 1x1 convolution of 8 channels, a 3x3 depthwise) it costs as much
   as the multiply-accumulates do. Hence that preparation, the rounding mode chosen once per block,
   and a shorter but equal computation, for multipliers in [0, 2^31) (as numerics.quantize_
   multiplier makes them), lo <= hi inside [-128, 127] and |zero_point| <= 128:
   - ruy's two roundings, floor((floor((p + 2^30) / 2^31) + half) / 2^right) with p = x * mult *
     2^left and half = 2^(right - 1) (0 for right = 0), are one: floor((p + 2^30 + half * 2^31) /
     2^(31 + right)), since floor(floor(a / m) / n) = floor(a / (m n)); the constant comes from a
     table by right;
   - gemmlowp's doubling high multiply, (p + nudge) / 2^31 truncated toward zero, equals
     floor((p + 2^30) / 2^31) for either sign of p (for p < 0 the nudge is 1 - 2^30); its rounding
     shift, ties away from zero, is floor((high + half - 1) / 2^right) when high < 0 (p < -2^30)
     and right > 0, else floor((high + half) / 2^right): one table entry less 2^31;
   - saturating to int32 is left out: a value beyond int32 is beyond [lo - zero_point,
     hi - zero_point] too, so it clamps to the same end; so is ruy's overflow case (with no left
     shift the high part is at most 2^31 and the shift gives the value that case returns; with a
     left shift, right = 0 and both saturate high), and gemmlowp's INT32_MIN x INT32_MIN case (a
     multiplier is never negative).
   The int64 arithmetic is exact for the accumulators a real layer produces, as in the general
   helpers (|p| < 2^62, and the constants are below 2^62). */
extern const int64_t msf_output_rounding[32];
extern const int64_t msf_output_rounding_negative[32];

static inline int8_t msf_clamp64_s8(int64_t v, int32_t lo, int32_t hi)
{
    return (int8_t)(v < lo ? lo : v > hi ? hi : v);
}

static inline void msf_requantize_block_s8(const int32_t *acc, int32_t n, const int64_t *multiplier,
                                           const int32_t *right, int32_t rounding, int32_t zero_point,
                                           int32_t lo, int32_t hi, int8_t *dst)
{
    int32_t k;
    switch (rounding) {
    case MSF_ROUND_RUY:
        for (k = 0; k < n; ++k) {
            const int64_t p = acc[k] * multiplier[k];
            dst[k] = msf_clamp64_s8(asr64(p + msf_output_rounding[right[k]], 31 + right[k]) + zero_point, lo, hi);
        }
        break;
    case MSF_ROUND_SINGLE:  /* one shift right by 31 - shift (>= 1), rounding half up */
        for (k = 0; k < n; ++k) {
            const int64_t half = (int64_t)1 << (right[k] - 1);
            dst[k] = msf_clamp64_s8(asr64(acc[k] * multiplier[k] + half, right[k]) + zero_point, lo, hi);
        }
        break;
    default:
        for (k = 0; k < n; ++k) {
            const int64_t p = acc[k] * multiplier[k];
            const int64_t r = p < -((int64_t)1 << 30) ? msf_output_rounding_negative[right[k]]
                                                       : msf_output_rounding[right[k]];
            dst[k] = msf_clamp64_s8(asr64(p + r, 31 + right[k]) + zero_point, lo, hi);
        }
        break;
    }
}

/* v / 2^n rounded down (n in [0, 31]), without shifting a negative number: compilers emit one
   arithmetic shift for it. */
static inline int32_t msf_asr32(int32_t v, int32_t n)
{
    return v >= 0 ? v >> n : ~(~v >> n);
}

/* 1 if msf_requantize_block_fast_s8 may replace msf_requantize_block_s8 for channels [0, n): ruy's
   or gemmlowp's rounding, and a right shift on every channel. Checked once per kernel call. */
static inline int msf_output_stage_is_fast(int32_t rounding, const int32_t *right, int32_t n)
{
    int32_t k;
    if (rounding == MSF_ROUND_SINGLE) {
        return 0;
    }
    for (k = 0; k < n; ++k) {
        if (right[k] < 1) {
            return 0;
        }
    }
    return 1;
}

/* v clamped to [lo, hi] as int8; full: [lo, hi] is the whole of int8 (no activation, or one that
   the output's quantisation already confines), a single SSAT on Arm's DSP extension. Callers pass
   full as a constant, so that each case compiles to its own loop. */
static inline int8_t msf_clamp_output(int32_t v, int32_t lo, int32_t hi, const int full)
{
#if defined(MSF_ARM_DSP) && defined(__ARM_FEATURE_SAT)
    if (full) {
        return (int8_t)__ssat(v, 8);
    }
#endif
    if (full) {
        lo = -128;
        hi = 127;
    }
    return (int8_t)(v < lo ? lo : v > hi ? hi : v);
}

/* msf_requantize_block_s8 for channels that all shift right (right[k] >= 1, the usual case: an
   output scale below the accumulator's), in 32-bit arithmetic but for one 32 x 32 -> 64-bit
   multiply-accumulate. With a right shift there is no left one, so multiplier[k] = mult < 2^31
   fits an int32, and
     floor((p + c) / 2^(31 + right)) = floor(floor((p + c) / 2^32) / 2^(right - 1)),
   (floor of a floor is one floor), where p = acc * mult and c the rounding constant of the general
   path: the 64-bit sum p + c is one SMLAL on Arm (two MULs and an add with carry on RISC-V), and
   only its high word is used, shifted right by right - 1 in 32 bits. The result is within
   (-2^31, 2^31) by a margin for every int32 accumulator, so adding the zero point and clamping
   stay in 32 bits. gemmlowp's constant (one 2^31 less when p < -2^30) is chosen by the sign of acc
   instead of p: for -2^30 <= p < 0 both constants give 0 when right >= 1. */
static inline void msf_requantize_fast_loop(const int32_t *acc, int32_t n, const int64_t *multiplier,
                                            const int32_t *right, int32_t rounding, int32_t zero_point, int32_t lo,
                                            int32_t hi, int8_t *dst, const int full)
{
    int32_t k;
    if (rounding == MSF_ROUND_RUY) {
        for (k = 0; k < n; ++k) {
            const int64_t p = (int64_t)acc[k] * (int32_t)multiplier[k];
            const int32_t high = (int32_t)asr64(p + msf_output_rounding[right[k]], 32);
            dst[k] = msf_clamp_output(msf_asr32(high, right[k] - 1) + zero_point, lo, hi, full);
        }
    } else {
        for (k = 0; k < n; ++k) {
            const int64_t *table = acc[k] < 0 ? msf_output_rounding_negative : msf_output_rounding;
            const int64_t p = (int64_t)acc[k] * (int32_t)multiplier[k];
            const int32_t high = (int32_t)asr64(p + table[right[k]], 32);
            dst[k] = msf_clamp_output(msf_asr32(high, right[k] - 1) + zero_point, lo, hi, full);
        }
    }
}

static inline void msf_requantize_block_fast_s8(const int32_t *acc, int32_t n, const int64_t *multiplier,
                                                const int32_t *right, int32_t rounding, int32_t zero_point,
                                                int32_t lo, int32_t hi, int8_t *dst)
{
    if (lo == -128 && hi == 127) {
        msf_requantize_fast_loop(acc, n, multiplier, right, rounding, zero_point, lo, hi, dst, 1);
    } else {
        msf_requantize_fast_loop(acc, n, multiplier, right, rounding, zero_point, lo, hi, dst, 0);
    }
}

/* msf_requantize_fast_loop with ruy's rounding for two pixels' accumulators of the same n
   channels, acc and acc2 into dst and dst2: each channel's multiplier, shift and rounding constant
   read once for both. */
static inline void msf_requantize_pair_loop(const int32_t *acc, const int32_t *acc2, int32_t n,
                                            const int64_t *multiplier, const int32_t *right, int32_t zero_point,
                                            int32_t lo, int32_t hi, int8_t *dst, int8_t *dst2, const int full)
{
    int32_t k;
    for (k = 0; k < n; ++k) {
        const int32_t mult = (int32_t)multiplier[k], shift = right[k] - 1;
        const int64_t c = msf_output_rounding[right[k]];
        const int32_t v = msf_asr32((int32_t)asr64((int64_t)acc[k] * mult + c, 32), shift) + zero_point;
        const int32_t v2 = msf_asr32((int32_t)asr64((int64_t)acc2[k] * mult + c, 32), shift) + zero_point;
        dst[k] = msf_clamp_output(v, lo, hi, full);
        dst2[k] = msf_clamp_output(v2, lo, hi, full);
    }
}

/* How a kernel call runs the output stage of its blocks, chosen once per call
   (msf_output_stage_mode): msf_requantize_block_s8, or the fast loop for one rounding, clamping
   to the activation's range or (FULL) to the whole of int8. Each is its own loop, so that a block
   pays one dispatch and no test inside. */
enum { MSF_STAGE_GENERAL, MSF_STAGE_RUY, MSF_STAGE_RUY_FULL, MSF_STAGE_DOUBLE, MSF_STAGE_DOUBLE_FULL };

static inline int msf_output_stage_mode(const msf_output_stage *s, int32_t channels)
{
    const int full = s->act_min == -128 && s->act_max == 127;
    if (!msf_output_stage_is_fast(s->rounding, s->right, channels)) {
        return MSF_STAGE_GENERAL;
    }
    if (s->rounding == MSF_ROUND_RUY) {
        return full ? MSF_STAGE_RUY_FULL : MSF_STAGE_RUY;
    }
    return full ? MSF_STAGE_DOUBLE_FULL : MSF_STAGE_DOUBLE;
}

/* The output stage of the n channels from oc0 on, into dst[0, n). */
static inline void msf_output_stage_s8(const msf_output_stage *s, int mode, const int32_t *acc, int32_t oc0,
                                       int32_t n, int8_t *dst)
{
    const int64_t *multiplier = s->multiplier + oc0;
    const int32_t *right = s->right + oc0;
    switch (mode) {
    case MSF_STAGE_RUY_FULL:
        msf_requantize_fast_loop(acc, n, multiplier, right, MSF_ROUND_RUY, s->output_offset, -128, 127, dst, 1);
        break;
    case MSF_STAGE_RUY:
        msf_requantize_fast_loop(acc, n, multiplier, right, MSF_ROUND_RUY, s->output_offset, s->act_min, s->act_max,
                                 dst, 0);
        break;
    case MSF_STAGE_DOUBLE_FULL:
        msf_requantize_fast_loop(acc, n, multiplier, right, MSF_ROUND_DOUBLE, s->output_offset, -128, 127, dst, 1);
        break;
    case MSF_STAGE_DOUBLE:
        msf_requantize_fast_loop(acc, n, multiplier, right, MSF_ROUND_DOUBLE, s->output_offset, s->act_min,
                                 s->act_max, dst, 0);
        break;
    default:
        msf_requantize_block_s8(acc, n, multiplier, right, s->rounding, s->output_offset, s->act_min, s->act_max, dst);
        break;
    }
}

/* numerics.float_activation for one value (NaN passes through, as np.maximum / np.clip). */
float msf_apply_activation_f32(float x, int32_t activation);

/* The interpreter's QUANTIZE (float32 -> int8) and DEQUANTIZE (int8 -> float32) at a model's
   edges, numerics.quantize_float / dequantize. Its vector code handles blocks of 8 values, its
   scalar code the remainder, and they round differently; so the result depends on the element's
   position in the whole tensor: `vector` is nonzero for elements whose index (in memory order
   over the whole tensor) is below (n / 8) * 8. The buffer forms apply that rule to a whole
   contiguous tensor of n elements. */
int8_t msf_quantize_f32_one(float x, float scale, int32_t zero_point, int vector);
float msf_dequantize_s8_one(int8_t q, float scale, int32_t zero_point, int vector);
void msf_quantize_f32(const float *in, int8_t *out, int32_t n, float scale, int32_t zero_point);
void msf_dequantize_s8(const int8_t *in, float *out, int32_t n, float scale, int32_t zero_point);

/* ---------------------------------------------------------------------------------------------
 * Parameter structs. One struct per op, shared by its _s8 and _f32 kernels: the int8 kernel
 * reads the integer fields and `weights` / `bias`; the float kernel reads `weights_f32` /
 * `bias_f32` and `activation`. Filled by the op's Python `c_params`; unused fields stay zero.
 * `bias` / `bias_f32` may be NULL (no bias).
 * ------------------------------------------------------------------------------------------- */

/* CONV_2D. weights (out_c, kh, kw, in_c). */
typedef struct {
    int32_t in_h, in_w, in_c, out_c;
    int32_t kh, kw, stride_h, stride_w, pad_top, pad_left;
    int32_t input_offset;           /* -(input zero point): padding then contributes 0 */
    int32_t output_offset;          /* output zero point */
    int32_t act_min, act_max;       /* int8 clamp (fused activation) */
    int32_t rounding;               /* MSF_ROUND_*: ruy's on x86 */
    int32_t activation;             /* float graphs: MSF_ACT_* */
    const int8_t *weights;
    const int32_t *bias;
    const int64_t *multiplier;      /* [out_c], see msf_requantize_block_s8 */
    const int32_t *right;           /* [out_c] */
    const float *weights_f32;
    const float *bias_f32;
} msf_conv2d_params;

/* DEPTHWISE_CONV_2D. weights (1, kh, kw, out_c), out_c = in_c * depth_multiplier; output
   channel o reads input channel o / depth_multiplier. */
typedef struct {
    int32_t in_h, in_w, in_c, out_c, depth_multiplier;
    int32_t kh, kw, stride_h, stride_w, pad_top, pad_left;
    int32_t input_offset, output_offset;
    int32_t act_min, act_max;
    int32_t rounding;               /* TFLite's MultiplyByQuantizedMultiplier: MSF_ROUND_DOUBLE */
    int32_t activation;
    const int8_t *weights;
    const int32_t *bias;
    const int64_t *multiplier;      /* [out_c], see msf_requantize_block_s8 */
    const int32_t *right;           /* [out_c] */
    const float *weights_f32;
    const float *bias_f32;
} msf_depthwise_conv2d_params;

/* MAX_POOL_2D and AVERAGE_POOL_2D, one kernel (input and output share their quantisation in int8). */
typedef struct {
    int32_t in_h, in_w, channels;
    int32_t kh, kw, stride_h, stride_w, pad_top, pad_left;
    int32_t max;                    /* 1: the maximum; 0: the average */
    int32_t count_include_pad;      /* avg: divide by kh * kw instead of the in-bounds taps */
    int32_t act_min, act_max;
    int32_t activation;
} msf_pool2d_params;

/* ADD (TFLite int8: both inputs scaled by 2^left_shift, brought to twice the larger input scale,
   summed, rescaled to the output). */
typedef struct {
    int32_t channels;
    int32_t input1_offset, input2_offset;   /* -(zero points) */
    int32_t left_shift;                     /* 20 */
    int32_t input1_mult, input1_shift;
    int32_t input2_mult, input2_shift;
    int32_t output_mult, output_shift;
    int32_t output_offset;
    int32_t act_min, act_max;
    int32_t rounding;
    int32_t activation;
} msf_add_params;

/* MUL / ADD of a feature map and a constant of operand_size values: 1 (a scalar) or channels (one
   per channel). MUL: (x + input_offset) * (c + operand_offset) rescaled by output_mult / _shift.
   ADD: as msf_add_params, the constant as the second input. */
typedef struct {
    int32_t channels, operand_size;
    int32_t input_offset, operand_offset;   /* -(zero points) */
    int32_t left_shift;                     /* ADD: 20 */
    int32_t input_mult, input_shift;        /* ADD */
    int32_t operand_mult, operand_shift;    /* ADD */
    int32_t output_mult, output_shift;
    int32_t output_offset;
    int32_t act_min, act_max;
    int32_t rounding;
    int32_t activation;
    const int8_t *operand;
    const float *operand_f32;
} msf_const_operand_params;
typedef msf_const_operand_params msf_mul_const_params;
typedef msf_const_operand_params msf_add_const_params;

/* MUL of two activations: the second at the same position, or (broadcast) one value per channel. */
typedef struct {
    int32_t channels, broadcast;
    int32_t input1_offset, input2_offset;   /* -(zero points) */
    int32_t output_mult, output_shift;
    int32_t output_offset;
    int32_t act_min, act_max;
    int32_t rounding;
    int32_t activation;
} msf_mul_params;

/* HardSigmoid (ONNX, float only): out = max(0, min(1, alpha * in + beta)). */
typedef struct {
    int32_t channels;
    float alpha, beta;
} msf_hard_sigmoid_params;

/* LOGISTIC / HARD_SWISH. int8: out = table[in + 128]; float: the function (MSF_FN_*). */
enum { MSF_FN_LOGISTIC = 0, MSF_FN_HARD_SWISH = 1 };
typedef struct {
    int32_t channels;
    int32_t function;               /* float graphs: MSF_FN_* */
    const int8_t *table;            /* int8: [256] */
} msf_lookup_params;

/* PRELU: one alpha per channel. int8: v = in - input zero point, rescaled by (pos_mult, pos_shift)
   if v >= 0, else v * (alpha + alpha_offset) by (neg_mult, neg_shift); plus output_offset. */
typedef struct {
    int32_t channels;
    int32_t input_offset, alpha_offset, output_offset;
    int32_t pos_mult, pos_shift;
    int32_t neg_mult, neg_shift;
    const int8_t *alpha;            /* int8: [channels] */
    const float *alpha_f32;         /* float: [channels] */
} msf_prelu_params;
typedef msf_prelu_params msf_prelu_s16_params;  /* 16x8 graphs: int16 values, int8 alphas */

/* ONNX LeakyRelu / Tanh / Elu in float32 graphs (int8 graphs use tables: msf_lookup). */
enum { MSF_UNARY_LEAKY_RELU = 0, MSF_UNARY_TANH = 1, MSF_UNARY_ELU = 2 };
typedef struct {
    int32_t channels;
    int32_t function;               /* MSF_UNARY_* */
    float alpha;                    /* LeakyRelu's slope, Elu's scale */
} msf_float_unary_params;

/* CONCATENATION along the channels: channels1 of the first input, then channels2 of the second. */
typedef struct {
    int32_t channels1, channels2;
} msf_concat_params;

/* A slice of the channels (SPLIT, SPLIT_V, SLICE, STRIDED_SLICE): channels [begin, begin + channels). */
typedef struct {
    int32_t begin, channels;
} msf_channel_slice_params;
typedef msf_channel_slice_params msf_channel_slice_s16_params;  /* 16x8 graphs: the same copy of int16 values */

/* A gather of the channels (ShuffleNet's channel shuffle): output channel k is input channel indices[k]. */
typedef struct {
    int32_t channels;
    const int32_t *indices;
} msf_channel_gather_params;
typedef msf_channel_gather_params msf_channel_gather_s16_params;  /* 16x8 graphs: the same copy of int16 values */

/* SPACE_TO_DEPTH: each block x block block of pixels into one pixel of block * block * channels. */
typedef struct {
    int32_t block, channels;
} msf_space_to_depth_params;
typedef msf_space_to_depth_params msf_space_to_depth_s16_params;  /* 16x8 graphs: the same copy of int16 values */

/* DEPTH_TO_SPACE: each pixel of block * block * channels into a block x block block of pixels. */
typedef struct {
    int32_t block, channels;  /* channels: the output's */
} msf_depth_to_space_params;
typedef msf_depth_to_space_params msf_depth_to_space_s16_params;  /* 16x8 graphs: the same copy of int16 values */

/* Standalone RELU / RELU6: requantise, then clamp. */
typedef struct {
    int32_t channels;
    int32_t input_offset, output_offset;
    int32_t mult, shift;
    int32_t act_min, act_max;
    int32_t rounding;
    int32_t activation;
} msf_activation_params;

/* QUANTIZE int8 -> int8 (float graphs: a copy). */
typedef struct {
    int32_t channels;
    int32_t input_offset, output_offset;
    int32_t mult, shift;
    int32_t rounding;
} msf_requantize_params;

/* DEQUANTIZE (int8 -> float32) and QUANTIZE (float32 -> int8) inside a graph, at a float island's
   edges (kernels/conversion.c). The interpreter's vector code converts the tensor's first
   vector_end values (in memory order: ((r * width) + c) * channels + ch), its scalar code the
   rest (msf_quantize_f32_one); vector_end is 0 under TFLite Micro's numerics, whose QUANTIZE
   divides by the scale in float32 (float_division 1), where LiteRT's scalar code divides in double. */
typedef struct {
    int32_t width, channels;        /* of the whole tensor */
    int32_t vector_end;
    int32_t float_division;
    float scale;                    /* of the int8 side */
    int32_t zero_point;
} msf_quantize_region_params;
typedef msf_quantize_region_params msf_dequantize_region_params;

/* PAD of the spatial axes with the zero point (0.0 in float graphs). */
typedef struct {
    int32_t in_h, in_w, channels;
    int32_t pad_top, pad_left;
    int32_t fill;                   /* int8 graphs: the output zero point, or PADV2's constant */
} msf_pad_params;

/* MEAN over H and W (global average pool). Two int8 kernels, as the interpreter has:
   keepdims = 1: optimized_integer_ops::Mean (multiplier folding 1/count, channels below
   vector_channels in ruy rounding, the rest gemmlowp rounding, float-derived bias);
   keepdims = 0: reference QuantizedMeanOrSum (exact zero-point correction, DOUBLE rounding).
   pool = 1: AVERAGE_POOL_2D with one window over the whole map (the quotient rounded half away from
   zero, then the fused activation). */
typedef struct {
    int32_t in_h, in_w, channels;
    int32_t win_h, win_w;           /* the rows and columns summed, from the top left (in_h, in_w but for a pool) */
    int32_t count;                  /* win_h * win_w */
    int32_t keepdims;
    int32_t mult, shift;
    int32_t input_zero_point;       /* generic kernel: subtracts input_zero_point * count */
    int32_t output_offset;          /* keepdims: the float-derived bias; generic: output zero point */
    int32_t vector_channels;        /* keepdims: channels / 16 * 16 */
    int32_t pool;                   /* 1: AVERAGE_POOL_2D over the whole map (its rounding, then): */
    int32_t act_min, act_max;       /* int8: the fused activation's range */
    int32_t activation;             /* float: MSF_ACT_* */
} msf_global_avg_pool_params;

/* MEAN over H, W or both, keeping the reduced axes: output (r, c) reads input rows [r, r + kh) x
   columns [c, c + kw) (kh = in_h or 1, kw = in_w or 1). int8: reference QuantizedMeanOrSum
   (mult / shift fold 1/count in; the sum minus input_zero_point * count; gemmlowp rounding). */
typedef struct {
    int32_t in_h, in_w, channels;
    int32_t kh, kw;
    int32_t mult, shift;
    int32_t input_zero_point;
    int32_t output_offset;
} msf_axis_mean_params;

/* TRANSPOSE of an (H, W, C) map: output (r, c, ch) is the input element with axis axis0 = r,
   axis1 = c, axis2 = ch (axes 0 = H, 1 = W, 2 = C). */
typedef struct {
    int32_t in_h, in_w, channels;
    int32_t out_channels;
    int32_t axis0, axis1, axis2;
} msf_transpose_params;

/* RESIZE_NEAREST_NEIGHBOR: output (r, c) copies input pixel (rows[r], cols[c]) (tables of out_h and
   out_w entries, TFLite's nearest-neighbour rule computed at compile time). */
typedef struct {
    int32_t channels;
    const int32_t *rows, *cols;
} msf_resize_nearest_params;

/* RESIZE_BILINEAR. int8, int16: rows and cols hold a (lo, hi, weight of hi in 1/1024) triple per
   output row and column (3 * out_h and 3 * out_w entries, TFLite's fixed-point positions), and the
   float weights are NULL. float32: rows and cols hold (lo, hi) pairs, row_weights and col_weights
   the weight of hi per output row and column. */
typedef struct {
    int32_t channels;
    const int32_t *rows, *cols;
    const float *row_weights, *col_weights;
} msf_resize_bilinear_params;
typedef msf_resize_bilinear_params msf_resize_bilinear_s16_params;

/* FULLY_CONNECTED. weights (units, in_features), in_features = in_h * in_w * in_c, the input
   flattened row-major over (H, W, C) as TFLite flattens NHWC. mult/shift hold units entries if
   per_channel, else one. */
typedef struct {
    int32_t units;
    int32_t in_h, in_w, in_c;
    int32_t input_offset, output_offset;
    int32_t act_min, act_max;
    int32_t per_channel;
    int32_t rounding;               /* ruy's on x86 */
    int32_t activation;
    const int8_t *weights;
    const int32_t *bias;
    const int32_t *mult;
    const int32_t *shift;
    const float *weights_f32;
    const float *bias_f32;
} msf_dense_params;

/* uint8 models (weight_offset.c): the int8 op's params and the weights' offset, -(weight zero
   point - 128), added to each int8-stored weight. */
typedef struct {
    msf_conv2d_params base;
    int32_t weight_offset;
} msf_conv2d_wofs_params;

typedef struct {
    msf_depthwise_conv2d_params base;
    int32_t weight_offset;
} msf_depthwise_conv2d_wofs_params;

typedef struct {
    msf_dense_params base;
    int32_t weight_offset;
} msf_dense_wofs_params;

/* The ADDs whose values depend on their place in the whole tensor, LiteRT's int8 ADD
   (add_litert.c) and uint8 ADD (add_uint8.c): the ADD's params, the output's width (to place a
   region's values in the whole tensor) and where the interpreter's vector code ends (flat
   positions below it; the scalar code from there on). */
typedef struct {
    msf_add_params base;
    int32_t width, vector_end;
} msf_add_blocks_params;
typedef msf_add_blocks_params msf_add_litert_params;
typedef msf_add_blocks_params msf_add_uint8_params;

/* One output value of a vector code, from the two inputs minus their zero points. */
typedef int8_t (*msf_add_value_fn)(const msf_add_params *p, int32_t a, int32_t b);

int32_t msf_high_mul_half_up(int32_t x, int32_t multiplier);  /* vqrdmulh, multiplier > 0 */
int32_t msf_wrap_int16(int32_t x);                            /* x narrowed to int16, wrapping */
int8_t msf_add_scalar_value(const msf_add_params *p, int32_t a, int32_t b);  /* add.c's value */
void msf_add_blocks_s8(const msf_add_blocks_params *q, msf_add_value_fn vector, const msf_view *in1,
                       const msf_view *in2, msf_view *out, int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_add_litert_s8(const msf_add_litert_params *q, const msf_view *in1, const msf_view *in2, msf_view *out,
                       int32_t r0, int32_t r1, int32_t c0, int32_t c1);
int8_t msf_add_litert_value(const msf_add_params *p, int32_t a, int32_t b);  /* the vector code's value */
int8_t msf_add_litert_output(const msf_add_params *p, int32_t sum);  /* its output from the rescaled sum */

/* LiteRT's int8 ADD of a constant (add_const_litert.c): the ADD of two maps (the constant as
   input 2), the constant (1 value, or per_channel), the output's width, and where its vector code
   runs: flat positions below vector_end (one value), channels below vector_channels (per channel). */
typedef struct {
    msf_add_params add;
    const int8_t *operand;
    int32_t per_channel;
    int32_t width, vector_end, vector_channels;
} msf_add_const_litert_params;

void msf_add_const_litert_s8(const msf_add_const_litert_params *q, const msf_view *in, msf_view *out,
                             int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_add_uint8_s8(const msf_add_uint8_params *q, const msf_view *in1, const msf_view *in2, msf_view *out,
                      int32_t r0, int32_t r1, int32_t c0, int32_t c1);

/* uint8 AVERAGE_POOL_2D (avg_pool_half_up.c): the pool's params (max 0, count_include_pad 0). */
typedef msf_pool2d_params msf_avg_pool_half_up_params;

void msf_conv2d_wofs_s8(const msf_conv2d_wofs_params *q, const msf_view *in, msf_view *out,
                        int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_depthwise_conv2d_wofs_s8(const msf_depthwise_conv2d_wofs_params *q, const msf_view *in, msf_view *out,
                                  int32_t r0, int32_t r1, int32_t c0, int32_t c1);
/* LiteRT's int8 DEPTHWISE_CONV_2D (depthwise_conv2d_litert.c, ops/depthwise_conv2d_litert.py):
   the first out_c // 8 x 8 output channels (`vector`, rounding MSF_ROUND_RUY) and the others
   (`tail`, MSF_ROUND_DOUBLE, from the first output of input channel vector.out_c /
   depth_multiplier; out_c 0 when there are none), each a depthwise convolution of its own
   channels, constants and channel counts. */
typedef struct {
    msf_depthwise_conv2d_params vector;
    msf_depthwise_conv2d_params tail;
} msf_depthwise_conv2d_litert_params;

void msf_depthwise_conv2d_litert_s8(const msf_depthwise_conv2d_litert_params *q, const msf_view *in, msf_view *out,
                                    int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_depthwise_conv2d_litert_inplace_s8(const msf_depthwise_conv2d_litert_params *q, const msf_view *in,
                                            msf_view *out, int8_t *plane, int32_t out_h, int32_t out_w);
void msf_avg_pool_half_up_s8(const msf_avg_pool_half_up_params *p, const msf_view *in, msf_view *out,
                             int32_t r0, int32_t r1, int32_t c0, int32_t c1);
/* dense: whole, or as a tail (accumulate regions of the map, then finish) */
void msf_dense_wofs_s8(const msf_dense_wofs_params *q, const msf_view *in, int8_t *out);
void msf_dense_wofs_accumulate_s8(const msf_dense_wofs_params *q, const msf_view *in, void *acc, int32_t r0, int32_t r1,
                                  int32_t c0, int32_t c1);
void msf_dense_wofs_finish_s8(const msf_dense_wofs_params *q, const void *acc, int8_t *out);

/* SOFTMAX over the last axis of `outer` rows of `depth` values. */
typedef struct {
    int32_t depth, outer;
    int32_t output_offset;          /* output zero point */
    float output_scale;             /* int8: the float32 output scale */
    float beta;                     /* float graphs */
    const float *exp_table;         /* int8: [256], exp_table[d] = expf(-input_scale * beta * d) */
} msf_softmax_params;

/* ---------------------------------------------------------------------------------------------
 * Kernels
 * ------------------------------------------------------------------------------------------- */

/* Window ops: output region rows [r0, r1) x cols [c0, c1), all channels. */
void msf_conv2d_s8(const msf_conv2d_params *p, const msf_view *in, msf_view *out,
                   int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_conv2d_f32(const msf_conv2d_params *p, const msf_view *in, msf_view *out,
                    int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_depthwise_conv2d_s8(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out,
                             int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_depthwise_conv2d_f32(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out,
                              int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_pool2d_s8(const msf_pool2d_params *p, const msf_view *in, msf_view *out,
                   int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_pool2d_f32(const msf_pool2d_params *p, const msf_view *in, msf_view *out,
                    int32_t r0, int32_t r1, int32_t c0, int32_t c1);

void msf_axis_mean_s8(const msf_axis_mean_params *p, const msf_view *in, msf_view *out,
                      int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_axis_mean_f32(const msf_axis_mean_params *p, const msf_view *in, msf_view *out,
                       int32_t r0, int32_t r1, int32_t c0, int32_t c1);

void msf_transpose_s8(const msf_transpose_params *p, const msf_view *in, msf_view *out,
                      int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_transpose_f32(const msf_transpose_params *p, const msf_view *in, msf_view *out,
                       int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_resize_nearest_s8(const msf_resize_nearest_params *p, const msf_view *in, msf_view *out,
                           int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_resize_nearest_f32(const msf_resize_nearest_params *p, const msf_view *in, msf_view *out,
                            int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_resize_bilinear_s8(const msf_resize_bilinear_params *p, const msf_view *in, msf_view *out,
                            int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_resize_bilinear_s16(const msf_resize_bilinear_s16_params *p, const msf_view *in, msf_view *out,
                             int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_resize_bilinear_f32(const msf_resize_bilinear_params *p, const msf_view *in, msf_view *out,
                             int32_t r0, int32_t r1, int32_t c0, int32_t c1);

/* PAD: output region (output coordinates); input positions are output - (pad_top, pad_left). */
void msf_pad_s8(const msf_pad_params *p, const msf_view *in, msf_view *out,
                int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_pad_f32(const msf_pad_params *p, const msf_view *in, msf_view *out,
                 int32_t r0, int32_t r1, int32_t c0, int32_t c1);

/* Element-wise ops: the region is the same in the input(s) and the output. */
void msf_add_s8(const msf_add_params *p, const msf_view *in1, const msf_view *in2, msf_view *out,
                int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_add_f32(const msf_add_params *p, const msf_view *in1, const msf_view *in2, msf_view *out,
                 int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_mul_const_s8(const msf_const_operand_params *p, const msf_view *in, msf_view *out,
                      int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_mul_const_f32(const msf_const_operand_params *p, const msf_view *in, msf_view *out,
                       int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_mul_s8(const msf_mul_params *p, const msf_view *in1, const msf_view *in2, msf_view *out,
                int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_mul_f32(const msf_mul_params *p, const msf_view *in1, const msf_view *in2, msf_view *out,
                 int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_add_const_s8(const msf_const_operand_params *p, const msf_view *in, msf_view *out,
                      int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_add_const_f32(const msf_const_operand_params *p, const msf_view *in, msf_view *out,
                       int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_concat_s8(const msf_concat_params *p, const msf_view *in1, const msf_view *in2, msf_view *out,
                   int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_concat_f32(const msf_concat_params *p, const msf_view *in1, const msf_view *in2, msf_view *out,
                    int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_channel_slice_s8(const msf_channel_slice_params *p, const msf_view *in, msf_view *out,
                          int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_channel_slice_s16(const msf_channel_slice_s16_params *p, const msf_view *in, msf_view *out,
                           int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_channel_slice_f32(const msf_channel_slice_params *p, const msf_view *in, msf_view *out,
                           int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_channel_gather_s8(const msf_channel_gather_params *p, const msf_view *in, msf_view *out,
                           int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_channel_gather_s16(const msf_channel_gather_s16_params *p, const msf_view *in, msf_view *out,
                            int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_channel_gather_f32(const msf_channel_gather_params *p, const msf_view *in, msf_view *out,
                            int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_space_to_depth_s8(const msf_space_to_depth_params *p, const msf_view *in, msf_view *out,
                           int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_space_to_depth_s16(const msf_space_to_depth_s16_params *p, const msf_view *in, msf_view *out,
                            int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_space_to_depth_f32(const msf_space_to_depth_params *p, const msf_view *in, msf_view *out,
                            int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_depth_to_space_s8(const msf_depth_to_space_params *p, const msf_view *in, msf_view *out,
                           int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_depth_to_space_s16(const msf_depth_to_space_s16_params *p, const msf_view *in, msf_view *out,
                            int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_depth_to_space_f32(const msf_depth_to_space_params *p, const msf_view *in, msf_view *out,
                            int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_hard_sigmoid_f32(const msf_hard_sigmoid_params *p, const msf_view *in, msf_view *out,
                          int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_lookup_s8(const msf_lookup_params *p, const msf_view *in, msf_view *out,
                   int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_lookup_f32(const msf_lookup_params *p, const msf_view *in, msf_view *out,
                    int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_prelu_s8(const msf_prelu_params *p, const msf_view *in, msf_view *out,
                  int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_prelu_s16(const msf_prelu_s16_params *p, const msf_view *in, msf_view *out,
                   int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_prelu_f32(const msf_prelu_params *p, const msf_view *in, msf_view *out,
                   int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_float_unary_f32(const msf_float_unary_params *p, const msf_view *in, msf_view *out,
                         int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_activation_s8(const msf_activation_params *p, const msf_view *in, msf_view *out,
                       int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_activation_f32(const msf_activation_params *p, const msf_view *in, msf_view *out,
                        int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_requantize_s8(const msf_requantize_params *p, const msf_view *in, msf_view *out,
                       int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_dequantize_region_s8(const msf_dequantize_region_params *p, const msf_view *in, msf_view *out,
                              int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_quantize_region_f32(const msf_quantize_region_params *p, const msf_view *in, msf_view *out,
                             int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_requantize_f32(const msf_requantize_params *p, const msf_view *in, msf_view *out,
                        int32_t r0, int32_t r1, int32_t c0, int32_t c1);

/* Tail ops, streamed: the caller zeroes the accumulator (channels / units entries of int32, or of
   float) before the first accumulate; regions of the (H, W, C) input may come in any order and
   split (integer sums are exact in any order; float sums follow the call order). finish writes
   the output vector. For a dense layer streaming the map before a flattening reshape, its params
   must describe that map (c_params with the map's shape as the input shape).
   One-shot forms (no accumulator): the whole (in_h, in_w, C) input through a view, e.g. a vector
   as { base, n, n, 0, 0, 0, 0 } with in_h = in_w = 1. */
void msf_global_avg_pool_s8(const msf_global_avg_pool_params *p, const msf_view *in, int8_t *out);
void msf_global_avg_pool_f32(const msf_global_avg_pool_params *p, const msf_view *in, float *out);
void msf_dense_s8(const msf_dense_params *p, const msf_view *in, int8_t *out);
void msf_dense_f32(const msf_dense_params *p, const msf_view *in, float *out);

void msf_global_avg_pool_accumulate_s8(const msf_global_avg_pool_params *p, const msf_view *in,
                                       void *acc, int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_global_avg_pool_finish_s8(const msf_global_avg_pool_params *p, const void *acc, int8_t *out);
void msf_global_avg_pool_accumulate_f32(const msf_global_avg_pool_params *p, const msf_view *in,
                                        float *acc, int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_global_avg_pool_finish_f32(const msf_global_avg_pool_params *p, const float *acc, float *out);

void msf_dense_accumulate_s8(const msf_dense_params *p, const msf_view *in, void *acc,
                             int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_dense_finish_s8(const msf_dense_params *p, const void *acc, int8_t *out);
void msf_dense_accumulate_f32(const msf_dense_params *p, const msf_view *in, float *acc,
                              int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_dense_finish_f32(const msf_dense_params *p, const float *acc, float *out);

/* SOFTMAX on contiguous rows; out may be in (in place). */
void msf_softmax_s8(const msf_softmax_params *p, const int8_t *in, int8_t *out);
void msf_softmax_f32(const msf_softmax_params *p, const float *in, float *out);

/* DEPTHWISE_CONV_2D (depth multiplier 1, at most MSF_INPLACE_MAX_TAPS taps) written over its own
   input, a channel at a time: `out` starts where `in` starts; `plane` holds out_h x out_w values
   (depthwise_inplace.c). */
#define MSF_INPLACE_MAX_TAPS 64
void msf_depthwise_conv2d_inplace_s8(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out,
                                     int8_t *plane, int32_t out_h, int32_t out_w);
void msf_depthwise_conv2d_inplace_f32(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out,
                                      float *plane, int32_t out_h, int32_t out_w);

/* ---------------------------------------------------------------------------------------------
 * 16x8 kernels (int16.c): int16 activations (zero point 0), int8 weights, int64 biases, int64
 * accumulators, as TFLite's 16x8 reference kernels. int16 tensors sit at even arena offsets.
 * ------------------------------------------------------------------------------------------- */

/* MultiplyByQuantizedMultiplier of an int64 accumulator (numerics.py WIDE): the significand cut to
   16 bits, then one rounding shift. CONV_2D and DEPTHWISE_CONV_2D always, FULLY_CONNECTED under
   TFLite Micro's numerics. */
enum { MSF_ROUND_WIDE = 3 };

/* CONV_2D and DEPTHWISE_CONV_2D (depth_multiplier: depthwise only). mult / shift are TFLite's
   (significand, shift) per output channel. */
typedef struct {
    int32_t in_h, in_w, in_c, out_c, depth_multiplier;
    int32_t kh, kw, stride_h, stride_w, pad_top, pad_left;
    int32_t act_min, act_max;       /* int16 clamp (fused activation) */
    int32_t rounding;               /* MSF_ROUND_WIDE */
    const int8_t *weights;
    const int64_t *bias;            /* [out_c], or NULL */
    const int32_t *mult;            /* [out_c] */
    const int32_t *shift;           /* [out_c] */
} msf_conv2d_s16_params;
typedef msf_conv2d_s16_params msf_depthwise_conv2d_s16_params;

/* FULLY_CONNECTED: as msf_dense_params, with an int64 bias; rounding MSF_ROUND_SINGLE (LiteRT) or
   MSF_ROUND_WIDE (TFLite Micro). */
typedef struct {
    int32_t units;
    int32_t in_h, in_w, in_c;
    int32_t act_min, act_max;
    int32_t per_channel;
    int32_t rounding;
    const int8_t *weights;
    const int64_t *bias;
    const int32_t *mult;
    const int32_t *shift;
} msf_dense_s16_params;

/* SOFTMAX over the last axis of `outer` rows of `depth` values (reference_ops::SoftmaxInt16):
   max - x rescaled by input_mult / input_shift onto the exp table's [-10, 0], the tables' linear
   interpolation, output scale 1/32768. The two 513-entry tables are computed in Python. */
typedef struct {
    int32_t depth, outer;
    int32_t input_mult, input_shift;
    const int16_t *exp_lut;
    const int16_t *reciprocal_lut;
} msf_softmax_s16_params;

/* The int8 params structs serve pooling, ADD (left_shift 15) and MEAN (the reference kernel). */
typedef msf_pool2d_params msf_pool2d_s16_params;
typedef msf_add_params msf_add_s16_params;
typedef msf_global_avg_pool_params msf_global_avg_pool_s16_params;

void msf_conv2d_s16(const msf_conv2d_s16_params *p, const msf_view *in, msf_view *out,
                    int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_depthwise_conv2d_s16(const msf_depthwise_conv2d_s16_params *p, const msf_view *in, msf_view *out,
                              int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_depthwise_conv2d_inplace_s16(const msf_depthwise_conv2d_s16_params *p, const msf_view *in, msf_view *out,
                                      int16_t *plane, int32_t out_h, int32_t out_w);
void msf_pool2d_s16(const msf_pool2d_params *p, const msf_view *in, msf_view *out,
                    int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_add_s16(const msf_add_params *p, const msf_view *in1, const msf_view *in2, msf_view *out,
                 int32_t r0, int32_t r1, int32_t c0, int32_t c1);
/* Tails: the accumulators are int64 (channels / units of them). */
void msf_global_avg_pool_s16(const msf_global_avg_pool_params *p, const msf_view *in, int16_t *out);
void msf_global_avg_pool_accumulate_s16(const msf_global_avg_pool_params *p, const msf_view *in,
                                        void *acc, int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_global_avg_pool_finish_s16(const msf_global_avg_pool_params *p, const void *acc, int16_t *out);
void msf_dense_s16(const msf_dense_s16_params *p, const msf_view *in, int16_t *out);
void msf_dense_accumulate_s16(const msf_dense_s16_params *p, const msf_view *in, void *acc,
                              int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_dense_finish_s16(const msf_dense_s16_params *p, const void *acc, int16_t *out);
/* out may be in (in place). */
void msf_softmax_s16(const msf_softmax_s16_params *p, const int16_t *in, int16_t *out);

/* float32 <-> int16 at a 16x8 model's float edges, as msf_quantize_f32 / msf_dequantize_s8 (the
   interpreter's vector rule on blocks of 8, the scalar rule on the rest; `vector` 0 on every value
   for TFLite Micro), saturated to int16. */
int16_t msf_quantize_f32_s16_one(float x, float scale, int32_t zero_point, int vector);
float msf_dequantize_s16_one(int16_t q, float scale, int32_t zero_point, int vector);
void msf_quantize_f32_s16(const float *in, int16_t *out, int32_t n, float scale, int32_t zero_point);
void msf_dequantize_s16(const int16_t *in, float *out, int32_t n, float scale, int32_t zero_point);

/* SUB and SQUARED_DIFFERENCE (sub.c, ops/sub.py): ADD's arithmetic, each input entering as
   sign * rescale((q + offset) * 2^left_shift, mult, shift), the subtrahend's sign -1; the
   difference squared (square) before the output rescale. Of two maps (msf_sub_*), or of a map
   (input1) and a constant (msf_sub_const_*), whose term comes from operand[] (its sign included;
   one value, or one per channel). float: in1 - in2, or in2 - in1 (reversed; the constant is in2,
   from operand_f32), squared or not. */
typedef struct {
    int32_t channels, reversed, square, operand_size;
    int32_t input1_offset, input1_mult, input1_shift, input1_sign;
    int32_t input2_offset, input2_mult, input2_shift, input2_sign;
    int32_t left_shift;                     /* 20 (SQUARED_DIFFERENCE: 7) */
    int32_t output_mult, output_shift, output_offset;
    int32_t act_min, act_max;
    int32_t rounding;
    int32_t activation;
    const int32_t *operand;
    const float *operand_f32;
} msf_sub_params;
typedef msf_sub_params msf_sub_const_params;

void msf_sub_s8(const msf_sub_params *p, const msf_view *in1, const msf_view *in2, msf_view *out,
                int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_sub_f32(const msf_sub_params *p, const msf_view *in1, const msf_view *in2, msf_view *out,
                 int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_sub_const_s8(const msf_sub_params *p, const msf_view *in, msf_view *out,
                      int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_sub_const_f32(const msf_sub_params *p, const msf_view *in, msf_view *out,
                       int32_t r0, int32_t r1, int32_t c0, int32_t c1);

/* MAXIMUM / MINIMUM (min_max.c, ops/min_max.py): of two maps, or (the _const kernels) of a map
   and operand_size values (1, or one per channel; float graphs: operand_f32). No arithmetic:
   int8 inputs and output share one quantisation. */
typedef struct {
    int32_t channels, maximum;              /* 1: MAXIMUM, 0: MINIMUM */
    int32_t operand_size;
    const int8_t *operand;
    const float *operand_f32;
} msf_min_max_params;
typedef msf_min_max_params msf_min_max_const_params;

void msf_min_max_s8(const msf_min_max_params *p, const msf_view *in1, const msf_view *in2, msf_view *out,
                    int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_min_max_f32(const msf_min_max_params *p, const msf_view *in1, const msf_view *in2, msf_view *out,
                     int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_min_max_const_s8(const msf_min_max_params *p, const msf_view *in, msf_view *out,
                          int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_min_max_const_f32(const msf_min_max_params *p, const msf_view *in, msf_view *out,
                           int32_t r0, int32_t r1, int32_t c0, int32_t c1);

#ifdef __cplusplus
}
#endif

#endif /* MSFCNN_KERNELS_H */

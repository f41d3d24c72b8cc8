/* Shared numerics (numerics.c), mirroring src/msfcnn/numerics.py: the fixed-point helpers
   every int8 kernel inlines, the int8 output stage, float activations and the edge conversions. */
#ifndef MSF_NUMERICS_H
#define MSF_NUMERICS_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

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

/* floor((a * m + c) / 2^32), the high word of the fast loop below, for 0 <= m < 2^31 and
   0 <= c < 2^62. Other cores take it from one 64-bit multiply-accumulate. Armv6-M has none, and
   GCC spills 64-bit sums there: this is a * m + c as four 16 x 16-bit products (MULS) added into
   the (high, low) words of c with carries, 20 instructions and no call:
     a * m = ah mh 2^32 + al mh 2^16 + ah ml 2^16 + al ml,  a = ah 2^16 + al, m = mh 2^16 + ml,
   al, ml in [0, 2^16). al mh is below 2^31 and ah ml signed: each enters as (itself >> 16, itself
   << 16), the shift arithmetic for the signed one. MULS and MOVS leave the carry flag alone.
   (GCC wraps Thumb-1 inline assembly in divided syntax; this is written in unified syntax.) */
#if defined(MSF_ARMV6M)
static inline int32_t msf_high_mul_add(int32_t a, int32_t m, int64_t c)
{
    uint32_t al, ml, t, low = (uint32_t)c;
    int32_t high = (int32_t)(c >> 32);
    __asm__(".syntax unified\n\t"
            "uxth %[al], %[a]\n\t"        /* al */
            "asrs %[a], %[a], #16\n\t"    /* ah */
            "uxth %[ml], %[m]\n\t"        /* ml */
            "lsrs %[m], %[m], #16\n\t"    /* mh */
            "movs %[t], %[al]\n\t"
            "muls %[t], %[ml]\n\t"        /* al ml */
            "adds %[low], %[t]\n\t"
            "movs %[t], %[a]\n\t"
            "muls %[t], %[m]\n\t"         /* ah mh */
            "adcs %[high], %[t]\n\t"
            "muls %[al], %[m]\n\t"        /* al mh */
            "muls %[ml], %[a]\n\t"        /* ah ml */
            "lsls %[t], %[al], #16\n\t"
            "lsrs %[al], %[al], #16\n\t"
            "adds %[low], %[t]\n\t"
            "adcs %[high], %[al]\n\t"
            "lsls %[t], %[ml], #16\n\t"
            "asrs %[ml], %[ml], #16\n\t"
            "adds %[low], %[t]\n\t"
            "adcs %[high], %[ml]"
            : [a] "+l"(a), [m] "+l"(m), [al] "=&l"(al), [ml] "=&l"(ml), [t] "=&l"(t), [low] "+l"(low),
              [high] "+l"(high)
            :
            : "cc");
    return high;
}
#define MSF_HIGH_MUL_ADD(a, m, c) msf_high_mul_add(a, m, c)
#else
#define MSF_HIGH_MUL_ADD(a, m, c) ((int32_t)asr64((int64_t)(a) * (m) + (c), 32))
#endif

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
/* GCC's <arm_acle.h> stores its builtin's unsigned result in an int32_t inside __ssat, which
   -Wsign-conversion reports here; the value is the saturated int32 all the same. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-conversion"
#endif
        return (int8_t)__ssat(v, 8);
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
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
            const int32_t high = MSF_HIGH_MUL_ADD(acc[k], (int32_t)multiplier[k], msf_output_rounding[right[k]]);
            dst[k] = msf_clamp_output(msf_asr32(high, right[k] - 1) + zero_point, lo, hi, full);
        }
    } else {
        for (k = 0; k < n; ++k) {
            const int64_t *table = acc[k] < 0 ? msf_output_rounding_negative : msf_output_rounding;
            const int32_t high = MSF_HIGH_MUL_ADD(acc[k], (int32_t)multiplier[k], table[right[k]]);
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

MSF_END_DECLS

#endif /* MSF_NUMERICS_H */

/*
 * Shared conversion helpers: src/msfcnn/numerics.py in C. (The fixed-point multiply, rounding and
 * clamp helpers are static inline in numerics.h, since every int8 kernel calls them per
 * output value.)
 */
#include <math.h>

#include "numerics.h"

/* The output stage's rounding constants by right shift (see msf_requantize_block_s8):
   ruy: 2^30 + 2^(right - 1) * 2^31; gemmlowp for products below -2^30: one 2^31 less when right > 0. */
#define R(right) (((int64_t)1 << 30) + ((right) > 0 ? (int64_t)1 << (30 + (right)) : 0))
#define N(right) (R(right) - ((right) > 0 ? (int64_t)1 << 31 : 0))
const int64_t msf_output_rounding[32] = {
    R(0), R(1), R(2), R(3), R(4), R(5), R(6), R(7),
    R(8), R(9), R(10), R(11), R(12), R(13), R(14), R(15),
    R(16), R(17), R(18), R(19), R(20), R(21), R(22), R(23),
    R(24), R(25), R(26), R(27), R(28), R(29), R(30), R(31)
};
const int64_t msf_output_rounding_negative[32] = {
    N(0), N(1), N(2), N(3), N(4), N(5), N(6), N(7),
    N(8), N(9), N(10), N(11), N(12), N(13), N(14), N(15),
    N(16), N(17), N(18), N(19), N(20), N(21), N(22), N(23),
    N(24), N(25), N(26), N(27), N(28), N(29), N(30), N(31)
};
#undef R
#undef N

float msf_apply_activation_f32(float x, int32_t activation)
{
    /* Written so that NaN passes through, as np.maximum / np.clip propagate it. */
    if (activation == MSF_ACT_NONE) {
        return x;
    }
    if (x < 0.0f) {
        return 0.0f;
    }
    if (activation == MSF_ACT_RELU6 && x > 6.0f) {
        return 6.0f;
    }
    return x;
}

/* ---- QUANTIZE / DEQUANTIZE at the model's edges --------------------------------------------- */

/* The LX106's libgcc has no double-precision routines, and a core whose FPU has single precision
   only (__ARM_FP 4: cortex-m4, cortex-m33) runs double in software, a division in a time that
   depends on the value. There the same values come from float and integer arithmetic
   (tests/integration/test_quantize_without_double.py compares the two on the host). The rounded
   quotient is a double, or a float without double. */
#if defined(__XTENSA__) || defined(MSF_QUANTIZE_WITHOUT_DOUBLE) || (defined(__ARM_FP) && !(__ARM_FP & 8))
#define QUANTIZE_IN_FLOAT 1
#endif
#ifdef QUANTIZE_IN_FLOAT
typedef float quantize_real;
#else
typedef double quantize_real;
#endif

/* zero_point + rounded, clipped to int8 as numpy does it. A NaN or a value beyond int64 converts
   to INT64_MIN on x86, and INT64_MIN + zero_point wraps to a large positive value when the zero
   point is negative: -128 or 127 (the interpreter's SSE conversion gives INT32_MIN and wraps the
   same way in int32). The bounds (+-2^63, +-1e6) are exact in float too. */
static int8_t finish_quantize(quantize_real rounded, int32_t zero_point)
{
    if (!(rounded > (quantize_real)-0x1p63 && rounded < (quantize_real)0x1p63)) {
        return zero_point < 0 ? 127 : -128;
    }
    if (rounded > (quantize_real)1.0e6) {
        rounded = (quantize_real)1.0e6;
    }
    if (rounded < (quantize_real)-1.0e6) {
        rounded = (quantize_real)-1.0e6;
    }
    return msf_clamp_s8((int32_t)rounded, zero_point, -128, 127);
}

#ifdef QUANTIZE_IN_FLOAT
/* v rounded half to even: below 2^23, adding 2^23 leaves a float of spacing 1, so the addition
   rounds to the nearest integer, halves to the even one (2^23 is even); above, v is one already. */
static float round_half_even(float v)
{
    volatile float shifted;  /* (v + 2^23) - 2^23 evaluated as written */
    const float magnitude = v < 0.0f ? -v : v;
    if (!(magnitude < 0x1p23f)) {
        return v;
    }
    shifted = magnitude + 0x1p23f;
    return v < 0.0f ? -(shifted - 0x1p23f) : shifted - 0x1p23f;
}

/* A finite float as m * 2^e with m in [2^23, 2^24) (zero: m 0). */
static uint32_t significand_of(float v, int *exponent)
{
    union { float f; uint32_t u; } bits;
    uint32_t m;
    int e;
    bits.f = v;
    m = bits.u & 0x007fffffu;
    e = (int)((bits.u >> 23) & 0xffu);
    if (e == 0) {  /* subnormal */
        e = 1;
    } else {
        m |= 0x00800000u;
    }
    e -= 150;
    while (m != 0 && m < 0x00800000u) {
        m <<= 1;
        --e;
    }
    *exponent = e;
    return m;
}

/* Whether |x| >= (k - 1/2) * scale exactly, for 1 <= k <= 2^22: 2 |x| against (2k - 1) scale. */
static int reaches(uint32_t x, int ex, uint32_t s, int es, int32_t k)
{
    const uint64_t left = (uint64_t)x << 1, right = (uint64_t)(2 * k - 1) * s;  /* < 2^25, < 2^47 */
    const int shift = ex - es;
    if (x == 0) {
        return 0;
    }
    if (shift >= 23) {
        return 1;  /* left << shift >= 2^47 > right */
    }
    if (shift >= 0) {
        return (left << shift) >= right;
    }
    if (shift <= -2) {
        return 0;  /* right << 2 >= 2^25 > left */
    }
    return left >= (right << 1);
}

/* x / scale rounded half away from zero, as the double code rounds the double quotient: the
   quotient of two floats is never within a double's rounding of a half-integer below 2^26, so
   that is the exact quotient rounded. From 2^21 on, the float quotient (clipped like it). */
static float divided_half_away(float x, float scale)
{
    const float magnitude = (x < 0.0f ? -x : x) / scale;
    uint32_t mx, ms;
    int ex, es;
    int32_t k;
    if (!(magnitude <= 0x1p21f)) {
        return x < 0.0f ? -magnitude : magnitude;  /* NaN, infinite or clipped to 1e6 */
    }
    mx = significand_of(x < 0.0f ? -x : x, &ex);
    ms = significand_of(scale, &es);
    k = (int32_t)(magnitude + 0.5f);  /* off by at most one */
    while (reaches(mx, ex, ms, es, k + 1)) {
        ++k;
    }
    while (k > 0 && !reaches(mx, ex, ms, es, k)) {
        --k;
    }
    return x < 0.0f ? -(float)k : (float)k;
}

int8_t msf_quantize_f32_one(float x, float scale, int32_t zero_point, int vector)
{
    if (vector) {
        float inverse = 1.0f / scale;
        float product = x * inverse;
        return finish_quantize(round_half_even(product), zero_point);
    }
    return finish_quantize(divided_half_away(x, scale), zero_point);
}
#else
/* std::nearbyint in the default mode: halves to even (what the vector path's conversion does). */
static double round_half_even(double v)
{
    double whole = floor(v);
    double fraction = v - whole;  /* exact */
    if (fraction > 0.5 || (fraction == 0.5 && floor(whole * 0.5) * 2.0 != whole)) {
        whole += 1.0;
    }
    return whole;
}

/* std::round: halves away from zero (numerics.round_half_away). */
static double round_half_away(double v)
{
    double magnitude = v < 0.0 ? -v : v;
    double whole = floor(magnitude);
    if (magnitude - whole >= 0.5) {
        whole += 1.0;
    }
    return v < 0.0 ? -whole : whole;
}

int8_t msf_quantize_f32_one(float x, float scale, int32_t zero_point, int vector)
{
    if (vector) {
        /* vector path: x * float32(1 / scale), rounded half to even */
        float inverse = 1.0f / scale;
        float product = x * inverse;
        return finish_quantize(round_half_even((double)product), zero_point);
    }
    /* scalar path: x / scale in double, rounded half away from zero */
    return finish_quantize(round_half_away((double)x / (double)scale), zero_point);
}
#endif

float msf_dequantize_s8_one(int8_t q, float scale, int32_t zero_point, int vector)
{
    float value = (float)q;
    float zero = (float)zero_point;
    if (vector) {
        /* vector path: q * scale - zero_point * scale, three float32 roundings */
        float a = value * scale;
        float b = zero * scale;
        return a - b;
    }
    /* scalar path: (q - zero_point) * scale */
    return (value - zero) * scale;
}

void msf_quantize_f32(const float *in, int8_t *out, int32_t n, float scale, int32_t zero_point)
{
    int32_t vector_end = n / 8 * 8;
    int32_t i;
    for (i = 0; i < n; ++i) {
        out[i] = msf_quantize_f32_one(in[i], scale, zero_point, i < vector_end);
    }
}

void msf_dequantize_s8(const int8_t *in, float *out, int32_t n, float scale, int32_t zero_point)
{
    int32_t vector_end = n / 8 * 8;
    int32_t i;
    for (i = 0; i < n; ++i) {
        out[i] = msf_dequantize_s8_one(in[i], scale, zero_point, i < vector_end);
    }
}

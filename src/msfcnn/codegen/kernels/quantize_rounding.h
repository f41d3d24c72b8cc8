/*
 * The interpreter's rounding of x / scale at a model's float edges (QUANTIZE), shared by the int8
 * conversions (numerics.c) and the 16x8 ones (int16.c): the vector code's product rounded half to
 * even, the scalar code's quotient rounded half away from zero.
 */
#ifndef MSF_QUANTIZE_ROUNDING_H
#define MSF_QUANTIZE_ROUNDING_H

#include <math.h>
#include <stdint.h>

/* The LX106's libgcc has no double-precision routines, and a core whose FPU has single precision
   only (__ARM_FP 4: cortex-m4, cortex-m33) runs double in software, a division in a time that
   depends on the value. There the same values come from float and integer arithmetic
   (tests/integration/test_quantize_without_double.py compares the two on the host). The rounded
   quotient is a double, or a float without double. numerics.c (int8) and int16.c (16x8) each
   include these helpers: QUANTIZE's object code is each file's alone. */
#if defined(__XTENSA__) || defined(MSF_QUANTIZE_WITHOUT_DOUBLE) || (defined(__ARM_FP) && !(__ARM_FP & 8))
#define MSF_QUANTIZE_IN_FLOAT 1
#endif
#ifdef MSF_QUANTIZE_IN_FLOAT
typedef float msf_quantize_real;
#else
typedef double msf_quantize_real;
#endif

#ifdef MSF_QUANTIZE_IN_FLOAT
/* v rounded half to even: below 2^23, adding 2^23 leaves a float of spacing 1, so the addition
   rounds to the nearest integer, halves to the even one (2^23 is even); above, v is one already. */
static inline float msf_round_half_even(float v)
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
static inline uint32_t msf_significand_of(float v, int *exponent)
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
static inline int msf_reaches(uint32_t x, int ex, uint32_t s, int es, int32_t k)
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
static inline float msf_divided_half_away(float x, float scale)
{
    const float magnitude = (x < 0.0f ? -x : x) / scale;
    uint32_t mx, ms;
    int ex, es;
    int32_t k;
    if (!(magnitude <= 0x1p21f)) {
        return x < 0.0f ? -magnitude : magnitude;  /* NaN, infinite or clipped to 1e6 */
    }
    mx = msf_significand_of(x < 0.0f ? -x : x, &ex);
    ms = msf_significand_of(scale, &es);
    k = (int32_t)(magnitude + 0.5f);  /* off by at most one */
    while (msf_reaches(mx, ex, ms, es, k + 1)) {
        ++k;
    }
    while (k > 0 && !msf_reaches(mx, ex, ms, es, k)) {
        --k;
    }
    return x < 0.0f ? -(float)k : (float)k;
}
#else
/* std::nearbyint in the default mode: halves to even (what the vector path's conversion does). */
static inline double msf_round_half_even(double v)
{
    double whole = floor(v);
    double fraction = v - whole;  /* exact */
    if (fraction > 0.5 || (fraction == 0.5 && floor(whole * 0.5) * 2.0 != whole)) {
        whole += 1.0;
    }
    return whole;
}

/* std::round: halves away from zero (numerics.round_half_away). */
static inline double msf_round_half_away(double v)
{
    double magnitude = v < 0.0 ? -v : v;
    double whole = floor(magnitude);
    if (magnitude - whole >= 0.5) {
        whole += 1.0;
    }
    return v < 0.0 ? -whole : whole;
}
#endif

#endif /* MSF_QUANTIZE_ROUNDING_H */

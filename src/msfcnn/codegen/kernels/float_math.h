/*
 * Single-precision exp, expm1 of a non-positive value, tanh and the logistic function for the
 * float32 kernels (recurrent cells, Tanh, Elu, LOGISTIC, SOFTMAX), in place of the C library's
 * expf and tanhf. picolibc computes those in double precision, in software on a core whose FPU is
 * single precision, and takes a path that depends on the value: a kernel's instructions then
 * depended on its data, which no count of the latency model can see. These take the same
 * instructions for every value on a core with an FPU (the clamps are selects, not branches).
 *
 * exp(x) = 2^n * exp(r), x = n ln2 + r, |r| <= ln2 / 2: n is x / ln2 rounded to nearest by adding
 * and subtracting 1.5 * 2^23 (the float's own rounding, no conversion), r = x - n ln2 in two parts
 * (n times the high part is exact), exp(r) = 1 + r + r^2 P(r) with P of degree 4 fitted to the
 * relative error over |r| <= ln2 / 2 (4e-9 with float32 coefficients: rounding dominates), and
 * 2^n is written into the exponent bits. x is clamped first to [MSF_EXP_LOW, MSF_EXP_HIGH], where
 * 2^n stays a normal float: exp saturates at 2.4e38 above and 1.2e-38 below (not inf, not 0).
 * Accuracy against float64 (tests/integration/test_float_math.py): exp and expm1 within 1 ulp,
 * tanh within 3 ulp, the logistic within 1e-7 absolute (3 ulp relative). Arguments must not contract into fused multiply-adds
 * (msfcnn_common.h: GCC at -std=c99 does not; clang needs -ffp-contract=off), though with them the
 * results only change in the last bit.
 */
#ifndef MSF_FLOAT_MATH_H
#define MSF_FLOAT_MATH_H

#include <stdint.h>
#include <string.h>

#define MSF_EXP_LOW (-87.33f)  /* n = -126: 2^n the smallest normal float */
#define MSF_EXP_HIGH 88.37f    /* n = 127: 2^n the largest power of two below inf */
#define MSF_EXP_ROUND 12582912.0f  /* 1.5 * 2^23: adding it rounds a float below 2^22 to an integer */
#define MSF_EXP_ROUND_BITS 0x4B400000u  /* its bits: those of ROUND + n are these plus n */
#define MSF_LOG2E 1.44269504f
#define MSF_LN2_HIGH 0.693145751953125f  /* ln 2 to 15 bits: n (at most 8 bits) times it is exact */
#define MSF_LN2_LOW 1.42860677e-6f       /* ln 2 - MSF_LN2_HIGH */

static inline float msf_float_from_bits(uint32_t bits)
{
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

static inline uint32_t msf_float_bits(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits;
}

/* A float's bits mapped to an unsigned integer of the same order (-0 just below +0), and back */
static inline uint32_t msf_float_order(float x)
{
    const uint32_t bits = msf_float_bits(x);
    return bits ^ ((0u - (bits >> 31)) | 0x80000000u);
}

static inline float msf_float_unorder(uint32_t key)
{
    return msf_float_from_bits(key ^ (((key >> 31) - 1u) | 0x80000000u));
}

/* x clamped to the range where 2^n is a normal float (a NaN to an end). In integers: the
   compilers make an unsigned min and max selects, never branches, and a float compare against a
   constant would let them branch to a copy of the rest folded for that constant. */
static inline float msf_exp_clamp(float x)
{
    const uint32_t low = 0x3D515709u;   /* msf_float_order(MSF_EXP_LOW) */
    const uint32_t high = 0xC2B0BD71u;  /* msf_float_order(MSF_EXP_HIGH) */
    uint32_t key = msf_float_order(x);
    key = key < low ? low : key;
    return msf_float_unorder(key > high ? high : key);
}

/* For a clamped x: exp(r) - 1, and 2^n in *scale */
static inline float msf_exp_reduced(float x, float *scale)
{
    const float shifted = x * MSF_LOG2E + MSF_EXP_ROUND;
    const float n = shifted - MSF_EXP_ROUND;
    const float r = (x - n * MSF_LN2_HIGH) - n * MSF_LN2_LOW;
    /* n + 127 in the exponent field; unsigned arithmetic, defined for any bits (a NaN's too) */
    *scale = msf_float_from_bits((msf_float_bits(shifted) - MSF_EXP_ROUND_BITS + 127u) << 23);
    return r + r * r * (0.49999997f + r * (0.16666514f + r * (0.041667417f + r * (0.0083695045f + r * 0.0013871094f))));
}

/* exp(x), within 2 ulp for x in [MSF_EXP_LOW, MSF_EXP_HIGH] */
static inline float msf_expf(float x)
{
    float scale;
    const float q = msf_exp_reduced(msf_exp_clamp(x), &scale);
    return scale + scale * q;  /* 2^n (1 + q), rounded once */
}

/* exp(x) - 1 for x <= 0, accurate relative to the result near 0 too (tanh of a small value) */
static inline float msf_expm1f_nonpositive(float x)
{
    float scale;
    const float q = msf_exp_reduced(msf_exp_clamp(x), &scale);
    return (scale - 1.0f) + scale * q;  /* 2^n - 1 is exact for n >= -24 */
}

/* tanh(x) = sign(x) * -m / (2 + m), m = exp(-2|x|) - 1: no cancellation near 0 */
static inline float msf_tanhf(float x)
{
    const uint32_t sign = msf_float_bits(x) & 0x80000000u;
    const float m = msf_expm1f_nonpositive(-2.0f * msf_float_from_bits(msf_float_bits(x) ^ sign));
    return msf_float_from_bits((msf_float_bits(-m / (2.0f + m)) & 0x7FFFFFFFu) | sign);  /* -m may be -0 */
}

/* 1 / (1 + exp(-x)) */
static inline float msf_logisticf(float x)
{
    return 1.0f / (1.0f + msf_expf(-x));
}

#endif

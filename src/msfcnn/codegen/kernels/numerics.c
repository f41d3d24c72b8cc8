/*
 * Shared conversion helpers: src/msfcnn/numerics.py in C. (The fixed-point multiply, rounding and
 * clamp helpers are static inline in numerics.h, since every int8 kernel calls them per
 * output value.)
 */
#include <math.h>

#include "numerics.h"
#include "quantize_rounding.h"

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

/* zero_point + rounded, clipped to int8 as numpy does it. A NaN or a value beyond int64 converts
   to INT64_MIN on x86, and INT64_MIN + zero_point wraps to a large positive value when the zero
   point is negative: -128 or 127 (the interpreter's SSE conversion gives INT32_MIN and wraps the
   same way in int32). The bounds (+-2^63, +-1e6) are exact in float too. */
static int8_t finish_quantize(msf_quantize_real rounded, int32_t zero_point)
{
    if (!(rounded > (msf_quantize_real)-0x1p63 && rounded < (msf_quantize_real)0x1p63)) {
        return zero_point < 0 ? 127 : -128;
    }
    if (rounded > (msf_quantize_real)1.0e6) {
        rounded = (msf_quantize_real)1.0e6;
    }
    if (rounded < (msf_quantize_real)-1.0e6) {
        rounded = (msf_quantize_real)-1.0e6;
    }
    return msf_clamp_s8((int32_t)rounded, zero_point, -128, 127);
}

#ifdef MSF_QUANTIZE_IN_FLOAT
int8_t msf_quantize_f32_one(float x, float scale, int32_t zero_point, int vector)
{
    if (vector) {
        float inverse = 1.0f / scale;
        float product = x * inverse;
        return finish_quantize(msf_round_half_even(product), zero_point);
    }
    return finish_quantize(msf_divided_half_away(x, scale), zero_point);
}
#else
int8_t msf_quantize_f32_one(float x, float scale, int32_t zero_point, int vector)
{
    if (vector) {
        /* vector path: x * float32(1 / scale), rounded half to even */
        float inverse = 1.0f / scale;
        float product = x * inverse;
        return finish_quantize(msf_round_half_even((double)product), zero_point);
    }
    /* scalar path: x / scale in double, rounded half away from zero */
    return finish_quantize(msf_round_half_away((double)x / (double)scale), zero_point);
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

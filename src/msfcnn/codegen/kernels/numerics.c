/*
 * Shared fixed-point and conversion helpers: src/msfcnn/numerics.py in C.
 *
 * The numpy helpers compute in int64 without wrapping; these do the same (int64 intermediates,
 * results saturated to int32), so they agree with numpy for every input a real layer produces,
 * and never hit undefined behaviour: negative values are never shifted (shifts of negative
 * numbers are undefined or implementation-defined in C99), divisions by powers of two that must
 * floor use `asr64` below.
 */
#include <math.h>

#include "msfcnn_kernels.h"

#define MSF_INT32_MAX 2147483647
#define MSF_INT32_MIN (-MSF_INT32_MAX - 1)

/* floor(v / 2^n), i.e. an arithmetic right shift, without shifting a negative number. */
static int64_t asr64(int64_t v, int32_t n)
{
    return v >= 0 ? v >> n : ~(~v >> n);
}

static int32_t saturate32(int64_t v)
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
static int64_t srdhm64(int64_t a, int32_t b)
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
static int64_t rdbpot64(int64_t x, int32_t exponent)
{
    int64_t mask = ((int64_t)1 << exponent) - 1;
    int64_t remainder = x & mask;  /* int64_t is two's complement by definition */
    int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return asr64(x, exponent) + (remainder > threshold ? 1 : 0);
}

int32_t msf_saturating_rounding_doubling_high_mul(int32_t a, int32_t b)
{
    return saturate32(srdhm64(a, b));
}

int32_t msf_rounding_divide_by_pot(int32_t x, int32_t exponent)
{
    return saturate32(rdbpot64(x, exponent));
}

int32_t msf_mul_by_quantized_mult_double(int32_t x, int32_t multiplier, int32_t shift)
{
    int32_t left = shift > 0 ? shift : 0;
    int32_t right = shift > 0 ? 0 : -shift;
    int64_t scaled = (int64_t)x * ((int64_t)1 << left);
    return saturate32(rdbpot64(srdhm64(scaled, multiplier), right));
}

int32_t msf_mul_by_quantized_mult_ruy(int32_t x, int32_t multiplier, int32_t shift)
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

int32_t msf_mul_by_quantized_mult_single(int32_t x, int32_t multiplier, int32_t shift)
{
    /* TFLITE_SINGLE_ROUNDING: one 64-bit product, one round-half-up shift by 31 - shift. */
    int32_t total = 31 - shift;
    return saturate32(asr64((int64_t)x * multiplier + ((int64_t)1 << (total - 1)), total));
}

int32_t msf_mul_by_quantized_mult(int32_t x, int32_t multiplier, int32_t shift, int32_t rounding)
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

int8_t msf_clamp_s8(int32_t x, int32_t zero_point, int32_t lo, int32_t hi)
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

/* zero_point + rounded, clipped to int8 as numpy does it. A NaN or a value beyond int64 converts
   to INT64_MIN on x86, and INT64_MIN + zero_point wraps to a large positive value when the zero
   point is negative: -128 or 127 (the interpreter's SSE conversion gives INT32_MIN and wraps the
   same way in int32). */
static int8_t finish_quantize(double rounded, int32_t zero_point)
{
    if (!(rounded > -9223372036854775808.0 && rounded < 9223372036854775808.0)) {
        return zero_point < 0 ? 127 : -128;
    }
    if (rounded > 1.0e6) {
        rounded = 1.0e6;
    }
    if (rounded < -1.0e6) {
        rounded = -1.0e6;
    }
    return msf_clamp_s8((int32_t)rounded, zero_point, -128, 127);
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

/*
 * SOFTMAX from int8 to int16 (ops/softmax.py, output_type "int16").
 *
 * LiteRT: its int8 kernel's arithmetic (softmax.c), saturated to int16.
 * TFLite Micro: TFLite's reference integer SOFTMAX. The exps of max - x come from a table in Q0.31
 * (computed in Python as gemmlowp's fixed point does); they are summed in Q12.19 (each shifted
 * right by 12, rounding), the sum's reciprocal is formed as GetReciprocal does (the sum shifted to
 * its leading one, 1 / (1 + the rest) by Newton-Raphson in Q2.29), and each output is the exp
 * times it, shifted right (rounding) to 16 bits, minus 32768.
 */
#include <math.h>

#include "softmax_wide.h"
#include "numerics.h"

#define I16_MIN (-32768)
#define I16_MAX 32767

static int16_t clamp16(int64_t v)
{
    return (int16_t)(v < I16_MIN ? I16_MIN : v > I16_MAX ? I16_MAX : v);
}

/* a + b as gemmlowp's int32 fixed-point addition: wrapping */
static int32_t wrapping_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* gemmlowp's SaturatingRoundingMultiplyByPOT with a positive exponent: a saturating left shift */
static int32_t saturating_shift_left(int32_t x, int32_t exponent)
{
    const int32_t threshold = (int32_t)((1u << (31 - exponent)) - 1u);
    return x > threshold ? MSF_INT32_MAX : x < -threshold ? MSF_INT32_MIN : (int32_t)((uint32_t)x << exponent);
}

/* gemmlowp's one_over_one_plus_x_for_x_in_0_1 on Q0.31 */
static int32_t one_over_one_plus_x(int32_t a)
{
    const int64_t sum = (int64_t)a + MSF_INT32_MAX;
    const int32_t half_denominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    int32_t x = wrapping_add(1515870810, msf_saturating_rounding_doubling_high_mul(half_denominator, -1010580540));
    int32_t i;
    for (i = 0; i < 3; ++i) {
        const int32_t error = wrapping_add(1 << 29, -msf_saturating_rounding_doubling_high_mul(half_denominator, x));
        x = wrapping_add(x, saturating_shift_left(msf_saturating_rounding_doubling_high_mul(x, error), 2));
    }
    return saturating_shift_left(x, 1);
}

static int32_t leading_zeros(uint32_t x)
{
    int32_t n = 0;
    while (n < 32 && !(x & 0x80000000u)) {
        x <<= 1;
        ++n;
    }
    return n;
}

static void softmax_row_tflm(const msf_softmax_wide_params *p, const int8_t *x, int16_t *y, int32_t max)
{
    int32_t i, sum = 0, headroom, bits_over_unit, scale;
    for (i = 0; i < p->depth; ++i) {
        const int32_t e = p->exp_fixed[max - x[i]];
        if (e != 0) {
            sum += msf_rounding_divide_by_pot(e, 12);
        }
    }
    headroom = leading_zeros((uint32_t)sum);
    bits_over_unit = 12 - headroom;
    scale = one_over_one_plus_x((int32_t)(((uint32_t)sum << headroom) - 0x80000000u));
    for (i = 0; i < p->depth; ++i) {
        const int32_t e = p->exp_fixed[max - x[i]];
        y[i] = e == 0 ? (int16_t)I16_MIN
                      : clamp16((int64_t)msf_rounding_divide_by_pot(msf_saturating_rounding_doubling_high_mul(scale, e),
                                                                    bits_over_unit + 15) - 32768);
    }
}

static void softmax_row_litert(const msf_softmax_wide_params *p, const int8_t *x, int16_t *y, int32_t max)
{
    const float *table = p->exp_table;
    float sum = 0.0f, inverse;
    int32_t i;
    for (i = 0; i < p->depth; ++i) {
        sum += table[max - x[i]];
    }
    inverse = 1.0f / (sum * p->output_scale);
    for (i = 0; i < p->depth; ++i) {
        /* std::round (roundf: ties away from zero), kept below 1e6 so that the conversion is defined */
        const float rounded = roundf(table[max - x[i]] * inverse);
        y[i] = clamp16((int64_t)(rounded > 1.0e6f ? 1.0e6f : rounded) + p->output_offset);
    }
}

void msf_softmax_wide_s8(const msf_softmax_wide_params *p, const int8_t *in, int16_t *out)
{
    int32_t row, i;
    for (row = 0; row < p->outer; ++row) {
        const int8_t *x = in + (ptrdiff_t)row * p->depth;
        int16_t *y = out + (ptrdiff_t)row * p->depth;
        int32_t max = -128;
        for (i = 0; i < p->depth; ++i) {
            max = x[i] > max ? x[i] : max;
        }
        if (p->tflm) {
            softmax_row_tflm(p, x, y, max);
        } else {
            softmax_row_litert(p, x, y, max);
        }
    }
}

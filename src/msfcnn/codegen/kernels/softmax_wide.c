/*
 * SOFTMAX from int8 to int16 (ops/softmax.py, output_type "int16").
 *
 * LiteRT: its int8 kernel's arithmetic (softmax.c), saturated to int16.
 * TFLite Micro: TFLite's reference integer SOFTMAX (softmax_fixed.h), each output shifted right
 * (rounding) to 16 bits, minus 32768. The exps' table is computed in Python as gemmlowp does.
 */
#include <math.h>

#include "softmax_wide.h"
#include "numerics.h"
#include "softmax_fixed.h"

#define I16_MIN (-32768)
#define I16_MAX 32767

static int16_t clamp16(int64_t v)
{
    return (int16_t)(v < I16_MIN ? I16_MIN : v > I16_MAX ? I16_MAX : v);
}

static void softmax_row_tflm(const msf_softmax_wide_params *p, const int8_t *x, int16_t *y, int32_t max)
{
    int32_t i, bits_over_unit;
    const int32_t scale = msf_softmax_fixed_scale(p->exp_fixed, x, p->depth, max, &bits_over_unit);
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

/*
 * SOFTMAX from int8 to int8 under TFLite Micro's numerics (ops/softmax_tflm.py): TFLite's
 * reference integer kernel (softmax_fixed.h), each output shifted right (rounding) to 8 bits,
 * minus 128. LiteRT's int8 kernel (softmax.c) works in float32 and differs now and then by one.
 */
#include "softmax_tflm.h"
#include "numerics.h"
#include "softmax_fixed.h"

void msf_softmax_tflm_s8(const msf_softmax_tflm_params *p, const int8_t *in, int8_t *out)
{
    int32_t row, i;
    for (row = 0; row < p->outer; ++row) {
        const int8_t *x = in + (ptrdiff_t)row * p->depth;
        int8_t *y = out + (ptrdiff_t)row * p->depth;
        int32_t max = -128, bits_over_unit, scale;
        for (i = 0; i < p->depth; ++i) {
            max = x[i] > max ? x[i] : max;
        }
        scale = msf_softmax_fixed_scale(p->exp_fixed, x, p->depth, max, &bits_over_unit);
        for (i = 0; i < p->depth; ++i) {
            const int32_t e = p->exp_fixed[max - x[i]];
            int32_t v = -128;
            if (e != 0) {
                v = msf_rounding_divide_by_pot(msf_saturating_rounding_doubling_high_mul(scale, e), bits_over_unit + 23) - 128;
            }
            y[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
        }
    }
}

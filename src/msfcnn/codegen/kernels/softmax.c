/*
 * SOFTMAX over the last axis (src/msfcnn/ops/softmax.py).
 *
 * int8, as the interpreter's optimized_ops::Softmax: a 256-entry float32 table
 * exp_table[d] = expf(-input_scale * beta * d) (computed in Python, correctly rounded) indexed by
 * max - x; the exponentials summed in float32 one after the other (the C++ loop's order);
 * 1 / (sum * output_scale) in float32; each probability std::round-ed (roundf: ties away from
 * zero), plus the output zero point, saturated to int8.
 * float: exp((x - max) * beta) / sum, with float_math.h's exp (the numpy kernel: np.exp).
 */
#include <math.h>

#include "float_math.h"
#include "softmax.h"
#include "numerics.h"

void msf_softmax_s8(const msf_softmax_params *p, const int8_t *in, int8_t *out)
{
    int32_t row, i;
    for (row = 0; row < p->outer; ++row) {
        const int8_t *x = in + (ptrdiff_t)row * p->depth;
        int8_t *y = out + (ptrdiff_t)row * p->depth;
        int32_t max = -128;
        float sum = 0.0f, inverse;
        for (i = 0; i < p->depth; ++i) {
            max = x[i] > max ? x[i] : max;
        }
        for (i = 0; i < p->depth; ++i) {
            sum += p->exp_table[max - x[i]];
        }
        inverse = 1.0f / (sum * p->output_scale);
        for (i = 0; i < p->depth; ++i) {
            float rounded = roundf(p->exp_table[max - x[i]] * inverse);
            if (rounded > 1.0e6f) {  /* saturates anyway; keeps the conversion defined */
                rounded = 1.0e6f;
            }
            y[i] = msf_clamp_s8((int32_t)rounded, p->output_offset, -128, 127);
        }
    }
}

void msf_softmax_f32(const msf_softmax_params *p, const float *in, float *out)
{
    int32_t row, i;
    for (row = 0; row < p->outer; ++row) {
        const float *x = in + (ptrdiff_t)row * p->depth;
        float *y = out + (ptrdiff_t)row * p->depth;
        float max = x[0], sum = 0.0f;
        for (i = 1; i < p->depth; ++i) {
            max = x[i] > max ? x[i] : max;
        }
        for (i = 0; i < p->depth; ++i) {
            y[i] = msf_expf((x[i] - max) * p->beta);  /* x[i] is read before y[i] is written */
            sum += y[i];
        }
        for (i = 0; i < p->depth; ++i) {
            y[i] = y[i] / sum;
        }
    }
}

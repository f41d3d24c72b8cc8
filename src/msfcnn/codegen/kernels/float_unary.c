/*
 * Float32 element-wise functions of ONNX models over a region (src/msfcnn/ops/float_unary.py):
 * LeakyRelu, Tanh and Elu (p->function, MSF_UNARY_*; p->alpha their parameter). int8 graphs run
 * these functions as tables (kernels/lookup.c).
 */
#include <math.h>

#include "float_unary.h"

static float msf_unary_f32(int32_t function, float alpha, float x)
{
    if (function == MSF_UNARY_LEAKY_RELU) {
        return x > 0.0f ? x : x * alpha;
    }
    if (function == MSF_UNARY_TANH) {
        return tanhf(x);
    }
    return x >= 0.0f ? x : alpha * (expf(x) - 1.0f);
}

void msf_float_unary_f32(const msf_float_unary_params *p, const msf_view *in, msf_view *out,
                         int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t r, c, ch;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const float *src = msf_at_f32(in, r, c, 0);
            float *dst = msf_at_f32(out, r, c, 0);
            for (ch = 0; ch < p->channels; ++ch) {
                dst[ch] = msf_unary_f32(p->function, p->alpha, src[ch]);
            }
        }
    }
}

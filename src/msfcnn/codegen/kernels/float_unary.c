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

void msf_float_unary_f32 MSF_REGION_ARGS(msf_float_unary_params)
{
    MSF_EACH_VALUE(f32, f32, p->channels, {
        dst[ch] = msf_unary_f32(p->function, p->alpha, src[ch]);
    });
}

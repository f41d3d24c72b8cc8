/*
 * Float32 element-wise functions of ONNX models over a region (src/msfcnn/ops/float_unary.py):
 * LeakyRelu, Tanh and Elu (p->function, MSF_UNARY_*; p->alpha their parameter). int8 graphs run
 * these functions as tables (kernels/lookup.c).
 */
#include "float_math.h"
#include "float_unary.h"

/* x >= 0 ? x : alpha (exp(x) - 1), with the exp of every value: the sign bit selects (a float
   compare would be a branch on an FPU core, and the value would decide whether the exp runs) */
static float msf_elu(float alpha, float x)
{
    const uint32_t negative = 0u - (msf_float_bits(x) >> 31);  /* all ones below 0 (and at -0) */
    const float below = alpha * (msf_expf(msf_float_from_bits(msf_float_bits(x) & negative)) - 1.0f);
    return msf_float_from_bits((msf_float_bits(below) & negative) | (msf_float_bits(x) & ~negative));
}

static float msf_unary_f32(int32_t function, float alpha, float x)
{
    if (function == MSF_UNARY_LEAKY_RELU) {
        return x > 0.0f ? x : x * alpha;
    }
    if (function == MSF_UNARY_TANH) {
        return msf_tanhf(x);
    }
    return msf_elu(alpha, x);
}

void msf_float_unary_f32 MSF_REGION_ARGS(msf_float_unary_params)
{
    MSF_EACH_VALUE(f32, f32, p->channels, {
        dst[ch] = msf_unary_f32(p->function, p->alpha, src[ch]);
    });
}

/*
 * PRELU over a region (src/msfcnn/ops/prelu.py): x if x >= 0, else alpha[c] * x, one constant
 * alpha per channel.
 *
 * int8: TFLite's reference Prelu. v = x - input zero point; v >= 0 is rescaled by (pos_mult,
 * pos_shift), v < 0 times (alpha - alpha zero point) by (neg_mult, neg_shift), both with TFLite's
 * MultiplyByQuantizedMultiplier (double rounding); plus the output zero point, saturated to int8.
 * int16 (16x8 graphs): the same on int16 values (int8 alphas), saturated to int16; 16x8 LEAKY_RELU
 * runs here too, every alpha 1 and its negative side's factor in (neg_mult, neg_shift).
 * float: the same choice in float32.
 */
#include "prelu.h"
#include "numerics.h"

static int32_t prelu_value(const msf_prelu_params *p, int32_t x, int32_t ch)
{
    const int32_t v = x + p->input_offset;
    if (v >= 0) {
        return msf_mul_by_quantized_mult_double(v, p->pos_mult, p->pos_shift);
    }
    return msf_mul_by_quantized_mult_double(v * ((int32_t)p->alpha[ch] + p->alpha_offset), p->neg_mult,
                                            p->neg_shift);
}

void msf_prelu_s8 MSF_REGION_ARGS(msf_prelu_params)
{
    MSF_EACH_VALUE(s8, s8, p->channels, {
        dst[ch] = msf_clamp_s8(prelu_value(p, src[ch], ch), p->output_offset, -128, 127);
    });
}

void msf_prelu_s16 MSF_REGION_ARGS(msf_prelu_s16_params)
{
    MSF_EACH_VALUE(s16, s16, p->channels, {
        const int64_t v = (int64_t)prelu_value(p, src[ch], ch) + p->output_offset;
        dst[ch] = (int16_t)(v < -32768 ? -32768 : v > 32767 ? 32767 : v);
    });
}

void msf_prelu_f32 MSF_REGION_ARGS(msf_prelu_params)
{
    MSF_EACH_VALUE(f32, f32, p->channels, {
        dst[ch] = src[ch] >= 0.0f ? src[ch] : src[ch] * p->alpha_f32[ch];
    });
}

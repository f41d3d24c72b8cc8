/*
 * Standalone RELU / RELU6 over a region (src/msfcnn/ops/activation.py).
 *
 * TFLite's int8 RELU kernels requantise from the input's to the output's scale with its
 * MultiplyByQuantizedMultiplier (multiplier from float32(in_scale / out_scale), rounding
 * MSF_ROUND_DOUBLE), add the output zero point, then clamp to the activation's range.
 */
#include "activation.h"
#include "numerics.h"

void msf_activation_s8 MSF_REGION_ARGS(msf_activation_params)
{
    MSF_EACH_VALUE(s8, s8, p->channels, {
        const int32_t v = msf_mul_by_quantized_mult((int32_t)src[ch] + p->input_offset,
                                                    p->mult, p->shift, p->rounding);
        dst[ch] = msf_clamp_s8(v, p->output_offset, p->act_min, p->act_max);
    });
}

void msf_activation_f32 MSF_REGION_ARGS(msf_activation_params)
{
    MSF_EACH_VALUE(f32, f32, p->channels, {
        dst[ch] = msf_apply_activation_f32(src[ch], p->activation);
    });
}

/*
 * ADD over a region (src/msfcnn/ops/add.py).
 *
 * TFLite's int8 ADD: each input, minus its zero point, is scaled up by 2^left_shift (20) and
 * rescaled with its own multiplier to a common scale (twice the larger input scale); the two are
 * summed in int32 and rescaled to the output, all with TFLite's MultiplyByQuantizedMultiplier
 * (p->rounding = MSF_ROUND_DOUBLE); then the output zero point and the activation clamp.
 * |input - zero point| <= 255, so the scaled values stay below 2^28 and their sum in int32.
 */
#include "add.h"
#include "numerics.h"

void msf_add_s8 MSF_REGION2_ARGS(msf_add_params)
{
    const int32_t scale_up = (int32_t)1 << p->left_shift;
    MSF_EACH_VALUE2(s8, msf_at_s8(in2, r, c, 0), p->channels, {
        /* multiplications, not shifts: the shifted values may be negative */
        const int32_t va = ((int32_t)a[ch] + p->input1_offset) * scale_up;
        const int32_t vb = ((int32_t)b[ch] + p->input2_offset) * scale_up;
        const int32_t sa = msf_mul_by_quantized_mult(va, p->input1_mult, p->input1_shift, p->rounding);
        const int32_t sb = msf_mul_by_quantized_mult(vb, p->input2_mult, p->input2_shift, p->rounding);
        const int32_t sum = msf_mul_by_quantized_mult(sa + sb, p->output_mult, p->output_shift, p->rounding);
        dst[ch] = msf_clamp_s8(sum, p->output_offset, p->act_min, p->act_max);
    });
}

void msf_add_f32 MSF_REGION2_ARGS(msf_add_params)
{
    MSF_EACH_VALUE2(f32, msf_at_f32(in2, r, c, 0), p->channels, {
        dst[ch] = msf_apply_activation_f32(a[ch] + b[ch], p->activation);
    });
}

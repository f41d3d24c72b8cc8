/*
 * QUANTIZE int8 -> int8 over a region (src/msfcnn/ops/requantize.py).
 *
 * TFLite's Requantize: (x - input zero point) rescaled with its MultiplyByQuantizedMultiplier
 * (MSF_ROUND_DOUBLE), plus the output zero point, saturated to int8. Float graphs: a copy.
 */
#include "requantize.h"
#include "numerics.h"

void msf_requantize_s8 MSF_REGION_ARGS(msf_requantize_params)
{
    MSF_EACH_VALUE(s8, s8, p->channels, {
        const int32_t v = msf_mul_by_quantized_mult((int32_t)src[ch] + p->input_offset,
                                                    p->mult, p->shift, p->rounding);
        dst[ch] = msf_clamp_s8(v, p->output_offset, -128, 127);
    });
}

void msf_requantize_f32 MSF_REGION_ARGS(msf_requantize_params)
{
    int32_t r, c;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            /* the output is the input itself (written in place) or apart from it */
            msf_copy_f32(msf_at_f32(out, r, c, 0), msf_at_f32(in, r, c, 0), p->channels);
        }
    }
}

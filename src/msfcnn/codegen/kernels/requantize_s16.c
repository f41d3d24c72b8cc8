/*
 * QUANTIZE int16 -> int8 over a region (src/msfcnn/ops/requantize.py): a model's int16 input
 * quantised to int8 inside the model (a keyword spotter's audio frames). The arithmetic of
 * requantize.c: (x - input zero point) rescaled with TFLite's MultiplyByQuantizedMultiplier, plus
 * the output zero point, saturated to int8.
 */
#include "requantize_s16.h"
#include "numerics.h"

void msf_requantize_s16 MSF_REGION_ARGS(msf_requantize_s16_params)
{
    MSF_EACH_VALUE(s16, s8, p->channels, {
        const int32_t v = msf_mul_by_quantized_mult((int32_t)src[ch] + p->input_offset,
                                                    p->mult, p->shift, p->rounding);
        dst[ch] = msf_clamp_s8(v, p->output_offset, -128, 127);
    });
}

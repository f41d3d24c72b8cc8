/*
 * ABS over a region (src/msfcnn/ops/abs.py), int8 and int16 (16x8 models), as LiteRT and TFLite
 * Micro compute it: |x - input zero point|, times input scale / output scale with TFLite's
 * MultiplyByQuantizedMultiplier (double rounding) unless the scales are equal, plus the output
 * zero point, saturated.
 */
#include "abs.h"
#include "numerics.h"

static int32_t msf_abs_value(const msf_abs_params *p, int32_t x)
{
    const int32_t distance = x >= p->input_zero_point ? x - p->input_zero_point : p->input_zero_point - x;
    const int32_t scaled = p->rescale ? msf_mul_by_quantized_mult_double(distance, p->multiplier, p->shift)
                                      : distance;
    return scaled + p->output_zero_point;
}

void msf_abs_s8 MSF_REGION_ARGS(msf_abs_params)
{
    MSF_EACH_VALUE(s8, s8, p->channels, {
        const int32_t v = msf_abs_value(p, src[ch]);
        dst[ch] = (int8_t)(v > 127 ? 127 : (v < -128 ? -128 : v));
    });
}

void msf_abs_s16 MSF_REGION_ARGS(msf_abs_s16_params)
{
    MSF_EACH_VALUE(s16, s16, p->channels, {
        const int32_t v = msf_abs_value(p, src[ch]);
        dst[ch] = (int16_t)(v > 32767 ? 32767 : (v < -32768 ? -32768 : v));
    });
}

/* QUANTIZE int16 -> int32 (ops/requantize.py): TFLite's Requantize, saturated to int32. */
#include "requantize_wide.h"
#include "numerics.h"

/* MSF_EACH_VALUE's addressing of an int32 output map (int32 is no activation type elsewhere) */
#define MSF_TYPE_s32 int32_t
#define msf_at_s32(v, r, c, ch) ((int32_t *)(v)->base + msf_offset(v, r, c, ch))

void msf_requantize_wide_s16 MSF_REGION_ARGS(msf_requantize_wide_s16_params)
{
    MSF_EACH_VALUE(s16, s32, p->channels, {
        const int64_t v = (int64_t)msf_mul_by_quantized_mult((int32_t)src[ch] + p->input_offset, p->mult, p->shift,
                                                             p->rounding) + p->output_offset;
        dst[ch] = saturate32(v);
    });
}

/*
 * DEQUANTIZE (int8 -> float32) and QUANTIZE (float32 -> int8) inside a graph, at a float island's
 * edges: ops/dequantize.py and ops/quantize.py. Each value is converted as the interpreter
 * converts it at its place in the whole tensor (vector or scalar code: msf_quantize_f32_one), so
 * a region of the tensor, as a fused block computes it, gets the values the whole tensor would.
 * Element-wise: the output may be written over the input only where both have one size, which the
 * planner never does (a float32 value takes four bytes, an int8 one one).
 */
#include "conversion.h"
#include "numerics.h"

static int32_t position(const msf_quantize_region_params *p, int32_t r, int32_t c)
{
    return (r * p->width + c) * p->channels;
}

void msf_dequantize_region_s8 MSF_REGION_ARGS(msf_dequantize_region_params)
{
    MSF_EACH_PIXEL(s8, f32, {
        const int32_t at = position(p, r, c);
        int32_t ch;
        for (ch = 0; ch < p->channels; ++ch) {
            dst[ch] = msf_dequantize_s8_one(src[ch], p->scale, p->zero_point, at + ch < p->vector_end);
        }
    });
}

void msf_quantize_region_f32 MSF_REGION_ARGS(msf_quantize_region_params)
{
    MSF_EACH_PIXEL(f32, s8, {
        const int32_t at = position(p, r, c);
        int32_t ch;
        for (ch = 0; ch < p->channels; ++ch) {
            /* TFLite Micro: the quotient in float32, then the scalar code's rounding of it */
            dst[ch] = p->float_division ? msf_quantize_f32_one(src[ch] / p->scale, 1.0f, p->zero_point, 0)
                                        : msf_quantize_f32_one(src[ch], p->scale, p->zero_point,
                                                               at + ch < p->vector_end);
        }
    });
}

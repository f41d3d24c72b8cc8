/*
 * MAXIMUM / MINIMUM over a region (src/msfcnn/ops/min_max.py): of two maps, or of a map and a
 * constant of 1 or `channels` values. TFLite's int8 kernels compare the raw values (the inputs and
 * the output share one quantisation), so the int8 and float kernels are the same comparison.
 */
#include "min_max.h"

/* in2 NULL (msf_min_max_const_s8): the second operand is the constant p->operand. */
void msf_min_max_s8 MSF_REGION2_ARGS(msf_min_max_params)
{
    const int32_t step = in2 != NULL || p->operand_size != 1 ? 1 : 0;
    MSF_EACH_VALUE2(s8, in2 != NULL ? msf_at_s8(in2, r, c, 0) : p->operand, p->channels, {
        const int8_t u = a[ch], v = b[ch * step];
        dst[ch] = (p->maximum ? u > v : u < v) ? u : v;
    });
}

/* in2 NULL (msf_min_max_const_f32): the second operand is the constant p->operand_f32. */
void msf_min_max_f32 MSF_REGION2_ARGS(msf_min_max_params)
{
    const int32_t step = in2 != NULL || p->operand_size != 1 ? 1 : 0;
    MSF_EACH_VALUE2(f32, in2 != NULL ? msf_at_f32(in2, r, c, 0) : p->operand_f32, p->channels, {
        const float x = a[ch], y = b[ch * step];
        dst[ch] = (p->maximum ? x > y : x < y) ? x : y;
    });
}

void msf_min_max_const_s8 MSF_REGION_ARGS(msf_min_max_params)
{
    msf_min_max_s8(p, in, NULL, out, r0, r1, c0, c1);
}

void msf_min_max_const_f32 MSF_REGION_ARGS(msf_min_max_params)
{
    msf_min_max_f32(p, in, NULL, out, r0, r1, c0, c1);
}

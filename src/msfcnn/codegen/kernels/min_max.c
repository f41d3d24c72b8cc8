/*
 * MAXIMUM / MINIMUM over a region (src/msfcnn/ops/min_max.py): of two maps, or of a map and a
 * constant of 1 or `channels` values. TFLite's int8 kernels compare the raw values (the inputs and
 * the output share one quantisation), so the int8 and float kernels are the same comparison.
 */
#include "min_max.h"

/* in2 NULL (msf_min_max_const_s8): the second operand is the constant p->operand. */
void msf_min_max_s8(const msf_min_max_params *p, const msf_view *in1, const msf_view *in2, msf_view *out,
                    int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    const int32_t step = in2 != NULL || p->operand_size != 1 ? 1 : 0;
    int32_t r, c, ch;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const int8_t *a = msf_at_s8(in1, r, c, 0);
            const int8_t *b = in2 != NULL ? msf_at_s8(in2, r, c, 0) : p->operand;
            int8_t *dst = msf_at_s8(out, r, c, 0);
            for (ch = 0; ch < p->channels; ++ch) {
                const int8_t u = a[ch], v = b[ch * step];
                dst[ch] = (p->maximum ? u > v : u < v) ? u : v;
            }
        }
    }
}

/* in2 NULL (msf_min_max_const_f32): the second operand is the constant p->operand_f32. */
void msf_min_max_f32(const msf_min_max_params *p, const msf_view *in1, const msf_view *in2, msf_view *out,
                     int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    const int32_t step = in2 != NULL || p->operand_size != 1 ? 1 : 0;
    int32_t r, c, ch;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const float *u = msf_at_f32(in1, r, c, 0);
            const float *v = in2 != NULL ? msf_at_f32(in2, r, c, 0) : p->operand_f32;
            float *dst = msf_at_f32(out, r, c, 0);
            for (ch = 0; ch < p->channels; ++ch) {
                const float x = u[ch], y = v[ch * step];
                dst[ch] = (p->maximum ? x > y : x < y) ? x : y;
            }
        }
    }
}

void msf_min_max_const_s8(const msf_min_max_params *p, const msf_view *in, msf_view *out,
                          int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    msf_min_max_s8(p, in, NULL, out, r0, r1, c0, c1);
}

void msf_min_max_const_f32(const msf_min_max_params *p, const msf_view *in, msf_view *out,
                           int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    msf_min_max_f32(p, in, NULL, out, r0, r1, c0, c1);
}

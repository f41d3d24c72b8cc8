/*
 * TRANSPOSE of an (H, W, C) map over an output region (src/msfcnn/ops/transpose.py): output
 * position (r, c, ch) is the input element whose axis p->axis0 is r, axis p->axis1 is c and
 * axis p->axis2 is ch. Elements are copied as bytes (elem bytes each), so one kernel serves int8
 * and float maps.
 */
#include <string.h>

#include "transpose.h"

static void msf_transpose(const msf_transpose_params *p, const msf_view *in, msf_view *out,
                          int32_t r0, int32_t r1, int32_t c0, int32_t c1, int32_t elem)
{
    const msf_view src = msf_bytes_view(in, elem);
    const msf_view dst = msf_bytes_view(out, elem);
    int32_t r, c, ch, k;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            char *to = (char *)dst.base + msf_offset(&dst, r, c, 0);
            for (ch = 0; ch < p->out_channels; ++ch) {
                int32_t at[3];
                at[p->axis0] = r;
                at[p->axis1] = c;
                at[p->axis2] = ch;
                k = at[2] * elem;
                memcpy(to + (ptrdiff_t)ch * elem, (const char *)src.base + msf_offset(&src, at[0], at[1], 0) + k,
                       (size_t)elem);
            }
        }
    }
}

void msf_transpose_s8 MSF_REGION_ARGS(msf_transpose_params)
{
    msf_transpose(p, in, out, r0, r1, c0, c1, 1);
}

void msf_transpose_f32 MSF_REGION_ARGS(msf_transpose_params)
{
    msf_transpose(p, in, out, r0, r1, c0, c1, (int32_t)sizeof(float));
}

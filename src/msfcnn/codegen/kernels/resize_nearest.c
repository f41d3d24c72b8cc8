/*
 * RESIZE_NEAREST_NEIGHBOR over an output region (src/msfcnn/ops/resize_nearest.py): output
 * position (r, c) is a copy of the input pixel (p->rows[r], p->cols[c]), all its channels. The
 * tables hold TFLite's nearest-neighbour rule, computed at compile time. Pixels are copied as
 * bytes (elem bytes per value), so one kernel serves int8 and float maps.
 */
#include <string.h>

#include "resize_nearest.h"

static void msf_resize_nearest(const msf_resize_nearest_params *p, const msf_view *in, msf_view *out,
                               int32_t r0, int32_t r1, int32_t c0, int32_t c1, int32_t elem)
{
    const msf_view src = msf_bytes_view(in, elem);
    const msf_view dst = msf_bytes_view(out, elem);
    const size_t pixel = (size_t)p->channels * (size_t)elem;
    int32_t r, c;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            memcpy((char *)dst.base + msf_offset(&dst, r, c, 0),
                   (const char *)src.base + msf_offset(&src, p->rows[r], p->cols[c], 0), pixel);
        }
    }
}

/* The same byte copy for both element types: only the element's size differs. */
void msf_resize_nearest_s8 MSF_REGION_ARGS(msf_resize_nearest_params)
{ msf_resize_nearest(p, in, out, r0, r1, c0, c1, 1); }

void msf_resize_nearest_f32 MSF_REGION_ARGS(msf_resize_nearest_params)
{ msf_resize_nearest(p, in, out, r0, r1, c0, c1, (int32_t)sizeof(float)); }

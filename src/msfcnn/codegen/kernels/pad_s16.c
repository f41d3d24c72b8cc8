/*
 * PAD of int16 maps over an output region (src/msfcnn/ops/pad.py, a 16x8 model's causal padding
 * of a TCN). As pad.c: output (r, c) copies input (r - pad_top, c - pad_left) where that is inside
 * the input, the fill value elsewhere; the region walked as a 1 x 1 window's.
 */
#include <string.h>

#include "pad_s16.h"
#include "window.h"

void msf_pad_s16 MSF_REGION_ARGS(msf_pad_s16_params)
{
    const msf_window_shape shape = { p->in_h, p->in_w, 1, 1, 1, 1, p->pad_top, p->pad_left };
    const int16_t fill = (int16_t)p->fill;
    msf_pixels it;
    msf_pixel px;
    msf_pixels_start(&it, &shape, r0, r1, c0, c1);
    while (msf_pixels_next(&it, &px)) {
        int16_t *dst = msf_at_s16(out, px.r, px.c, 0);
        int32_t ch;
        if (px.i_lo < px.i_hi && px.j_lo < px.j_hi) {
            memcpy(dst, msf_at_s16(in, px.y0, px.x0, 0), (size_t)p->channels * sizeof(int16_t));
        } else {
            for (ch = 0; ch < p->channels; ++ch) {
                dst[ch] = fill;
            }
        }
    }
}

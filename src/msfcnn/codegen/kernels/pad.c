/*
 * PAD of the spatial axes over an output region (src/msfcnn/ops/pad.py).
 *
 * Output (r, c) copies input (r - pad_top, c - pad_left) where that is inside the input, and is
 * the fill value elsewhere: TFLite pads int8 tensors with the output zero point (p->fill), float
 * graphs pad with 0.0.
 */
#include "msfcnn_kernels.h"

void msf_pad_s8(const msf_pad_params *p, const msf_view *in, msf_view *out,
                int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t r, c;
    for (r = r0; r < r1; ++r) {
        const int32_t y = r - p->pad_top;
        for (c = c0; c < c1; ++c) {
            const int32_t x = c - p->pad_left;
            int8_t *dst = msf_at_s8(out, r, c, 0);
            if (y >= 0 && y < p->in_h && x >= 0 && x < p->in_w) {
                msf_copy_s8(dst, msf_at_s8(in, y, x, 0), p->channels);  /* the input and output never overlap */
            } else {
                msf_fill_s8(dst, (int8_t)p->fill, p->channels);
            }
        }
    }
}

void msf_pad_f32(const msf_pad_params *p, const msf_view *in, msf_view *out,
                 int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t r, c;
    for (r = r0; r < r1; ++r) {
        const int32_t y = r - p->pad_top;
        for (c = c0; c < c1; ++c) {
            const int32_t x = c - p->pad_left;
            float *dst = msf_at_f32(out, r, c, 0);
            if (y >= 0 && y < p->in_h && x >= 0 && x < p->in_w) {
                msf_copy_f32(dst, msf_at_f32(in, y, x, 0), p->channels);
            } else {
                msf_fill_f32(dst, 0.0f, p->channels);
            }
        }
    }
}

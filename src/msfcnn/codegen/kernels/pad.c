/*
 * PAD of the spatial axes over an output region (src/msfcnn/ops/pad.py).
 *
 * Output (r, c) copies input (r - pad_top, c - pad_left) where that is inside the input, and is
 * the fill value elsewhere: TFLite pads int8 tensors with the output zero point (p->fill), float
 * graphs pad with 0.0. The region is walked as a window op's: a 1 x 1 window, stride 1, whose one
 * tap is either inside the input or padding.
 */
#include "pad.h"
#include "window.h"

/* Both element types (`element` bytes a value); the input and output never overlap. */
static void pad(const msf_pad_params *p, const msf_view *in, msf_view *out, int32_t r0, int32_t r1, int32_t c0,
                int32_t c1, int32_t element)
{
    const msf_window_shape shape = { p->in_h, p->in_w, 1, 1, 1, 1, p->pad_top, p->pad_left };
    const msf_view input = msf_bytes_view(in, element), output = msf_bytes_view(out, element);
    const int32_t channels = p->channels;
    msf_pixels it;
    msf_pixel px;
    msf_pixels_start(&it, &shape, r0, r1, c0, c1);
    while (msf_pixels_next(&it, &px)) {
        char *dst = (char *)output.base + msf_offset(&output, px.r, px.c, 0);
        const int inside = px.i_lo < px.i_hi && px.j_lo < px.j_hi;
        const char *src = inside ? (const char *)input.base + msf_offset(&input, px.y0, px.x0, 0) : NULL;
        if (element == (int32_t)sizeof(int8_t)) {
            if (inside) {
                msf_copy_s8((int8_t *)dst, (const int8_t *)src, channels);
            } else {
                msf_fill_s8((int8_t *)dst, (int8_t)p->fill, channels);
            }
        } else if (inside) {
            msf_copy_f32((float *)(void *)dst, (const float *)(const void *)src, channels);
        } else {
            msf_fill_f32((float *)(void *)dst, 0.0f, channels);
        }
    }
}

void msf_pad_s8 MSF_REGION_ARGS(msf_pad_params)
{
    pad(p, in, out, r0, r1, c0, c1, sizeof(int8_t));
}

void msf_pad_f32 MSF_REGION_ARGS(msf_pad_params)
{
    pad(p, in, out, r0, r1, c0, c1, sizeof(float));
}

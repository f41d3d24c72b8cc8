/*
 * DEPTHWISE_CONV_2D written over input it no longer reads, one channel at a time (the `inplace`
 * scheme, src/msfcnn/schedule/schemes/inplace.py; TinyEngine's in-place depthwise convolution):
 * a whole map over itself, or, inside a row stream, a row over a dead row of its input's ring.
 *
 * With a depth multiplier of 1, output channel c reads only input channel c. The output starts
 * where the input starts and has as many channels, so every value of output channel c lands on a
 * byte of input channel c (at another position when the stride shrinks the map; channels never
 * mix). Channel by channel, the regular kernel computes output channel c into `plane` (out_h x
 * out_w values); the plane then overwrites channel c, which nothing reads any more. The same
 * kernel computes the values, so the numerics are the regular kernel's.
 */
#include <string.h>

#include "msfcnn_kernels.h"

/* The regular kernel's parameters for one channel: its taps copied out of the (kh, kw, C) weights
   into `taps`, and its bias and output stage. */
static msf_depthwise_conv2d_params one_channel(const msf_depthwise_conv2d_params *p, int32_t c, void *taps,
                                               size_t element)
{
    msf_depthwise_conv2d_params q = *p;
    const int32_t n = p->kh * p->kw;
    int32_t t;
    q.in_c = q.out_c = 1;
    if (element == sizeof(int8_t)) {
        for (t = 0; t < n; ++t) {
            ((int8_t *)taps)[t] = p->weights[t * p->out_c + c];
        }
        q.weights = (const int8_t *)taps;
        q.bias = p->bias != NULL ? p->bias + c : NULL;
        q.multiplier = p->multiplier + c;
        q.right = p->right + c;
    } else {
        for (t = 0; t < n; ++t) {
            ((float *)taps)[t] = p->weights_f32[t * p->out_c + c];
        }
        q.weights_f32 = (const float *)taps;
        q.bias_f32 = p->bias_f32 != NULL ? p->bias_f32 + c : NULL;
    }
    return q;
}

/* Channel by channel: the regular kernel of the element type computes output rows [r0, r1) of the
   channel into the plane, then the plane goes over the channel. `element`: bytes per value (int8
   or float). */
static void in_place(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out, void *plane,
                     int32_t r0, int32_t r1, int32_t out_w, size_t element)
{
    float taps[MSF_INPLACE_MAX_TAPS]; /* one channel's taps, as int8 or float */
    msf_view channel = *in, values = { NULL, 0, 1, 0, 0, 0, 0 };
    int32_t c, r, x;
    values.base = plane;
    values.row_stride = out_w;
    values.row_origin = r0;
    for (c = 0; c < p->out_c; ++c) {
        const msf_depthwise_conv2d_params q = one_channel(p, c, taps, element);
        channel.base = (char *)in->base + (size_t)c * element;
        if (element == sizeof(int8_t)) {
            msf_depthwise_conv2d_s8(&q, &channel, &values, r0, r1, 0, out_w);
        } else {
            msf_depthwise_conv2d_f32(&q, &channel, &values, r0, r1, 0, out_w);
        }
        for (r = r0; r < r1; ++r) {
            for (x = 0; x < out_w; ++x) {
                memcpy((char *)out->base + (size_t)msf_offset(out, r, x, c) * element,
                       (const char *)plane + (size_t)((r - r0) * out_w + x) * element, element);
            }
        }
    }
}

void msf_depthwise_conv2d_inplace_s8(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out,
                                     int8_t *plane, int32_t r0, int32_t r1, int32_t out_w)
{
    in_place(p, in, out, plane, r0, r1, out_w, sizeof(int8_t));
}

void msf_depthwise_conv2d_inplace_f32(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out,
                                      float *plane, int32_t r0, int32_t r1, int32_t out_w)
{
    in_place(p, in, out, plane, r0, r1, out_w, sizeof(float));
}

/*
 * DEPTHWISE_CONV_2D written over its own input, one channel at a time (the `inplace` scheme,
 * src/msfcnn/schedule/schemes/inplace.py; TinyEngine's in-place depthwise convolution).
 *
 * With a depth multiplier of 1, output channel c reads only input channel c. The output starts
 * where the input starts and has as many channels, so every value of output channel c lands on a
 * byte of input channel c (at another position when the stride shrinks the map; channels never
 * mix). Channel by channel, the regular kernel computes output channel c into `plane` (out_h x
 * out_w values); the plane then overwrites channel c, which nothing reads any more. The same
 * kernel computes the values, so the numerics are the regular kernel's.
 */
#include "msfcnn_kernels.h"

/* q, the regular kernel's parameters for one channel of p (the rest of q set once, by the caller):
   channel c's taps copied out of the (kh, kw, C) weights into `taps`, and its bias and output
   stage. */
static void one_channel(const msf_depthwise_conv2d_params *p, int32_t c, void *taps, size_t element,
                        msf_depthwise_conv2d_params *q)
{
    const int32_t n = p->kh * p->kw;
    int32_t t;
    if (element == sizeof(int8_t)) {
        for (t = 0; t < n; ++t) {
            ((int8_t *)taps)[t] = p->weights[t * p->out_c + c];
        }
        q->weights = (const int8_t *)taps;
        q->bias = p->bias != NULL ? p->bias + c : NULL;
        q->multiplier = p->multiplier + c;
        q->right = p->right + c;
    } else {
        for (t = 0; t < n; ++t) {
            ((float *)taps)[t] = p->weights_f32[t * p->out_c + c];
        }
        q->weights_f32 = (const float *)taps;
        q->bias_f32 = p->bias_f32 != NULL ? p->bias_f32 + c : NULL;
    }
}

/* Channel by channel: the regular kernel of the element type into the plane, then the plane over
   the channel. `element`: bytes per value (int8 or float). */
static void in_place(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out, void *plane,
                     int32_t out_h, int32_t out_w, size_t element)
{
    float taps[MSF_INPLACE_MAX_TAPS]; /* one channel's taps, as int8 or float */
    msf_view channel = *in, values = { NULL, 0, 1, 0, 0, 0, 0 };
    msf_depthwise_conv2d_params q = *p;  /* copied once; one_channel sets what differs per channel */
    int32_t c, r, x;
    values.base = plane;
    values.row_stride = out_w;
    q.in_c = q.out_c = 1;
    for (c = 0; c < p->out_c; ++c) {
        one_channel(p, c, taps, element, &q);
        channel.base = (char *)in->base + (size_t)c * element;
        if (element == sizeof(int8_t)) {
            msf_depthwise_conv2d_s8(&q, &channel, &values, 0, out_h, 0, out_w);
        } else {
            msf_depthwise_conv2d_f32(&q, &channel, &values, 0, out_h, 0, out_w);
        }
        for (r = 0; r < out_h; ++r) {  /* a value at a time, each a plain load and store */
            for (x = 0; x < out_w; ++x) {
                const ptrdiff_t to = msf_offset(out, r, x, c), from = (ptrdiff_t)r * out_w + x;
                if (element == sizeof(int8_t)) {
                    ((int8_t *)out->base)[to] = ((const int8_t *)plane)[from];
                } else {
                    ((float *)out->base)[to] = ((const float *)plane)[from];
                }
            }
        }
    }
}

void msf_depthwise_conv2d_inplace_s8(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out,
                                     int8_t *plane, int32_t out_h, int32_t out_w)
{
    in_place(p, in, out, plane, out_h, out_w, sizeof(int8_t));
}

void msf_depthwise_conv2d_inplace_f32(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out,
                                      float *plane, int32_t out_h, int32_t out_w)
{
    in_place(p, in, out, plane, out_h, out_w, sizeof(float));
}

/*
 * LiteRT's int8 DEPTHWISE_CONV_2D over an output region (src/msfcnn/ops/depthwise_conv2d_litert.py).
 *
 * The interpreter requantises the first out_c // 8 x 8 output channels of each pixel with vector
 * code (ruy's rounding: halves up) and the others with TFLite's MultiplyByQuantizedMultiplier
 * (halves away from zero). Each part is a depthwise convolution of its own channels, with its own
 * slice of the weights, biases and output stage, so the calibrated kernel (depthwise_conv2d.c)
 * runs once per part: first the scalar part (`tail`), then the vector part. The tail's views
 * start at its first input channel, vector.out_c / depth_multiplier, and at that channel's first
 * output, and keep the map's strides. When the depth multiplier does not divide 8, that input
 * channel's first outputs are vector code: the tail computes them too, and the vector part,
 * running after it, overwrites them. The in-place form (depthwise_inplace.c, multiplier 1, so no
 * such overlap) runs the same way: the parts read and write disjoint channels.
 */
#include "depthwise_conv2d_litert.h"
#include "depthwise_inplace.h"

/* The tail part's views: `in` and `out` moved to its first input channel and that channel's first
   output (same strides, the bases that many values further on). */
static void tail_views(const msf_depthwise_conv2d_litert_params *q, const msf_view *in, const msf_view *out,
                       msf_view *tail_in, msf_view *tail_out)
{
    *tail_in = *in;
    *tail_out = *out;
    const int32_t first_in = q->vector.out_c / q->vector.depth_multiplier;
    tail_in->base = (int8_t *)in->base + first_in;
    tail_out->base = (int8_t *)out->base + first_in * q->vector.depth_multiplier;
}

void msf_depthwise_conv2d_litert_s8(const msf_depthwise_conv2d_litert_params *q, const msf_view *in, msf_view *out,
                                    int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    msf_view tail_in, tail_out;
    if (q->tail.out_c > 0) {
        tail_views(q, in, out, &tail_in, &tail_out);
        msf_depthwise_conv2d_s8(&q->tail, &tail_in, &tail_out, r0, r1, c0, c1);
    }
    msf_depthwise_conv2d_s8(&q->vector, in, out, r0, r1, c0, c1);
}

void msf_depthwise_conv2d_litert_inplace_s8(const msf_depthwise_conv2d_litert_params *q, const msf_view *in,
                                            msf_view *out, int8_t *plane, int32_t out_h, int32_t out_w)
{
    msf_view tail_in, tail_out;
    if (q->tail.out_c > 0) {
        tail_views(q, in, out, &tail_in, &tail_out);
        msf_depthwise_conv2d_inplace_s8(&q->tail, &tail_in, &tail_out, plane, out_h, out_w);
    }
    msf_depthwise_conv2d_inplace_s8(&q->vector, in, out, plane, out_h, out_w);
}

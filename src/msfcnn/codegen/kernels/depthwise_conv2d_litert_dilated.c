/*
 * LiteRT's int8 DEPTHWISE_CONV_2D of a dilated window (src/msfcnn/ops/depthwise_conv2d_litert.py):
 * as depthwise_conv2d_litert.c, each part (the scalar `tail`, then the `vector` channels) a dilated
 * depthwise convolution of its own channels (depthwise_conv2d.c's dilated entry).
 */
#include "depthwise_conv2d_litert_dilated.h"

void msf_depthwise_conv2d_litert_dilated_s8(const msf_depthwise_conv2d_litert_dilated_params *q, const msf_view *in,
                                            msf_view *out, int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    if (q->tail.op.out_c > 0) {
        /* the tail's views start at its first input channel and that channel's first output */
        const int32_t first_in = q->vector.op.out_c / q->vector.op.depth_multiplier;
        msf_view tail_in = *in, tail_out = *out;
        tail_in.base = (int8_t *)in->base + first_in;
        tail_out.base = (int8_t *)out->base + first_in * q->vector.op.depth_multiplier;
        msf_depthwise_conv2d_dilated_s8(&q->tail, &tail_in, &tail_out, r0, r1, c0, c1);
    }
    msf_depthwise_conv2d_dilated_s8(&q->vector, in, out, r0, r1, c0, c1);
}

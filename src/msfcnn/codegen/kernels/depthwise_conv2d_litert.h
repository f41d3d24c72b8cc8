/* LiteRT's int8 DEPTHWISE_CONV_2D (depthwise_conv2d_litert.c). */
#ifndef MSF_DEPTHWISE_CONV2D_LITERT_H
#define MSF_DEPTHWISE_CONV2D_LITERT_H

#include "depthwise_conv2d.h"

MSF_BEGIN_DECLS

/* LiteRT's int8 DEPTHWISE_CONV_2D (depthwise_conv2d_litert.c, ops/depthwise_conv2d_litert.py):
   the first out_c // 8 x 8 output channels (`vector`, rounding MSF_ROUND_RUY) and the others
   (`tail`, MSF_ROUND_DOUBLE, from the first output of input channel vector.out_c /
   depth_multiplier; out_c 0 when there are none), each a depthwise convolution of its own
   channels, constants and channel counts. */
typedef struct {
    msf_depthwise_conv2d_params vector;
    msf_depthwise_conv2d_params tail;
} msf_depthwise_conv2d_litert_params;

void msf_depthwise_conv2d_litert_s8(const msf_depthwise_conv2d_litert_params *q, const msf_view *in, msf_view *out,
                                    int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_depthwise_conv2d_litert_inplace_s8(const msf_depthwise_conv2d_litert_params *q, const msf_view *in,
                                            msf_view *out, int8_t *plane, int32_t out_h, int32_t out_w);

MSF_END_DECLS

#endif /* MSF_DEPTHWISE_CONV2D_LITERT_H */

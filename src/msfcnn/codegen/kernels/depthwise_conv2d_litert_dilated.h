/* LiteRT's int8 DEPTHWISE_CONV_2D of a dilated window (depthwise_conv2d_litert_dilated.c). */
#ifndef MSF_DEPTHWISE_CONV2D_LITERT_DILATED_H
#define MSF_DEPTHWISE_CONV2D_LITERT_DILATED_H

#include "depthwise_conv2d_litert.h"

MSF_BEGIN_DECLS

/* As msf_depthwise_conv2d_litert_params, each part a dilated depthwise convolution. */
typedef struct {
    msf_depthwise_conv2d_dilated_params vector;
    msf_depthwise_conv2d_dilated_params tail;
} msf_depthwise_conv2d_litert_dilated_params;

void msf_depthwise_conv2d_litert_dilated_s8(const msf_depthwise_conv2d_litert_dilated_params *q, const msf_view *in,
                                            msf_view *out, int32_t r0, int32_t r1, int32_t c0, int32_t c1);

MSF_END_DECLS

#endif /* MSF_DEPTHWISE_CONV2D_LITERT_DILATED_H */

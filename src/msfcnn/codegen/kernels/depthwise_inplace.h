/* DEPTHWISE_CONV_2D over its own input (depthwise_inplace.c). */
#ifndef MSF_DEPTHWISE_INPLACE_H
#define MSF_DEPTHWISE_INPLACE_H

#include "depthwise_conv2d.h"

MSF_BEGIN_DECLS

/* DEPTHWISE_CONV_2D (depth multiplier 1, at most MSF_INPLACE_MAX_TAPS taps) written over its own
   input, a channel at a time: `out` starts where `in` starts; `plane` holds out_h x out_w values
   (depthwise_inplace.c). */
#define MSF_INPLACE_MAX_TAPS 64
void msf_depthwise_conv2d_inplace_s8(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out,
                                     int8_t *plane, int32_t out_h, int32_t out_w);
void msf_depthwise_conv2d_inplace_f32(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out,
                                      float *plane, int32_t out_h, int32_t out_w);

MSF_END_DECLS

#endif /* MSF_DEPTHWISE_INPLACE_H */

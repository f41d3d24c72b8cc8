/* The `chains` scheme's depthwise sums, added tap by tap (chain.c). */
#ifndef MSF_CHAIN_H
#define MSF_CHAIN_H

#include "depthwise_conv2d.h"

MSF_BEGIN_DECLS

/* A chain (conv -> depthwise -> 1x1) makes an output pixel without storing the depthwise conv's
   input: the first op computes the values under one kernel row of the depthwise window at a time,
   and these functions add them to the pixel's sums. p is a plain int8 depthwise params struct of
   multiplier 1 (one part of the op: its own channels, weights, bias and output stage), acc and the
   values start at the part's first channel. */

/* acc[0, out_c) = the part's bias (0 without one). */
void msf_chain_start_s8(const msf_depthwise_conv2d_params *p, int32_t *acc);

/* acc[c] += (x[t * stride + c] + input offset) * weight of tap (dy, dx + t), c < out_c, t < taps:
   `taps` in-bounds taps of kernel row dy from column dx on, their values `stride` apart. */
void msf_chain_taps_s8(const msf_depthwise_conv2d_params *p, int32_t *acc, const int8_t *x, int32_t stride,
                       int32_t dy, int32_t dx, int32_t taps);

/* dst[0, out_c) = the part's output stage of acc (requantised, offset, clamped). */
void msf_chain_finish_s8(const msf_depthwise_conv2d_params *p, const int32_t *acc, int8_t *dst);

MSF_END_DECLS

#endif /* MSF_CHAIN_H */

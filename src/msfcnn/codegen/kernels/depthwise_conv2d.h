/* DEPTHWISE_CONV_2D (depthwise_conv2d.c). */
#ifndef MSF_DEPTHWISE_CONV2D_H
#define MSF_DEPTHWISE_CONV2D_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* DEPTHWISE_CONV_2D. weights (1, kh, kw, out_c), out_c = in_c * depth_multiplier; output
   channel o reads input channel o / depth_multiplier. */
typedef struct {
    int32_t in_h, in_w, in_c, out_c, depth_multiplier;
    int32_t kh, kw, stride_h, stride_w, pad_top, pad_left;
    int32_t input_offset, output_offset;
    int32_t act_min, act_max;
    int32_t rounding;               /* TFLite's MultiplyByQuantizedMultiplier: MSF_ROUND_DOUBLE */
    int32_t activation;
    const int8_t *weights;
    const int32_t *bias;
    const int64_t *multiplier;      /* [out_c], see msf_requantize_block_s8 */
    const int32_t *right;           /* [out_c] */
    const float *weights_f32;
    const float *bias_f32;
} msf_depthwise_conv2d_params;

void msf_depthwise_conv2d_s8 MSF_REGION_ARGS(msf_depthwise_conv2d_params);
void msf_depthwise_conv2d_f32 MSF_REGION_ARGS(msf_depthwise_conv2d_params);

/* A dilated DEPTHWISE_CONV_2D: the plain params (kh, kw: the kernel in taps), and the taps' spacing. */
typedef struct {
    msf_depthwise_conv2d_params op;
    int32_t dilation_h, dilation_w;
} msf_depthwise_conv2d_dilated_params;

void msf_depthwise_conv2d_dilated_s8 MSF_REGION_ARGS(msf_depthwise_conv2d_dilated_params);
void msf_depthwise_conv2d_dilated_f32 MSF_REGION_ARGS(msf_depthwise_conv2d_dilated_params);

MSF_END_DECLS

#endif /* MSF_DEPTHWISE_CONV2D_H */

/* CONV_2D (conv2d.c). */
#ifndef MSF_CONV2D_H
#define MSF_CONV2D_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* CONV_2D. weights (out_c, kh, kw, in_c). */
typedef struct {
    int32_t in_h, in_w, in_c, out_c;
    int32_t kh, kw, stride_h, stride_w, pad_top, pad_left;
    int32_t input_offset;           /* -(input zero point): padding then contributes 0 */
    int32_t output_offset;          /* output zero point */
    int32_t act_min, act_max;       /* int8 clamp (fused activation) */
    int32_t rounding;               /* MSF_ROUND_*: ruy's on x86 */
    int32_t activation;             /* float graphs: MSF_ACT_* */
    const int8_t *weights;
    const int32_t *bias;
    const int64_t *multiplier;      /* [out_c], see msf_requantize_block_s8 */
    const int32_t *right;           /* [out_c] */
    const float *weights_f32;
    const float *bias_f32;
} msf_conv2d_params;

void msf_conv2d_s8 MSF_REGION_ARGS(msf_conv2d_params);
void msf_conv2d_f32 MSF_REGION_ARGS(msf_conv2d_params);

/* A dilated CONV_2D: the plain params (kh, kw: the kernel in taps), and the taps' spacing. */
typedef struct {
    msf_conv2d_params op;
    int32_t dilation_h, dilation_w;
} msf_conv2d_dilated_params;

void msf_conv2d_dilated_s8 MSF_REGION_ARGS(msf_conv2d_dilated_params);
void msf_conv2d_dilated_f32 MSF_REGION_ARGS(msf_conv2d_dilated_params);

MSF_END_DECLS

#endif /* MSF_CONV2D_H */

/* TRANSPOSE_CONV / ONNX ConvTranspose (transpose_conv.c). */
#ifndef MSF_TRANSPOSE_CONV_H
#define MSF_TRANSPOSE_CONV_H

#include "conv2d.h"
#include "int16.h"

MSF_BEGIN_DECLS

/* The most kernel taps that reach one output pixel: ceil(kh / stride_h) x ceil(kw / stride_w)
   (a kernel of 8x8 at stride 1, 16x16 at stride 2); the importer refuses more. */
#define MSF_TRANSPOSE_CONV_TAPS 64

/* TRANSPOSE_CONV, int8 and float32: a convolution's params (conv2d.h), where input pixel (y, x)
   reaches output pixel (y * stride_h - pad_top + i, x * stride_w - pad_left + j) through tap
   (i, j), weights (out_c, kh, kw, in_c); int8: the first vector_channels output channels are
   requantised with MSF_ROUND_RUY (LiteRT's vector code), the others with conv.rounding. */
typedef struct {
    msf_conv2d_params conv;
    int32_t vector_channels;
} msf_transpose_conv_params;

/* 16x8: the 16x8 convolution's params (int16.h), the same geometry. */
typedef msf_conv2d_s16_params msf_transpose_conv_s16_params;

void msf_transpose_conv_s8 MSF_REGION_ARGS(msf_transpose_conv_params);
void msf_transpose_conv_f32 MSF_REGION_ARGS(msf_transpose_conv_params);
void msf_transpose_conv_s16 MSF_REGION_ARGS(msf_transpose_conv_s16_params);

MSF_END_DECLS

#endif /* MSF_TRANSPOSE_CONV_H */

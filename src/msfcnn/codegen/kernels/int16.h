/* 16x8 kernels (int16.c): int16 activations (zero point 0), int8 weights, int64 biases, int64
   accumulators, as TFLite's 16x8 reference kernels. int16 tensors sit at even arena offsets. */
#ifndef MSF_INT16_H
#define MSF_INT16_H

#include "add.h"
#include "global_avg_pool.h"
#include "pool2d.h"

MSF_BEGIN_DECLS

/* MultiplyByQuantizedMultiplier of an int64 accumulator (numerics.py WIDE): the significand cut to
   16 bits, then one rounding shift. CONV_2D and DEPTHWISE_CONV_2D always, FULLY_CONNECTED under
   TFLite Micro's numerics. */
enum { MSF_ROUND_WIDE = 3 };

/* CONV_2D and DEPTHWISE_CONV_2D (depth_multiplier: depthwise only). mult / shift are TFLite's
   (significand, shift) per output channel. */
typedef struct {
    int32_t in_h, in_w, in_c, out_c, depth_multiplier;
    int32_t kh, kw, stride_h, stride_w, pad_top, pad_left;
    int32_t act_min, act_max;       /* int16 clamp (fused activation) */
    int32_t rounding;               /* MSF_ROUND_WIDE */
    const int8_t *weights;
    const int64_t *bias;            /* [out_c], or NULL */
    const int32_t *mult;            /* [out_c] */
    const int32_t *shift;           /* [out_c] */
} msf_conv2d_s16_params;
typedef msf_conv2d_s16_params msf_depthwise_conv2d_s16_params;

/* A dilated CONV_2D or DEPTHWISE_CONV_2D: the plain params (kh, kw: the kernel in taps), and the
   taps' spacing. */
typedef struct {
    msf_conv2d_s16_params op;
    int32_t dilation_h, dilation_w;
} msf_conv2d_dilated_s16_params;
typedef msf_conv2d_dilated_s16_params msf_depthwise_conv2d_dilated_s16_params;

/* FULLY_CONNECTED: as msf_dense_params, with an int64 bias; rounding MSF_ROUND_SINGLE (LiteRT) or
   MSF_ROUND_WIDE (TFLite Micro). */
typedef struct {
    int32_t units;
    int32_t in_h, in_w, in_c;
    int32_t act_min, act_max;
    int32_t per_channel;
    int32_t rounding;
    const int8_t *weights;
    const int64_t *bias;
    const int32_t *mult;
    const int32_t *shift;
} msf_dense_s16_params;

/* SOFTMAX over the last axis of `outer` rows of `depth` values (reference_ops::SoftmaxInt16):
   max - x rescaled by input_mult / input_shift onto the exp table's [-10, 0], the tables' linear
   interpolation, output scale 1/32768. The two 513-entry tables are computed in Python. */
typedef struct {
    int32_t depth, outer;
    int32_t input_mult, input_shift;
    const int16_t *exp_lut;
    const int16_t *reciprocal_lut;
} msf_softmax_s16_params;

/* The int8 params structs serve pooling, ADD (left_shift 15) and MEAN (the reference kernel). */
typedef msf_pool2d_params msf_pool2d_s16_params;
typedef msf_add_params msf_add_s16_params;
typedef msf_global_avg_pool_params msf_global_avg_pool_s16_params;

void msf_conv2d_s16 MSF_REGION_ARGS(msf_conv2d_s16_params);
void msf_depthwise_conv2d_s16 MSF_REGION_ARGS(msf_depthwise_conv2d_s16_params);
void msf_conv2d_dilated_s16 MSF_REGION_ARGS(msf_conv2d_dilated_s16_params);
void msf_depthwise_conv2d_dilated_s16 MSF_REGION_ARGS(msf_depthwise_conv2d_dilated_s16_params);
void msf_depthwise_conv2d_inplace_s16(const msf_depthwise_conv2d_s16_params *p, const msf_view *in, msf_view *out,
                                      int16_t *plane, int32_t out_h, int32_t out_w);
void msf_pool2d_s16 MSF_REGION_ARGS(msf_pool2d_params);
void msf_add_s16 MSF_REGION2_ARGS(msf_add_params);
/* Tails: the accumulators are int64 (channels / units of them). */
void msf_global_avg_pool_s16(const msf_global_avg_pool_params *p, const msf_view *in, int16_t *out);
void msf_global_avg_pool_accumulate_s16(const msf_global_avg_pool_params *p, const msf_view *in,
                                        void *acc, int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_global_avg_pool_finish_s16(const msf_global_avg_pool_params *p, const void *acc, int16_t *out);
void msf_dense_s16(const msf_dense_s16_params *p, const msf_view *in, int16_t *out);
void msf_dense_accumulate_s16(const msf_dense_s16_params *p, const msf_view *in, void *acc,
                              int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_dense_finish_s16(const msf_dense_s16_params *p, const void *acc, int16_t *out);
/* out may be in (in place). */
void msf_softmax_s16(const msf_softmax_s16_params *p, const int16_t *in, int16_t *out);

/* float32 <-> int16 at a 16x8 model's float edges, as msf_quantize_f32 / msf_dequantize_s8 (the
   interpreter's vector rule on blocks of 8, the scalar rule on the rest; `vector` 0 on every value
   for TFLite Micro), saturated to int16. */
int16_t msf_quantize_f32_s16_one(float x, float scale, int32_t zero_point, int vector);
float msf_dequantize_s16_one(int16_t q, float scale, int32_t zero_point, int vector);
void msf_quantize_f32_s16(const float *in, int16_t *out, int32_t n, float scale, int32_t zero_point);
void msf_dequantize_s16(const int16_t *in, float *out, int32_t n, float scale, int32_t zero_point);

MSF_END_DECLS

#endif /* MSF_INT16_H */

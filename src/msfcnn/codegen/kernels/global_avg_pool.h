/* MEAN over H and W (global_avg_pool.c). */
#ifndef MSF_GLOBAL_AVG_POOL_H
#define MSF_GLOBAL_AVG_POOL_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* MEAN over H and W (global average pool). Two int8 kernels, as the interpreter has:
   keepdims = 1: optimized_integer_ops::Mean (multiplier folding 1/count, channels below
   vector_channels in ruy rounding, the rest gemmlowp rounding, float-derived bias);
   keepdims = 0: reference QuantizedMeanOrSum (exact zero-point correction, DOUBLE rounding).
   pool = 1: AVERAGE_POOL_2D with one window over the whole map (the quotient rounded half away from
   zero, then the fused activation). */
typedef struct {
    int32_t in_h, in_w, channels;
    int32_t win_h, win_w;           /* the rows and columns summed, from the top left (in_h, in_w but for a pool) */
    int32_t count;                  /* win_h * win_w */
    int32_t keepdims;
    int32_t mult, shift;
    int32_t input_zero_point;       /* generic kernel: subtracts input_zero_point * count */
    int32_t output_offset;          /* keepdims: the float-derived bias; generic: output zero point */
    int32_t vector_channels;        /* keepdims: channels / 16 * 16 */
    int32_t pool;                   /* 1: AVERAGE_POOL_2D over the whole map (its rounding, then): */
    int32_t act_min, act_max;       /* int8: the fused activation's range */
    int32_t activation;             /* float: MSF_ACT_* */
} msf_global_avg_pool_params;

/* Tail ops, streamed: the caller zeroes the accumulator (channels / units entries of int32, or of
   float) before the first accumulate; regions of the (H, W, C) input may come in any order and
   split (integer sums are exact in any order; float sums follow the call order). finish writes
   the output vector. For a dense layer streaming the map before a flattening reshape, its params
   must describe that map (c_params with the map's shape as the input shape).
   One-shot forms (no accumulator): the whole (in_h, in_w, C) input through a view, e.g. a vector
   as { base, n, n, 0, 0, 0, 0 } with in_h = in_w = 1. */
void msf_global_avg_pool_s8(const msf_global_avg_pool_params *p, const msf_view *in, int8_t *out);
void msf_global_avg_pool_f32(const msf_global_avg_pool_params *p, const msf_view *in, float *out);

void msf_global_avg_pool_accumulate_s8(const msf_global_avg_pool_params *p, const msf_view *in,
                                       void *acc, int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_global_avg_pool_finish_s8(const msf_global_avg_pool_params *p, const void *acc, int8_t *out);
void msf_global_avg_pool_accumulate_f32(const msf_global_avg_pool_params *p, const msf_view *in,
                                        float *acc, int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_global_avg_pool_finish_f32(const msf_global_avg_pool_params *p, const float *acc, float *out);

MSF_END_DECLS

#endif /* MSF_GLOBAL_AVG_POOL_H */

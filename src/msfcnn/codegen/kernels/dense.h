/* FULLY_CONNECTED (dense.c), whole or as a tail streamed as MEAN's (global_avg_pool.h). */
#ifndef MSF_DENSE_H
#define MSF_DENSE_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* FULLY_CONNECTED. weights (units, in_features), in_features = in_h * in_w * in_c, the input
   flattened row-major over (H, W, C) as TFLite flattens NHWC. mult/shift hold units entries if
   per_channel, else one. */
typedef struct {
    int32_t units;
    int32_t in_h, in_w, in_c;
    int32_t input_offset, output_offset;
    int32_t act_min, act_max;
    int32_t per_channel;
    int32_t rounding;               /* ruy's on x86 */
    int32_t activation;
    const int8_t *weights;
    const int32_t *bias;
    const int32_t *mult;
    const int32_t *shift;
    const float *weights_f32;
    const float *bias_f32;
} msf_dense_params;

void msf_dense_s8(const msf_dense_params *p, const msf_view *in, int8_t *out);
void msf_dense_f32(const msf_dense_params *p, const msf_view *in, float *out);

void msf_dense_accumulate_s8(const msf_dense_params *p, const msf_view *in, void *acc,
                             int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_dense_finish_s8(const msf_dense_params *p, const void *acc, int8_t *out);
void msf_dense_accumulate_f32(const msf_dense_params *p, const msf_view *in, float *acc,
                              int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_dense_finish_f32(const msf_dense_params *p, const float *acc, float *out);

MSF_END_DECLS

#endif /* MSF_DENSE_H */

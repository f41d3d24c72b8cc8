/* SOFTMAX (softmax.c). */
#ifndef MSF_SOFTMAX_H
#define MSF_SOFTMAX_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* SOFTMAX over the last axis of `outer` rows of `depth` values. */
typedef struct {
    int32_t depth, outer;
    int32_t output_offset;          /* output zero point */
    float output_scale;             /* int8: the float32 output scale */
    float beta;                     /* float graphs */
    const float *exp_table;         /* int8: [256], exp_table[d] = expf(-input_scale * beta * d) */
} msf_softmax_params;

/* SOFTMAX on contiguous rows; out may be in (in place). */
void msf_softmax_s8(const msf_softmax_params *p, const int8_t *in, int8_t *out);
void msf_softmax_f32(const msf_softmax_params *p, const float *in, float *out);

MSF_END_DECLS

#endif /* MSF_SOFTMAX_H */

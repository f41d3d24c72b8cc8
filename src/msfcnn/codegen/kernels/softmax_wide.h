/* SOFTMAX from int8 to int16 (softmax_wide.c): the head of TFLite Micro's keyword models. */
#ifndef MSF_SOFTMAX_WIDE_H
#define MSF_SOFTMAX_WIDE_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* `outer` rows of `depth` values; the output's scale is 1/65536 and its zero point -32768. */
typedef struct {
    int32_t depth, outer;
    int32_t tflm;                   /* TFLite Micro's fixed-point arithmetic, else LiteRT's float32 one */
    int32_t output_offset;          /* LiteRT: the output zero point */
    float output_scale;             /* LiteRT: the float32 output scale */
    const float *exp_table;         /* LiteRT: [256], exp_table[d] = expf(-input_scale * beta * d) */
    const int32_t *exp_fixed;       /* TFLite Micro: [256], exp of -d in Q0.31, 0 beyond the input radius */
} msf_softmax_wide_params;

void msf_softmax_wide_s8(const msf_softmax_wide_params *p, const int8_t *in, int16_t *out);

MSF_END_DECLS

#endif /* MSF_SOFTMAX_WIDE_H */

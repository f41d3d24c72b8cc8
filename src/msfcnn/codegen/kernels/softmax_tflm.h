/* SOFTMAX from int8 to int8 under TFLite Micro's numerics (softmax_tflm.c). */
#ifndef MSF_SOFTMAX_TFLM_H
#define MSF_SOFTMAX_TFLM_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* `outer` rows of `depth` values; the output's scale is 1/256 and its zero point -128. */
typedef struct {
    int32_t depth, outer;
    const int32_t *exp_fixed;       /* [256], exp of -d in Q0.31, 0 beyond the input radius */
} msf_softmax_tflm_params;

void msf_softmax_tflm_s8(const msf_softmax_tflm_params *p, const int8_t *in, int8_t *out);

MSF_END_DECLS

#endif /* MSF_SOFTMAX_TFLM_H */

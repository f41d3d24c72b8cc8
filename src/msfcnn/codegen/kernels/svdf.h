/* SVDF, int8 (svdf.c): a feature filter, a memory of past steps, a time filter. */
#ifndef MSF_SVDF_H
#define MSF_SVDF_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* filters = units * rank. weights (filters, n_input) int8; weights_time (filters, memory) and the
   state (filters, memory) int16, or int8 when state_int8; bias (units) int32. The state is one of
   the network's state buffers: it lives in the arena's persistent region and outlives the call. */
typedef struct {
    int32_t n_input, units, rank, memory;
    const int8_t *weights;
    const int32_t *bias;
    const void *weights_time;
    void *state;
    int32_t state_int8;
    int32_t input_offset, state_zero_point, output_offset;
    int32_t mult1, shift1, mult2, shift2;
    int32_t rounding;
} msf_svdf_params;

void msf_svdf_s8(const msf_svdf_params *p, const int8_t *in, int8_t *out);

MSF_END_DECLS

#endif /* MSF_SVDF_H */

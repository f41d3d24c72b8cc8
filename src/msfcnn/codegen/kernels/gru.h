/* ONNX GRU, float32 (gru.c): a (steps, features) sequence in, the hidden state of every step
   (steps, units) out in time order. The state and one step's gates live in the caller's workspace
   (Gru.workspace_floats in ops/gru.py); msf_gru_step_f32 runs one step, so a time-scan loop can
   call it step by step. */
#ifndef MSF_GRU_H
#define MSF_GRU_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* Gates in ONNX's order: update z, reset r, candidate n. weights [3][units][features], recurrent
   [3][units][units], bias_x / bias_h [3][units]. */
typedef struct {
    int32_t steps, features, units;
    int32_t reverse;                /* the steps from the last to the first */
    int32_t linear_before_reset;    /* n = tanh(Wn x + bn + r * (Rn h + Rbn)), else Rn (r * h) */
    const float *weights;
    const float *recurrent;
    const float *bias_x;
    const float *bias_h;
} msf_gru_params;

/* One step: reads x [features] and h [units], writes the new h over it; scratch [6 * units], and
   [7 * units] without linear_before_reset. */
void msf_gru_step_f32(const msf_gru_params *p, const float *x, float *h, float *scratch);

/* The whole sequence from a zero state; workspace: Gru.workspace_floats, 4-aligned. */
void msf_gru_f32(const msf_gru_params *p, const float *in, float *out, void *workspace);

MSF_END_DECLS

#endif /* MSF_GRU_H */

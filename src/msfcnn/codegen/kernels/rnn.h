/* ONNX RNN, float32 (rnn.c): h = tanh or relu of (Wi x + Wbi + Ri h + Rbi) per step; a (steps,
   features) sequence in, the hidden state of every step (steps, units) out in time order. The
   state lives in the caller's workspace (Rnn.workspace_floats in ops/rnn.py); msf_rnn_step_f32
   runs one step, so a time-scan loop can call it step by step. */
#ifndef MSF_RNN_H
#define MSF_RNN_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

typedef struct {
    int32_t steps, features, units;
    int32_t reverse;  /* the steps from the last to the first */
    int32_t relu;     /* relu, else tanh */
    const float *weights;    /* [units][features] */
    const float *recurrent;  /* [units][units] */
    const float *bias_x;
    const float *bias_h;
} msf_rnn_params;

/* One step: reads x [features] and h [units], writes the new h over it; scratch [units]. */
void msf_rnn_step_f32(const msf_rnn_params *p, const float *x, float *h, float *scratch);

/* The whole sequence from a zero state; workspace: 2 * units floats, 4-aligned. */
void msf_rnn_f32(const msf_rnn_params *p, const float *in, float *out, void *workspace);

MSF_END_DECLS

#endif /* MSF_RNN_H */

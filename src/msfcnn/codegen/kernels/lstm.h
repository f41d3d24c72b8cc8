/* UNIDIRECTIONAL_SEQUENCE_LSTM (lstm.c): a (steps, features) sequence in, the hidden state of
   every step (steps, units) or of the last one (units) out. The states and one step's gates live
   in the caller's workspace (Lstm.workspace_bytes in ops/lstm.py); msf_lstm_step_* runs one step
   on them, so a time-scan loop can call it step by step. */
#ifndef MSF_LSTM_H
#define MSF_LSTM_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* Gates in TFLite's order: input, forget, cell, output. weights [4][units][features], recurrent
   [4][units][units]. int8: bias_x / bias_h are the effective biases of the input and recurrent
   matmuls (zero points folded in), mult / shift their 8 multipliers to Q3.12 (input gates, then
   recurrent ones). */
typedef struct {
    int32_t steps, features, units;
    int32_t return_sequences;
    int32_t tflm;                   /* int8: TFLite Micro's arithmetic, else LiteRT's */
    int32_t cell_log2;              /* int8: the cell state's scale is 2^cell_log2 */
    int32_t cell_clip_q;            /* int8: |c| <= cell_clip_q when > 0 */
    int32_t hidden_zero;            /* int8: the hidden state's zero point (its initial value) */
    int32_t h_zero, h_mult, h_shift;  /* int8: o * tanh(c) to the hidden state */
    int32_t ig_mult, ig_shift;      /* int8, TFLite Micro: i * g to the cell state */
    float cell_clip;                /* float: |c| <= cell_clip when > 0 */
    const int8_t *weights;
    const int8_t *recurrent;
    const int32_t *bias_x;
    const int32_t *bias_h;
    const int32_t *mult;
    const int32_t *shift;
    const int32_t *sigmoid_table;   /* int8, TFLite Micro: sigmoid(i / 24) in Q0.16, [256] */
    const float *weights_f32;
    const float *recurrent_f32;
    const float *bias_f32;
} msf_lstm_params;

/* One step: reads x [features] and the state h [units], c [units]; writes the new h and c over
   them; gates [4 * units] is scratch. */
void msf_lstm_step_s8(const msf_lstm_params *p, const int8_t *x, int8_t *h, int16_t *c, int16_t *gates);
void msf_lstm_step_f32(const msf_lstm_params *p, const float *x, float *h, float *c, float *gates);

/* The whole sequence from zero states; workspace: Lstm.workspace_bytes bytes (int8: at any
   address; float32: 4-aligned). */
void msf_lstm_s8(const msf_lstm_params *p, const int8_t *in, int8_t *out, void *workspace);
void msf_lstm_f32(const msf_lstm_params *p, const float *in, float *out, void *workspace);

MSF_END_DECLS

#endif /* MSF_LSTM_H */

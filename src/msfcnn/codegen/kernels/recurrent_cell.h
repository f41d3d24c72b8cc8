/* ONNX's GRU and RNN one step at a time, for a time scan (schedule/schemes/timescan.py): h lives
   in `state`, FloatRecurrent.cell_bytes(...)[0] bytes of the arena kept from step to step (ops/
   recurrent.py); one step's scratch in `temp`, cell_bytes(...)[1] bytes that the cells of a block
   share. float32 only; the step is the whole-sequence kernel's (msf_gru_step_f32, msf_rnn_step_f32). */
#ifndef MSF_RECURRENT_CELL_H
#define MSF_RECURRENT_CELL_H

#include "gru.h"
#include "rnn.h"

MSF_BEGIN_DECLS

/* The state before the first step: h zero. */
void msf_gru_cell_start_f32(const msf_gru_params *p, void *state);
void msf_rnn_cell_start_f32(const msf_rnn_params *p, void *state);

/* One step on x [features]: updates h and returns it, the step's output. */
const float *msf_gru_cell_f32(const msf_gru_params *p, const float *x, void *state, void *temp);
const float *msf_rnn_cell_f32(const msf_rnn_params *p, const float *x, void *state, void *temp);

/* h in the state: the output of the last step run. */
const float *msf_gru_cell_output_f32(const msf_gru_params *p, const void *state);
const float *msf_rnn_cell_output_f32(const msf_rnn_params *p, const void *state);

MSF_END_DECLS

#endif /* MSF_RECURRENT_CELL_H */

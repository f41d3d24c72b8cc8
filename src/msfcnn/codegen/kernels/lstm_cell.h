/* The LSTM one step at a time, for a time scan (schedule/schemes/timescan.py): the state (h and
   c) lives in `state`, Lstm.cell_bytes(...)[0] bytes of the arena, kept from step to step; one
   step's gates in `temp`, Lstm.cell_bytes(...)[1] bytes that the cells of a block share. The
   layout is Lstm.cell_views: float32 h then c; int8 c (int16) from the first even address and h
   in the last units bytes, the gates from temp's first even address. */
#ifndef MSF_LSTM_CELL_H
#define MSF_LSTM_CELL_H

#include "lstm.h"

MSF_BEGIN_DECLS

/* The state before the first step: h at its zero point, c zero. */
void msf_lstm_cell_start_s8(const msf_lstm_params *p, void *state);
void msf_lstm_cell_start_f32(const msf_lstm_params *p, void *state);

/* One step on x [features]: updates the state and returns h [units], the step's output. */
const int8_t *msf_lstm_cell_s8(const msf_lstm_params *p, const int8_t *x, void *state, void *temp);
const float *msf_lstm_cell_f32(const msf_lstm_params *p, const float *x, void *state, void *temp);

/* h in the state: the output of the last step run. */
const int8_t *msf_lstm_cell_output_s8(const msf_lstm_params *p, const void *state);
const float *msf_lstm_cell_output_f32(const msf_lstm_params *p, const void *state);

MSF_END_DECLS

#endif /* MSF_LSTM_CELL_H */

/* An LSTM's cell state after its last step (lstm_cell_state.c, ops/lstm_cell_state.py: ONNX's
   Y_c), float32: lstm.c's steps from zero states, c [units] out. */
#ifndef MSF_LSTM_CELL_STATE_H
#define MSF_LSTM_CELL_STATE_H

#include "lstm.h"

MSF_BEGIN_DECLS

typedef msf_lstm_params msf_lstm_cell_state_params;

/* workspace: Lstm.workspace_bytes("float32") bytes, 4-aligned: h, c and the gates in a row. */
void msf_lstm_cell_state_f32(const msf_lstm_cell_state_params *p, const float *in, float *out, void *workspace);

MSF_END_DECLS

#endif /* MSF_LSTM_CELL_STATE_H */

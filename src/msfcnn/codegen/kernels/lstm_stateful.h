/* A stateful LSTM (lstm_stateful.c, Lstm.stateful in ops/lstm.py): a streaming model's LSTM, one
   step (or a few) per call, whose states outlive the call in the arena's persistent region
   (hidden: int8 or float [units], cell: int16 or float [units]), so the sequence goes on from the
   states the last call left. Its steps are lstm.c's. */
#ifndef MSF_LSTM_STATEFUL_H
#define MSF_LSTM_STATEFUL_H

#include "lstm.h"

MSF_BEGIN_DECLS

typedef struct {
    msf_lstm_params op;
    void *hidden;
    void *cell;
} msf_lstm_stateful_params;

/* workspace: Lstm.workspace_bytes bytes, one step's gates alone (int8: int16 gates from its first
   even address; float32: 4-aligned). */
void msf_lstm_stateful_s8(const msf_lstm_stateful_params *p, const int8_t *in, int8_t *out, void *workspace);
void msf_lstm_stateful_f32(const msf_lstm_stateful_params *p, const float *in, float *out, void *workspace);

MSF_END_DECLS

#endif /* MSF_LSTM_STATEFUL_H */

/* An LSTM's cell state after its last step (lstm_cell_state.h): msf_lstm_step_f32 over every
   step, then c copied out. */
#include <string.h>

#include "lstm_cell_state.h"

void msf_lstm_cell_state_f32(const msf_lstm_cell_state_params *p, const float *in, float *out, void *workspace)
{
    const size_t n = (size_t)p->units;
    float *h = (float *)workspace;  /* h, c and the gates in a row (Lstm.workspace_views) */
    float *c = h + n;
    int32_t t;
    memset(h, 0, 2 * n * sizeof(float));  /* all-zero bits: 0.0f in IEEE single precision */
    for (t = 0; t < p->steps; ++t) {
        msf_lstm_step_f32(p, in + (size_t)t * (size_t)p->features, h, c, c + n);
    }
    memcpy(out, c, n * sizeof(float));
}

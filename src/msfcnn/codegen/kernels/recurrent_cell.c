/* ONNX's GRU and RNN one step at a time (recurrent_cell.h): the kind's step function on the
   state, which is the cell's h. Both kinds differ only in their params and step function. */
#include <string.h>

#include "recurrent_cell.h"

void msf_gru_cell_start_f32(const msf_gru_params *p, void *state)
{
    memset(state, 0, (size_t)p->units * sizeof(float)); /* all-zero bits: 0.0f */
}

void msf_rnn_cell_start_f32(const msf_rnn_params *p, void *state)
{
    memset(state, 0, (size_t)p->units * sizeof(float));
}

const float *msf_gru_cell_f32(const msf_gru_params *p, const float *x, void *state, void *temp)
{
    msf_gru_step_f32(p, x, (float *)state, (float *)temp);
    return (const float *)state;
}

const float *msf_rnn_cell_f32(const msf_rnn_params *p, const float *x, void *state, void *temp)
{
    msf_rnn_step_f32(p, x, (float *)state, (float *)temp);
    return (const float *)state;
}

const float *msf_gru_cell_output_f32(const msf_gru_params *p, const void *state)
{
    (void)p;
    return (const float *)state;
}

const float *msf_rnn_cell_output_f32(const msf_rnn_params *p, const void *state)
{
    (void)p;
    return (const float *)state;
}

/* The LSTM one step at a time (lstm_cell.h): the state's and the gates' pointers, then
   msf_lstm_step_*. */
#include "lstm_cell.h"

static int16_t *even_int16(void *bytes)
{
    unsigned char *base = (unsigned char *)bytes;
    return (int16_t *)(void *)(base + ((uintptr_t)base & 1u));
}

void msf_lstm_cell_start_s8(const msf_lstm_params *p, void *state)
{
    const size_t n = (size_t)p->units;
    memset(even_int16(state), 0, 2 * n);
    memset((unsigned char *)state + 2 * n + 1, p->hidden_zero, n);
}

void msf_lstm_cell_start_f32(const msf_lstm_params *p, void *state)
{
    memset(state, 0, 2 * (size_t)p->units * sizeof(float));  /* all-zero bits: 0.0f */
}

const int8_t *msf_lstm_cell_s8(const msf_lstm_params *p, const int8_t *x, void *state, void *temp)
{
    int8_t *h = (int8_t *)state + 2 * (size_t)p->units + 1;
    msf_lstm_step_s8(p, x, h, even_int16(state), even_int16(temp));
    return h;
}

const float *msf_lstm_cell_f32(const msf_lstm_params *p, const float *x, void *state, void *temp)
{
    float *h = (float *)state;
    msf_lstm_step_f32(p, x, h, h + p->units, (float *)temp);
    return h;
}

const int8_t *msf_lstm_cell_output_s8(const msf_lstm_params *p, const void *state)
{
    return (const int8_t *)state + 2 * (size_t)p->units + 1;
}

const float *msf_lstm_cell_output_f32(const msf_lstm_params *p, const void *state)
{
    (void)p;
    return (const float *)state;
}

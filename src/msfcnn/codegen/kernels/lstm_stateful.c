/*
 * A stateful LSTM (lstm_stateful.h): the steps of one call from the states in p->hidden and
 * p->cell, which keep the last step's for the next call. Bit-exact with ops/lstm.py as lstm.c.
 */
#include <stdint.h>
#include <string.h>

#include "lstm_stateful.h"

void msf_lstm_stateful_s8(const msf_lstm_stateful_params *p, const int8_t *in, int8_t *out, void *workspace)
{
    unsigned char *base = (unsigned char *)workspace;
    int16_t *gates = (int16_t *)(void *)(base + ((uintptr_t)base & 1u));
    int8_t *h = (int8_t *)p->hidden;
    const size_t n = (size_t)p->op.units;
    int32_t t;
    for (t = 0; t < p->op.steps; ++t) {
        msf_lstm_step_s8(&p->op, in + (size_t)t * (size_t)p->op.features, h, (int16_t *)p->cell, gates);
        if (p->op.return_sequences) {
            memcpy(out + (size_t)t * n, h, n);
        }
    }
    if (!p->op.return_sequences) {
        memcpy(out, h, n);
    }
}

void msf_lstm_stateful_f32(const msf_lstm_stateful_params *p, const float *in, float *out, void *workspace)
{
    float *h = (float *)p->hidden;
    const size_t n = (size_t)p->op.units;
    int32_t t;
    for (t = 0; t < p->op.steps; ++t) {
        msf_lstm_step_f32(&p->op, in + (size_t)t * (size_t)p->op.features, h, (float *)p->cell, (float *)workspace);
        if (p->op.return_sequences) {
            memcpy(out + (size_t)t * n, h, n * sizeof(float));
        }
    }
    if (!p->op.return_sequences) {
        memcpy(out, h, n * sizeof(float));
    }
}

/*
 * ONNX RNN, float32, as ops/rnn.py: each matmul a running sum from its bias in the order of its
 * inputs; float_math.h's tanh, within a few ulp of the host C library's that the numpy kernel
 * calls.
 */
#include <stdint.h>
#include <string.h>

#include "float_math.h"
#include "rnn.h"

void msf_rnn_step_f32(const msf_rnn_params *p, const float *x, float *h, float *scratch)
{
    const int32_t n = p->units;
    int32_t u, k;
    for (u = 0; u < n; ++u) {
        const float *wx = p->weights + (size_t)u * (size_t)p->features;
        const float *wh = p->recurrent + (size_t)u * (size_t)n;
        float a = p->bias_x[u];
        float b = p->bias_h[u];
        for (k = 0; k < p->features; ++k) {
            a += wx[k] * x[k];
        }
        for (k = 0; k < n; ++k) {
            b += wh[k] * h[k];
        }
        a += b;
        scratch[u] = p->relu ? (a > 0.0f ? a : 0.0f) : msf_tanhf(a);
    }
    memcpy(h, scratch, (size_t)n * sizeof(float));
}

void msf_rnn_f32(const msf_rnn_params *p, const float *in, float *out, void *workspace)
{
    const size_t n = (size_t)p->units;
    float *h = (float *)workspace;  /* h, then the new h (Rnn.workspace_floats) */
    int32_t s;
    memset(h, 0, n * sizeof(float));  /* all-zero bits: 0.0f in IEEE single precision */
    for (s = 0; s < p->steps; ++s) {
        const int32_t t = p->reverse ? p->steps - 1 - s : s;
        msf_rnn_step_f32(p, in + (size_t)t * (size_t)p->features, h, h + n);
        memcpy(out + (size_t)t * n, h, n * sizeof(float));
    }
}

/*
 * ONNX GRU, float32, as ops/gru.py: each matmul a running sum from its bias in the order of its
 * inputs; float_math.h's logistic and tanh, within a few ulp of the host C library's that the
 * numpy kernel calls.
 */
#include <stdint.h>
#include <string.h>

#include "float_math.h"
#include "gru.h"

/* bias[u] + sum_k w[u][k] * v[k] for each of the n rows */
static void rows_f32(const float *w, const float *bias, const float *v, int32_t n, int32_t k_count, float *out)
{
    int32_t u, k;
    for (u = 0; u < n; ++u) {
        const float *row = w + (size_t)u * (size_t)k_count;
        float acc = bias[u];
        for (k = 0; k < k_count; ++k) {
            acc += row[k] * v[k];
        }
        out[u] = acc;
    }
}

void msf_gru_step_f32(const msf_gru_params *p, const float *x, float *h, float *scratch)
{
    const int32_t n = p->units;
    const size_t un = (size_t)n;
    float *xg = scratch;        /* the input's z, r, n sums; then z and r themselves */
    float *hg = scratch + 3 * un;
    float *rh = scratch + 6 * un;
    int32_t g, u;
    for (g = 0; g < 3; ++g) {
        rows_f32(p->weights + (size_t)g * un * (size_t)p->features, p->bias_x + (size_t)g * un, x, n, p->features,
                 xg + (size_t)g * un);
    }
    for (g = 0; g < 2; ++g) {
        rows_f32(p->recurrent + (size_t)g * un * un, p->bias_h + (size_t)g * un, h, n, n, hg + (size_t)g * un);
    }
    for (u = 0; u < 2 * n; ++u) {
        xg[u] = msf_logisticf(xg[u] + hg[u]);
    }
    if (p->linear_before_reset) {
        rows_f32(p->recurrent + 2 * un * un, p->bias_h + 2 * un, h, n, n, hg + 2 * un);
        for (u = 0; u < n; ++u) {
            hg[2 * un + (size_t)u] = msf_tanhf(xg[2 * un + (size_t)u] + xg[un + (size_t)u] * hg[2 * un + (size_t)u]);
        }
    } else {
        for (u = 0; u < n; ++u) {
            rh[u] = xg[un + (size_t)u] * h[u];
        }
        rows_f32(p->recurrent + 2 * un * un, p->bias_h + 2 * un, rh, n, n, hg + 2 * un);
        for (u = 0; u < n; ++u) {
            hg[2 * un + (size_t)u] = msf_tanhf(xg[2 * un + (size_t)u] + hg[2 * un + (size_t)u]);
        }
    }
    for (u = 0; u < n; ++u) {
        h[u] = (1.0f - xg[u]) * hg[2 * un + (size_t)u] + xg[u] * h[u];
    }
}

void msf_gru_f32(const msf_gru_params *p, const float *in, float *out, void *workspace)
{
    const size_t n = (size_t)p->units;
    float *h = (float *)workspace;  /* h, then the step's scratch (Gru.workspace_floats) */
    int32_t s;
    memset(h, 0, n * sizeof(float));  /* all-zero bits: 0.0f in IEEE single precision */
    for (s = 0; s < p->steps; ++s) {
        const int32_t t = p->reverse ? p->steps - 1 - s : s;
        msf_gru_step_f32(p, in + (size_t)t * (size_t)p->features, h, h + n);
        memcpy(out + (size_t)t * n, h, n * sizeof(float));
    }
}

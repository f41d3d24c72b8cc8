/*
 * The `chains` scheme's DEPTHWISE_CONV_2D, added tap by tap (src/msfcnn/schedule/schemes/chains.py).
 *
 * The same integers as depthwise_conv2d.c: per output channel, the int32 sum of (input - input
 * zero point) * weight over the in-bounds taps (padding skipped), plus the bias, then the op's
 * per-channel output stage (msf_output_stage_s8, with the part's own rounding). Integer sums are
 * exact in any order, so adding one kernel row of taps at a time, as the chain's first op makes
 * them, gives the kernel's results bit for bit. The sums of one pixel live on the caller's stack.
 */
#include "chain.h"
#include "window.h"

void msf_chain_start_s8(const msf_depthwise_conv2d_params *p, int32_t *acc)
{
    int32_t c;
    for (c = 0; c < p->out_c; ++c) {
        acc[c] = p->bias != NULL ? p->bias[c] : 0;
    }
}

void msf_chain_taps_s8(const msf_depthwise_conv2d_params *p, int32_t *acc, const int8_t *x, int32_t stride,
                       int32_t dy, int32_t dx, int32_t taps)
{
    const int32_t n = p->out_c, offset = p->input_offset;
    const int8_t *w = p->weights + (ptrdiff_t)(dy * p->kw + dx) * n;
    int32_t t, c;
    for (t = 0; t < taps; ++t, x += stride, w += n) {
        for (c = 0; c < n; ++c) {
            acc[c] += ((int32_t)x[c] + offset) * w[c];
        }
    }
}

void msf_chain_finish_s8(const msf_depthwise_conv2d_params *p, const int32_t *acc, int8_t *dst)
{
    const msf_output_stage stage = MSF_OUTPUT_STAGE(p);
    msf_output_stage_s8(&stage, msf_output_stage_mode(&stage, p->out_c), acc, 0, p->out_c, dst);
}

/*
 * MEAN over H, W or both, keeping the reduced axes, over an output region
 * (src/msfcnn/ops/axis_mean.py).
 *
 * Output (r, c) is the mean of input rows [r, r + kh) x columns [c, c + kw) (the whole reduced
 * axes: stride 1, no padding). int8, as TFLite's reference QuantizedMeanOrSum: the int32 sum minus
 * input_zero_point * count, rescaled by MultiplyByQuantizedMultiplier (1/count folded into mult /
 * shift, gemmlowp rounding), plus the output zero point, saturated. float: sum / count.
 */
#include "axis_mean.h"
#include "numerics.h"

void msf_axis_mean_s8 MSF_REGION_ARGS(msf_axis_mean_params)
{
    const int32_t count = p->kh * p->kw;
    int32_t r, c, ch, i, j;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            int8_t *dst = msf_at_s8(out, r, c, 0);
            for (ch = 0; ch < p->channels; ++ch) {
                int32_t sum = 0, v;
                for (i = 0; i < p->kh; ++i) {
                    for (j = 0; j < p->kw; ++j) {
                        sum += *msf_at_s8(in, r + i, c + j, ch);
                    }
                }
                v = msf_mul_by_quantized_mult(sum - p->input_zero_point * count, p->mult, p->shift, MSF_ROUND_DOUBLE);
                dst[ch] = msf_clamp_s8(v, p->output_offset, -128, 127);
            }
        }
    }
}

void msf_axis_mean_f32 MSF_REGION_ARGS(msf_axis_mean_params)
{
    const float count = (float)(p->kh * p->kw);
    int32_t r, c, ch, i, j;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            float *dst = msf_at_f32(out, r, c, 0);
            for (ch = 0; ch < p->channels; ++ch) {
                float sum = 0.0f;
                for (i = 0; i < p->kh; ++i) {
                    for (j = 0; j < p->kw; ++j) {
                        sum += *msf_at_f32(in, r + i, c + j, ch);
                    }
                }
                dst[ch] = sum / count;
            }
        }
    }
}

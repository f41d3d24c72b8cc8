/*
 * RESIZE_BILINEAR of an int8 map over an output region (src/msfcnn/ops/resize_bilinear.py), as
 * TFLite's integer kernel computes it. p->rows and p->cols hold a (lo, hi, weight) triple per
 * output row and column, made at compile time: the two input positions around the output one and
 * the weight of `hi` in 1/1024 units (`lo` weighs 1024 - weight). An output value is the sum of its
 * four neighbours times the products of their weights (units of 2^-20), rounded to the nearest
 * integer with halves away from zero; input and output share one quantisation.
 *
 * The sum fits in int32: a weight lies in [-512, 1536] and the two weights of an axis differ by
 * at most 2048 in absolute sum, so |sum| <= 128 * 2048 * 2048 < 2^31.
 */
#include "msfcnn_kernels.h"

#define MSF_BILINEAR_ONE 1024
#define MSF_BILINEAR_HALF (1 << 19)

/* The sum in 2^-20 units to the nearest integer, halves away from zero (C99 division truncates). */
static int8_t msf_bilinear_round(int32_t sum)
{
    return (int8_t)((sum + (sum > 0 ? MSF_BILINEAR_HALF : -MSF_BILINEAR_HALF)) / (1 << 20));
}

void msf_resize_bilinear_s8(const msf_resize_bilinear_params *p, const msf_view *in, msf_view *out,
                            int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t r, c, ch;
    for (r = r0; r < r1; ++r) {
        const int32_t *row = p->rows + 3 * r;
        const int32_t w_bottom = row[2], w_top = MSF_BILINEAR_ONE - row[2];
        for (c = c0; c < c1; ++c) {
            const int32_t *col = p->cols + 3 * c;
            const int32_t w_right = col[2], w_left = MSF_BILINEAR_ONE - col[2];
            const int32_t w_tl = w_top * w_left, w_tr = w_top * w_right;
            const int32_t w_bl = w_bottom * w_left, w_br = w_bottom * w_right;
            const int8_t *tl = msf_at_s8(in, row[0], col[0], 0), *tr = msf_at_s8(in, row[0], col[1], 0);
            const int8_t *bl = msf_at_s8(in, row[1], col[0], 0), *br = msf_at_s8(in, row[1], col[1], 0);
            int8_t *to = msf_at_s8(out, r, c, 0);
            for (ch = 0; ch < p->channels; ++ch) {
                to[ch] = msf_bilinear_round(tl[ch] * w_tl + tr[ch] * w_tr + bl[ch] * w_bl + br[ch] * w_br);
            }
        }
    }
}

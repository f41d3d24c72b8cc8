/*
 * RESIZE_BILINEAR of an int8 or int16 map over an output region (src/msfcnn/ops/resize_bilinear.py),
 * as TFLite's integer kernel computes it (float32 maps, from ONNX's linear Resize: the same four
 * neighbours, weights in float32 from their own tables, at the end of this file). p->rows and p->cols hold a (lo, hi, weight) triple per
 * output row and column, made at compile time: the two input positions around the output one and
 * the weight of `hi` in 1/1024 units (`lo` weighs 1024 - weight). An output value is the sum of its
 * four neighbours times the products of their weights (units of 2^-20), rounded to the nearest
 * integer with halves away from zero; input and output share one quantisation.
 *
 * A weight lies in [-512, 1536] and the two weights of an axis add up to at most 2048 in absolute
 * value, so an int8 sum stays below 128 * 2048 * 2048 < 2^31 (int32); an int16 sum needs int64.
 */
#include "resize_bilinear.h"

#define MSF_BILINEAR_ONE 1024
#define MSF_BILINEAR_SHIFT 20

/* The four neighbours of one output pixel: element offsets into the input view (top left, top
   right, bottom left, bottom right) and their weights. */
typedef struct {
    ptrdiff_t at[4];
    int32_t weight[4];
} msf_bilinear_pixel;

static msf_bilinear_pixel msf_bilinear_neighbours(const msf_resize_bilinear_params *p, const msf_view *in,
                                                  int32_t r, int32_t c)
{
    const int32_t *row = p->rows + 3 * r, *col = p->cols + 3 * c;
    const int32_t w_bottom = row[2], w_top = MSF_BILINEAR_ONE - row[2];
    const int32_t w_right = col[2], w_left = MSF_BILINEAR_ONE - col[2];
    msf_bilinear_pixel px;
    px.at[0] = msf_offset(in, row[0], col[0], 0);
    px.at[1] = msf_offset(in, row[0], col[1], 0);
    px.at[2] = msf_offset(in, row[1], col[0], 0);
    px.at[3] = msf_offset(in, row[1], col[1], 0);
    px.weight[0] = w_top * w_left;
    px.weight[1] = w_top * w_right;
    px.weight[2] = w_bottom * w_left;
    px.weight[3] = w_bottom * w_right;
    return px;
}

/* A sum in 2^-20 units to the nearest integer, halves away from zero (C99 division truncates):
   in int32 for int8 maps, in int64 for int16 ones. */
static int32_t msf_bilinear_round(int32_t sum)
{
    const int32_t half = 1 << (MSF_BILINEAR_SHIFT - 1);
    return (sum + (sum > 0 ? half : -half)) / (1 << MSF_BILINEAR_SHIFT);
}

static int64_t msf_bilinear_round_wide(int64_t sum)
{
    const int64_t half = (int64_t)1 << (MSF_BILINEAR_SHIFT - 1);
    return (sum + (sum > 0 ? half : -half)) / ((int64_t)1 << MSF_BILINEAR_SHIFT);
}

static void msf_resize_bilinear_float(const msf_resize_bilinear_params *p, const msf_view *in, msf_view *out,
                                      int32_t r0, int32_t r1, int32_t c0, int32_t c1, int uint8);

void msf_resize_bilinear_s8 MSF_REGION_ARGS(msf_resize_bilinear_params)
{
    int32_t r, c, ch;
    if (p->row_weights != NULL) {  /* a uint8 model's: TFLite's float formula */
        msf_resize_bilinear_float(p, in, out, r0, r1, c0, c1, 1);
        return;
    }
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const msf_bilinear_pixel px = msf_bilinear_neighbours(p, in, r, c);
            const int8_t *tl = (const int8_t *)in->base + px.at[0], *tr = (const int8_t *)in->base + px.at[1];
            const int8_t *bl = (const int8_t *)in->base + px.at[2], *br = (const int8_t *)in->base + px.at[3];
            int8_t *to = msf_at_s8(out, r, c, 0);
            for (ch = 0; ch < p->channels; ++ch) {
                const int32_t sum = tl[ch] * px.weight[0] + tr[ch] * px.weight[1] + bl[ch] * px.weight[2]
                                    + br[ch] * px.weight[3];
                to[ch] = (int8_t)msf_bilinear_round(sum);
            }
        }
    }
}

void msf_resize_bilinear_s16 MSF_REGION_ARGS(msf_resize_bilinear_s16_params)
{
    int32_t r, c, ch, k;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const msf_bilinear_pixel px = msf_bilinear_neighbours(p, in, r, c);
            int16_t *to = (int16_t *)out->base + msf_offset(out, r, c, 0);
            for (ch = 0; ch < p->channels; ++ch) {
                int64_t sum = 0;
                for (k = 0; k < 4; ++k) {
                    sum += (int64_t)((const int16_t *)in->base)[px.at[k] + ch] * px.weight[k];
                }
                to[ch] = (int16_t)msf_bilinear_round_wide(sum);
            }
        }
    }
}

/* float32 maps and uint8 models: p->rows and p->cols hold (lo, hi) pairs, p->row_weights and
   p->col_weights the float32 weight of hi. The four neighbours of output pixel (r, c) as offsets
   into `in`, and the products of their weights, as TFLite's float formula forms them. */
static msf_bilinear_pixel msf_bilinear_float_neighbours(const msf_resize_bilinear_params *p, const msf_view *in,
                                                        int32_t r, int32_t c, float weight[4])
{
    const int32_t *row = p->rows + 2 * r, *col = p->cols + 2 * c;
    const float w_bottom = p->row_weights[r], w_top = 1.0f - w_bottom;
    const float w_right = p->col_weights[c], w_left = 1.0f - w_right;
    msf_bilinear_pixel px;
    px.at[0] = msf_offset(in, row[0], col[0], 0);
    px.at[1] = msf_offset(in, row[0], col[1], 0);
    px.at[2] = msf_offset(in, row[1], col[0], 0);
    px.at[3] = msf_offset(in, row[1], col[1], 0);
    weight[0] = w_top * w_left;
    weight[1] = w_top * w_right;
    weight[2] = w_bottom * w_left;
    weight[3] = w_bottom * w_right;
    return px;
}

/* The four products summed in float32 from the top left, in the numpy kernel's order (one
   statement each: no contraction into fused multiply-adds under -std=c99). */
static float msf_bilinear_float_sum(const float value[4], const float weight[4])
{
    float sum = value[0] * weight[0];
    sum += value[1] * weight[1];
    sum += value[2] * weight[2];
    sum += value[3] * weight[3];
    return sum;
}

/* The float formula over an output region: on float32 maps, or (uint8) on a uint8 model's int8
   values, where LiteRT's uint8 kernel sums the uint8 values (q + 128) in float32, adds 0.5 and
   truncates (the sum is >= 0). */
static void msf_resize_bilinear_float(const msf_resize_bilinear_params *p, const msf_view *in, msf_view *out,
                                      int32_t r0, int32_t r1, int32_t c0, int32_t c1, int uint8)
{
    int32_t r, c, ch, k;
    float weight[4], value[4];
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const msf_bilinear_pixel px = msf_bilinear_float_neighbours(p, in, r, c, weight);
            const ptrdiff_t to = msf_offset(out, r, c, 0);
            for (ch = 0; ch < p->channels; ++ch) {
                for (k = 0; k < 4; ++k) {
                    value[k] = uint8 ? (float)(((const int8_t *)in->base)[px.at[k] + ch] + 128)
                                     : ((const float *)in->base)[px.at[k] + ch];
                }
                if (uint8) {
                    ((int8_t *)out->base)[to + ch] =
                        (int8_t)((int32_t)(msf_bilinear_float_sum(value, weight) + 0.5f) - 128);
                } else {
                    ((float *)out->base)[to + ch] = msf_bilinear_float_sum(value, weight);
                }
            }
        }
    }
}

void msf_resize_bilinear_f32 MSF_REGION_ARGS(msf_resize_bilinear_params)
{
    msf_resize_bilinear_float(p, in, out, r0, r1, c0, c1, 0);
}

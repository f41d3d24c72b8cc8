/*
 * ADD of an int8 constant as the LiteRT interpreter computes it (src/msfcnn/ops/add_const_litert.py).
 *
 * One value per channel: add_litert.c's vector code on the first vector_channels channels of
 * every pixel, the scalar code (add.c's) on the others. One value: vector code on the flat
 * positions below vector_end, the scalar code from there on; that vector code rescales each
 * operand as the uint8 ADD's (times 2^left_shift, vqrdmulh, a shift right rounding down) and the
 * sum as add_litert.c's. The params hold the ADD of two maps (add), the constant as input 2.
 */
#include "add_const_litert.h"
#include "numerics.h"

/* one operand through the vector code for one constant value */
static int32_t broadcast_rescale(int32_t v, int32_t scale_up, int32_t multiplier, int32_t shift)
{
    return (int32_t)asr64(msf_high_mul_half_up(v * scale_up, multiplier), -shift);
}

static int8_t broadcast_value(const msf_add_params *p, int32_t a, int32_t b)
{
    const int32_t scale_up = (int32_t)1 << p->left_shift;
    const int32_t sa = broadcast_rescale(a, scale_up, p->input1_mult, p->input1_shift);
    const int32_t sb = broadcast_rescale(b, scale_up, p->input2_mult, p->input2_shift);
    return msf_add_litert_output(p, sa + sb);
}

/* One pixel's channels; flat: the place of its channel 0 in the whole tensor. */
static void add_pixel(const msf_add_const_litert_params *q, const int8_t *src, int8_t *dst, int32_t flat)
{
    const msf_add_params *p = &q->add;
    int32_t ch;
    for (ch = 0; ch < p->channels; ++ch) {
        const int32_t a = (int32_t)src[ch] + p->input1_offset;
        const int32_t b = (int32_t)q->operand[q->per_channel ? ch : 0] + p->input2_offset;
        if (q->per_channel) {
            dst[ch] = ch < q->vector_channels ? msf_add_litert_value(p, a, b) : msf_add_scalar_value(p, a, b);
        } else {
            dst[ch] = flat + ch < q->vector_end ? broadcast_value(p, a, b) : msf_add_scalar_value(p, a, b);
        }
    }
}

void msf_add_const_litert_s8(const msf_add_const_litert_params *q, const msf_view *in, msf_view *out,
                             int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t r, c;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            add_pixel(q, msf_at_s8(in, r, c, 0), msf_at_s8(out, r, c, 0), (r * q->width + c) * q->add.channels);
        }
    }
}

/*
 * ADD of int16 tensors as the LiteRT interpreter computes it (src/msfcnn/ops/add_litert.py): its
 * int16 ADD of general scales.
 *
 * As for int8 (add_litert.c), the blocks of 16 values of the whole flat tensor go through vector
 * code and the rest (flat positions from vector_end on) through the scalar code of int16.c. The
 * vector code rescales each input as the int8 one does (left_shift is 15 here), but keeps the sum
 * in int32 to the end: output zero point, activation clamp, then saturation to int16 (no wrap).
 */
#include "add_litert_s16.h"
#include "numerics.h"

/* |input - zero point| <= 32768 and left_shift + shift <= 15: a left shift stays in int32 */
static int32_t shift_left(int32_t x, int32_t bits)
{
    return bits >= 0 ? x * ((int32_t)1 << bits) : (int32_t)asr64(x, -bits);
}

static int32_t clamp_to(int32_t x, int32_t low, int32_t high)
{
    return x < low ? low : x > high ? high : x;
}

/* The scalar code's value (TFLite's reference ADD, as msf_add_s16 computes it). */
static int16_t scalar_value(const msf_add_params *p, int32_t a, int32_t b)
{
    const int32_t scale_up = (int32_t)1 << p->left_shift;
    const int32_t sa = msf_mul_by_quantized_mult_double(a * scale_up, p->input1_mult, p->input1_shift);
    const int32_t sb = msf_mul_by_quantized_mult_double(b * scale_up, p->input2_mult, p->input2_shift);
    const int32_t sum = msf_mul_by_quantized_mult_double(sa + sb, p->output_mult, p->output_shift);
    return (int16_t)clamp_to(sum + p->output_offset, p->act_min, p->act_max);
}

static int16_t vector_value(const msf_add_params *p, int32_t a, int32_t b)
{
    const int32_t sa = msf_high_mul_half_up(shift_left(a, p->left_shift + p->input1_shift), p->input1_mult);
    const int32_t sb = msf_high_mul_half_up(shift_left(b, p->left_shift + p->input2_shift), p->input2_mult);
    const int32_t total = msf_rounding_divide_by_pot(msf_high_mul_half_up(sa + sb, p->output_mult), -p->output_shift);
    return (int16_t)clamp_to(total + p->output_offset, p->act_min, p->act_max);
}

void msf_add_litert_s16(const msf_add_litert_s16_params *q, const msf_view *in1, const msf_view *in2, msf_view *out,
                        int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    const msf_add_params *p = &q->base;
    int32_t r, c, ch;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const int16_t *a = msf_at_s16(in1, r, c, 0), *b = msf_at_s16(in2, r, c, 0);
            int16_t *dst = msf_at_s16(out, r, c, 0);
            const int32_t flat = (r * q->width + c) * p->channels;  /* channel 0's place in the whole tensor */
            for (ch = 0; ch < p->channels; ++ch) {
                const int32_t va = (int32_t)a[ch] + p->input1_offset;
                const int32_t vb = (int32_t)b[ch] + p->input2_offset;
                dst[ch] = flat + ch < q->vector_end ? vector_value(p, va, vb) : scalar_value(p, va, vb);
            }
        }
    }
}

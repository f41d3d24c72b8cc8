/*
 * ADD of int8 tensors as the LiteRT interpreter computes it (src/msfcnn/ops/add_litert.py), and
 * the walk over a region that it shares with the uint8 ADD (add_uint8.c).
 *
 * The interpreter adds the blocks of 16 values of the whole flat tensor with vector code and the
 * rest (flat positions from vector_end on) with the scalar code of add.c. The vector code: each
 * input minus its zero point shifted left by left_shift + its own shift (a negative count shifts
 * right) and through a doubling high multiply rounded half up (vqrdmulh); the sum through vqrdmulh
 * and a rounding divide (halves away from zero); then narrowed to int16, the output zero point
 * added in int16 (both wrap), saturated to int8 and clamped to the activation's range.
 */
#include "add_litert.h"
#include "numerics.h"

int32_t msf_high_mul_half_up(int32_t x, int32_t multiplier)
{
    return (int32_t)asr64((int64_t)x * multiplier + ((int64_t)1 << 30), 31);
}

int32_t msf_wrap_int16(int32_t x)
{
    const int32_t low = (int32_t)((uint32_t)x & 0xFFFFu);
    return low >= 0x8000 ? low - 0x10000 : low;
}

int8_t msf_add_scalar_value(const msf_add_params *p, int32_t a, int32_t b)
{
    /* multiplications, not shifts: the values may be negative */
    const int32_t scale_up = (int32_t)1 << p->left_shift;
    const int32_t sa = msf_mul_by_quantized_mult_double(a * scale_up, p->input1_mult, p->input1_shift);
    const int32_t sb = msf_mul_by_quantized_mult_double(b * scale_up, p->input2_mult, p->input2_shift);
    const int32_t sum = msf_mul_by_quantized_mult_double(sa + sb, p->output_mult, p->output_shift);
    return msf_clamp_s8(sum, p->output_offset, p->act_min, p->act_max);
}

/* NEON's vshl: |x| <= 255 and bits <= 20, so a left shift stays in int32 */
static int32_t shift_left(int32_t x, int32_t bits)
{
    return bits >= 0 ? x * ((int32_t)1 << bits) : (int32_t)asr64(x, -bits);
}

int8_t msf_add_litert_value(const msf_add_params *p, int32_t a, int32_t b)
{
    const int32_t sa = msf_high_mul_half_up(shift_left(a, p->left_shift + p->input1_shift), p->input1_mult);
    const int32_t sb = msf_high_mul_half_up(shift_left(b, p->left_shift + p->input2_shift), p->input2_mult);
    return msf_add_litert_output(p, sa + sb);
}

int8_t msf_add_litert_output(const msf_add_params *p, int32_t sum)
{
    const int32_t total = msf_rounding_divide_by_pot(msf_high_mul_half_up(sum, p->output_mult), -p->output_shift);
    const int32_t wide = msf_wrap_int16(msf_wrap_int16(total) + p->output_offset);
    return msf_clamp_s8(wide, 0, p->act_min, p->act_max);  /* the saturation to int8 within the clamp */
}

/* One pixel's channels; flat: the place of its channel 0 in the whole tensor. */
static void add_pixel(const msf_add_blocks_params *q, msf_add_value_fn vector, const int8_t *a, const int8_t *b,
                      int8_t *dst, int32_t flat)
{
    const msf_add_params *p = &q->base;
    int32_t ch;
    for (ch = 0; ch < p->channels; ++ch) {
        const int32_t va = (int32_t)a[ch] + p->input1_offset;
        const int32_t vb = (int32_t)b[ch] + p->input2_offset;
        dst[ch] = flat + ch < q->vector_end ? vector(p, va, vb) : msf_add_scalar_value(p, va, vb);
    }
}

void msf_add_blocks_s8(const msf_add_blocks_params *q, msf_add_value_fn vector, const msf_view *in1,
                       const msf_view *in2, msf_view *out, int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t r, c;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            add_pixel(q, vector, msf_at_s8(in1, r, c, 0), msf_at_s8(in2, r, c, 0), msf_at_s8(out, r, c, 0),
                      (r * q->width + c) * q->base.channels);
        }
    }
}

void msf_add_litert_s8(const msf_add_litert_params *q, const msf_view *in1, const msf_view *in2, msf_view *out,
                       int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    msf_add_blocks_s8(q, msf_add_litert_value, in1, in2, out, r0, r1, c0, c1);
}

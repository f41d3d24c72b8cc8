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

#if defined(MSF_ARM_MVE)
/* dst[ch] = msf_add_litert_value(p, a[ch] + offset 1, b[ch] + offset 2) for ch < n, four channels a
   vector, equal to it: its shifts are VSHL by a register (a negative count shifts right, rounding
   down), its doubling high multiplies rounded half up are VQRDMULH (the multipliers are positive),
   the rounding divide (ties away from zero, exponent >= 1: `away`; 0: none) is VRSHL of x - 1 for
   x < 0, and each wrap to int16 a shift left and back by 16. */
static MSF_ALWAYS_INLINE void mve_add_litert(const msf_add_params *p, const int8_t *a, const int8_t *b, int8_t *dst,
                                             int32_t n, const int away)
{
    const int32_t shift1 = p->left_shift + p->input1_shift, shift2 = p->left_shift + p->input2_shift;
    const int32x4_t low = vdupq_n_s32(p->act_min), high = vdupq_n_s32(p->act_max);
    int32_t ch;
    for (ch = 0; ch < n; ch += 4) {
        const mve_pred16_t active = vctp32q((uint32_t)(n - ch));
        const int32x4_t va = vaddq_n_s32(vldrbq_z_s32(a + ch, active), p->input1_offset);
        const int32x4_t vb = vaddq_n_s32(vldrbq_z_s32(b + ch, active), p->input2_offset);
        const int32x4_t sum = vaddq_s32(vqrdmulhq_n_s32(vshlq_r_s32(va, shift1), p->input1_mult),
                                        vqrdmulhq_n_s32(vshlq_r_s32(vb, shift2), p->input2_mult));
        int32x4_t total = vqrdmulhq_n_s32(sum, p->output_mult);
        if (away) {
            total = vrshlq_n_s32(vaddq_s32(total, vshrq_n_s32(total, 31)), p->output_shift);
        }
        total = vaddq_n_s32(vshrq_n_s32(vshlq_n_s32(total, 16), 16), p->output_offset);
        total = vshrq_n_s32(vshlq_n_s32(total, 16), 16);
        vstrbq_p_s32(dst + ch, vminq_s32(vmaxq_s32(total, low), high), active);
    }
}

/* LiteRT's ADD on Helium: each pixel's channels below the vector code's end four at a time
   (mve_add_litert), the others by add.c's scalar code, as msf_add_blocks_s8 places them. */
static void add_litert_mve(const msf_add_litert_params *q, const msf_view *in1, const msf_view *in2, msf_view *out,
                           int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    const msf_add_params *p = &q->base;
    int32_t r, c, ch;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const int32_t flat = (r * q->width + c) * p->channels;
            const int32_t vector = q->vector_end - flat < 0 ? 0
                                   : q->vector_end - flat < p->channels ? q->vector_end - flat : p->channels;
            const int8_t *a = msf_at_s8(in1, r, c, 0), *b = msf_at_s8(in2, r, c, 0);
            int8_t *dst = msf_at_s8(out, r, c, 0);
            if (p->output_shift < 0) {
                mve_add_litert(p, a, b, dst, vector, 1);
            } else {
                mve_add_litert(p, a, b, dst, vector, 0);
            }
            for (ch = vector; ch < p->channels; ++ch) {
                dst[ch] = msf_add_scalar_value(p, (int32_t)a[ch] + p->input1_offset, (int32_t)b[ch] + p->input2_offset);
            }
        }
    }
}
#endif

void msf_add_litert_s8(const msf_add_litert_params *q, const msf_view *in1, const msf_view *in2, msf_view *out,
                       int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
#if defined(MSF_ARM_MVE)
    if (q->base.output_shift <= 0) {  /* (a rounding divide by a power of two, as the interpreter's) */
        add_litert_mve(q, in1, in2, out, r0, r1, c0, c1);
        return;
    }
#endif
    msf_add_blocks_s8(q, msf_add_litert_value, in1, in2, out, r0, r1, c0, c1);
}

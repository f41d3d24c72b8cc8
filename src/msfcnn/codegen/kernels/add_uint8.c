/*
 * ADD of uint8 models (held as int8, q - 128) over a region (src/msfcnn/ops/add_uint8.py).
 *
 * The interpreter's uint8 ADD runs vector code on the blocks of 8 values of the whole tensor and
 * the int8 ADD's scalar code on the rest (flat positions from vector_end on): the walk of
 * add_litert.c with another vector code. Here each input minus its zero point, times
 * 2^left_shift, goes through a doubling high multiply rounded half up (vqrdmulh), then is shifted
 * right (rounding down); the sum through vqrdmulh and gemmlowp's rounding divide (halves away
 * from zero); then int16 arithmetic for the output zero point and a saturation to uint8, then
 * the activation clamp.
 */
#include "add_uint8.h"
#include "numerics.h"

static int8_t vector_value(const msf_add_params *p, int32_t a, int32_t b)
{
    const int32_t scale_up = (int32_t)1 << p->left_shift;
    const int32_t sa = (int32_t)asr64(msf_high_mul_half_up(a * scale_up, p->input1_mult), -p->input1_shift);
    const int32_t sb = (int32_t)asr64(msf_high_mul_half_up(b * scale_up, p->input2_mult), -p->input2_shift);
    const int32_t total = msf_rounding_divide_by_pot(msf_high_mul_half_up(sa + sb, p->output_mult), -p->output_shift);
    const int32_t wide = msf_wrap_int16(msf_wrap_int16(total) + p->output_offset + 128);
    const int32_t as_uint8 = (wide < 0 ? 0 : wide > 255 ? 255 : wide) - 128;
    return msf_clamp_s8(as_uint8, 0, p->act_min, p->act_max);
}

void msf_add_uint8_s8(const msf_add_uint8_params *q, const msf_view *in1, const msf_view *in2, msf_view *out,
                      int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    msf_add_blocks_s8(q, vector_value, in1, in2, out, r0, r1, c0, c1);
}

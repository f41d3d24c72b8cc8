/*
 * SUB and SQUARED_DIFFERENCE over a region (src/msfcnn/ops/sub.py): of two maps, or of a map and a
 * constant.
 *
 * TFLite's int8 SUB is ADD's arithmetic (add.c) with the subtrahend's term subtracted: each input,
 * plus its offset (minus its zero point), times 2^left_shift, rescaled with its own multiplier
 * (p->rounding = MSF_ROUND_DOUBLE) and multiplied by its sign; the two terms summed and rescaled to
 * the output; then the output zero point and the activation clamp. The subtrahend's sign is -1
 * (LiteRT and TFLite Micro subtract its rescaled value; a negated multiplier with sign +1, as older
 * interpreters had it, differs on rounding ties). A constant's term is the same at every position:
 * the Python side computes it (p->operand). SQUARED_DIFFERENCE: the inputs shifted left by 7, the
 * sum of the two terms squared before the output rescale, no activation.
 */
#include "sub.h"
#include "numerics.h"

static int32_t msf_sub_term(int32_t q, int32_t offset, int32_t mult, int32_t shift, int32_t sign,
                            const msf_sub_params *p)
{
    /* a multiplication, not a shift: the value may be negative */
    const int32_t v = (q + offset) * ((int32_t)1 << p->left_shift);
    return sign * msf_mul_by_quantized_mult(v, mult, shift, p->rounding);
}

/* in2 NULL (msf_sub_const_s8): the second term is the constant's, p->operand. */
void msf_sub_s8 MSF_REGION2_ARGS(msf_sub_params)
{
    const int32_t step = p->operand_size == 1 ? 0 : 1;
    MSF_EACH_VALUE2(s8, in2 != NULL ? msf_at_s8(in2, r, c, 0) : NULL, p->channels, {
        const int32_t ta = msf_sub_term(a[ch], p->input1_offset, p->input1_mult, p->input1_shift,
                                        p->input1_sign, p);
        const int32_t tb = b != NULL ? msf_sub_term(b[ch], p->input2_offset, p->input2_mult, p->input2_shift,
                                                    p->input2_sign, p)
                                     : p->operand[ch * step];
        const int32_t d = ta + tb;  /* squared: at most (255 * 2^7)^2 < 2^31 */
        const int32_t v = msf_mul_by_quantized_mult(p->square ? d * d : d, p->output_mult, p->output_shift,
                                                    p->rounding);
        dst[ch] = msf_clamp_s8(v, p->output_offset, p->act_min, p->act_max);
    });
}

/* in2 NULL (msf_sub_const_f32): the second operand is the constant p->operand_f32. */
void msf_sub_f32 MSF_REGION2_ARGS(msf_sub_params)
{
    const int32_t step = in2 != NULL || p->operand_size != 1 ? 1 : 0;
    MSF_EACH_VALUE2(f32, in2 != NULL ? msf_at_f32(in2, r, c, 0) : p->operand_f32, p->channels, {
        const float u = a[ch], v = b[ch * step];
        const float d = p->reversed ? v - u : u - v;
        dst[ch] = msf_apply_activation_f32(p->square ? d * d : d, p->activation);
    });
}

void msf_sub_const_s8 MSF_REGION_ARGS(msf_sub_params)
{
    msf_sub_s8(p, in, NULL, out, r0, r1, c0, c1);
}

void msf_sub_const_f32 MSF_REGION_ARGS(msf_sub_params)
{
    msf_sub_f32(p, in, NULL, out, r0, r1, c0, c1);
}

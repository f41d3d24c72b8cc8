/*
 * MUL / ADD of a region and a constant of 1 or `channels` values (src/msfcnn/ops/mul.py,
 * src/msfcnn/ops/add_const.py).
 *
 * MUL, TFLite's int8 kernel: (x - x_zero) * (c - c_zero) in int32 (|product| <= 255 * 255),
 * rescaled with MultiplyByQuantizedMultiplier (x_scale * c_scale / out_scale, formed in float32;
 * p->rounding = MSF_ROUND_DOUBLE), plus the output zero point, clamped to the activation's range.
 *
 * ADD, TFLite's int8 kernel (as add.c) with the constant as its second input: both operands, minus
 * their zero points, scaled up by 2^left_shift and rescaled to a common scale, summed, rescaled to
 * the output; the constant's rescaled value is the same at every position.
 */
#include "const_operand.h"
#include "numerics.h"

void msf_mul_const_s8 MSF_REGION_ARGS(msf_const_operand_params)
{
    const int32_t step = p->operand_size == 1 ? 0 : 1;
    MSF_EACH_VALUE(s8, s8, p->channels, {
        const int32_t product = ((int32_t)src[ch] + p->input_offset)
                                * ((int32_t)p->operand[ch * step] + p->operand_offset);
        const int32_t v = msf_mul_by_quantized_mult(product, p->output_mult, p->output_shift, p->rounding);
        dst[ch] = msf_clamp_s8(v, p->output_offset, p->act_min, p->act_max);
    });
}

static int32_t msf_scaled_operand(const msf_const_operand_params *p, int32_t i)
{
    const int32_t v = ((int32_t)p->operand[i] + p->operand_offset) * ((int32_t)1 << p->left_shift);
    return msf_mul_by_quantized_mult(v, p->operand_mult, p->operand_shift, p->rounding);
}

void msf_add_const_s8 MSF_REGION_ARGS(msf_const_operand_params)
{
    const int32_t scale_up = (int32_t)1 << p->left_shift;
    const int32_t scalar = msf_scaled_operand(p, 0);
    MSF_EACH_VALUE(s8, s8, p->channels, {
        /* a multiplication, not a shift: the value may be negative */
        const int32_t v = ((int32_t)src[ch] + p->input_offset) * scale_up;
        const int32_t sx = msf_mul_by_quantized_mult(v, p->input_mult, p->input_shift, p->rounding);
        const int32_t sc = p->operand_size == 1 ? scalar : msf_scaled_operand(p, ch);
        const int32_t sum = msf_mul_by_quantized_mult(sx + sc, p->output_mult, p->output_shift, p->rounding);
        dst[ch] = msf_clamp_s8(sum, p->output_offset, p->act_min, p->act_max);
    });
}

/* The float kernels: x * c (mul != 0) or x + c, then the activation. */
static void msf_const_operand_f32(const msf_const_operand_params *p, const msf_view *in, msf_view *out,
                                  int32_t r0, int32_t r1, int32_t c0, int32_t c1, int mul)
{
    const int32_t step = p->operand_size == 1 ? 0 : 1;
    MSF_EACH_VALUE(f32, f32, p->channels, {
        const float v = p->operand_f32[ch * step];
        dst[ch] = msf_apply_activation_f32(mul ? src[ch] * v : src[ch] + v, p->activation);
    });
}

void msf_mul_const_f32 MSF_REGION_ARGS(msf_const_operand_params)
{
    msf_const_operand_f32(p, in, out, r0, r1, c0, c1, 1);
}

void msf_add_const_f32 MSF_REGION_ARGS(msf_const_operand_params)
{
    msf_const_operand_f32(p, in, out, r0, r1, c0, c1, 0);
}

/* MUL of two activations (ops/mul.py: Mul, MulBroadcast): as msf_mul_const_s8 with the
   second operand read at the same position, or at (0, 0) when it is a per-channel vector. */
void msf_mul_s8 MSF_REGION2_ARGS(msf_mul_params)
{
    MSF_EACH_VALUE2(s8, p->broadcast ? msf_at_s8(in2, 0, 0, 0) : msf_at_s8(in2, r, c, 0), p->channels, {
        const int32_t product = ((int32_t)a[ch] + p->input1_offset) * ((int32_t)b[ch] + p->input2_offset);
        const int32_t v = msf_mul_by_quantized_mult(product, p->output_mult, p->output_shift, p->rounding);
        dst[ch] = msf_clamp_s8(v, p->output_offset, p->act_min, p->act_max);
    });
}

void msf_mul_f32 MSF_REGION2_ARGS(msf_mul_params)
{
    MSF_EACH_VALUE2(f32, p->broadcast ? msf_at_f32(in2, 0, 0, 0) : msf_at_f32(in2, r, c, 0), p->channels, {
        dst[ch] = msf_apply_activation_f32(a[ch] * b[ch], p->activation);
    });
}

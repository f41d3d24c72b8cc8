/*
 * One step of a PACK of an unrolled recurrent layer's hidden states (src/msfcnn/ops/pack_step.py):
 * the step's values copied into their place in the stack, as bytes (one kernel for int8 and
 * float). The first step starts the stack with zeros; a later one takes the stack before it,
 * which the plan makes its own output (written over), so only the step is copied. The region is
 * the whole stack, always.
 */
#include <string.h>

#include "pack_step.h"

static void msf_pack(const msf_pack_step_params *p, const msf_view *stack, const msf_view *step, msf_view *out,
                     int32_t elem)
{
    char *dst = (char *)out->base;
    if (stack == NULL) {
        memset(dst, 0, (size_t)p->total * (size_t)elem);
    } else if (stack->base != out->base) {
        memmove(dst, stack->base, (size_t)p->total * (size_t)elem);
    }
    memmove(dst + (size_t)p->offset * (size_t)elem, step->base, (size_t)p->size * (size_t)elem);
}

/* The entry points, one for each element size and for the first or a later step: the region is
   always the whole stack, so its bounds go unused. */
#define MSF_PACK_ENTRY(name, region_args, stack, step, elem) \
    void name region_args                                      \
    {                                                          \
        (void)r0; (void)r1; (void)c0; (void)c1;                \
        msf_pack(p, stack, step, out, elem);                   \
    }

MSF_PACK_ENTRY(msf_pack_first_s8, MSF_REGION_ARGS(msf_pack_first_params), NULL, in, 1)
MSF_PACK_ENTRY(msf_pack_first_f32, MSF_REGION_ARGS(msf_pack_first_params), NULL, in, (int32_t)sizeof(float))
MSF_PACK_ENTRY(msf_pack_step_s8, MSF_REGION2_ARGS(msf_pack_step_params), in1, in2, 1)
MSF_PACK_ENTRY(msf_pack_step_f32, MSF_REGION2_ARGS(msf_pack_step_params), in1, in2, (int32_t)sizeof(float))

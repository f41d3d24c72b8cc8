/* LiteRT's int16 ADD (add_litert_s16.c). */
#ifndef MSF_ADD_LITERT_S16_H
#define MSF_ADD_LITERT_S16_H

#include "add_litert.h"

MSF_BEGIN_DECLS

typedef msf_add_blocks_params msf_add_litert_s16_params;

void msf_add_litert_s16(const msf_add_litert_s16_params *q, const msf_view *in1, const msf_view *in2, msf_view *out,
                        int32_t r0, int32_t r1, int32_t c0, int32_t c1);

MSF_END_DECLS

#endif /* MSF_ADD_LITERT_S16_H */

/* uint8 ADD (add_uint8.c). */
#ifndef MSF_ADD_UINT8_H
#define MSF_ADD_UINT8_H

#include "add_litert.h"

MSF_BEGIN_DECLS

typedef msf_add_blocks_params msf_add_uint8_params;

void msf_add_uint8_s8(const msf_add_uint8_params *q, const msf_view *in1, const msf_view *in2, msf_view *out,
                      int32_t r0, int32_t r1, int32_t c0, int32_t c1);

MSF_END_DECLS

#endif /* MSF_ADD_UINT8_H */

/* PAD of a 16x8 model's int16 maps (pad_s16.c): pad.c's params, the fill an int16 value. */
#ifndef MSF_PAD_S16_H
#define MSF_PAD_S16_H

#include "pad.h"

MSF_BEGIN_DECLS

/* fill: 0 (16x8 activations are symmetric), or PADV2's constant */
typedef msf_pad_params msf_pad_s16_params;

void msf_pad_s16 MSF_REGION_ARGS(msf_pad_s16_params);

MSF_END_DECLS

#endif /* MSF_PAD_S16_H */

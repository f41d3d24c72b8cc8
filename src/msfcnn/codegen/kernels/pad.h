/* PAD (pad.c). */
#ifndef MSF_PAD_H
#define MSF_PAD_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* PAD of the spatial axes with the zero point (0.0 in float graphs). */
typedef struct {
    int32_t in_h, in_w, channels;
    int32_t pad_top, pad_left;
    int32_t fill;                   /* int8 graphs: the output zero point, or PADV2's constant */
} msf_pad_params;

/* PAD: output region (output coordinates); input positions are output - (pad_top, pad_left). */
void msf_pad_s8 MSF_REGION_ARGS(msf_pad_params);
void msf_pad_f32 MSF_REGION_ARGS(msf_pad_params);

MSF_END_DECLS

#endif /* MSF_PAD_H */

/* TRANSPOSE (transpose.c). */
#ifndef MSF_TRANSPOSE_H
#define MSF_TRANSPOSE_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* TRANSPOSE of an (H, W, C) map: output (r, c, ch) is the input element with axis axis0 = r,
   axis1 = c, axis2 = ch (axes 0 = H, 1 = W, 2 = C). */
typedef struct {
    int32_t in_h, in_w, channels;
    int32_t out_channels;
    int32_t axis0, axis1, axis2;
} msf_transpose_params;

void msf_transpose_s8 MSF_REGION_ARGS(msf_transpose_params);
void msf_transpose_f32 MSF_REGION_ARGS(msf_transpose_params);

MSF_END_DECLS

#endif /* MSF_TRANSPOSE_H */

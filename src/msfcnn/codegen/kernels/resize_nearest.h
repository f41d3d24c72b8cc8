/* RESIZE_NEAREST_NEIGHBOR (resize_nearest.c). */
#ifndef MSF_RESIZE_NEAREST_H
#define MSF_RESIZE_NEAREST_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* RESIZE_NEAREST_NEIGHBOR: output (r, c) copies input pixel (rows[r], cols[c]) (tables of out_h and
   out_w entries, TFLite's nearest-neighbour rule computed at compile time). */
typedef struct {
    int32_t channels;
    const int32_t *rows, *cols;
} msf_resize_nearest_params;

void msf_resize_nearest_s8 MSF_REGION_ARGS(msf_resize_nearest_params);
void msf_resize_nearest_f32 MSF_REGION_ARGS(msf_resize_nearest_params);

MSF_END_DECLS

#endif /* MSF_RESIZE_NEAREST_H */

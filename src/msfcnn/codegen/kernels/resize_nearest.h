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

void msf_resize_nearest_s8(const msf_resize_nearest_params *p, const msf_view *in, msf_view *out,
                           int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_resize_nearest_f32(const msf_resize_nearest_params *p, const msf_view *in, msf_view *out,
                            int32_t r0, int32_t r1, int32_t c0, int32_t c1);

MSF_END_DECLS

#endif /* MSF_RESIZE_NEAREST_H */

/* RESIZE_BILINEAR (resize_bilinear.c). */
#ifndef MSF_RESIZE_BILINEAR_H
#define MSF_RESIZE_BILINEAR_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* RESIZE_BILINEAR. int8, int16: rows and cols hold a (lo, hi, weight of hi in 1/1024) triple per
   output row and column (3 * out_h and 3 * out_w entries, TFLite's fixed-point positions), and the
   float weights are NULL. float32: rows and cols hold (lo, hi) pairs, row_weights and col_weights
   the weight of hi per output row and column. */
typedef struct {
    int32_t channels;
    const int32_t *rows, *cols;
    const float *row_weights, *col_weights;
} msf_resize_bilinear_params;
typedef msf_resize_bilinear_params msf_resize_bilinear_s16_params;

void msf_resize_bilinear_s8 MSF_REGION_ARGS(msf_resize_bilinear_params);
void msf_resize_bilinear_s16 MSF_REGION_ARGS(msf_resize_bilinear_s16_params);
void msf_resize_bilinear_f32 MSF_REGION_ARGS(msf_resize_bilinear_params);

MSF_END_DECLS

#endif /* MSF_RESIZE_BILINEAR_H */

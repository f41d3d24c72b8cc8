/* uint8 models' CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED (weight_offset.c). */
#ifndef MSF_WEIGHT_OFFSET_H
#define MSF_WEIGHT_OFFSET_H

#include "conv2d.h"
#include "depthwise_conv2d.h"
#include "dense.h"

MSF_BEGIN_DECLS

/* uint8 models (weight_offset.c): the int8 op's params and the weights' offset, -(weight zero
   point - 128), added to each int8-stored weight. */
typedef struct {
    msf_conv2d_params base;
    int32_t weight_offset;
} msf_conv2d_wofs_params;

typedef struct {
    msf_depthwise_conv2d_params base;
    int32_t weight_offset;
} msf_depthwise_conv2d_wofs_params;

typedef struct {
    msf_dense_params base;
    int32_t weight_offset;
} msf_dense_wofs_params;

void msf_conv2d_wofs_s8(const msf_conv2d_wofs_params *q, const msf_view *in, msf_view *out,
                        int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_depthwise_conv2d_wofs_s8(const msf_depthwise_conv2d_wofs_params *q, const msf_view *in, msf_view *out,
                                  int32_t r0, int32_t r1, int32_t c0, int32_t c1);

/* dense: whole, or as a tail (accumulate regions of the map, then finish) */
void msf_dense_wofs_s8(const msf_dense_wofs_params *q, const msf_view *in, int8_t *out);
void msf_dense_wofs_accumulate_s8(const msf_dense_wofs_params *q, const msf_view *in, void *acc, int32_t r0, int32_t r1,
                                  int32_t c0, int32_t c1);
void msf_dense_wofs_finish_s8(const msf_dense_wofs_params *q, const void *acc, int8_t *out);

MSF_END_DECLS

#endif /* MSF_WEIGHT_OFFSET_H */

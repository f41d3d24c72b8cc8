/* Dilated windows (dilated.c): the window loop of a dilated CONV_2D or DEPTHWISE_CONV_2D, whose
   taps (i, j) read the input positions (y0 + i * dilation_h, x0 + j * dilation_w). */
#ifndef MSF_DILATED_H
#define MSF_DILATED_H

#include "window.h"

MSF_BEGIN_DECLS

/* The taps [*lo, *hi) of a dilated window of k taps along one axis (input positions start + tap *
   d) that lie inside [0, size); start < size. */
static inline void msf_dilated_tap_range(int32_t start, int32_t k, int32_t d, int32_t size, int32_t *lo, int32_t *hi)
{
    const int32_t end = (size - start + d - 1) / d;
    *lo = start < 0 ? (-start + d - 1) / d : 0;
    *hi = end < k ? end : k;
}

/* The extent of a dilated window of k taps d apart: the input positions it spans. */
static inline int32_t msf_dilated_extent(int32_t k, int32_t d)
{
    return (k - 1) * d + 1;
}

/* msf_window's loop for a dilated window: op->shape holds the window's extent per axis, and each
   in-bounds tap is a run. The output stage is op->finish; NULL: op->stage's, int8 or float (bias,
   activation) as op->element says. A loop of its own, so that msf_window's code stays as
   calibrated: pixel; its taps gathered once (again per block of channels, a batch at a time, when
   more than MSF_MAX_RUNS); block of output channels; the op's accumulate; the output stage. */
void msf_window_dilated(const msf_window_op *op, int32_t dilation_h, int32_t dilation_w, const msf_view *in,
                        msf_view *out, int32_t r0, int32_t r1, int32_t c0, int32_t c1);

MSF_END_DECLS

#endif /* MSF_DILATED_H */

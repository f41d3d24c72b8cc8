/* uint8 AVERAGE_POOL_2D (avg_pool_half_up.c). */
#ifndef MSF_AVG_POOL_HALF_UP_H
#define MSF_AVG_POOL_HALF_UP_H

#include "pool2d.h"

MSF_BEGIN_DECLS

/* uint8 AVERAGE_POOL_2D (avg_pool_half_up.c): the pool's params (max 0, count_include_pad 0). */
typedef msf_pool2d_params msf_avg_pool_half_up_params;

void msf_avg_pool_half_up_s8 MSF_REGION_ARGS(msf_avg_pool_half_up_params);

MSF_END_DECLS

#endif /* MSF_AVG_POOL_HALF_UP_H */

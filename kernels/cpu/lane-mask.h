/*
 * lane-mask.h — which of a 16-float vector's lanes fall inside a range:
 * the load and store masks of the AVX-512 kernels that read rows where
 * they lie (padding and row ends masked off, so read as 0 and never
 * written).  Plain integer arithmetic: no target attribute needed.
 */
#ifndef HY_CPU_LANE_MASK_H
#define HY_CPU_LANE_MASK_H

#include <stdint.h>

/* Lanes q of [0, 16) with lo <= pos + q < hi, as a 16-bit mask. */
static inline __attribute__ ((always_inline)) uint16_t
hy_lanes_within (int64_t pos, int64_t lo, int64_t hi)
{
  int64_t a = lo - pos, b = hi - pos;
  a = a < 0 ? 0 : a > 16 ? 16 : a;
  b = b < 0 ? 0 : b > 16 ? 16 : b;
  if (b <= a)
    return 0;
  return (uint16_t) ((((uint32_t) 1 << b) - 1) & ~(((uint32_t) 1 << a) - 1));
}

#endif /* HY_CPU_LANE_MASK_H */

/*
 * quantized-common.h — the scale arithmetic every quantized CPU kernel
 * shares, as MXNet's oneDNN ops compute it (float32 throughout).
 */
#ifndef HY_CPU_QUANTIZED_COMMON_H
#define HY_CPU_QUANTIZED_COMMON_H

#include <math.h>
#include <stdbool.h>

#include "kernels/params/quantized.h"

/* MXNet's GetQuantizeScale: quantized steps per real unit of a value of
 * range [min, max]. */
static inline float
hy_q_scale (bool is_uint8, float min, float max)
{
  return (is_uint8 ? HY_UINT8_RANGE : HY_INT8_RANGE)
      / fmaxf (fabsf (min), fabsf (max));
}

static inline float
hy_q_saturate (float v, float lo, float hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

/* A rounded result stored as int8 or uint8 (oneDNN's saturation). */
static inline float
hy_q_store (float v, bool is_uint8)
{
  return is_uint8 ? hy_q_saturate (rintf (v), 0.0f, 255.0f)
      : hy_q_saturate (rintf (v), -128.0f, 127.0f);
}

#endif /* HY_CPU_QUANTIZED_COMMON_H */

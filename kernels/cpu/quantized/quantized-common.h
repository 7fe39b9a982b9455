/*
 * quantized-common.h — the scale arithmetic every quantized CPU kernel
 * shares, as MXNet's oneDNN ops compute it (float32 throughout).
 */
#ifndef HY_CPU_QUANTIZED_COMMON_H
#define HY_CPU_QUANTIZED_COMMON_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernels/params/quantized.h"

/* MXNet's GetQuantizeScale: quantized steps per real unit of a value of
 * range [min, max].  A calibrated range of [0, 0] (a layer dead on every
 * calibration image) gets INT32_MAX as a float, 2^31, where the division
 * would give inf: MXNet 1.9.1 picks that "large number" itself, and the
 * layers after such a value see their bias only (hy_qconv_weight_scale). */
static inline float
hy_q_scale (bool is_uint8, float min, float max)
{
  float range = fmaxf (fabsf (min), fabsf (max));
  if (range == 0.0f)
    return 2147483648.0f;
  return (is_uint8 ? HY_UINT8_RANGE : HY_INT8_RANGE) / range;
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

/* A float rounded to int32 as x86's cvtss2si does it: out of range or
 * NaN gives INT32_MIN, where a C cast would be undefined (a hostile bias
 * or range; hy_qconv_weight_scale keeps MXNet's own biases within
 * ±2^30). */
static inline int32_t
hy_q_round_int32 (float v)
{
  float r = rintf (v);
  if (!(r >= -2147483648.0f && r < 2147483648.0f))
    return INT32_MIN;
  return (int32_t) r;
}

#endif /* HY_CPU_QUANTIZED_COMMON_H */

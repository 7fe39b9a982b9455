/*
 * elementwise-common.h — what the CPU and CUDA elementwise kernels
 * (kernels/cpu/elementwise.c, kernels/cuda/elementwise.cuh) share, so
 * that both compute the same thing from one definition:
 *
 *  - the modulo of the binary ops (per element, on the CPU and the device)
 *    and their broadcast plan (built on the host);
 *  - Cast's conversions of one value (per element, on the CPU and the
 *    device), which are also how results on integer data are held in
 *    their dtype, and integer division.
 *
 * C11 and CUDA alike: static inline functions in C, host-and-device ones
 * under nvcc.
 */
#ifndef HY_ELEMENTWISE_COMMON_H
#define HY_ELEMENTWISE_COMMON_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "hybrid-tensor.h"

#ifdef __CUDACC__
#define HY_ELEMENTWISE_HD __host__ __device__ __forceinline__
#else
#define HY_ELEMENTWISE_HD static inline
#endif

/* ---- binary ops -------------------------------------------------------- */

/* Python's modulo (the result takes the divisor's sign), computed in double
 * as MXNet does; a zero divisor gives 0, not NaN. */
HY_ELEMENTWISE_HD float
hy_float_mod (float x, float y)
{
  if (y == 0.0f)
    return 0.0f;
  double r = fmod ((double) x, (double) y);
  if (r != 0.0 && (r < 0.0) != (y < 0.0))
    r += y;
  else if (r == 0.0 && (x < 0.0f || y < 0.0f))
    r = x < 0.0f && y < 0.0f ? -0.0 : 0.0;  /* MXNet's zero signs */
  return (float) r;
}

/* The iteration space of a broadcast: the output's axes with size-1 axes
 * dropped and neighbours merged wherever both operands step through them
 * as one (contiguous in both, or broadcast in both).  (N, C, H, W) ⊕
 * (1, C, 1, 1) becomes (N, C, H·W) with rhs strides (0, 1, 0); equal
 * shapes become a single axis.  The last axis has stride 1 or 0. */
typedef struct hy_broadcast_plan {
  int nd;
  int64_t dims[HY_MAX_DIMS];
  int64_t sa[HY_MAX_DIMS];      /* element strides; 0 = broadcast */
  int64_t sb[HY_MAX_DIMS];
} hy_broadcast_plan;

/* An operand's strides along the output's axes (right-aligned). */
static inline void
hy_broadcast_strides (const hy_shape *s, const hy_shape *o,
    int64_t *strides)
{
  int64_t step = 1;
  for (int i = o->ndim - 1; i >= 0; i--) {
    const int k = s->ndim - o->ndim + i;
    const int64_t d = k >= 0 ? s->dims[k] : 1;
    strides[i] = d == 1 ? 0 : step;
    step *= d;
  }
}

/* The plan of a ⊕ b into o (its first plan->nd axes set). */
static inline void
hy_broadcast_plan_make (const hy_shape *a, const hy_shape *b,
    const hy_shape *o, hy_broadcast_plan *plan)
{
  int64_t sa[HY_MAX_DIMS], sb[HY_MAX_DIMS];
  hy_broadcast_strides (a, o, sa);
  hy_broadcast_strides (b, o, sb);
  plan->nd = 0;
  for (int i = 0; i < o->ndim; i++) {
    const int64_t d = o->dims[i];
    if (d == 1)
      continue;
    const int last = plan->nd - 1;
    if (last >= 0 && plan->sa[last] == sa[i] * d
        && plan->sb[last] == sb[i] * d) {
      plan->dims[last] *= d;
      plan->sa[last] = sa[i];
      plan->sb[last] = sb[i];
    } else {
      plan->dims[plan->nd] = d;
      plan->sa[plan->nd] = sa[i];
      plan->sb[plan->nd] = sb[i];
      plan->nd++;
    }
  }
}

/* ---- Cast -------------------------------------------------------------- */

HY_ELEMENTWISE_HD uint32_t
hy_float_bits (float v)
{
  uint32_t u;
  memcpy (&u, &v, sizeof u);
  return u;
}

HY_ELEMENTWISE_HD float
hy_bits_float (uint32_t u)
{
  float v;
  memcpy (&v, &u, sizeof v);
  return v;
}

/* The float16 nearest to v (ties to even), back as float32: what
 * storing into half precision does.  Beyond 65504 (from 65520 on) is inf. */
HY_ELEMENTWISE_HD float
hy_round_to_float16 (float v)
{
  const uint32_t u = hy_float_bits (v);
  const uint32_t sign = u & 0x80000000u, mag = u & 0x7fffffffu;
  if (mag >= 0x7f800000u)       /* inf, NaN */
    return v;
  if (mag >= 0x477ff000u)       /* >= 65520 */
    return sign ? -INFINITY : INFINITY;
  if (mag < 0x38800000u) {      /* below 2^-14: half subnormals */
    /* Subnormal halves are multiples of 2^-24; scaling by a power of two
     * is exact, rintf rounds ties to even. */
    const float q = rintf (fabsf (v) * 0x1p24f) * 0x1p-24f;
    return sign ? -q : q;
  }
  /* Normal: keep 10 of the 23 mantissa bits, rounding to nearest even. */
  const uint32_t lsb = (mag >> 13) & 1u;
  return hy_bits_float (sign | ((mag + 0x0fffu + lsb) & ~0x1fffu));
}

/* MXNet's bfloat16 conversion truncates the low 16 bits. */
HY_ELEMENTWISE_HD float
hy_round_to_bfloat16 (float v)
{
  if (v != v)
    return v;                   /* truncating could turn NaN into inf */
  return hy_bits_float (hy_float_bits (v) & 0xffff0000u);
}

/* A float converted to int32 as x86 does (cvttss2si): toward zero, and
 * NaN or out of range gives INT32_MIN.  MXNet's narrower integer casts
 * go through it and keep the low bits, so 300.7 → uint8 44. */
HY_ELEMENTWISE_HD int32_t
hy_float_to_int32 (float v)
{
  if (v >= -2147483648.0f && v < 2147483648.0f)
    return (int32_t) v;
  return INT32_MIN;
}

/* To int64, as a float: toward zero; NaN or out of range gives -2^63. */
HY_ELEMENTWISE_HD float
hy_float_to_int64 (float v)
{
  /* Every float of magnitude >= 2^23 is already an integer. */
  if (v >= -0x1p63f && v < 0x1p63f)
    return truncf (v);
  return -0x1p63f;
}

/* v as stored in `dtype` and read back: Cast's conversion of one value.
 * Integer dtypes truncate toward zero and keep the low bits (uint8, int8);
 * float32 and float64 keep v. */
HY_ELEMENTWISE_HD float
hy_cast_value (int dtype, float v)
{
  switch (dtype) {
    case HY_DTYPE_FLOAT16:
      return hy_round_to_float16 (v);
    case HY_DTYPE_BFLOAT16:
      return hy_round_to_bfloat16 (v);
    case HY_DTYPE_INT32:
      return (float) hy_float_to_int32 (v);
    case HY_DTYPE_INT64:
      return hy_float_to_int64 (v);
    case HY_DTYPE_UINT8:
      return (float) ((uint32_t) hy_float_to_int32 (v) & 0xffu);
    case HY_DTYPE_INT8: {
      const int32_t low = (int32_t) ((uint32_t) hy_float_to_int32 (v) & 0xffu);
      return (float) (low >= 128 ? low - 256 : low);
    }
    case HY_DTYPE_BOOL:
      return v != 0.0f ? 1.0f : 0.0f;
    default:                    /* float32, float64: unchanged */
      return v;
  }
}

/* ---- integer data ------------------------------------------------------ */

/* x / y on integers, as C++ divides them: the quotient truncated toward
 * zero (-7 / 2 = -3).  Computed in double, which is exact for every
 * integer a float holds below 2^53.  MXNet's integer division by zero
 * kills the process (SIGFPE); here it gives 0, as its modulo does. */
HY_ELEMENTWISE_HD float
hy_int_div (float x, float y)
{
  if (y == 0.0f)
    return 0.0f;
  return (float) trunc ((double) x / (double) y);
}

/* MXNet's modulo on integers: Python's (the divisor's sign), x % 0 = 0,
 * and no signed zeros. */
HY_ELEMENTWISE_HD float
hy_int_mod (float x, float y)
{
  const float r = hy_float_mod (x, y);
  return r == 0.0f ? 0.0f : r;
}

#endif /* HY_ELEMENTWISE_COMMON_H */

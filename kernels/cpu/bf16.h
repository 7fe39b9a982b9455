/* bf16 <-> fp32, the one rounding every bf16 path of the CPU backend
 * uses: oneDNN's bf16 convolutions, the pointwise-depthwise chains and
 * the segments all read what these write, so they must agree bit for
 * bit. */
#pragma once

#include <stdint.h>

/* Nearest even, a NaN kept a (quiet) NaN: what AVX512_BF16's
 * vcvtneps2bf16 makes.  Branch-free, so that loops over it vectorise
 * (gcc emits no vcvtneps2bf16 from C). */
static inline uint16_t
hy_bf16_from_float (float f)
{
  uint32_t u;
  __builtin_memcpy (&u, &f, sizeof u);
  const uint32_t rounded = (u + 0x7fffu + (u >> 16 & 1u)) >> 16;
  return (u & 0x7fffffffu) > 0x7f800000u ? (uint16_t) (u >> 16 | 0x40u)
      : (uint16_t) rounded;
}

static inline float
hy_bf16_to_float (uint16_t h)
{
  const uint32_t u = (uint32_t) h << 16;
  float f;
  __builtin_memcpy (&f, &u, sizeof f);
  return f;
}

/* n floats of x into bf16 at y, vectorised (AVX-512 and AVX2 builds of
 * the loop picked at load time). */
void hy_bf16_from_floats (uint16_t *restrict y, const float *restrict x,
    int64_t n);

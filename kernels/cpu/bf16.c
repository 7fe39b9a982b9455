/* The run conversion of bf16.h, in its own file so that every bf16 path
 * calls one vectorised loop instead of keeping a copy. */
#include "bf16.h"

#include "cpu-features.h"

HY_CPU_VECTOR_CLONES void
hy_bf16_from_floats (uint16_t *restrict y, const float *restrict x,
    int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = hy_bf16_from_float (x[i]);
}

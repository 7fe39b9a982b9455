/*
 * epilogue.h — the fused epilogue of Convolution and FullyConnected
 * (hy_fused_epilogue in nn.h):  y = act (y + bias + residual).
 *
 * Kernels apply it to each block of the output right after the GEMM (or
 * the direct loop) that wrote it, while the block is still in cache, in a
 * single pass; the bias then need not be spread into the output before the
 * GEMM either.  The additions run in MXNet's order — bias first, as its
 * convolution does, then the residual, as the elemwise_add did.
 */
#ifndef HY_CPU_EPILOGUE_H
#define HY_CPU_EPILOGUE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "blas.h"
#include "nn.h"

#ifndef HY_CPU_VECTOR_CLONES
#define HY_CPU_VECTOR_CLONES
#endif

#define HY_EPILOGUE_INLINE static inline __attribute__ ((always_inline))

/* The formulas of the standalone ops (activation.c, elementwise.c), so a
 * fused graph computes what the unfused one does. */
HY_EPILOGUE_INLINE float
hy_epilogue_act (hy_fused_act act, float v, float alpha, float beta)
{
  switch (act) {
    case HY_FUSED_ACT_NONE:
      return v;
    case HY_FUSED_ACT_RELU:
      return v > 0.0f ? v : 0.0f;
    case HY_FUSED_ACT_CLIP:
      return v > beta ? beta : v < alpha ? alpha : v;
    case HY_FUSED_ACT_LEAKY:
      return v > 0.0f ? v : v * alpha;
    case HY_FUSED_ACT_SIGMOID:
      return 1.0f / (1.0f + expf (-v));
    case HY_FUSED_ACT_TANH:
      return tanhf (v);
  }
  return v;
}

/* `act` is a constant at every call site below, so each instance compiles
 * to a branch-free loop gcc can vectorise. */
HY_EPILOGUE_INLINE void
hy_epilogue_block_as (hy_fused_act act, const hy_fused_epilogue *e,
    float *restrict y, const float *restrict bias, bool bias_per_column,
    const float *restrict res, int64_t rows, int64_t cols, int64_t ld)
{
  const float alpha = e->alpha, beta = e->beta;
  for (int64_t r = 0; r < rows; r++) {
    float *restrict yr = y + r * ld;
    const float *restrict rr = res ? res + r * ld : NULL;
    if (bias_per_column) {
      if (rr) {
        for (int64_t c = 0; c < cols; c++)
          yr[c] = hy_epilogue_act (act, yr[c] + bias[c] + rr[c], alpha, beta);
      } else {
        for (int64_t c = 0; c < cols; c++)
          yr[c] = hy_epilogue_act (act, yr[c] + bias[c], alpha, beta);
      }
    } else {
      const float b = bias ? bias[r] : 0.0f;
      if (rr) {
        for (int64_t c = 0; c < cols; c++)
          yr[c] = hy_epilogue_act (act, yr[c] + b + rr[c], alpha, beta);
      } else {
        for (int64_t c = 0; c < cols; c++)
          yr[c] = hy_epilogue_act (act, yr[c] + b, alpha, beta);
      }
    }
  }
}

/* The (rows, cols) block y, rows `ld` floats apart, becomes
 * act (y + bias + res).  bias (may be NULL) holds one value per row (a
 * convolution's channels) or, when bias_per_column, one per column
 * (FullyConnected's units); res (may be NULL) is laid out like y. */
HY_CPU_VECTOR_CLONES static void
hy_epilogue_apply (const hy_fused_epilogue *e, float *y, const float *bias,
    bool bias_per_column, const float *res, int64_t rows, int64_t cols,
    int64_t ld)
{
  bias_per_column = bias_per_column && bias;
  switch (e->act) {
#define HY_EPILOGUE_CASE(act) \
    case act: \
      hy_epilogue_block_as (act, e, y, bias, bias_per_column, res, rows, \
          cols, ld); \
      break
    HY_EPILOGUE_CASE (HY_FUSED_ACT_NONE);
    HY_EPILOGUE_CASE (HY_FUSED_ACT_RELU);
    HY_EPILOGUE_CASE (HY_FUSED_ACT_CLIP);
    HY_EPILOGUE_CASE (HY_FUSED_ACT_LEAKY);
    HY_EPILOGUE_CASE (HY_FUSED_ACT_SIGMOID);
    HY_EPILOGUE_CASE (HY_FUSED_ACT_TANH);
#undef HY_EPILOGUE_CASE
  }
}

/* Whether a kernel must run the epilogue at all. */
static inline bool
hy_epilogue_is_set (const hy_fused_epilogue *e)
{
  return e->act != HY_FUSED_ACT_NONE || e->residual;
}

#endif /* HY_CPU_EPILOGUE_H */

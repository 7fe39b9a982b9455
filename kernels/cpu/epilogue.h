/*
 * epilogue.h — the fused epilogue of Convolution and FullyConnected
 * (hy_fused_epilogue in nn.h):  y = act (bn (y + bias) + residual).
 *
 * Kernels apply it to each block of the output right after the GEMM (or
 * the direct loop) that wrote it, while the block is still in cache, in a
 * single pass; the bias then need not be spread into the output before the
 * GEMM either.  Every step repeats the arithmetic of the op it replaces,
 * in MXNet's order — the bias as the convolution adds it, BatchNorm's
 * (v − mean)·scale + shift as batch-norm.c computes it, then the residual
 * as elemwise_add, then the activation as activation.c/elementwise.c — so
 * a fused graph computes bit for bit what the unfused one does.
 */
#ifndef HY_CPU_EPILOGUE_H
#define HY_CPU_EPILOGUE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hybrid-tensor.h"
#include "kernels/cpu/cpu-features.h"
#include "kernels/params/nn.h"

#define HY_EPILOGUE_INLINE static inline __attribute__ ((always_inline))
/* Each kernel file uses one of the two layouts. */
#define HY_EPILOGUE_ENTRY static __attribute__ ((unused))

/* The epilogue's operands of a Convolution or FullyConnected call, read
 * from its inputs where nn.h's hy_fused_inputs_of puts them; NULL for
 * each the call does not have. */
typedef struct hy_epilogue_operands {
  const float *bias, *bn, *res;
} hy_epilogue_operands;

static inline hy_epilogue_operands
hy_epilogue_operands_of (bool no_bias, const hy_fused_epilogue *e,
    const hy_tensor *const *in)
{
  const hy_fused_inputs f = hy_fused_inputs_of (no_bias, e);
  hy_epilogue_operands o;
  o.bias = f.bias < 0 ? NULL : in[f.bias]->data;
  o.bn = f.bn < 0 ? NULL : in[f.bn]->data;
  o.res = f.residual < 0 ? NULL : in[f.residual]->data;
  return o;
}

/* Per-channel operands: channel c's bias is bias[c] (bias may be NULL),
 * its BatchNorm mean, scale and shift bn[c], bn[c + bn_stride] and
 * bn[c + 2·bn_stride] (bn may be NULL). */
typedef struct hy_epilogue_channels {
  const float *bias;
  const float *bn;
  int64_t bn_stride;
} hy_epilogue_channels;

/* relu6 (v + 3) / 6 as _plus_scalar, clip and _div_scalar compute it
 * (elementwise.c): a true division, which a multiply by 1/6 is not. */
HY_EPILOGUE_INLINE float
hy_epilogue_hard_sigmoid (float v)
{
  const float t = v + 3.0f;
  return (t > 6.0f ? 6.0f : t < 0.0f ? 0.0f : t) / 6.0f;
}

HY_EPILOGUE_INLINE float
hy_epilogue_act (hy_fused_act act, float v, float alpha, float beta)
{
  switch (act) {
    case HY_FUSED_ACT_NONE:
      return v;
    case HY_FUSED_ACT_RELU:     /* NaN passes, as relu's (activation.c) */
      return !(v <= 0.0f) ? v : 0.0f;
    case HY_FUSED_ACT_CLIP:
      return v > beta ? beta : v < alpha ? alpha : v;
    case HY_FUSED_ACT_LEAKY:
      return v > 0.0f ? v : v * alpha;
    case HY_FUSED_ACT_SIGMOID:
      return 1.0f / (1.0f + expf (-v));
    case HY_FUSED_ACT_TANH:
      return tanhf (v);
    case HY_FUSED_ACT_HARD_SIGMOID:
      return hy_epilogue_hard_sigmoid (v);
    case HY_FUSED_ACT_HARD_SWISH:       /* elemwise_mul (v, hard sigmoid) */
      return v * hy_epilogue_hard_sigmoid (v);
  }
  return v;
}

/* One output channel's row of n values.  Adding a zero bias leaves every
 * value as it was, so "no bias" needs no loop of its own. */
HY_EPILOGUE_INLINE void
hy_epilogue_row_as (hy_fused_act act, bool bn, const hy_fused_epilogue *e,
    float *restrict y, const float *restrict res, int64_t n, float bias,
    float mean, float scale, float shift)
{
  const float alpha = e->alpha, beta = e->beta;
  if (res) {
    for (int64_t i = 0; i < n; i++) {
      float v = y[i] + bias;
      if (bn)
        v = (v - mean) * scale + shift;
      y[i] = hy_epilogue_act (act, v + res[i], alpha, beta);
    }
  } else {
    for (int64_t i = 0; i < n; i++) {
      float v = y[i] + bias;
      if (bn)
        v = (v - mean) * scale + shift;
      y[i] = hy_epilogue_act (act, v, alpha, beta);
    }
  }
}

/* `act` and `bn` are constants at every call site below, so each instance
 * compiles to branch-free loops gcc can vectorise. */
HY_EPILOGUE_INLINE void
hy_epilogue_rows_as (hy_fused_act act, bool bn, const hy_fused_epilogue *e,
    float *y, const float *res, int64_t rows, int64_t cols, int64_t ld,
    const hy_epilogue_channels *ch)
{
  for (int64_t r = 0; r < rows; r++) {
    const float *b = ch->bn;
    hy_epilogue_row_as (act, bn, e, y + r * ld, res ? res + r * ld : NULL,
        cols, ch->bias ? ch->bias[r] : 0.0f, bn ? b[r] : 0.0f,
        bn ? b[r + ch->bn_stride] : 0.0f,
        bn ? b[r + 2 * ch->bn_stride] : 0.0f);
  }
}

/* The (rows, cols) block y, rows `ld` floats apart, one output channel
 * per row (a convolution's layout): row r takes channel r's operands from
 * ch.  res (may be NULL) is laid out like y. */
HY_CPU_VECTOR_CLONES HY_EPILOGUE_ENTRY void
hy_epilogue_rows (const hy_fused_epilogue *e, float *y, const float *res,
    int64_t rows, int64_t cols, int64_t ld, const hy_epilogue_channels *ch)
{
  const bool bn = ch->bn != NULL;
  switch (e->act) {
#define HY_EPILOGUE_CASE(act) \
    case act: \
      if (bn) \
        hy_epilogue_rows_as (act, true, e, y, res, rows, cols, ld, ch); \
      else \
        hy_epilogue_rows_as (act, false, e, y, res, rows, cols, ld, ch); \
      break
    HY_EPILOGUE_CASE (HY_FUSED_ACT_NONE);
    HY_EPILOGUE_CASE (HY_FUSED_ACT_RELU);
    HY_EPILOGUE_CASE (HY_FUSED_ACT_CLIP);
    HY_EPILOGUE_CASE (HY_FUSED_ACT_LEAKY);
    HY_EPILOGUE_CASE (HY_FUSED_ACT_SIGMOID);
    HY_EPILOGUE_CASE (HY_FUSED_ACT_TANH);
    HY_EPILOGUE_CASE (HY_FUSED_ACT_HARD_SIGMOID);
    HY_EPILOGUE_CASE (HY_FUSED_ACT_HARD_SWISH);
#undef HY_EPILOGUE_CASE
  }
}

/* One row of FullyConnected's layout: column c is channel c. */
HY_EPILOGUE_INLINE void
hy_epilogue_columns_as (hy_fused_act act, bool bn, const hy_fused_epilogue *e,
    float *restrict y, const float *restrict res, int64_t cols,
    const hy_epilogue_channels *ch)
{
  const float alpha = e->alpha, beta = e->beta;
  const float *restrict bias = ch->bias, *restrict b = ch->bn;
  const int64_t s = ch->bn_stride;
  for (int64_t c = 0; c < cols; c++) {
    float v = y[c] + (bias ? bias[c] : 0.0f);
    if (bn)
      v = (v - b[c]) * b[c + s] + b[c + 2 * s];
    if (res)
      v = v + res[c];
    y[c] = hy_epilogue_act (act, v, alpha, beta);
  }
}

/* The (rows, cols) block y, rows `ld` floats apart, one output channel
 * per column (FullyConnected's layout): column c takes channel c's
 * operands from ch.  res (may be NULL) is laid out like y.  Instances per
 * activation, as for rows: at batch 1 this pass is a good part of what a
 * small FullyConnected costs beside its GEMV. */
HY_CPU_VECTOR_CLONES HY_EPILOGUE_ENTRY void
hy_epilogue_columns (const hy_fused_epilogue *e, float *y, const float *res,
    int64_t rows, int64_t cols, int64_t ld, const hy_epilogue_channels *ch)
{
  const bool bn = ch->bn != NULL;
  for (int64_t r = 0; r < rows; r++) {
    float *yr = y + r * ld;
    const float *rr = res ? res + r * ld : NULL;
    switch (e->act) {
#define HY_EPILOGUE_CASE(act) \
      case act: \
        if (bn) \
          hy_epilogue_columns_as (act, true, e, yr, rr, cols, ch); \
        else \
          hy_epilogue_columns_as (act, false, e, yr, rr, cols, ch); \
        break
      HY_EPILOGUE_CASE (HY_FUSED_ACT_NONE);
      HY_EPILOGUE_CASE (HY_FUSED_ACT_RELU);
      HY_EPILOGUE_CASE (HY_FUSED_ACT_CLIP);
      HY_EPILOGUE_CASE (HY_FUSED_ACT_LEAKY);
      HY_EPILOGUE_CASE (HY_FUSED_ACT_SIGMOID);
      HY_EPILOGUE_CASE (HY_FUSED_ACT_TANH);
      HY_EPILOGUE_CASE (HY_FUSED_ACT_HARD_SIGMOID);
      HY_EPILOGUE_CASE (HY_FUSED_ACT_HARD_SWISH);
#undef HY_EPILOGUE_CASE
    }
  }
}

/* The operands of the channels from `first` on: a block's own. */
static inline hy_epilogue_channels
hy_epilogue_channels_from (const hy_epilogue_channels *ch, int64_t first)
{
  hy_epilogue_channels sub = {
    ch->bias ? ch->bias + first : NULL, ch->bn ? ch->bn + first : NULL,
    ch->bn_stride,
  };
  return sub;
}

/* Whether a kernel must run the epilogue at all. */
static inline bool
hy_epilogue_is_set (const hy_fused_epilogue *e)
{
  return e->act != HY_FUSED_ACT_NONE || e->batch_norm || e->residual;
}

#endif /* HY_CPU_EPILOGUE_H */

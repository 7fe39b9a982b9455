/*
 * reduce.c — CPU kernels of sum, mean, max, min, prod and argmax, argmin.
 *
 * A reduction over any set of axes is done as a few passes of one simple
 * shape, (outer, n, inner) → (outer, inner): adjacent axes that are both
 * reduced or both kept merge into one, so at most three reduced groups
 * remain (R K R K R K), folded innermost first through the workspace.
 * inner = 1 reduces contiguous rows; inner > 1 adds whole rows of `inner`
 * values into per-position accumulators.  Both are contiguous loops, built
 * also for AVX2 and AVX-512 (see cpu-features.h).
 *
 * Sums and products accumulate in double, like MXNet's careful float
 * reduction; max/min propagate NaN.  argmax/argmin return the first
 * extreme — or the first NaN, which MXNet treats as beating every number.
 */
#include <math.h>
#include <string.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/cpu-features.h"
#include "kernels/params/elementwise.h"
#include "kernels/elementwise-common.h"

void hy_cpu_reduce (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_arg_reduce (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

typedef enum reduce_kind {
  REDUCE_SUM,                   /* also mean, divided afterwards */
  REDUCE_PROD,
  REDUCE_MAX,
  REDUCE_MIN,
} reduce_kind;

#define LANES 8                 /* independent accumulators: vectorisable */

static inline float
fold_max (float acc, float v)
{
  return v > acc || v != v ? v : acc;
}

static inline float
fold_min (float acc, float v)
{
  return v < acc || v != v ? v : acc;
}

HY_CPU_VECTOR_CLONES static double
sum_row (const float *x, int64_t n)
{
  double lane[LANES] = { 0 };
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int k = 0; k < LANES; k++)
      lane[k] += x[i + k];
  double s = 0.0;
  for (; i < n; i++)
    s += x[i];
  for (int k = 0; k < LANES; k++)
    s += lane[k];
  return s;
}

HY_CPU_VECTOR_CLONES static double
prod_row (const float *x, int64_t n)
{
  double lane[LANES] = { 1, 1, 1, 1, 1, 1, 1, 1 };
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int k = 0; k < LANES; k++)
      lane[k] *= x[i + k];
  double s = 1.0;
  for (; i < n; i++)
    s *= x[i];
  for (int k = 0; k < LANES; k++)
    s *= lane[k];
  return s;
}

HY_CPU_VECTOR_CLONES static float
extreme_row (const float *x, int64_t n, bool is_max)
{
  const float start = is_max ? -INFINITY : INFINITY;
  float lane[LANES];
  for (int k = 0; k < LANES; k++)
    lane[k] = start;
  int64_t i = 0;
  if (is_max) {
    for (; i + LANES <= n; i += LANES)
      for (int k = 0; k < LANES; k++)
        lane[k] = fold_max (lane[k], x[i + k]);
  } else {
    for (; i + LANES <= n; i += LANES)
      for (int k = 0; k < LANES; k++)
        lane[k] = fold_min (lane[k], x[i + k]);
  }
  float m = start;
  for (; i < n; i++)
    m = is_max ? fold_max (m, x[i]) : fold_min (m, x[i]);
  for (int k = 0; k < LANES; k++)
    m = is_max ? fold_max (m, lane[k]) : fold_min (m, lane[k]);
  return m;
}

/* (outer, n, inner) → (outer, inner).  acc holds `inner` doubles. */
HY_CPU_VECTOR_CLONES static void
reduce_pass (reduce_kind kind, const float *x, float *o, int64_t outer,
    int64_t n, int64_t inner, double *acc)
{
  const int64_t block = n * inner;
  for (int64_t b = 0; b < outer; b++, x += block, o += inner) {
    if (inner == 1) {
      switch (kind) {
        case REDUCE_SUM: o[0] = (float) sum_row (x, n); break;
        case REDUCE_PROD: o[0] = (float) prod_row (x, n); break;
        case REDUCE_MAX: o[0] = extreme_row (x, n, true); break;
        case REDUCE_MIN: o[0] = extreme_row (x, n, false); break;
      }
      continue;
    }
    switch (kind) {
      case REDUCE_SUM:
      case REDUCE_PROD: {
        const bool sum = kind == REDUCE_SUM;
        for (int64_t j = 0; j < inner; j++)
          acc[j] = sum ? 0.0 : 1.0;
        for (int64_t r = 0; r < n; r++) {
          const float *xrow = x + r * inner;
          if (sum)
            for (int64_t j = 0; j < inner; j++)
              acc[j] += xrow[j];
          else
            for (int64_t j = 0; j < inner; j++)
              acc[j] *= xrow[j];
        }
        for (int64_t j = 0; j < inner; j++)
          o[j] = (float) acc[j];
        break;
      }
      case REDUCE_MAX:
      case REDUCE_MIN: {
        const float start = kind == REDUCE_MAX ? -INFINITY : INFINITY;
        for (int64_t j = 0; j < inner; j++)
          o[j] = start;
        for (int64_t r = 0; r < n; r++) {
          const float *xrow = x + r * inner;
          if (kind == REDUCE_MAX)
            for (int64_t j = 0; j < inner; j++)
              o[j] = fold_max (o[j], xrow[j]);
          else
            for (int64_t j = 0; j < inner; j++)
              o[j] = fold_min (o[j], xrow[j]);
        }
        break;
      }
    }
  }
}

/* Runs of adjacent axes that are all reduced or all kept. */
typedef struct axis_groups {
  int n;
  int64_t size[HY_MAX_DIMS];
  bool reduced[HY_MAX_DIMS];
} axis_groups;

static void
group_axes (const hy_shape *s, uint32_t mask, axis_groups *g)
{
  g->n = 0;
  for (int i = 0; i < s->ndim; i++) {
    const bool r = (mask >> i) & 1u;
    if (s->dims[i] == 1)
      continue;                 /* size 1: reduced or not, nothing moves */
    if (g->n > 0 && g->reduced[g->n - 1] == r) {
      g->size[g->n - 1] *= s->dims[i];
    } else {
      g->size[g->n] = s->dims[i];
      g->reduced[g->n] = r;
      g->n++;
    }
  }
}

void
hy_cpu_reduce (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_reduce_params *p = params;
  const hy_shape *s = &in[0]->shape;
  float *o = out[0]->data;
  const int64_t n_out_elems = hy_shape_numel (&out[0]->shape);
  if (n_out_elems == 0)
    return;
  uint32_t mask = 0;
  hy_reduce_axes_mask (p, s->ndim, &mask);  /* validated by the core */

  reduce_kind kind = REDUCE_SUM;
  switch (p->op) {
    case HY_OP_PROD: kind = REDUCE_PROD; break;
    case HY_OP_MAX: kind = REDUCE_MAX; break;
    case HY_OP_MIN: kind = REDUCE_MIN; break;
    default: break;             /* sum, mean */
  }

  axis_groups g = { 0 };
  group_axes (s, mask, &g);
  int64_t count = 1;            /* values folded into each output */
  int n_passes = 0;
  for (int i = 0; i < g.n; i++) {
    if (g.reduced[i]) {
      count *= g.size[i];
      n_passes++;
    }
  }
  /* An axis of size 0 leaves nothing to fold: each output is the
   * identity (sum 0, max -inf, mean 0/0 = NaN). */
  for (int i = 0; i < s->ndim; i++)
    if ((mask >> i) & 1u && s->dims[i] == 0)
      count = 0;

  if (count == 0 || n_passes == 0) {
    const float *x = in[0]->data;
    for (int64_t i = 0; i < n_out_elems; i++) {
      if (count != 0)
        o[i] = x[i];            /* nothing reduced: a copy */
      else
        o[i] = kind == REDUCE_SUM ? 0.0f : kind == REDUCE_PROD ? 1.0f
            : kind == REDUCE_MAX ? -INFINITY : INFINITY;
    }
  } else {
    /* Workspace: the inner accumulators, then two ping-pong buffers for
     * the intermediate results (the last pass writes the output). */
    int64_t max_inner = 1, size = hy_shape_numel (s), ping = 0;
    {
      int64_t inner = 1, cur = size;
      for (int i = g.n - 1; i >= 0; i--) {
        if (g.reduced[i]) {
          max_inner = inner > max_inner ? inner : max_inner;
          cur /= g.size[i];
          ping = ping > cur ? ping : cur;
        } else {
          inner *= g.size[i];
        }
      }
    }
    const size_t acc_bytes = (size_t) max_inner * sizeof (double);
    char *ws = hy_cpu_workspace (ctx,
        acc_bytes + (n_passes > 1 ? 2 * (size_t) ping * sizeof (float) : 0));
    double *acc = (double *) ws;
    float *bufs[2] = { (float *) (ws + acc_bytes),
      (float *) (ws + acc_bytes) + ping };

    const float *src = in[0]->data;
    int64_t inner = 1, cur = size, pass = 0;
    for (int i = g.n - 1; i >= 0; i--) {
      if (!g.reduced[i]) {
        inner *= g.size[i];
        continue;
      }
      const int64_t n = g.size[i], outer = cur / (n * inner);
      float *dst = ++pass == n_passes ? o : bufs[pass & 1];
      reduce_pass (kind, src, dst, outer, n, inner, acc);
      src = dst;
      cur /= n;
    }
  }

  if (p->op == HY_OP_MEAN) {
    const float c = (float) count;
    for (int64_t i = 0; i < n_out_elems; i++)
      o[i] /= c;
  }
  /* Integer data: held in its dtype (a mean truncates, a sum wraps). */
  if (p->int_dtype != HY_DTYPE_FLOAT32)
    for (int64_t i = 0; i < n_out_elems; i++)
      o[i] = hy_cast_value (p->int_dtype, o[i]);
}

/* ---- argmax, argmin ---------------------------------------------------- */

/* Does v replace the current best?  The first NaN wins and stays. */
static inline bool
beats (float v, float best, bool is_max)
{
  if (best != best)
    return false;
  return v != v || (is_max ? v > best : v < best);
}

void
hy_cpu_arg_reduce (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_arg_reduce_params *p = params;
  const hy_shape *s = &in[0]->shape;
  const float *x = in[0]->data;
  float *o = out[0]->data;
  const bool is_max = p->op == HY_OP_ARGMAX;
  const int64_t total = hy_shape_numel (s);

  int64_t outer = 1, n = total, inner = 1;
  if (!p->flatten) {
    const int axis = p->axis < 0 ? p->axis + s->ndim : p->axis;
    for (int i = 0; i < axis; i++)
      outer *= s->dims[i];
    n = s->dims[axis];
    for (int i = axis + 1; i < s->ndim; i++)
      inner *= s->dims[i];
  }
  if (n == 0) {                 /* nothing to search: MXNet cannot get here */
    const int64_t n_o = hy_shape_numel (&out[0]->shape);
    for (int64_t i = 0; i < n_o; i++)
      o[i] = 0.0f;
    return;
  }

  const int64_t block = n * inner;
  if (inner == 1) {
    for (int64_t b = 0; b < outer; b++) {
      const float *row = x + b * block;
      float best = row[0];
      int64_t at = 0;
      for (int64_t i = 1; i < n; i++) {
        if (beats (row[i], best, is_max)) {
          best = row[i];
          at = i;
        }
      }
      o[b] = (float) at;
    }
    return;
  }

  /* Whole rows at a time: best values in the workspace, indices in out. */
  float *best = hy_cpu_workspace (ctx, (size_t) inner * sizeof (float));
  for (int64_t b = 0; b < outer; b++) {
    const float *blk = x + b * block;
    float *ob = o + b * inner;
    for (int64_t j = 0; j < inner; j++) {
      best[j] = blk[j];
      ob[j] = 0.0f;
    }
    for (int64_t r = 1; r < n; r++) {
      const float *xrow = blk + r * inner;
      for (int64_t j = 0; j < inner; j++) {
        if (beats (xrow[j], best[j], is_max)) {
          best[j] = xrow[j];
          ob[j] = (float) r;
        }
      }
    }
  }
}

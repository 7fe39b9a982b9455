/*
 * reduce.cuh — sum, mean, max, min, prod and argmax, argmin on the GPU
 * (reduce.cu), one thread per output element looping over the values it
 * folds; shared with tests/cuda/emulate-reduce.cu.
 *
 * As on the CPU (kernels/cpu/reduce.c): adjacent axes that are both
 * reduced or both kept merge, length-1 axes drop out; sums and products
 * accumulate in double; max/min propagate NaN; mean divides the float
 * sum by the count in float; a reduced axis of length 0 gives the
 * identity (mean: 0/0).  argmax/argmin return the first extreme, or the
 * first NaN.
 */
#ifndef HY_CUDA_REDUCE_CUH
#define HY_CUDA_REDUCE_CUH

#include <math.h>

#include "kernels/cuda/launch.cuh"
#include "hybrid-tensor.h"
#include "kernels/params/elementwise.h"
#include "kernels/elementwise-common.h"

typedef enum hy_cuda_reduce_kind {
  HY_CUDA_REDUCE_SUM,
  HY_CUDA_REDUCE_MEAN,
  HY_CUDA_REDUCE_PROD,
  HY_CUDA_REDUCE_MAX,
  HY_CUDA_REDUCE_MIN,
} hy_cuda_reduce_kind;

typedef struct hy_cuda_reduce_args {
  int kind;                     /* hy_cuda_reduce_kind */
  int n_keep, n_red;
  int64_t count;                /* values folded into each output */
  /* Kept groups (the output's axes) and reduced groups, outermost first:
   * lengths and input strides. */
  int64_t keep_dims[HY_MAX_DIMS], keep_stride[HY_MAX_DIMS];
  int64_t red_dims[HY_MAX_DIMS], red_stride[HY_MAX_DIMS];
  int int_dtype;                /* integer data: results held in it */
} hy_cuda_reduce_args;

static inline hy_cuda_reduce_args
hy_cuda_reduce_plan (const hy_reduce_params *p, const hy_shape *s)
{
  hy_cuda_reduce_args r = {};
  r.int_dtype = (int) p->int_dtype;
  switch (p->op) {
    case HY_OP_MEAN: r.kind = HY_CUDA_REDUCE_MEAN; break;
    case HY_OP_PROD: r.kind = HY_CUDA_REDUCE_PROD; break;
    case HY_OP_MAX: r.kind = HY_CUDA_REDUCE_MAX; break;
    case HY_OP_MIN: r.kind = HY_CUDA_REDUCE_MIN; break;
    default: r.kind = HY_CUDA_REDUCE_SUM; break;
  }
  uint32_t mask = 0;
  hy_reduce_axes_mask (p, s->ndim, &mask);  /* validated by the core */
  int64_t in_stride[HY_MAX_DIMS], st = 1;
  for (int i = s->ndim - 1; i >= 0; i--) {
    in_stride[i] = st;
    st *= s->dims[i];
  }
  r.count = 1;
  int last = -1;                /* the previous group: 1 reduced, 0 kept */
  for (int i = 0; i < s->ndim; i++) {
    const int red = (mask >> i) & 1u;
    const int64_t d = s->dims[i];
    if (red)
      r.count *= d;
    if (d == 1)
      continue;                 /* reduced or not, nothing moves */
    int64_t *dims = red ? r.red_dims : r.keep_dims;
    int64_t *str = red ? r.red_stride : r.keep_stride;
    int *n = red ? &r.n_red : &r.n_keep;
    if (last == red) {
      /* Adjacent to the group before: it grows inward, its step is now
       * this axis's. */
      dims[*n - 1] *= d;
      str[*n - 1] = in_stride[i];
    } else {
      dims[*n] = d;
      str[*n] = in_stride[i];
      (*n)++;
    }
    last = red;
  }
  return r;
}

/* Output element i. */
HY_CUDA_HD float
hy_cuda_reduce_one (const hy_cuda_reduce_args *r, const float *x, int64_t i)
{
  int64_t off = 0;
  for (int k = r->n_keep - 1; k >= 0; k--) {
    off += (i % r->keep_dims[k]) * r->keep_stride[k];
    i /= r->keep_dims[k];
  }
  const bool extreme = r->kind == HY_CUDA_REDUCE_MAX
      || r->kind == HY_CUDA_REDUCE_MIN;
  double acc = r->kind == HY_CUDA_REDUCE_PROD ? 1.0 : 0.0;
  float m = r->kind == HY_CUDA_REDUCE_MAX ? -INFINITY : INFINITY;
  int64_t idx[HY_MAX_DIMS] = {};
  for (int64_t j = 0; j < r->count; j++) {
    const float v = x[off];
    switch (r->kind) {
      case HY_CUDA_REDUCE_PROD: acc *= v; break;
      case HY_CUDA_REDUCE_MAX: m = v > m || v != v ? v : m; break;
      case HY_CUDA_REDUCE_MIN: m = v < m || v != v ? v : m; break;
      default: acc += v; break;
    }
    /* The next reduced position, innermost group fastest. */
    for (int k = r->n_red - 1; k >= 0; k--) {
      off += r->red_stride[k];
      if (++idx[k] < r->red_dims[k])
        break;
      off -= r->red_stride[k] * r->red_dims[k];
      idx[k] = 0;
    }
  }
  float res = (float) acc;
  if (extreme)
    res = m;
  else if (r->kind == HY_CUDA_REDUCE_MEAN)
    res = (float) acc / (float) r->count;
  /* Integer data: a mean truncates, a sum wraps, as the CPU's. */
  return hy_cast_value (r->int_dtype, res);
}

/* argmax/argmin: the input as (outer, n, inner), one output per (outer,
 * inner). */
typedef struct hy_cuda_arg_reduce_args {
  bool is_max;
  int64_t n, inner;
} hy_cuda_arg_reduce_args;

static inline hy_cuda_arg_reduce_args
hy_cuda_arg_reduce_plan (const hy_arg_reduce_params *p, const hy_shape *s)
{
  hy_cuda_arg_reduce_args a = { p->op == HY_OP_ARGMAX, hy_shape_numel (s), 1 };
  if (!p->flatten) {
    const int axis = p->axis < 0 ? p->axis + s->ndim : p->axis;
    a.n = s->dims[axis];
    for (int i = axis + 1; i < s->ndim; i++)
      a.inner *= s->dims[i];
  }
  return a;
}

/* Output element i: the index as a float. */
HY_CUDA_HD float
hy_cuda_arg_reduce_one (const hy_cuda_arg_reduce_args *a, const float *x,
    int64_t i)
{
  if (a->n == 0)
    return 0.0f;                /* nothing to search: MXNet cannot get here */
  const float *v = x + i / a->inner * a->n * a->inner + i % a->inner;
  float best = v[0];
  int64_t at = 0;
  for (int64_t r = 1; r < a->n && best == best; r++) {
    const float y = v[r * a->inner];
    /* The first NaN wins and stays. */
    if (y != y || (a->is_max ? y > best : y < best)) {
      best = y;
      at = r;
    }
  }
  return (float) at;
}

#endif /* HY_CUDA_REDUCE_CUH */

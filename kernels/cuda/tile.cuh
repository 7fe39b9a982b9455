/*
 * tile.cuh — the index arithmetic of tile, repeat and _arange on the GPU
 * (tile.cu), shared with tests/cuda/emulate-shape.cu.
 */
#ifndef HY_CUDA_TILE_CUH
#define HY_CUDA_TILE_CUH

#include "kernels/cuda/launch.cuh"
#include "hybrid-tensor.h"
#include "kernels/params/shape.h"

/* tile: the input promoted to the output's rank (leading 1s), output axis
 * k of length out[k] reading input coordinate index % dims[k]. */
typedef struct hy_cuda_tile_args {
  int nd;
  int64_t out[HY_MAX_DIMS];
  int64_t dims[HY_MAX_DIMS];
  int64_t stride[HY_MAX_DIMS];  /* the input's, promoted */
} hy_cuda_tile_args;

static inline hy_cuda_tile_args
hy_cuda_tile_plan (const hy_tile_params *p, const hy_shape *in,
    const hy_shape *out)
{
  hy_cuda_tile_args t = {};
  t.nd = out->ndim;
  int64_t st = 1;
  for (int i = t.nd - 1; i >= 0; i--) {
    const int si = in->ndim - t.nd + i, ri = p->n_reps - t.nd + i;
    t.dims[i] = si >= 0 ? in->dims[si] : 1;
    t.out[i] = t.dims[i] * (ri >= 0 ? p->reps[ri] : 1);
    t.stride[i] = st;
    st *= t.dims[i];
  }
  return t;
}

HY_CUDA_HD int64_t
hy_cuda_tile_src (const hy_cuda_tile_args *t, int64_t i)
{
  int64_t off = 0;
  for (int k = t->nd - 1; k >= 0; k--) {
    off += (i % t->out[k] % t->dims[k]) * t->stride[k];
    i /= t->out[k];
  }
  return off;
}

/* repeat: the input as (rows, inner), each row `reps` times in a row;
 * without an axis inner is 1 (the flattened input). */
typedef struct hy_cuda_repeat_args {
  int64_t reps;
  int64_t inner;
} hy_cuda_repeat_args;

static inline hy_cuda_repeat_args
hy_cuda_repeat_plan (const hy_repeat_params *p, const hy_shape *in)
{
  hy_cuda_repeat_args r = { p->repeats, 1 };
  if (!p->axis_none) {
    const int axis = p->axis < 0 ? p->axis + in->ndim : p->axis;
    for (int i = axis + 1; i < in->ndim; i++)
      r.inner *= in->dims[i];
  }
  return r;
}

/* Output (row, r, j) is input (row, j). */
HY_CUDA_HD int64_t
hy_cuda_repeat_src (const hy_cuda_repeat_args *r, int64_t i)
{
  return i / (r->reps * r->inner) * r->inner + i % r->inner;
}

/* _arange: start + (i / repeat)·step computed as MXNet does, in the
 * output's dtype (hy_arange_params). */
typedef struct hy_cuda_arange_args {
  int mode;                     /* 0 float32, 1 float64, 2 integral */
  int64_t repeat;
  double start, step;
  int64_t istart, istep;        /* integral: truncated first, as MXNet */
} hy_cuda_arange_args;

static inline hy_cuda_arange_args
hy_cuda_arange_plan (const hy_arange_params *p)
{
  hy_cuda_arange_args a = { 0, p->repeat, p->start, p->step,
    (int64_t) p->start, (int64_t) p->step };
  if (p->integral)
    a.mode = 2;
  else if (p->dtype == HY_DTYPE_FLOAT64)
    a.mode = 1;
  return a;
}

HY_CUDA_HD float
hy_cuda_arange_value (const hy_cuda_arange_args *a, int64_t i)
{
  const int64_t k = i / a->repeat;
  if (a->mode == 2)
    return (float) (a->istart + k * a->istep);
#ifdef __CUDA_ARCH__
  /* Separate roundings, as on the CPU: no fused multiply-add. */
  if (a->mode == 1)
    return (float) __dadd_rn (a->start, __dmul_rn ((double) k, a->step));
  return __fadd_rn ((float) a->start, __fmul_rn ((float) k, (float) a->step));
#else
  if (a->mode == 1)
    return (float) (a->start + (double) k * a->step);
  return (float) a->start + (float) k * (float) a->step;
#endif
}

#endif /* HY_CUDA_TILE_CUH */

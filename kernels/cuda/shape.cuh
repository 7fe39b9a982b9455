/*
 * shape.cuh — the index arithmetic of transpose, slice, slice_axis and
 * slice_like on the GPU (shape.cu, slice.cu), shared with
 * tests/cuda/emulate-shape.cu.
 *
 * All four are strided gathers: output element i, unravelled over the
 * output's axes, reads the input at base + Σ index[k]·stride[k].  The host
 * builds the walk once per call, dropping length-1 axes and merging axes
 * that stay adjacent in the input (as the CPU transpose does), so that the
 * common cases come down to one or two divisions per element, or to a
 * single contiguous copy.
 */
#ifndef HY_CUDA_SHAPE_CUH
#define HY_CUDA_SHAPE_CUH

#include "kernels/cuda/launch.cuh"
#include "hybrid-tensor.h"
#include "kernels/params/shape.h"

typedef struct hy_cuda_strided_args {
  int nd;
  int64_t base;
  int64_t dims[HY_MAX_DIMS];    /* output axes, outermost first */
  int64_t stride[HY_MAX_DIMS];  /* input elements per step along each */
} hy_cuda_strided_args;

/* Appends an output axis of length dim moving stride input elements. */
static inline void
hy_cuda_strided_push (hy_cuda_strided_args *w, int64_t dim, int64_t stride)
{
  if (dim == 1)
    return;                     /* moves nothing */
  /* The previous axis steps over exactly this one: one longer axis. */
  if (w->nd > 0 && w->stride[w->nd - 1] == dim * stride) {
    w->dims[w->nd - 1] *= dim;
    w->stride[w->nd - 1] = stride;
    return;
  }
  w->dims[w->nd] = dim;
  w->stride[w->nd] = stride;
  w->nd++;
}

/* The walk reads one contiguous run from base: a plain copy. */
static inline bool
hy_cuda_strided_contiguous (const hy_cuda_strided_args *w)
{
  return w->nd == 0 || (w->nd == 1 && w->stride[0] == 1);
}

static inline void
hy_cuda_input_strides (const hy_shape *s, int64_t *stride)
{
  int64_t st = 1;
  for (int a = s->ndim - 1; a >= 0; a--) {
    stride[a] = st;
    st *= s->dims[a];
  }
}

/* transpose and SwapAxis: output axis i is input axis axes[i]. */
static inline hy_cuda_strided_args
hy_cuda_transpose_walk (const hy_transpose_params *p, const hy_shape *in)
{
  int64_t in_stride[HY_MAX_DIMS];
  hy_cuda_input_strides (in, in_stride);
  int axes[HY_MAX_DIMS];
  hy_transpose_axes (p, in->ndim, axes);
  hy_cuda_strided_args w = {};
  for (int i = 0; i < in->ndim; i++)
    hy_cuda_strided_push (&w, in->dims[axes[i]], in_stride[axes[i]]);
  return w;
}

/* slice: Python's rule per axis (hy_slice_resolve); negative steps give
 * negative strides, which merge the same way. */
static inline hy_cuda_strided_args
hy_cuda_slice_walk (const hy_slice_params *p, const hy_shape *in)
{
  int64_t in_stride[HY_MAX_DIMS];
  hy_cuda_input_strides (in, in_stride);
  hy_cuda_strided_args w = {};
  for (int i = 0; i < in->ndim; i++) {
    int64_t first, step, count;
    hy_slice_resolve (p, i, in->dims[i], &first, &step, &count);
    w.base += first * in_stride[i];
    hy_cuda_strided_push (&w, count, step * in_stride[i]);
  }
  return w;
}

/* slice_like: every cut starts at 0 and ends where the output's shape
 * says, which is a slice from 0 to the output's dims (as the CPU kernel
 * reads it). */
static inline hy_cuda_strided_args
hy_cuda_slice_like_walk (const hy_shape *in, const hy_shape *out)
{
  hy_slice_params s = {};
  s.op = HY_OP_SLICE;
  s.n = out->ndim;
  for (int i = 0; i < out->ndim; i++)
    s.end[i] = out->dims[i];
  return hy_cuda_slice_walk (&s, in);
}

/* slice_axis: (outer, len, inner) read as (outer, end - begin, inner). */
static inline hy_cuda_strided_args
hy_cuda_slice_axis_walk (const hy_slice_axis_params *p, const hy_shape *in)
{
  const int axis = p->axis < 0 ? p->axis + in->ndim : p->axis;
  int64_t outer = 1, inner = 1, begin, end;
  for (int i = 0; i < axis; i++)
    outer *= in->dims[i];
  for (int i = axis + 1; i < in->ndim; i++)
    inner *= in->dims[i];
  hy_slice_axis_bounds (p, in->dims[axis], &begin, &end);
  hy_cuda_strided_args w = {};
  w.base = begin * inner;
  hy_cuda_strided_push (&w, outer, in->dims[axis] * inner);
  hy_cuda_strided_push (&w, end - begin, inner);
  hy_cuda_strided_push (&w, inner, 1);
  return w;
}

/* The input index output element i reads. */
HY_CUDA_HD int64_t
hy_cuda_strided_src (const hy_cuda_strided_args *w, int64_t i)
{
  int64_t off = w->base;
  for (int k = w->nd - 1; k >= 0; k--) {
    const int64_t d = w->dims[k];
    off += (i % d) * w->stride[k];
    i /= d;
  }
  return off;
}

#ifdef __CUDACC__
/* y from x along the walk w, on ctx->stream: one copy when the walk is
 * contiguous, else a gather kernel. */
static inline void
hy_cuda_strided_gather (hy_cuda_ctx *ctx, const hy_cuda_strided_args *w,
    const hy_tensor *x, hy_tensor *y)
{
  const int64_t n = hy_shape_numel (&y->shape);
  if (n == 0)
    return;
  if (hy_cuda_strided_contiguous (w)) {
    hy_cuda_copy_floats (ctx, y->data, x->data + w->base, n);
    return;
  }
  hy_cuda_gather<hy_cuda_strided_args, hy_cuda_strided_src> (ctx, w,
      x->data, y->data, n);
}
#endif

#endif /* HY_CUDA_SHAPE_CUH */

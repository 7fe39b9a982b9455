/*
 * layout.cuh — the index arithmetic of shape_array, reverse, stack,
 * broadcast_axis and gather_nd on the GPU (layout.cu), shared with
 * tests/cuda/emulate-layout.cu.
 *
 * reverse and broadcast_axis are strided gathers (shape.cuh): a reversed
 * axis walks the input backwards from its last element, a broadcast one
 * does not move at all (stride 0).  stack is Concat's part mover
 * (slice.cuh) over the output viewed as (outer, num_args, inner), each
 * input one part of length 1 on the middle axis.  shape_array writes
 * numbers the host already knows, carried in the launch's arguments.
 */
#ifndef HY_CUDA_LAYOUT_CUH
#define HY_CUDA_LAYOUT_CUH

#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/refusal.h"
#include "kernels/cuda/shape.cuh"
#include "kernels/cuda/slice.cuh"
#include "hybrid-tensor.h"
#include "kernels/params/shape.h"

/* ---- reverse, broadcast_axis -------------------------------------------- */

static inline hy_cuda_strided_args
hy_cuda_reverse_walk (const hy_reverse_params *p, const hy_shape *in)
{
  const uint32_t mask = hy_axes_mask (p->axes, p->n_axes, in->ndim);
  int64_t in_stride[HY_MAX_DIMS];
  hy_cuda_input_strides (in, in_stride);
  hy_cuda_strided_args w = {};
  for (int i = 0; i < in->ndim; i++) {
    if (mask & (1u << i)) {
      w.base += (in->dims[i] - 1) * in_stride[i];
      hy_cuda_strided_push (&w, in->dims[i], -in_stride[i]);
    } else {
      hy_cuda_strided_push (&w, in->dims[i], in_stride[i]);
    }
  }
  return w;
}

/* The output's axes over the input's: a broadcast axis (length 1 in the
 * input) reads the same element out[i] times. */
static inline hy_cuda_strided_args
hy_cuda_broadcast_axis_walk (const hy_broadcast_axis_params *p,
    const hy_shape *in, const hy_shape *out)
{
  /* broadcast_axis and broadcast_like alike: the input axes of length 1
   * are the ones repeated (hy_broadcast_axis_params). */
  int64_t in_stride[HY_MAX_DIMS];
  hy_cuda_input_strides (in, in_stride);
  hy_cuda_strided_args w = {};
  for (int i = 0; i < out->ndim; i++)
    hy_cuda_strided_push (&w, out->dims[i],
        in->dims[i] == 1 ? 0 : in_stride[i]);
  return w;
}

/* ---- stack -------------------------------------------------------------- */

/* The output as (outer, num_args, inner), for hy_cuda_parts_plan along
 * axis 1 with parts of length 1; *outer, *inner as the CPU kernel splits
 * the inputs' shape at the new axis. */
static inline hy_shape
hy_cuda_stack_joined (const hy_stack_params *p, const hy_shape *in,
    int n_in)
{
  const int axis = p->axis < 0 ? p->axis + in->ndim + 1 : p->axis;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < in->ndim; i++) {
    if (i < axis)
      outer *= in->dims[i];
    else
      inner *= in->dims[i];
  }
  hy_shape joined = {};
  joined.ndim = 3;
  joined.dims[0] = outer;
  joined.dims[1] = n_in;
  joined.dims[2] = inner;
  return joined;
}

/* ---- shape_array -------------------------------------------------------- */

typedef struct hy_cuda_shape_array_args {
  int n;
  float dims[HY_MAX_DIMS];
} hy_cuda_shape_array_args;

static inline hy_cuda_shape_array_args
hy_cuda_shape_array_plan (const hy_shape *in)
{
  hy_cuda_shape_array_args a = {};
  a.n = in->ndim;
  for (int i = 0; i < in->ndim; i++)
    a.dims[i] = (float) in->dims[i];
  return a;
}

HY_CUDA_HD float
hy_cuda_shape_array_value (const hy_cuda_shape_array_args *a, int64_t i)
{
  return a->dims[i];
}

/* ---- gather_nd ---------------------------------------------------------- */

/* indices (m, rows…) pick data's first m axes; output element i is
 * element i % slice of the data slice picked by index row i / slice. */
typedef struct hy_cuda_gather_nd_args {
  int m;
  int64_t rows, slice;
  float size[HY_MAX_DIMS];      /* the picked axes' lengths, as floats */
  int64_t length[HY_MAX_DIMS];  /* the same, exact, for the message */
  int64_t stride[HY_MAX_DIMS];  /* and their strides in data */
} hy_cuda_gather_nd_args;

static inline hy_cuda_gather_nd_args
hy_cuda_gather_nd_plan (const hy_shape *data, const hy_shape *indices)
{
  hy_cuda_gather_nd_args g = {};
  g.m = (int) indices->dims[0];
  g.rows = g.slice = 1;
  for (int i = 1; i < indices->ndim; i++)
    g.rows *= indices->dims[i];
  for (int i = g.m; i < data->ndim; i++)
    g.slice *= data->dims[i];
  int64_t stride[HY_MAX_DIMS];
  hy_cuda_input_strides (data, stride);
  for (int a = 0; a < g.m; a++) {
    g.size[a] = (float) data->dims[a];
    g.length[a] = data->dims[a];
    g.stride[a] = stride[a];
  }
  return g;
}

/* MXNet 1.9.1's rule (kernels/cpu/layout.c): an index v of an axis of n
 * is valid in [-n, n - 1] as a float, a negative one gets n added before
 * truncation.  A row with an invalid index comes out as zeros, never read
 * out of range; the forward is refused anyway (below). */
HY_CUDA_HD float
hy_cuda_gather_nd_one (const hy_cuda_gather_nd_args *g, const float *x,
    const float *idx, int64_t i)
{
  const int64_t r = i / g->slice;
  int64_t off = i % g->slice;
  for (int a = 0; a < g->m; a++) {
    float v = idx[a * g->rows + r];
    const float n = g->size[a];
    if (!(v >= -n && v <= n - 1.0f))
      return 0.0f;
    if (v < 0.0f)
      v += n;
    off += (int64_t) v * g->stride[a];
  }
  return x[off];
}

/* The refusal (refusal.h) names the index the CPU kernel names: of the
 * first axis with a bad index, the last one.  Index (axis a, column r)
 * has the key a·rows + (rows - 1 - r), so that this is the smallest key
 * of a bad index; keys run over [0, m·rows). */
HY_CUDA_HD bool
hy_cuda_gather_nd_bad (const hy_cuda_gather_nd_args *g, const float *idx,
    int64_t key)
{
  const int a = (int) (key / g->rows);
  const int64_t r = g->rows - 1 - key % g->rows;
  const float v = idx[a * g->rows + r], n = g->size[a];
  return !(v >= -n && v <= n - 1.0f);
}

/* The record of call `call` refusing the index of `key`. */
HY_CUDA_HD void
hy_cuda_gather_nd_refusal (const hy_cuda_gather_nd_args *g,
    const float *idx, int64_t key, int call, hy_cuda_refusal *rec)
{
  const int a = (int) (key / g->rows);
  const int64_t r = g->rows - 1 - key % g->rows;
  rec->call = call;
  rec->value = idx[a * g->rows + r];
  rec->axis = a;
  rec->size = g->length[a];
  rec->column = r;
  rec->kind = HY_CUDA_REFUSAL_INDEX;
}

#endif /* HY_CUDA_LAYOUT_CUH */

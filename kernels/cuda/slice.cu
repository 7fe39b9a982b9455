/*
 * slice.cu — CUDA kernels of slice, slice_axis, slice_like, Concat and
 * SliceChannel.
 *
 * slice, slice_axis and slice_like are strided gathers (shape.cuh); a cut
 * that leaves one contiguous run, e.g. whole rows, is a device-to-device
 * copy.  Concat and SliceChannel move up to HY_CUDA_PARTS_MAX parts per
 * launch (slice.cuh); when nothing lies outside the joined axis (concat
 * along axis 0) each part is one contiguous copy instead.
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/shape.cuh"
#include "kernels/cuda/slice.cuh"

extern "C" {
void hy_cuda_slice (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_slice_axis (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_slice_like (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_concat (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_split (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
}

/* ---- slice, slice_axis -------------------------------------------------- */

extern "C" void
hy_cuda_slice (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  if (hy_shape_numel (&out[0]->shape) == 0)
    return;                     /* an empty cut: no walk to build */
  const hy_cuda_strided_args w = hy_cuda_slice_walk (
      (const hy_slice_params *) params, &in[0]->shape);
  hy_cuda_strided_gather (ctx, &w, in[0], out[0]);
}

extern "C" void
hy_cuda_slice_axis (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  if (hy_shape_numel (&out[0]->shape) == 0)
    return;
  const hy_cuda_strided_args w = hy_cuda_slice_axis_walk (
      (const hy_slice_axis_params *) params, &in[0]->shape);
  hy_cuda_strided_gather (ctx, &w, in[0], out[0]);
}

/* The second input gives only the shape, which the output has already. */
extern "C" void
hy_cuda_slice_like (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  if (hy_shape_numel (&out[0]->shape) == 0)
    return;
  const hy_cuda_strided_args w = hy_cuda_slice_like_walk (&in[0]->shape,
      &out[0]->shape);
  hy_cuda_strided_gather (ctx, &w, in[0], out[0]);
}

/* ---- Concat, SliceChannel ----------------------------------------------- */

static __global__ void
concat_kernel (hy_cuda_parts_args p, float *__restrict__ y, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n) {
    int64_t joined, at;
    const int k = hy_cuda_parts_locate (&p, i, &joined, &at);
    y[joined] = p.data[k][at];
  }
}

static __global__ void
split_kernel (hy_cuda_parts_args p, const float *__restrict__ x, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n) {
    int64_t joined, at;
    const int k = hy_cuda_parts_locate (&p, i, &joined, &at);
    p.data[k][at] = x[joined];
  }
}

/* Moves n_parts parts of `joined` along axis: into it (concat) or out of
 * it; part_len as for hy_cuda_parts_plan. */
static void
move_parts (hy_cuda_ctx *ctx, hy_tensor *joined, int axis,
    const hy_tensor *const *parts, int n_parts, int64_t part_len,
    bool concat)
{
  if (hy_shape_numel (&joined->shape) == 0)
    return;
  for (int from = 0; from < n_parts; from += HY_CUDA_PARTS_MAX) {
    int64_t outer;
    const hy_cuda_parts_args p = hy_cuda_parts_plan (&joined->shape, axis,
        parts, n_parts, part_len, from, &outer);
    if (outer == 1) {
      /* Every part is one contiguous run of the joined tensor. */
      for (int k = 0; k < p.n; k++) {
        float *run = joined->data + p.first + p.start[k];
        const int64_t len = p.start[k + 1] - p.start[k];
        if (concat)
          hy_cuda_copy_floats (ctx, run, p.data[k], len);
        else
          hy_cuda_copy_floats (ctx, p.data[k], run, len);
      }
    } else if (p.span > 0) {
      const int64_t total = outer * p.span;
      if (concat)
        concat_kernel<<<hy_cuda_blocks (ctx, total), HY_CUDA_THREADS, 0,
            ctx->stream>>> (p, joined->data, total);
      else
        split_kernel<<<hy_cuda_blocks (ctx, total), HY_CUDA_THREADS, 0,
            ctx->stream>>> (p, joined->data, total);
      HY_CUDA_CHECK_LAUNCH (ctx);
    }
  }
}

extern "C" void
hy_cuda_concat (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_concat_params *p = (const hy_concat_params *) params;
  move_parts (ctx, out[0], p->dim, in, n_in, 0, true);
}

extern "C" void
hy_cuda_split (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_split_params *p = (const hy_split_params *) params;
  const hy_shape *s = &in[0]->shape;
  const int axis = p->axis < 0 ? p->axis + s->ndim : p->axis;
  /* The input is only read. */
  move_parts (ctx, (hy_tensor *) in[0], axis, out, n_out,
      s->dims[axis] / n_out, false);
}

/*
 * layout.cu — CUDA kernels of shape_array, reverse, stack, broadcast_axis
 * and gather_nd: pure data movement, each output element read from one
 * input element (layout.cuh), as on the CPU (kernels/cpu/layout.c).
 */
#include <limits.h>

#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/layout.cuh"

extern "C" {
void hy_cuda_shape_array (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_reverse (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_stack (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_broadcast_axis (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_gather_nd (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
}

/* ---- shape_array -------------------------------------------------------- */

/* The shape travels in the arguments: no host buffer for a copy to read
 * later, so the launch can be captured into a graph like any other. */
static __global__ void
shape_array_kernel (hy_cuda_shape_array_args a, float *__restrict__ y)
{
  HY_CUDA_GRID_LOOP (i, a.n)
    y[i] = hy_cuda_shape_array_value (&a, i);
}

extern "C" void
hy_cuda_shape_array (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_cuda_shape_array_args a = hy_cuda_shape_array_plan (
      &in[0]->shape);
  if (a.n == 0)
    return;
  shape_array_kernel<<<1, HY_CUDA_THREADS, 0, ctx->stream>>> (a,
      out[0]->data);
  HY_CUDA_CHECK_LAUNCH (ctx);
}

/* ---- reverse, broadcast_axis -------------------------------------------- */

extern "C" void
hy_cuda_reverse (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  if (hy_shape_numel (&out[0]->shape) == 0)
    return;
  const hy_cuda_strided_args w = hy_cuda_reverse_walk (
      (const hy_reverse_params *) params, &in[0]->shape);
  hy_cuda_strided_gather (ctx, &w, in[0], out[0]);
}

extern "C" void
hy_cuda_broadcast_axis (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  if (hy_shape_numel (&out[0]->shape) == 0)
    return;
  const hy_cuda_strided_args w = hy_cuda_broadcast_axis_walk (
      (const hy_broadcast_axis_params *) params, &in[0]->shape,
      &out[0]->shape);
  hy_cuda_strided_gather (ctx, &w, in[0], out[0]);
}

/* ---- stack -------------------------------------------------------------- */

static __global__ void
stack_kernel (hy_cuda_parts_args p, float *__restrict__ y, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n) {
    int64_t joined, at;
    const int k = hy_cuda_parts_locate (&p, i, &joined, &at);
    y[joined] = p.data[k][at];
  }
}

extern "C" void
hy_cuda_stack (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_shape joined = hy_cuda_stack_joined (
      (const hy_stack_params *) params, &in[0]->shape, n_in);
  if (hy_shape_numel (&joined) == 0)
    return;
  float *y = out[0]->data;
  for (int from = 0; from < n_in; from += HY_CUDA_PARTS_MAX) {
    int64_t outer;
    const hy_cuda_parts_args p = hy_cuda_parts_plan (&joined, 1, in, n_in,
        1, from, &outer);
    if (outer == 1) {
      /* Stacked along axis 0: each input is one run of the output. */
      for (int k = 0; k < p.n; k++)
        hy_cuda_copy_floats (ctx, y + p.first + p.start[k], p.data[k],
            p.start[k + 1] - p.start[k]);
      continue;
    }
    const int64_t total = outer * p.span;
    stack_kernel<<<hy_cuda_blocks (ctx, total), HY_CUDA_THREADS, 0,
        ctx->stream>>> (p, y, total);
    HY_CUDA_CHECK_LAUNCH (ctx);
  }
}

/* ---- gather_nd ---------------------------------------------------------- */

/* One block: the smallest key of a bad index (layout.cuh) found in shared
 * memory, then recorded by one thread unless an earlier call refused.
 * Each thread walks its keys upwards, so its first bad one is its
 * smallest.  Indices are few (one per gathered row and axis). */
static __global__ void
gather_nd_check_kernel (hy_cuda_gather_nd_args g,
    const float *__restrict__ idx, hy_cuda_refusal *rec, int call)
{
  __shared__ unsigned long long first;
  if (threadIdx.x == 0)
    first = ULLONG_MAX;
  __syncthreads ();
  const int64_t keys = (int64_t) g.m * g.rows;
  for (int64_t k = threadIdx.x; k < keys; k += blockDim.x) {
    if (hy_cuda_gather_nd_bad (&g, idx, k)) {
      atomicMin (&first, (unsigned long long) k);
      break;
    }
  }
  __syncthreads ();
  if (threadIdx.x == 0 && first != ULLONG_MAX
      && rec->kind == HY_CUDA_REFUSAL_NONE)
    hy_cuda_gather_nd_refusal (&g, idx, (int64_t) first, call, rec);
}

static __global__ void
gather_nd_kernel (hy_cuda_gather_nd_args g, const float *__restrict__ x,
    const float *__restrict__ idx, float *__restrict__ y, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    y[i] = hy_cuda_gather_nd_one (&g, x, idx, i);
}

extern "C" void
hy_cuda_gather_nd (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_cuda_gather_nd_args g = hy_cuda_gather_nd_plan (&in[0]->shape,
      &in[1]->shape);
  /* Every index is checked, as on the CPU, even when nothing is
   * gathered. */
  if (g.m > 0 && g.rows > 0) {
    gather_nd_check_kernel<<<1, HY_CUDA_THREADS, 0, ctx->stream>>> (g,
        in[1]->data, ctx->refusal_device, ctx->call);
    HY_CUDA_CHECK_LAUNCH (ctx);
  }
  const int64_t n = hy_shape_numel (&out[0]->shape);
  if (n == 0)
    return;
  gather_nd_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0,
      ctx->stream>>> (g, in[0]->data, in[1]->data, out[0]->data, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}

/*
 * elementwise.cu — CUDA kernels of the elementwise families: unary math,
 * scalar and binary ops (with numpy broadcasting), add_n, clip,
 * hard_sigmoid, where, Cast and zeros_like/ones_like.
 *
 * Every kernel is a grid-stride loop writing one output element per index
 * with the element functions of elementwise.cuh (which the host emulation
 * test runs too); all a launch needs travels in its parameters.  Any
 * kernel may run in place (out == in[0]).
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/elementwise.cuh"

/* The entry points (cuda-ops.c looks them up weakly). */
#define HY_CUDA_KERNEL(name) \
  extern "C" void name (hy_cuda_ctx *ctx, const void *params, \
      const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
HY_CUDA_KERNEL (hy_cuda_unary);
HY_CUDA_KERNEL (hy_cuda_scalar);
HY_CUDA_KERNEL (hy_cuda_binary);
HY_CUDA_KERNEL (hy_cuda_add_n);
HY_CUDA_KERNEL (hy_cuda_clip);
HY_CUDA_KERNEL (hy_cuda_hard_sigmoid);
HY_CUDA_KERNEL (hy_cuda_where);
HY_CUDA_KERNEL (hy_cuda_cast);
HY_CUDA_KERNEL (hy_cuda_fill_like);

/* A kernel writing a.o[i] = at (&a, i) for i in [0, n). */
#define MAP_KERNEL(kernel, args_type, at) \
  __global__ static void \
  kernel (args_type a, int64_t n) \
  { \
    HY_CUDA_GRID_LOOP (i, n) \
      a.o[i] = at (&a, i); \
  }

MAP_KERNEL (unary_kernel, hy_cuda_unary_args, hy_cuda_unary_at)
MAP_KERNEL (scalar_kernel, hy_cuda_scalar_args, hy_cuda_scalar_at)
MAP_KERNEL (binary_kernel, hy_cuda_binary_args, hy_cuda_binary_at)
MAP_KERNEL (add_n_kernel, hy_cuda_add_n_args, hy_cuda_add_n_at)
MAP_KERNEL (clip_kernel, hy_cuda_clip_args, hy_cuda_clip_at)
MAP_KERNEL (hard_sigmoid_kernel, hy_cuda_clip_args, hy_cuda_hard_sigmoid_at)
MAP_KERNEL (where_kernel, hy_cuda_where_args, hy_cuda_where_at)
MAP_KERNEL (cast_kernel, hy_cuda_cast_args, hy_cuda_cast_at)
MAP_KERNEL (fill_kernel, hy_cuda_fill_args, hy_cuda_fill_at)

/* Enqueues `kernel` over n outputs on ctx's stream (nothing for none). */
#define LAUNCH(ctx, kernel, args, n) \
  do { \
    const int64_t n_ = (n); \
    if (n_ > 0) { \
      kernel<<<hy_cuda_blocks ((ctx), n_), HY_CUDA_THREADS, 0, \
          (ctx)->stream>>> ((args), n_); \
      HY_CUDA_CHECK_LAUNCH (ctx); \
    } \
  } while (0)

static inline int64_t
numel (const hy_tensor *t)
{
  return hy_shape_numel (&t->shape);
}

void
hy_cuda_unary (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_cuda_unary_args a = hy_cuda_unary_plan (
      (const hy_unary_params *) params, in[0], out[0]);
  LAUNCH (ctx, unary_kernel, a, numel (out[0]));
}

void
hy_cuda_scalar (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_cuda_scalar_args a = hy_cuda_scalar_plan (
      (const hy_scalar_params *) params, in[0], out[0]);
  LAUNCH (ctx, scalar_kernel, a, numel (out[0]));
}

void
hy_cuda_binary (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const int64_t n = numel (out[0]);
  if (n == 0)
    return;                     /* and never plan over an empty operand */
  const hy_cuda_binary_args a = hy_cuda_binary_plan (
      (const hy_binary_params *) params, in[0], in[1], out[0]);
  LAUNCH (ctx, binary_kernel, a, n);
}

void
hy_cuda_add_n (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  if (n_in == 1 && out[0]->data == in[0]->data)
    return;
  /* Stream order makes each launch see the sum of the ones before. */
  const int launches = hy_cuda_add_n_launches (n_in);
  for (int l = 0; l < launches; l++) {
    const hy_cuda_add_n_args a = hy_cuda_add_n_plan (
        (const hy_add_n_params *) params, in, n_in, out[0], l);
    LAUNCH (ctx, add_n_kernel, a, numel (out[0]));
  }
}

void
hy_cuda_clip (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_cuda_clip_args a = hy_cuda_clip_plan (
      (const hy_clip_params *) params, in[0], out[0]);
  LAUNCH (ctx, clip_kernel, a, numel (out[0]));
}

void
hy_cuda_hard_sigmoid (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_cuda_clip_args a = hy_cuda_hard_sigmoid_plan (
      (const hy_hard_sigmoid_params *) params, in[0], out[0]);
  LAUNCH (ctx, hard_sigmoid_kernel, a, numel (out[0]));
}

void
hy_cuda_where (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_cuda_where_args a = hy_cuda_where_plan (in[0], in[1], in[2],
      out[0]);
  LAUNCH (ctx, where_kernel, a, numel (out[0]));
}

void
hy_cuda_cast (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_cast_params *p = (const hy_cast_params *) params;
  const int64_t n = numel (out[0]);
  /* float32 and float64 keep the values: a copy, or nothing in place. */
  if (p->dtype == HY_DTYPE_FLOAT32 || p->dtype == HY_DTYPE_FLOAT64) {
    if (n > 0 && out[0]->data != in[0]->data)
      HY_CUDA_CHECK (ctx, cudaMemcpyAsync (out[0]->data, in[0]->data,
              (size_t) n * sizeof (float), cudaMemcpyDeviceToDevice,
              ctx->stream));
    return;
  }
  const hy_cuda_cast_args a = hy_cuda_cast_plan (p, in[0], out[0]);
  LAUNCH (ctx, cast_kernel, a, n);
}

void
hy_cuda_fill_like (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_cuda_fill_args a = hy_cuda_fill_like_plan (
      (const hy_fill_like_params *) params, out[0]);
  LAUNCH (ctx, fill_kernel, a, numel (out[0]));
}

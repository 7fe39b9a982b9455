/*
 * activation.cu — Activation and LeakyReLU on CUDA: grid-stride loops
 * over the element functions of activation.cuh (which the host emulation
 * test runs too).  The output may be the input.
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/activation.cuh"

extern "C" void hy_cuda_activation (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
extern "C" void hy_cuda_leaky_relu (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

__global__ static void
act_kernel (hy_cuda_act_args a, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    a.o[i] = hy_cuda_act_at (&a, i);
}

__global__ static void
prelu_kernel (hy_cuda_prelu_args a, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    a.o[i] = hy_cuda_prelu_at (&a, i);
}

void
hy_cuda_activation (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const int64_t n = hy_shape_numel (&in[0]->shape);
  if (n == 0)
    return;
  const hy_cuda_act_args a = hy_cuda_activation_plan (
      (const hy_activation_params *) params, in[0], out[0]);
  act_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0, ctx->stream>>> (
      a, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}

void
hy_cuda_leaky_relu (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_leaky_relu_params *p = (const hy_leaky_relu_params *) params;
  const int64_t n = hy_shape_numel (&in[0]->shape);
  if (n == 0)
    return;

  if (p->act_type == HY_LEAKY_PRELU) {
    const hy_cuda_prelu_args a = hy_cuda_prelu_plan (in[0], in[1], out[0]);
    prelu_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0,
        ctx->stream>>> (a, n);
    HY_CUDA_CHECK_LAUNCH (ctx);
    return;
  }
  const hy_cuda_act_args a = hy_cuda_leaky_plan (p, in[0], out[0]);
  act_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0, ctx->stream>>> (
      a, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
  if ((p->act_type == HY_LEAKY_LEAKY || p->act_type == HY_LEAKY_RRELU)
      && n_out > 1)             /* the training-only mask */
    HY_CUDA_CHECK (ctx, cudaMemsetAsync (out[1]->data, 0,
            (size_t) n * sizeof (float), ctx->stream));
}

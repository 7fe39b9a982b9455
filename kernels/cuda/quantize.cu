/*
 * quantize.cu — _contrib_quantize_v2 and _contrib_dequantize on CUDA:
 * grid-stride loops over the element functions of quantize.cuh (which
 * the host emulation test runs too).
 *
 * quantize_v2 runs as two launches on the stream: one block writes the
 * output range (from the calibration, or from the data's own min and max
 * found by that block), then every element reads it.  Keeping the range
 * on the device spares a copy to the host and a synchronisation per call.
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/quantize.cuh"

extern "C" void hy_cuda_quantize_v2 (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
extern "C" void hy_cuda_dequantize (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

/* One block of HY_CUDA_THREADS: out_min and out_max for n values. */
__global__ static void
quantize_range_kernel (hy_cuda_quantize_args a, int64_t n)
{
  __shared__ float lo[HY_CUDA_THREADS], hi[HY_CUDA_THREADS];
  const unsigned t = threadIdx.x;
  float l = NAN, h = NAN;
  if (!a.calibrated)
    for (int64_t i = t; i < n; i += blockDim.x)
      hy_cuda_quantize_fold (&l, &h, a.x[i]);
  lo[t] = l;
  hi[t] = h;
  __syncthreads ();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half)
      hy_cuda_quantize_merge (lo, hi, t, t + half);
    __syncthreads ();
  }
  if (t == 0)
    hy_cuda_quantize_finish (&a, n, lo[0], hi[0]);
}

__global__ static void
quantize_kernel (hy_cuda_quantize_args a, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    a.q[i] = hy_cuda_quantize_at (&a, i);
}

__global__ static void
dequantize_kernel (hy_cuda_dequantize_args a, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    a.y[i] = hy_cuda_dequantize_at (&a, i);
}

void
hy_cuda_quantize_v2 (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const int64_t n = hy_shape_numel (&in[0]->shape);
  const hy_cuda_quantize_args a = hy_cuda_quantize_plan (
      (const hy_quantize_params *) params, in[0], out);
  quantize_range_kernel<<<1, HY_CUDA_THREADS, 0, ctx->stream>>> (a, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
  if (n == 0)
    return;
  quantize_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0,
      ctx->stream>>> (a, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}

void
hy_cuda_dequantize (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const int64_t n = hy_shape_numel (&in[0]->shape);
  if (n == 0)
    return;
  const hy_cuda_dequantize_args a = hy_cuda_dequantize_plan (
      (const hy_dequantize_params *) params, in, out[0]);
  dequantize_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0,
      ctx->stream>>> (a, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}

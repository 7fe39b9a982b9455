/*
 * requantize.cu — _contrib_requantize on CUDA: int32 sums (held as
 * floats) to int8 or uint8, over the element functions of
 * requantize.cuh (which the host emulation test runs too).
 *
 * Two launches on the stream, as quantize_v2's: one block writes the
 * output range (from the calibration, or from the data's own smallest and
 * largest value found by that block), then every element reads it.  The
 * range stays on the device: no copy to the host, no synchronisation.
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/requantize.cuh"

extern "C" void hy_cuda_requantize (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

/* One block of HY_CUDA_THREADS: out_min and out_max for n values. */
__global__ static void
requantize_range_kernel (hy_cuda_requantize_args a, int64_t n)
{
  __shared__ float lo[HY_CUDA_THREADS], hi[HY_CUDA_THREADS];
  const unsigned t = threadIdx.x;
  float l, h;
  hy_cuda_requantize_start (&l, &h);
  if (!a.calibrated)
    for (int64_t i = t; i < n; i += blockDim.x)
      hy_cuda_requantize_fold (&l, &h, a.x[i]);
  lo[t] = l;
  hi[t] = h;
  __syncthreads ();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half)
      hy_cuda_requantize_merge (lo, hi, t, t + half);
    __syncthreads ();
  }
  if (t == 0)
    hy_cuda_requantize_finish (&a, lo[0], hi[0]);
}

__global__ static void
requantize_kernel (hy_cuda_requantize_args a, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    a.q[i] = hy_cuda_requantize_at (&a, i);
}

void
hy_cuda_requantize (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const int64_t n = hy_shape_numel (&in[0]->shape);
  const hy_cuda_requantize_args a = hy_cuda_requantize_plan (
      (const hy_requantize_params *) params, in, out);
  requantize_range_kernel<<<1, HY_CUDA_THREADS, 0, ctx->stream>>> (a, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
  if (n == 0)
    return;
  requantize_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0,
      ctx->stream>>> (a, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}

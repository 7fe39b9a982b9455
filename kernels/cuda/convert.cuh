/*
 * convert.cuh — fp32 ↔ fp16 for the fp16 precision (hy_precision): the
 * convolutions and matrix products read fp16 copies of their operands,
 * which this converts, one launch per operand; their fp16 results come
 * back to fp32 through the epilogue's load (hy_cuda_load_float).
 *
 * The conversion rounds to nearest, ties to even (__float2half_rn, the
 * PTX cvt.rn.f16.f32 on the device, the same rounding in software on the
 * host): a magnitude from 65520 up becomes ±inf, one below 2^-14 a
 * subnormal half (multiples of 2^-24), one at or below 2^-25 a signed
 * zero, NaN stays NaN.  cuda_fp16.h's conversions are __host__
 * __device__, so the emulation test (tests/cuda/emulate-epilogue.cu) runs
 * these element functions on the host against a reference rounding.
 */
#ifndef HY_CUDA_CONVERT_CUH
#define HY_CUDA_CONVERT_CUH

#include <stddef.h>
#include <stdint.h>

#include <cuda_fp16.h>

#include "kernels/cuda/launch.cuh"

/* Element i of the fp16 copy of x. */
HY_CUDA_HD __half
hy_cuda_half_at (const float *x, int64_t i)
{
  return __float2half_rn (x[i]);
}

/* Element i of x as fp32: the load of an operand that may be either
 * (the epilogue's input; exact for an fp16 one). */
HY_CUDA_HD float
hy_cuda_load_float (const float *x, int64_t i)
{
  return x[i];
}

HY_CUDA_HD float
hy_cuda_load_float (const __half *x, int64_t i)
{
  return __half2float (x[i]);
}

/* Device scratch is carved into pieces at multiples of this: cudaMalloc's
 * own alignment, which cuDNN and cuBLAS's tensor-core paths want (16
 * bytes at least) for every buffer they are given. */
#define HY_CUDA_SCRATCH_ALIGN ((size_t) 256)

static inline size_t
hy_cuda_scratch_align (size_t bytes)
{
  return (bytes + HY_CUDA_SCRATCH_ALIGN - 1) & ~(HY_CUDA_SCRATCH_ALIGN - 1);
}

#ifdef __CUDACC__
#include "hybrid.h"             /* HY_ERROR, for HY_CUDA_TRY */

/* A template only so that a file including this header without launching
 * it (the emulation test) does not define an unused kernel. */
template <typename T>
__global__ void
hy_cuda_to_half_kernel (const T *__restrict__ x, __half *__restrict__ y,
    int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    y[i] = hy_cuda_half_at (x, i);
}

/* y = the n floats of x rounded to fp16, enqueued on ctx->stream;
 * nothing when n is 0. */
static inline void
hy_cuda_to_half (hy_cuda_ctx *ctx, const float *x, __half *y, int64_t n)
{
  if (n <= 0)
    return;
  hy_cuda_to_half_kernel<float> <<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS,
      0, ctx->stream>>> (x, y, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}

/* Plan time: a new device fp16 copy of the n > 0 floats of a constant
 * (a weight) in *copy, converted on ctx->stream and waited for, so that a
 * failure shows here and the copy is complete when the call first runs.
 * The source must be final: uploaded (a weight) or computed by work
 * already enqueued on ctx->stream.  FALSE with *error on failure; *copy
 * is then NULL or the allocation, which the caller frees (cudaFree). */
static inline gboolean
hy_cuda_half_copy (hy_cuda_ctx *ctx, const float *x, int64_t n,
    __half **copy, GError **error)
{
  *copy = NULL;
  HY_CUDA_TRY (cudaMalloc ((void **) copy, (size_t) n * sizeof (__half)),
      error);
  hy_cuda_to_half_kernel<float> <<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS,
      0, ctx->stream>>> (x, *copy, n);
  HY_CUDA_TRY (cudaGetLastError (), error);
  HY_CUDA_TRY (cudaStreamSynchronize (ctx->stream), error);
  return TRUE;
}
#endif

#endif /* HY_CUDA_CONVERT_CUH */

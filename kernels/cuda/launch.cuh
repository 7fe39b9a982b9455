/*
 * launch.cuh — what every CUDA kernel file shares: the host-and-device
 * qualifier for element functions, single-rounded float steps
 * (kernels/single-rounded.h), and 1-D grid sizing.
 *
 * Element functions (one output element, or one row, from an index) are
 * HY_CUDA_HD so that the host can run them too: tests/cuda/emulate-*.cu
 * call them over every index on the CPU and compare with the CPU kernels,
 * which checks the index arithmetic of every kernel on a machine without
 * a GPU.  The __global__ wrappers only add the grid-stride loop.
 */
#ifndef HY_CUDA_LAUNCH_CUH
#define HY_CUDA_LAUNCH_CUH

#include <stdint.h>

#include "kernels/single-rounded.h"

#ifdef __CUDACC__
#define HY_CUDA_HD __host__ __device__ __forceinline__
#else
#define HY_CUDA_HD static inline
#endif

#define HY_CUDA_THREADS 256

#ifdef __CUDACC__
#include "kernels/cuda/cuda-kernel.h"

/* Blocks for n items at HY_CUDA_THREADS per block: enough to fill every
 * multiprocessor a few times over, no more (the loops stride). */
static inline unsigned
hy_cuda_blocks (const hy_cuda_ctx *ctx, int64_t n)
{
  int64_t want = (n + HY_CUDA_THREADS - 1) / HY_CUDA_THREADS;
  int64_t cap = (int64_t) (ctx->sm_count > 0 ? ctx->sm_count : 1) * 32;
  if (want > cap)
    want = cap;
  return (unsigned) (want > 0 ? want : 1);
}

/* for (int64_t i = first; i < n; i += stride) over the whole grid. */
#define HY_CUDA_GRID_LOOP(i, n) \
  for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; \
       i < (int64_t) (n); i += (int64_t) blockDim.x * gridDim.x)

/* Copies n floats of device memory from src to dst on ctx->stream;
 * nothing when they are the same floats (an op run in place). */
static inline void
hy_cuda_copy_floats (hy_cuda_ctx *ctx, float *dst, const float *src,
    int64_t n)
{
  if (dst != src && n > 0)
    HY_CUDA_CHECK (ctx, cudaMemcpyAsync (dst, src, (size_t) n * sizeof (float),
            cudaMemcpyDeviceToDevice, ctx->stream));
}

/* y[i] = x[src (&a, i)]: the kernel of every op that only picks the input
 * element of each output element (strided walks, tile, repeat).  A
 * template, so that a file including this header without launching it
 * (the emulation tests) defines no kernel. */
template <typename A, int64_t (*src) (const A *, int64_t)>
__global__ void
hy_cuda_gather_kernel (A a, const float *__restrict__ x,
    float *__restrict__ y, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    y[i] = x[src (&a, i)];
}

/* Enqueues that gather of the n > 0 floats of y on ctx->stream. */
template <typename A, int64_t (*src) (const A *, int64_t)>
static inline void
hy_cuda_gather (hy_cuda_ctx *ctx, const A *a, const float *x, float *y,
    int64_t n)
{
  hy_cuda_gather_kernel<A, src><<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS,
      0, ctx->stream>>> (*a, x, y, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}
#endif

#endif /* HY_CUDA_LAUNCH_CUH */

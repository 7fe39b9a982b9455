/*
 * launch.cuh — what every CUDA kernel file shares: the host-and-device
 * qualifier for element functions, and 1-D grid sizing.
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

#ifdef __CUDACC__
#define HY_CUDA_HD __host__ __device__ __forceinline__
#else
#define HY_CUDA_HD static inline
#endif

#define HY_CUDA_THREADS 256

#ifdef __CUDACC__
#include "cuda-kernel.h"

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
#endif

#endif /* HY_CUDA_LAUNCH_CUH */

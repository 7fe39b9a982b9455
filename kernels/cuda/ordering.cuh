/*
 * ordering.cuh — topk, sort and argsort on the GPU (ordering.cu): one
 * thread per row runs the CPU kernel's steps (kernels/ordering-common.h)
 * on its row's positions, which live in the call's workspace, n per row.
 * Correct before fast: one row is one thread's serial work.
 */
#ifndef HY_CUDA_ORDERING_CUH
#define HY_CUDA_ORDERING_CUH

#include "kernels/cuda/launch.cuh"
#include "kernels/ordering-common.h"

/* The workspace: n positions per row. */
static inline size_t
hy_cuda_order_workspace (const hy_order_args *a)
{
  return (size_t) (a->rows * a->n) * sizeof (int64_t);
}

#endif /* HY_CUDA_ORDERING_CUH */

/*
 * box-nms.cuh — _contrib_box_nms on the GPU (box-nms.cu), one block per
 * batch; shared with tests/cuda/emulate-box-nms.cu.
 *
 * The block takes the steps of kernels/detection-common.h, which the CPU
 * kernel (kernels/cpu/box-nms.c) takes too, in the same order, each step
 * split between its threads only where the threads' parts are
 * independent, so the result is the CPU's, ties included:
 *  1. one thread lists the candidates in row order;
 *  2. the stable merge sort by descending score, each pass's merges
 *     shared among the threads (disjoint pairs of runs);
 *  3. the first topk kept; their areas, one per thread;
 *  4. for each reference in order, if still alive, the threads test the
 *     later candidates against it at once: whether one suppresses another
 *     depends only on the reference, which no thread of that round
 *     changes;
 *  5. one thread packs the survivors' rows; the threads write the output
 *     values.
 * topk = 0 copies the input (box-nms.cu).  Candidates, their sort buffer
 * and areas live in the call's workspace, per batch.
 */
#ifndef HY_CUDA_BOX_NMS_CUH
#define HY_CUDA_BOX_NMS_CUH

#include "kernels/cuda/launch.cuh"
#include "kernels/detection-common.h"

/* Batch `batch`'s scratch in the workspace. */
HY_CUDA_HD hy_nms_scratch
hy_cuda_nms_scratch_at (const hy_nms_args *a, void *workspace,
    int64_t batch)
{
  return hy_nms_scratch_in (a, (char *) workspace + (size_t) batch
      * hy_nms_scratch_size (a));
}

#endif /* HY_CUDA_BOX_NMS_CUH */

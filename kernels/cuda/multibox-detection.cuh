/*
 * multibox-detection.cuh — _contrib_MultiBoxDetection on the GPU
 * (multibox-detection.cu), one block per image; shared with
 * tests/cuda/emulate-multibox.cu.
 *
 * The block takes the steps of kernels/detection-common.h, which the CPU
 * kernel (kernels/cpu/multibox-detection.c) takes too, in the same order,
 * each split between its threads only where their parts are independent,
 * so the rows come out as the CPU's, ties included:
 *  1. per anchor, one thread each: its best class and score;
 *  2. one thread lists the other anchors in anchor order;
 *  3. their rows go to the first output rows, every other value -1, one
 *     value per thread;
 *  4. with NMS: the rows copied aside, the stable merge sort by descending
 *     score, each pass's merges shared out (disjoint pairs of runs); the
 *     first nms_topk written back sorted, the class of the rows past them
 *     -1;
 *  5. for each kept row in order, if still live, the threads test the
 *     later kept rows against it at once: whether one is suppressed
 *     depends on the reference, which no thread of that round changes,
 *     and on the row's own class, which only its thread writes.
 * Per image, the anchors' classes and scores (then the rows set aside),
 * the listed anchors (then the sort's positions) and the sort's buffer
 * live in the call's workspace.
 */
#ifndef HY_CUDA_MULTIBOX_DETECTION_CUH
#define HY_CUDA_MULTIBOX_DETECTION_CUH

#include "kernels/cuda/launch.cuh"
#include "kernels/detection-common.h"

/* Image `image`'s scratch in the workspace. */
HY_CUDA_HD hy_mbd_scratch
hy_cuda_mbd_scratch_at (const hy_mbd_args *a, void *workspace,
    int64_t image)
{
  return hy_mbd_scratch_in (a, (char *) workspace + (size_t) image
      * hy_mbd_scratch_size (a));
}

#endif /* HY_CUDA_MULTIBOX_DETECTION_CUH */

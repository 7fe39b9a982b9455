/*
 * multibox-detection.cuh — _contrib_MultiBoxDetection on the GPU
 * (multibox-detection.cu), one block per image; shared with
 * tests/cuda/emulate-multibox.cu.
 *
 * The block takes the CPU kernel's steps (kernels/cpu/multibox-detection.c)
 * in the same order, each split between its threads only where their
 * parts are independent, so the rows come out as the CPU's, ties
 * included:
 *  1. per anchor, one thread each: its best class (the first of the
 *     highest above -1) and score, background below threshold;
 *  2. one thread lists the other anchors in anchor order;
 *  3. their rows [class - 1, score, decoded corners] go to the first
 *     output rows, every other value -1, one value per thread;
 *  4. with NMS (nms_threshold in (0, 1] or NaN): the rows copied aside,
 *     the same bottom-up stable merge sort by descending score, each
 *     pass's merges shared out (disjoint pairs of runs); the first
 *     nms_topk written back sorted, the class of the rows past them -1;
 *  5. for each kept row in order, if still live, the threads test the
 *     later kept rows against it at once: whether one is suppressed
 *     depends on the reference, which no thread of that round changes,
 *     and on the row's own class, which only its thread writes.
 * Per image, the anchors' classes and scores (then the rows set aside),
 * the listed anchors (then the sort's positions) and the sort's buffer
 * live in the call's workspace.  Box and IoU arithmetic is
 * single-rounded, so that no FMA moves a corner or an overlap; expf may
 * still differ from the host's by an ulp (box-decode.cuh).
 */
#ifndef HY_CUDA_MULTIBOX_DETECTION_CUH
#define HY_CUDA_MULTIBOX_DETECTION_CUH

#include <math.h>

#include "launch.cuh"
#include "hybrid-tensor.h"
#include "kernels/params/detection.h"

typedef struct hy_cuda_mbd_args {
  int64_t batch, classes, anchors;
  float threshold, nms_threshold;
  float variances[4];
  int64_t nms_topk;             /* <= 0: every row */
  bool clip, force_suppress;
  bool nms;                     /* sort and suppress at all */
} hy_cuda_mbd_args;

static inline hy_cuda_mbd_args
hy_cuda_mbd_plan (const hy_multibox_detection_params *p,
    const hy_shape *cls)
{
  hy_cuda_mbd_args a = {};
  a.batch = cls->dims[0];
  a.classes = cls->dims[1];
  a.anchors = cls->dims[2];
  a.threshold = p->threshold;
  a.nms_threshold = p->nms_threshold;
  for (int k = 0; k < 4; k++)
    a.variances[k] = p->variances[k];
  a.nms_topk = p->nms_topk;
  a.clip = p->clip;
  a.force_suppress = p->force_suppress;
  a.nms = !(p->nms_threshold <= 0 || p->nms_threshold > 1);
  return a;
}

/* Per image: rows (anchors × 6 floats), positions and their sort buffer
 * (anchors each). */
typedef struct hy_cuda_mbd_scratch {
  float *rows;
  int64_t *idx, *tmp;
} hy_cuda_mbd_scratch;

HY_CUDA_HD size_t
hy_cuda_mbd_scratch_size (const hy_cuda_mbd_args *a)
{
  return (size_t) a->anchors * (6 * sizeof (float) + 2 * sizeof (int64_t));
}

HY_CUDA_HD hy_cuda_mbd_scratch
hy_cuda_mbd_scratch_at (const hy_cuda_mbd_args *a, void *workspace,
    int64_t image)
{
  char *base = (char *) workspace + (size_t) image
      * hy_cuda_mbd_scratch_size (a);
  hy_cuda_mbd_scratch s;
  s.rows = (float *) base;
  s.idx = (int64_t *) (s.rows + a->anchors * 6);
  s.tmp = s.idx + a->anchors;
  return s;
}

/* std::min (a, b) and std::max (a, b), whose argument order decides what
 * a NaN gives. */
HY_CUDA_HD float
hy_cuda_mbd_min (float a, float b)
{
  return b < a ? b : a;
}

HY_CUDA_HD float
hy_cuda_mbd_max (float a, float b)
{
  return a < b ? b : a;
}

/* Step 1 for anchor i of an image's cls (classes × anchors): row[0] the
 * class - 1 (-1: background), row[1] the best score. */
HY_CUDA_HD void
hy_cuda_mbd_classify (const hy_cuda_mbd_args *a, const float *cls,
    int64_t i, float *row)
{
  float score = -1;
  int64_t id = 0;
  for (int64_t c = 1; c < a->classes; c++) {
    const float v = cls[c * a->anchors + i];
    if (v > score) {
      score = v;
      id = c;
    }
  }
  if (id > 0 && score < a->threshold)
    id = 0;
  row[0] = (float) (id - 1);
  row[1] = score;
}

/* Step 2: the anchors that are not background, in order, from the rows
 * of step 1; returns their count. */
HY_CUDA_HD int64_t
hy_cuda_mbd_collect (const hy_cuda_mbd_args *a, const float *rows,
    int64_t *idx)
{
  int64_t count = 0;
  for (int64_t i = 0; i < a->anchors; i++)
    if (rows[i * 6] >= 0)
      idx[count++] = i;
  return count;
}

/* Corner k (xmin, ymin, xmax, ymax) of the box SSD's offsets loc give
 * for corner anchor an. */
HY_CUDA_HD float
hy_cuda_mbd_corner (const hy_cuda_mbd_args *a, const float *an,
    const float *loc, int k)
{
  const float *var = a->variances;
  float v;
  if (k % 2 == 0) {
    const float aw = hy_cuda_sub_rn (an[2], an[0]);
    const float ax = hy_cuda_add_rn (an[0], an[2]) / 2.f;
    const float ox = hy_cuda_add_rn (hy_cuda_mul_rn (hy_cuda_mul_rn (loc[0],
                var[0]), aw), ax);
    const float ow = hy_cuda_mul_rn (expf (hy_cuda_mul_rn (loc[2], var[2])),
        aw) / 2;
    v = k == 0 ? hy_cuda_sub_rn (ox, ow) : hy_cuda_add_rn (ox, ow);
  } else {
    const float ah = hy_cuda_sub_rn (an[3], an[1]);
    const float ay = hy_cuda_add_rn (an[1], an[3]) / 2.f;
    const float oy = hy_cuda_add_rn (hy_cuda_mul_rn (hy_cuda_mul_rn (loc[1],
                var[1]), ah), ay);
    const float oh = hy_cuda_mul_rn (expf (hy_cuda_mul_rn (loc[3], var[3])),
        ah) / 2;
    v = k == 1 ? hy_cuda_sub_rn (oy, oh) : hy_cuda_add_rn (oy, oh);
  }
  return a->clip ? hy_cuda_mbd_max (0.0f, hy_cuda_mbd_min (1.0f, v)) : v;
}

/* Step 3: value e of an image's output (anchors × 6), from the step-1
 * rows of the count listed anchors idx; loc is the image's. */
HY_CUDA_HD float
hy_cuda_mbd_out (const hy_cuda_mbd_args *a, const float *rows,
    const int64_t *idx, int64_t count, const float *anchors,
    const float *loc, int64_t e)
{
  const int64_t r = e / 6;
  const int col = (int) (e % 6);
  if (r >= count)
    return -1.0f;
  const int64_t i = idx[r];
  if (col < 2)
    return rows[i * 6 + col];
  return hy_cuda_mbd_corner (a, anchors + i * 4, loc + i * 4, col - 2);
}

/* Step 4, one merge: runs [lo, lo + run) and [lo + run, lo + 2·run) of
 * idx into tmp, the right run's row first only when its score (rows'
 * column 1) is strictly greater. */
HY_CUDA_HD void
hy_cuda_mbd_merge (const float *rows, const int64_t *idx, int64_t *tmp,
    int64_t count, int64_t run, int64_t lo)
{
  const int64_t mid = lo + run < count ? lo + run : count;
  const int64_t hi = lo + 2 * run < count ? lo + 2 * run : count;
  int64_t i = lo, j = mid, k = lo;
  while (i < mid && j < hi) {
    if (rows[idx[j] * 6 + 1] > rows[idx[i] * 6 + 1])
      tmp[k++] = idx[j++];
    else
      tmp[k++] = idx[i++];
  }
  while (i < mid)
    tmp[k++] = idx[i++];
  while (j < hi)
    tmp[k++] = idx[j++];
}

/* How many of count rows take part in NMS. */
HY_CUDA_HD int64_t
hy_cuda_mbd_kept (const hy_cuda_mbd_args *a, int64_t count)
{
  return a->nms_topk > 0 && a->nms_topk < count ? a->nms_topk : count;
}

/* Step 4's write-back, value e < count · 6 of the output: sorted rows
 * first, then the class of the rows past the kept ones -1 (their other
 * values as step 3 left them). */
HY_CUDA_HD void
hy_cuda_mbd_write_back (const float *rows, const int64_t *idx,
    int64_t kept, int64_t e, float *y)
{
  const int64_t r = e / 6;
  const int col = (int) (e % 6);
  if (r < kept)
    y[e] = rows[idx[r] * 6 + col];
  else if (col == 0)
    y[e] = -1.0f;
}

/* MXNet's IoU of corner boxes p and q: areas not clamped, a union <= 0
 * gives 0. */
HY_CUDA_HD float
hy_cuda_mbd_iou (const float *p, const float *q)
{
  const float w = hy_cuda_mbd_max (0.0f, hy_cuda_sub_rn (
          hy_cuda_mbd_min (p[2], q[2]), hy_cuda_mbd_max (p[0], q[0])));
  const float h = hy_cuda_mbd_max (0.0f, hy_cuda_sub_rn (
          hy_cuda_mbd_min (p[3], q[3]), hy_cuda_mbd_max (p[1], q[1])));
  const float i = hy_cuda_mul_rn (w, h);
  const float ap = hy_cuda_mul_rn (hy_cuda_sub_rn (p[2], p[0]),
      hy_cuda_sub_rn (p[3], p[1]));
  const float aq = hy_cuda_mul_rn (hy_cuda_sub_rn (q[2], q[0]),
      hy_cuda_sub_rn (q[3], q[1]));
  const float u = hy_cuda_sub_rn (hy_cuda_add_rn (ap, aq), i);
  return u <= 0.f ? 0.0f : i / u;
}

/* Step 5: whether live output row ref suppresses later row pos of y. */
HY_CUDA_HD bool
hy_cuda_mbd_suppresses (const hy_cuda_mbd_args *a, const float *y,
    int64_t ref, int64_t pos)
{
  const float *r = y + ref * 6, *p = y + pos * 6;
  if (p[0] < 0)
    return false;
  return (a->force_suppress || r[0] == p[0])
      && hy_cuda_mbd_iou (r + 2, p + 2) >= a->nms_threshold;
}

#endif /* HY_CUDA_MULTIBOX_DETECTION_CUH */

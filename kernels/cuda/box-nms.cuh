/*
 * box-nms.cuh — _contrib_box_nms on the GPU (box-nms.cu), one block per
 * batch; shared with tests/cuda/emulate-box-nms.cu.
 *
 * The block takes the CPU kernel's steps (kernels/cpu/box-nms.c) in the
 * same order, each step split between its threads only where the threads'
 * parts are independent, so the result is the CPU's, ties included:
 *  1. one thread lists the candidates in row order (score > valid_thresh,
 *     class id != background_id);
 *  2. the same bottom-up stable merge sort by descending score, each
 *     pass's merges shared among the threads (disjoint pairs of runs);
 *  3. the first topk kept; their areas, one per thread;
 *  4. for each reference in order, if still alive, the threads test the
 *     later candidates against it at once: whether one suppresses another
 *     depends only on the reference, which no thread of that round
 *     changes;
 *  5. one thread packs the survivors' rows; the threads copy them, fill
 *     the rest with -1 and convert the coordinates (rows starting left of
 *     0 untouched, as in MXNet).
 * topk = 0 copies the input (box-nms.cu).  Candidates, their sort buffer
 * and areas live in the call's workspace, per batch.  IoU arithmetic is
 * single-rounded so that no FMA moves a box across overlap_thresh.
 */
#ifndef HY_CUDA_BOX_NMS_CUH
#define HY_CUDA_BOX_NMS_CUH

#include <limits.h>

#include "launch.cuh"
#include "hybrid-tensor.h"
#include "kernels/params/detection.h"

typedef struct hy_cuda_nms_args {
  int64_t n, width, batches, topk;
  float overlap_thresh, valid_thresh;
  int coord_start, score_index, id_index, background_id;
  bool by_class;
  int in_format, out_format;    /* hy_box_format */
} hy_cuda_nms_args;

static inline hy_cuda_nms_args
hy_cuda_nms_plan (const hy_box_nms_params *p, const hy_shape *x)
{
  hy_cuda_nms_args a = {};
  const int64_t numel = hy_shape_numel (x);
  a.width = x->dims[x->ndim - 1];
  a.n = x->dims[x->ndim - 2];
  a.batches = a.n * a.width > 0 ? numel / (a.n * a.width) : 0;
  a.topk = p->topk < 0 || p->topk > a.n ? a.n : p->topk;
  a.overlap_thresh = p->overlap_thresh;
  a.valid_thresh = p->valid_thresh;
  a.coord_start = p->coord_start;
  a.score_index = p->score_index;
  a.id_index = p->id_index;
  a.background_id = p->background_id;
  a.by_class = !p->force_suppress && p->id_index >= 0;
  a.in_format = p->in_format;
  a.out_format = p->out_format;
  return a;
}

/* Per batch: candidates and their sort buffer (n positions each), then
 * their areas (n floats). */
typedef struct hy_cuda_nms_scratch {
  int64_t *idx, *tmp;
  float *area;
} hy_cuda_nms_scratch;

HY_CUDA_HD size_t
hy_cuda_nms_scratch_size (const hy_cuda_nms_args *a)
{
  return (size_t) a->n * (2 * sizeof (int64_t) + sizeof (float));
}

HY_CUDA_HD hy_cuda_nms_scratch
hy_cuda_nms_scratch_at (const hy_cuda_nms_args *a, void *workspace,
    int64_t batch)
{
  char *base = (char *) workspace + (size_t) batch
      * hy_cuda_nms_scratch_size (a);
  hy_cuda_nms_scratch s;
  s.idx = (int64_t *) base;
  s.tmp = s.idx + a->n;
  s.area = (float *) (s.tmp + a->n);
  return s;
}

/* Step 1: the candidates in row order; returns their count. */
HY_CUDA_HD int64_t
hy_cuda_nms_collect (const hy_cuda_nms_args *a, const float *x,
    int64_t *idx)
{
  int64_t count = 0;
  for (int64_t r = 0; r < a->n; r++) {
    const float *row = x + r * a->width;
    if (!(row[a->score_index] > a->valid_thresh))
      continue;
    if (a->id_index >= 0
        && !(row[a->id_index] != (float) a->background_id))
      continue;
    idx[count++] = r;
  }
  return count;
}

/* Step 2, one merge: runs [lo, lo + run) and [lo + run, lo + 2·run) of
 * idx into tmp, the right run's row first only when its score is
 * strictly greater. */
HY_CUDA_HD void
hy_cuda_nms_merge (const hy_cuda_nms_args *a, const float *x,
    const int64_t *idx, int64_t *tmp, int64_t count, int64_t run,
    int64_t lo)
{
  const int64_t mid = lo + run < count ? lo + run : count;
  const int64_t hi = lo + 2 * run < count ? lo + 2 * run : count;
  const int score = a->score_index;
  int64_t i = lo, j = mid, k = lo;
  while (i < mid && j < hi) {
    if (x[idx[j] * a->width + score] > x[idx[i] * a->width + score])
      tmp[k++] = idx[j++];
    else
      tmp[k++] = idx[i++];
  }
  while (i < mid)
    tmp[k++] = idx[i++];
  while (j < hi)
    tmp[k++] = idx[j++];
}

/* MXNet compares class ids as ints; NaN and out-of-range ids convert to
 * INT_MIN on x86, which this gives without the undefined cast. */
HY_CUDA_HD int
hy_cuda_nms_class (float v)
{
  if (!(v > (float) INT_MIN && v < (float) INT_MAX))
    return INT_MIN;
  return (int) v;
}

HY_CUDA_HD float
hy_cuda_nms_overlap (const float *p, const float *q, int format)
{
  float w;
  if (format == HY_BOX_CORNER) {
    const float left = p[0] > q[0] ? p[0] : q[0];
    const float right = p[2] < q[2] ? p[2] : q[2];
    w = right - left;
  } else {
    const float pw = p[2] / 2, qw = q[2] / 2;
    const float pl = p[0] - pw, pr = p[0] + pw, ql = q[0] - qw;
    const float qr = q[0] + qw;
    const float left = ql > pl ? ql : pl;
    const float right = qr < pr ? qr : pr;
    w = right - left;
  }
  return w > 0 ? w : 0.0f;
}

/* Step 3: the area of candidate k. */
HY_CUDA_HD float
hy_cuda_nms_area (const hy_cuda_nms_args *a, const float *x,
    const int64_t *idx, int64_t k)
{
  const float *c = x + idx[k] * a->width + a->coord_start;
  const float w = a->in_format == HY_BOX_CORNER ? c[2] - c[0] : c[2];
  const float h = a->in_format == HY_BOX_CORNER ? c[3] - c[1] : c[3];
  return w < 0 || h < 0 ? 0.0f : hy_cuda_mul_rn (w, h);
}

/* Step 4: whether alive reference `ref` suppresses candidate `pos`. */
HY_CUDA_HD bool
hy_cuda_nms_suppresses (const hy_cuda_nms_args *a, const float *x,
    const int64_t *idx, const float *area, int64_t ref, int64_t pos)
{
  if (idx[pos] < 0)
    return false;
  const float *rrow = x + idx[ref] * a->width;
  const float *prow = x + idx[pos] * a->width;
  if (a->by_class && hy_cuda_nms_class (rrow[a->id_index])
      != hy_cuda_nms_class (prow[a->id_index]))
    return false;
  const float *rc = rrow + a->coord_start, *pc = prow + a->coord_start;
  const float inter = hy_cuda_mul_rn (
      hy_cuda_nms_overlap (rc, pc, a->in_format),
      hy_cuda_nms_overlap (rc + 1, pc + 1, a->in_format));
  const float iou = inter / hy_cuda_sub_rn (hy_cuda_add_rn (area[ref],
          area[pos]), inter);
  return iou > a->overlap_thresh;
}

/* Step 5: survivors' rows packed to the front of tmp; their count. */
HY_CUDA_HD int64_t
hy_cuda_nms_pack (const int64_t *idx, int64_t count, int64_t *kept)
{
  int64_t m = 0;
  for (int64_t k = 0; k < count; k++)
    if (idx[k] >= 0)
      kept[m++] = idx[k];
  return m;
}

/* Output value e of a batch's rows: a survivor's value, converted where
 * asked, or -1. */
HY_CUDA_HD float
hy_cuda_nms_out (const hy_cuda_nms_args *a, const float *x,
    const int64_t *kept, int64_t n_kept, int64_t e)
{
  const int64_t r = e / a->width, col = e % a->width;
  if (r >= n_kept)
    return -1.0f;
  const float *row = x + kept[r] * a->width;
  const int64_t c = col - a->coord_start;
  if (a->in_format == a->out_format || c < 0 || c > 3)
    return row[col];
  const float *b = row + a->coord_start;
  if (b[0] < 0)
    return row[col];            /* MXNet's test for padding */
  if (a->out_format == HY_BOX_CENTER) {
    switch (c) {
      case 0: return (b[0] + b[2]) / 2;
      case 1: return (b[1] + b[3]) / 2;
      case 2: return b[2] - b[0];
      default: return b[3] - b[1];
    }
  }
  const float hw = b[2] / 2, hh = b[3] / 2;
  switch (c) {
    case 0: return b[0] - hw;
    case 1: return b[1] - hh;
    case 2: return b[0] + hw;
    default: return b[1] + hh;
  }
}

#endif /* HY_CUDA_BOX_NMS_CUH */

/*
 * detection-common.h — the steps of _contrib_box_nms and
 * _contrib_MultiBoxDetection, shared by the CPU kernels
 * (kernels/cpu/box-nms.c, multibox-detection.c) and the CUDA ones
 * (kernels/cuda/box-nms.cuh, multibox-detection.cuh), so that both give
 * MXNet's rows, ties and NaNs included, from one definition.
 *
 * The CPU runs each step over its whole batch or image; a CUDA block
 * splits a step between its threads only where their parts are
 * independent (one output value, one merge of a sort pass, one later
 * candidate against a fixed reference).  So a step here is written for
 * the smallest such part: the CPU loops over them, the GPU shares them.
 *
 * Box and IoU arithmetic is single-rounded (kernels/single-rounded.h), in
 * MXNet's order, so that no FMA on the device moves a corner or an
 * overlap across a threshold; expf may still differ from the host's by an
 * ulp on the device.
 *
 * C11 and CUDA alike: static inline functions in C, host-and-device ones
 * under nvcc.  The plans are built on the host.
 */
#ifndef HY_DETECTION_COMMON_H
#define HY_DETECTION_COMMON_H

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hybrid-tensor.h"
#include "kernels/params/detection.h"
#include "kernels/single-rounded.h"

#ifdef __CUDACC__
#define HY_DETECTION_HD __host__ __device__ __forceinline__
#else
#define HY_DETECTION_HD static inline
#endif

/* ---- ordering by score ------------------------------------------------- */

/* One merge of a bottom-up stable merge sort by descending score: runs
 * [lo, lo + run) and [lo + run, lo + 2·run) of the row numbers idx into
 * tmp, the right run's row first only when its score (column `score` of
 * rows `width` floats apart) is strictly greater, so equal scores keep
 * their order.  The merges of one pass are disjoint. */
HY_DETECTION_HD void
hy_detection_merge (const float *rows, int64_t width, int score,
    const int64_t *idx, int64_t *tmp, int64_t count, int64_t run,
    int64_t lo)
{
  const int64_t mid = lo + run < count ? lo + run : count;
  const int64_t hi = lo + 2 * run < count ? lo + 2 * run : count;
  int64_t i = lo, j = mid, k = lo;
  while (i < mid && j < hi) {
    if (rows[idx[j] * width + score] > rows[idx[i] * width + score])
      tmp[k++] = idx[j++];
    else
      tmp[k++] = idx[i++];
  }
  while (i < mid)
    tmp[k++] = idx[i++];
  while (j < hi)
    tmp[k++] = idx[j++];
}

/* The whole sort, pass after pass, on one thread (the CPU's). */
HY_DETECTION_HD void
hy_detection_sort (const float *rows, int64_t width, int score,
    int64_t *idx, int64_t *tmp, int64_t count)
{
  for (int64_t run = 1; run < count; run *= 2) {
    for (int64_t lo = 0; lo < count; lo += 2 * run)
      hy_detection_merge (rows, width, score, idx, tmp, count, run, lo);
    for (int64_t k = 0; k < count; k++)
      idx[k] = tmp[k];
  }
}

/* ---- box_nms ----------------------------------------------------------- *
 *
 * Per batch (every leading axis but the last two):
 *  1. collect: the candidates in row order, rows whose score >
 *     valid_thresh and, when rows carry a class id, whose id !=
 *     background_id (float comparisons: a NaN score never qualifies, a NaN
 *     id always does);
 *  2. sorted by descending score, equal scores in row order (MXNet
 *     stable-sorts by score, then by batch);
 *  3. only the first topk go on; their areas;
 *  4. each that is still alive suppresses every later alive one of the
 *     same class (any class with force_suppress or without ids) whose IoU
 *     with it is > overlap_thresh;
 *  5. pack: the survivors, in that order, become the first output rows,
 *     every other row -1; with out_format != in_format their coordinates
 *     are converted, except in rows whose first coordinate is negative
 *     (MXNet's test for padding, which also skips real boxes starting
 *     left of 0).
 * topk = 0 copies the input as it is (not even converted), as MXNet does.
 * Boxes are compared in their input encoding: intersections clamp at 0,
 * an area with a negative side is 0. */

typedef struct hy_nms_args {
  int64_t n, width, batches, topk;      /* topk in [0, n] */
  float overlap_thresh, valid_thresh;
  int coord_start, score_index, id_index, background_id;
  bool by_class;
  int in_format, out_format;    /* hy_box_format */
} hy_nms_args;

static inline hy_nms_args
hy_nms_plan (const hy_box_nms_params *p, const hy_shape *x)
{
  hy_nms_args a;                /* every field set below */
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

/* A batch's scratch: candidates and their sort buffer (n positions
 * each), then their areas (n floats). */
typedef struct hy_nms_scratch {
  int64_t *idx, *tmp;
  float *area;
} hy_nms_scratch;

/* Rounded up to 64 bytes: batches' scratches lie end to end on the GPU,
 * and the next one's positions must stay 8-byte aligned (n may be odd). */
HY_DETECTION_HD size_t
hy_nms_scratch_size (const hy_nms_args *a)
{
  const size_t bytes = (size_t) a->n * (2 * sizeof (int64_t) + sizeof (float));
  return (bytes + 63) & ~(size_t) 63;
}

HY_DETECTION_HD hy_nms_scratch
hy_nms_scratch_in (const hy_nms_args *a, void *base)
{
  hy_nms_scratch s;
  s.idx = (int64_t *) base;
  s.tmp = s.idx + a->n;
  s.area = (float *) (s.tmp + a->n);
  return s;
}

/* Step 1: the candidates of batch x in row order; returns their count. */
HY_DETECTION_HD int64_t
hy_nms_collect (const hy_nms_args *a, const float *x, int64_t *idx)
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

/* Step 2, one merge (hy_detection_merge by the score column). */
HY_DETECTION_HD void
hy_nms_merge (const hy_nms_args *a, const float *x, const int64_t *idx,
    int64_t *tmp, int64_t count, int64_t run, int64_t lo)
{
  hy_detection_merge (x, a->width, a->score_index, idx, tmp, count, run,
      lo);
}

/* MXNet casts ids to int before comparing classes; on x86 a NaN or an
 * out-of-range float converts to INT_MIN, which this reproduces without
 * the undefined behaviour of the plain cast. */
HY_DETECTION_HD int
hy_nms_class (float v)
{
  if (!(v > (float) INT_MIN && v < (float) INT_MAX))
    return INT_MIN;
  return (int) v;
}

/* The overlap of boxes p and q along one axis; p and q point at that
 * axis's first coordinate, its second is two values on. */
HY_DETECTION_HD float
hy_nms_overlap (const float *p, const float *q, int format)
{
  float w;
  if (format == HY_BOX_CORNER) {
    const float left = p[0] > q[0] ? p[0] : q[0];
    const float right = p[2] < q[2] ? p[2] : q[2];
    w = hy_sub_rn (right, left);
  } else {
    const float pw = p[2] / 2, qw = q[2] / 2;
    const float pl = hy_sub_rn (p[0], pw), pr = hy_add_rn (p[0], pw);
    const float ql = hy_sub_rn (q[0], qw), qr = hy_add_rn (q[0], qw);
    const float left = ql > pl ? ql : pl;
    const float right = qr < pr ? qr : pr;
    w = hy_sub_rn (right, left);
  }
  return w > 0 ? w : 0.0f;
}

/* Step 3: the area of candidate k. */
HY_DETECTION_HD float
hy_nms_area (const hy_nms_args *a, const float *x, const int64_t *idx,
    int64_t k)
{
  const float *c = x + idx[k] * a->width + a->coord_start;
  const bool corner = a->in_format == HY_BOX_CORNER;
  const float w = corner ? hy_sub_rn (c[2], c[0]) : c[2];
  const float h = corner ? hy_sub_rn (c[3], c[1]) : c[3];
  return w < 0 || h < 0 ? 0.0f : hy_mul_rn (w, h);
}

/* Step 4: whether alive reference `ref` suppresses candidate `pos` (false
 * when pos is suppressed already). */
HY_DETECTION_HD bool
hy_nms_suppresses (const hy_nms_args *a, const float *x,
    const int64_t *idx, const float *area, int64_t ref, int64_t pos)
{
  if (idx[pos] < 0)
    return false;
  const float *rrow = x + idx[ref] * a->width;
  const float *prow = x + idx[pos] * a->width;
  if (a->by_class && hy_nms_class (rrow[a->id_index])
      != hy_nms_class (prow[a->id_index]))
    return false;
  const float *rc = rrow + a->coord_start, *pc = prow + a->coord_start;
  const float inter = hy_mul_rn (hy_nms_overlap (rc, pc, a->in_format),
      hy_nms_overlap (rc + 1, pc + 1, a->in_format));
  const float iou = inter / hy_sub_rn (hy_add_rn (area[ref], area[pos]),
      inter);
  return iou > a->overlap_thresh;
}

/* Step 5: the survivors' rows packed into kept; their count. */
HY_DETECTION_HD int64_t
hy_nms_pack (const int64_t *idx, int64_t count, int64_t *kept)
{
  int64_t m = 0;
  for (int64_t k = 0; k < count; k++)
    if (idx[k] >= 0)
      kept[m++] = idx[k];
  return m;
}

/* Step 5: output value e of a batch's rows, a survivor's value, converted
 * where asked, or -1. */
HY_DETECTION_HD float
hy_nms_out (const hy_nms_args *a, const float *x, const int64_t *kept,
    int64_t n_kept, int64_t e)
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
      case 0: return hy_add_rn (b[0], b[2]) / 2;
      case 1: return hy_add_rn (b[1], b[3]) / 2;
      case 2: return hy_sub_rn (b[2], b[0]);
      default: return hy_sub_rn (b[3], b[1]);
    }
  }
  switch (c) {
    case 0: return hy_sub_rn (b[0], b[2] / 2);
    case 1: return hy_sub_rn (b[1], b[3] / 2);
    case 2: return hy_add_rn (b[0], b[2] / 2);
    default: return hy_add_rn (b[1], b[3] / 2);
  }
}

/* ---- MultiBoxDetection ------------------------------------------------- *
 *
 * Per image:
 *  1. classify: each anchor's class is the first of classes 1.. with the
 *     highest probability above -1 (so a NaN never wins), and becomes
 *     background when that probability is below threshold; class 0 is
 *     always the background (MXNet's kernel never reads background_id);
 *  2. collect: the other anchors, in anchor order;
 *  3. their rows [class - 1, score, decoded corners] go to the first
 *     output rows; every other value is -1;
 *  4. with nms_threshold in (0, 1] (or NaN), those rows are set aside and
 *     stable-sorted by descending score; only the first nms_topk (> 0) go
 *     on, written back sorted, and rows past those keep their pre-sort
 *     values with the class set to -1 (MXNet overwrites only the rows it
 *     keeps);
 *  5. greedy NMS over the kept rows: each live row sets the class of every
 *     later live one of the same class (any class with force_suppress) to
 *     -1 when their IoU is >= nms_threshold.  Suppressed rows stay where
 *     they are with their score and box.
 * Boxes decode as SSD's centre offsets scaled by the variances, in MXNet's
 * order.  min/max keep std::min/std::max's argument order, which decides
 * what a NaN gives (a NaN corner clips to 1). */

typedef struct hy_mbd_args {
  int64_t batch, classes, anchors;
  float threshold, nms_threshold;
  float variances[4];
  int64_t nms_topk;             /* <= 0: every row */
  bool clip, force_suppress;
  bool nms;                     /* sort and suppress at all */
} hy_mbd_args;

static inline hy_mbd_args
hy_mbd_plan (const hy_multibox_detection_params *p, const hy_shape *cls)
{
  hy_mbd_args a;                /* every field set below */
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

/* An image's scratch: rows (anchors × 6 floats), positions and their sort
 * buffer (anchors each). */
typedef struct hy_mbd_scratch {
  float *rows;
  int64_t *idx, *tmp;
} hy_mbd_scratch;

HY_DETECTION_HD size_t
hy_mbd_scratch_size (const hy_mbd_args *a)
{
  return (size_t) a->anchors * (6 * sizeof (float) + 2 * sizeof (int64_t));
}

HY_DETECTION_HD hy_mbd_scratch
hy_mbd_scratch_in (const hy_mbd_args *a, void *base)
{
  hy_mbd_scratch s;
  s.rows = (float *) base;
  s.idx = (int64_t *) (s.rows + a->anchors * 6);
  s.tmp = s.idx + a->anchors;
  return s;
}

/* std::min (a, b) and std::max (a, b): b only when strictly better. */
HY_DETECTION_HD float
hy_mbd_min (float a, float b)
{
  return b < a ? b : a;
}

HY_DETECTION_HD float
hy_mbd_max (float a, float b)
{
  return a < b ? b : a;
}

/* Step 1 for anchor i of an image's cls (classes × anchors): row[0] the
 * class - 1 (-1: background), row[1] the best score. */
HY_DETECTION_HD void
hy_mbd_classify (const hy_mbd_args *a, const float *cls, int64_t i,
    float *row)
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
HY_DETECTION_HD int64_t
hy_mbd_collect (const hy_mbd_args *a, const float *rows, int64_t *idx)
{
  int64_t count = 0;
  for (int64_t i = 0; i < a->anchors; i++)
    if (rows[i * 6] >= 0)
      idx[count++] = i;
  return count;
}

/* Corners k and k + 2 (k = 0: x, 1: y) of the box SSD's offsets loc give
 * for corner anchor an, each clipped into [0, 1] when asked. */
HY_DETECTION_HD void
hy_mbd_decode_axis (const hy_mbd_args *a, const float *an,
    const float *loc, int k, float *low, float *high)
{
  const float *var = a->variances;
  const float size = hy_sub_rn (an[k + 2], an[k]);
  const float mid = hy_add_rn (an[k], an[k + 2]) / 2.f;
  const float centre = hy_add_rn (hy_mul_rn (hy_mul_rn (loc[k], var[k]),
          size), mid);
  const float half = hy_mul_rn (expf (hy_mul_rn (loc[k + 2], var[k + 2])),
      size) / 2;
  float lo = hy_sub_rn (centre, half), hi = hy_add_rn (centre, half);
  if (a->clip) {
    lo = hy_mbd_max (0.0f, hy_mbd_min (1.0f, lo));
    hi = hy_mbd_max (0.0f, hy_mbd_min (1.0f, hi));
  }
  *low = lo;
  *high = hi;
}

/* Step 3: value e of an image's output (anchors × 6), from the step-1
 * rows of the count listed anchors idx; loc is the image's. */
HY_DETECTION_HD float
hy_mbd_out (const hy_mbd_args *a, const float *rows, const int64_t *idx,
    int64_t count, const float *anchors, const float *loc, int64_t e)
{
  const int64_t r = e / 6;
  const int col = (int) (e % 6);
  if (r >= count)
    return -1.0f;
  const int64_t i = idx[r];
  if (col < 2)
    return rows[i * 6 + col];
  float low, high;
  hy_mbd_decode_axis (a, anchors + i * 4, loc + i * 4, col % 2, &low,
      &high);
  return col < 4 ? low : high;
}

/* Step 4, one merge (hy_detection_merge by rows' column 1). */
HY_DETECTION_HD void
hy_mbd_merge (const float *rows, const int64_t *idx, int64_t *tmp,
    int64_t count, int64_t run, int64_t lo)
{
  hy_detection_merge (rows, 6, 1, idx, tmp, count, run, lo);
}

/* How many of count rows take part in NMS. */
HY_DETECTION_HD int64_t
hy_mbd_kept (const hy_mbd_args *a, int64_t count)
{
  return a->nms_topk > 0 && a->nms_topk < count ? a->nms_topk : count;
}

/* Step 4's write-back, value e < count · 6 of the output: sorted rows
 * first, then the class of the rows past the kept ones -1 (their other
 * values as step 3 left them). */
HY_DETECTION_HD void
hy_mbd_write_back (const float *rows, const int64_t *idx, int64_t kept,
    int64_t e, float *y)
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
HY_DETECTION_HD float
hy_mbd_iou (const float *p, const float *q)
{
  const float w = hy_mbd_max (0.0f, hy_sub_rn (hy_mbd_min (p[2], q[2]),
          hy_mbd_max (p[0], q[0])));
  const float h = hy_mbd_max (0.0f, hy_sub_rn (hy_mbd_min (p[3], q[3]),
          hy_mbd_max (p[1], q[1])));
  const float i = hy_mul_rn (w, h);
  const float ap = hy_mul_rn (hy_sub_rn (p[2], p[0]),
      hy_sub_rn (p[3], p[1]));
  const float aq = hy_mul_rn (hy_sub_rn (q[2], q[0]),
      hy_sub_rn (q[3], q[1]));
  const float u = hy_sub_rn (hy_add_rn (ap, aq), i);
  return u <= 0.f ? 0.0f : i / u;
}

/* Step 5: whether live output row ref suppresses later row pos of y
 * (false when pos is suppressed already). */
HY_DETECTION_HD bool
hy_mbd_suppresses (const hy_mbd_args *a, const float *y, int64_t ref,
    int64_t pos)
{
  const float *r = y + ref * 6, *p = y + pos * 6;
  if (p[0] < 0)
    return false;
  return (a->force_suppress || r[0] == p[0])
      && hy_mbd_iou (r + 2, p + 2) >= a->nms_threshold;
}

#endif /* HY_DETECTION_COMMON_H */

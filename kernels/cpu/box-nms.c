/*
 * box-nms.c — CPU kernel of _contrib_box_nms, MXNet 1.9.1's greedy
 * non-maximum suppression, result for result.
 *
 * Per batch (every leading axis but the last two):
 *  1. candidates: rows whose score > valid_thresh and, when rows carry a
 *     class id, whose id != background_id (float comparisons, so a NaN
 *     score never qualifies and a NaN id always does);
 *  2. ordered by descending score, equal scores kept in row order (MXNet
 *     stable-sorts the candidates by score, then by batch);
 *  3. only the first topk candidates go on; each that is still alive
 *     suppresses every later alive one of the same class (any class with
 *     force_suppress or without ids) whose IoU with it is > overlap_thresh;
 *  4. the survivors are copied, in that order, to the first output rows;
 *     every other row is -1;
 *  5. with out_format != in_format, coordinates are converted in place,
 *     except in rows whose first coordinate is negative (MXNet's test for
 *     padding, which also skips real boxes starting left of 0).
 * topk = 0 copies the input as it is (not even converted), as MXNet does.
 *
 * Boxes are compared in their input encoding, with MXNet's float
 * arithmetic: intersections clamp at 0, an area with a negative side is 0.
 * Batches are independent and run on the context's threads, each with its
 * own scratch: the candidate list, its sort buffer and the areas.
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "cpu-kernel.h"
#include "kernels/params/detection.h"

void hy_cpu_box_nms (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

typedef struct nms_job {
  const hy_box_nms_params *p;
  const float *x;
  float *y;
  int64_t n;                    /* rows per batch */
  int64_t width;                /* values per row */
  int64_t topk;                 /* in [1, n] */
  char *scratch;
  size_t scratch_stride;
} nms_job;

/* MXNet casts ids to int before comparing classes; on x86 a NaN or an
 * out-of-range float converts to INT_MIN, which this reproduces without
 * the undefined behaviour of the plain cast. */
static int
class_of (float v)
{
  if (!(v > (float) INT_MIN && v < (float) INT_MAX))
    return INT_MIN;
  return (int) v;
}

/* Stable merge sort of row indices by descending score. */
static void
sort_by_score (int64_t *idx, int64_t *tmp, int64_t count, const float *x,
    int64_t width, int score)
{
  for (int64_t run = 1; run < count; run *= 2) {
    for (int64_t lo = 0; lo < count; lo += 2 * run) {
      int64_t mid = lo + run < count ? lo + run : count;
      int64_t hi = lo + 2 * run < count ? lo + 2 * run : count;
      int64_t a = lo, b = mid, k = lo;
      while (a < mid && b < hi) {
        /* Take from the right run only when strictly greater: ties keep
         * the left (earlier) row first. */
        if (x[idx[b] * width + score] > x[idx[a] * width + score])
          tmp[k++] = idx[b++];
        else
          tmp[k++] = idx[a++];
      }
      while (a < mid)
        tmp[k++] = idx[a++];
      while (b < hi)
        tmp[k++] = idx[b++];
    }
    memcpy (idx, tmp, (size_t) count * sizeof *idx);
  }
}

/* The overlap of two boxes along one axis; a and b point at that axis's
 * first coordinate, its second is two values on. */
static float
overlap_1d (const float *a, const float *b, hy_box_format format)
{
  float w;
  if (format == HY_BOX_CORNER) {
    float left = a[0] > b[0] ? a[0] : b[0];
    float right = a[2] < b[2] ? a[2] : b[2];
    w = right - left;
  } else {
    float aw = a[2] / 2, bw = b[2] / 2;
    float al = a[0] - aw, ar = a[0] + aw, bl = b[0] - bw, br = b[0] + bw;
    float left = bl > al ? bl : al;
    float right = br < ar ? br : ar;
    w = right - left;
  }
  return w > 0 ? w : 0.0f;
}

static float
area_of (const float *c, hy_box_format format)
{
  float w = format == HY_BOX_CORNER ? c[2] - c[0] : c[2];
  float h = format == HY_BOX_CORNER ? c[3] - c[1] : c[3];
  return w < 0 || h < 0 ? 0.0f : w * h;
}

static void
convert_box (float *c, hy_box_format to)
{
  if (c[0] < 0)
    return;
  if (to == HY_BOX_CENTER) {
    float left = c[0], top = c[1], right = c[2], bottom = c[3];
    c[0] = (left + right) / 2;
    c[1] = (top + bottom) / 2;
    c[2] = right - left;
    c[3] = bottom - top;
  } else {
    float x = c[0], y = c[1], hw = c[2] / 2, hh = c[3] / 2;
    c[0] = x - hw;
    c[1] = y - hh;
    c[2] = x + hw;
    c[3] = y + hh;
  }
}

static void
nms_batch (const nms_job *j, const float *x, float *y, char *scratch)
{
  const hy_box_nms_params *p = j->p;
  int64_t n = j->n, width = j->width;
  int64_t *idx = (int64_t *) scratch, *tmp = idx + n;
  float *area = (float *) (tmp + n);

  int64_t count = 0;
  for (int64_t r = 0; r < n; r++) {
    const float *row = x + r * width;
    if (!(row[p->score_index] > p->valid_thresh))
      continue;
    if (p->id_index >= 0 && !(row[p->id_index] != (float) p->background_id))
      continue;
    idx[count++] = r;
  }
  sort_by_score (idx, tmp, count, x, width, p->score_index);
  if (count > j->topk)
    count = j->topk;

  for (int64_t k = 0; k < count; k++)
    area[k] = area_of (x + idx[k] * width + p->coord_start, p->in_format);
  bool by_class = !p->force_suppress && p->id_index >= 0;
  for (int64_t ref = 0; ref < count; ref++) {
    if (idx[ref] < 0)
      continue;
    const float *rrow = x + idx[ref] * width, *rc = rrow + p->coord_start;
    for (int64_t pos = ref + 1; pos < count; pos++) {
      if (idx[pos] < 0)
        continue;
      const float *prow = x + idx[pos] * width, *pc = prow + p->coord_start;
      if (by_class && class_of (rrow[p->id_index])
          != class_of (prow[p->id_index]))
        continue;
      float inter = overlap_1d (rc, pc, p->in_format)
          * overlap_1d (rc + 1, pc + 1, p->in_format);
      float iou = inter / (area[ref] + area[pos] - inter);
      if (iou > p->overlap_thresh)
        idx[pos] = -1;
    }
  }

  int64_t kept = 0;
  for (int64_t k = 0; k < count; k++) {
    if (idx[k] < 0)
      continue;
    memcpy (y + kept * width, x + idx[k] * width,
        (size_t) width * sizeof (float));
    kept++;
  }
  for (int64_t i = kept * width; i < n * width; i++)
    y[i] = -1.0f;
  if (p->in_format != p->out_format)
    for (int64_t r = 0; r < kept; r++)
      convert_box (y + r * width + p->coord_start, p->out_format);
}

static void
nms_batches (void *arg, int64_t begin, int64_t end, int thread)
{
  const nms_job *j = arg;
  char *scratch = j->scratch + (size_t) thread * j->scratch_stride;
  for (int64_t b = begin; b < end; b++)
    nms_batch (j, j->x + b * j->n * j->width, j->y + b * j->n * j->width,
        scratch);
}

void
hy_cpu_box_nms (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_box_nms_params *p = params;
  const hy_shape *s = &in[0]->shape;
  int64_t numel = hy_shape_numel (s);
  if (numel == 0)
    return;
  int64_t width = s->dims[s->ndim - 1], n = s->dims[s->ndim - 2];
  int64_t batches = numel / (n * width);
  int64_t topk = p->topk < 0 || p->topk > n ? n : p->topk;
  if (topk == 0) {
    memcpy (out[0]->data, in[0]->data, (size_t) numel * sizeof (float));
    return;
  }
  nms_job j = { p, in[0]->data, out[0]->data, n, width, topk, NULL, 0 };
  /* Per thread: the candidates, their sort buffer, their areas. */
  size_t per_thread = (size_t) n * (2 * sizeof (int64_t) + sizeof (float));
  j.scratch = hy_cpu_workspace_per_thread (ctx, per_thread,
      &j.scratch_stride);
  hy_cpu_parallel_for (ctx, batches, 1, nms_batches, &j);
}

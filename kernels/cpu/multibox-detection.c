/*
 * multibox-detection.c — CPU kernel of _contrib_MultiBoxDetection, MXNet
 * 1.9.1's, row for row.
 *
 * Per image:
 *  1. each anchor's class is the first of classes 1.. with the highest
 *     probability above -1 (so a NaN never wins), and becomes background
 *     when that probability is below threshold; class 0 is always the
 *     background (MXNet's kernel never reads background_id);
 *  2. the other anchors' rows [class - 1, score, decoded corners] go to
 *     the first output rows in anchor order; every other row is -1;
 *  3. with nms_threshold in (0, 1] (or NaN), those rows are stable-sorted
 *     by descending score; only the first nms_topk (> 0) of them go on,
 *     and rows past those keep their pre-sort values with the class set
 *     to -1 (MXNet overwrites only the rows it keeps);
 *  4. greedy NMS over the kept rows: each live row sets the class of every
 *     later live one of the same class (any class with force_suppress) to
 *     -1 when their IoU is >= nms_threshold.  Suppressed rows stay where
 *     they are with their score and box.
 *
 * Boxes decode as SSD's centre offsets scaled by the variances, in float
 * and in MXNet's order.  min/max keep std::min/std::max's argument order,
 * which decides what a NaN gives (a NaN corner clips to 1).  Images are
 * independent and run on the context's threads, each with its own
 * scratch: the compacted rows and the sort's two index buffers.
 */
#include <math.h>
#include <string.h>

#include "cpu-kernel.h"
#include "kernels/params/detection.h"

void hy_cpu_multibox_detection (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

typedef struct detect_job {
  const hy_multibox_detection_params *p;
  const float *cls, *loc, *anchors;
  float *y;
  int64_t classes, anchors_n;
  char *scratch;
  size_t scratch_stride;
} detect_job;

/* std::min (a, b) and std::max (a, b): b only when strictly better. */
static inline float
std_min (float a, float b)
{
  return b < a ? b : a;
}

static inline float
std_max (float a, float b)
{
  return a < b ? b : a;
}

static inline float
clip_unit (float v)
{
  return std_max (0.0f, std_min (1.0f, v));
}

static void
decode (float *box, const float *a, const float *loc, const float *var,
    bool clip)
{
  float aw = a[2] - a[0], ah = a[3] - a[1];
  float ax = (a[0] + a[2]) / 2.f, ay = (a[1] + a[3]) / 2.f;
  float ox = loc[0] * var[0] * aw + ax;
  float oy = loc[1] * var[1] * ah + ay;
  float ow = expf (loc[2] * var[2]) * aw / 2;
  float oh = expf (loc[3] * var[3]) * ah / 2;
  box[0] = ox - ow;
  box[1] = oy - oh;
  box[2] = ox + ow;
  box[3] = oy + oh;
  if (clip)
    for (int k = 0; k < 4; k++)
      box[k] = clip_unit (box[k]);
}

/* MXNet's IoU: areas are not clamped, and a union <= 0 gives 0. */
static float
overlap (const float *a, const float *b)
{
  float w = std_max (0.0f, std_min (a[2], b[2]) - std_max (a[0], b[0]));
  float h = std_max (0.0f, std_min (a[3], b[3]) - std_max (a[1], b[1]));
  float i = w * h;
  float u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1])
      - i;
  return u <= 0.f ? 0.0f : i / u;
}

/* Stable merge sort of row numbers by descending score (column 1). */
static void
sort_by_score (int64_t *idx, int64_t *tmp, int64_t count, const float *rows)
{
  for (int64_t run = 1; run < count; run *= 2) {
    for (int64_t lo = 0; lo < count; lo += 2 * run) {
      int64_t mid = lo + run < count ? lo + run : count;
      int64_t hi = lo + 2 * run < count ? lo + 2 * run : count;
      int64_t a = lo, b = mid, k = lo;
      while (a < mid && b < hi) {
        /* The right run goes first only when strictly greater: equal
         * scores keep their order. */
        if (rows[idx[b] * 6 + 1] > rows[idx[a] * 6 + 1])
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

static void
detect_image (const detect_job *j, int64_t n, char *scratch)
{
  const hy_multibox_detection_params *p = j->p;
  const int64_t na = j->anchors_n, nc = j->classes;
  const float *cls = j->cls + n * nc * na, *loc = j->loc + n * na * 4;
  float *y = j->y + n * na * 6;
  float *rows = (float *) scratch;
  int64_t *idx = (int64_t *) (rows + na * 6), *tmp = idx + na;

  int64_t valid = 0;
  for (int64_t i = 0; i < na; i++) {
    float score = -1;
    int id = 0;
    for (int64_t c = 1; c < nc; c++) {
      float v = cls[c * na + i];
      if (v > score) {
        score = v;
        id = (int) c;
      }
    }
    if (id > 0 && score < p->threshold)
      id = 0;
    if (id == 0)
      continue;
    float *row = y + valid * 6;
    row[0] = (float) (id - 1);
    row[1] = score;
    decode (row + 2, j->anchors + i * 4, loc + i * 4, p->variances, p->clip);
    valid++;
  }
  for (int64_t k = valid * 6; k < na * 6; k++)
    y[k] = -1.0f;
  if (valid < 1 || p->nms_threshold <= 0 || p->nms_threshold > 1)
    return;

  memcpy (rows, y, (size_t) valid * 6 * sizeof (float));
  for (int64_t k = 0; k < valid; k++)
    idx[k] = k;
  sort_by_score (idx, tmp, valid, rows);
  int64_t keep = valid;
  if (p->nms_topk > 0 && p->nms_topk < keep) {
    keep = p->nms_topk;
    for (int64_t k = keep; k < valid; k++)
      y[k * 6] = -1.0f;
  }
  for (int64_t k = 0; k < keep; k++)
    memcpy (y + k * 6, rows + idx[k] * 6, 6 * sizeof (float));

  for (int64_t a = 0; a < keep; a++) {
    const float *ra = y + a * 6;
    if (ra[0] < 0)
      continue;
    for (int64_t b = a + 1; b < keep; b++) {
      float *rb = y + b * 6;
      if (rb[0] < 0)
        continue;
      if ((p->force_suppress || ra[0] == rb[0])
          && overlap (ra + 2, rb + 2) >= p->nms_threshold)
        rb[0] = -1.0f;
    }
  }
}

static void
detect_images (void *arg, int64_t begin, int64_t end, int thread)
{
  const detect_job *j = arg;
  char *scratch = j->scratch + (size_t) thread * j->scratch_stride;
  for (int64_t n = begin; n < end; n++)
    detect_image (j, n, scratch);
}

void
hy_cpu_multibox_detection (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_shape *c = &in[0]->shape;
  int64_t batch = c->dims[0];
  if (batch == 0)
    return;
  detect_job j = { params, in[0]->data, in[1]->data, in[2]->data,
    out[0]->data, c->dims[1], c->dims[2], NULL, 0 };
  /* Per thread: the compacted rows, the sort's indices and its buffer. */
  size_t per_thread = (size_t) j.anchors_n * (6 * sizeof (float)
      + 2 * sizeof (int64_t));
  j.scratch = hy_cpu_workspace_per_thread (ctx, per_thread,
      &j.scratch_stride);
  hy_cpu_parallel_for (ctx, batch, 1, detect_images, &j);
}

/*
 * onnx-tail-select.c — the tail's two steps whose output length is the
 * data's choice: NonZero and NonMaxSuppression, with ONNX Runtime's
 * semantics.  In a dry run they give their bounds (none, or every
 * position / every box of every class up to max_output_boxes_per_class)
 * and compute nothing.
 */
#include <string.h>

#include "kernels/cpu/onnx-tail.h"

/* ---- NonZero --------------------------------------------------------- */

void
tail_nonzero (tail_run *r, tail_value *out)
{
  const tail_value *x = tail_in (r, 0);
  int64_t n = hy_shape_numel (&x->shape);
  int rank = x->shape.ndim;
  hy_shape shape = { .ndim = 2, .dims = { rank, 0 } };
  if (r->mode != TAIL_REAL) {
    shape.dims[1] = r->mode == TAIL_DRY_MOST ? n : 0;
    out->shape = shape;
    out->known = false;
    return;
  }
  int64_t count = 0;
  for (int64_t i = 0; i < n; i++)
    count += x->data[i] != 0;   /* NaN is nonzero, as in ONNX Runtime */
  shape.dims[1] = count;
  tail_out (r, out, &shape);
  /* column j holds the coordinates of the j-th nonzero, row-major */
  int64_t j = 0;
  for (int64_t i = 0; i < n; i++) {
    if (x->data[i] == 0)
      continue;
    int64_t rest = i;
    for (int d = rank - 1; d >= 0; d--) {
      out->data[d * count + j] = (double) (rest % x->shape.dims[d]);
      rest /= x->shape.dims[d];
    }
    j++;
  }
}

/* ---- NonMaxSuppression ------------------------------------------------- */

typedef struct nms_args {
  int64_t batches, classes, boxes;
  int64_t max_per_class;
  float iou_threshold;
  bool has_score_threshold;
  float score_threshold;
  bool center_point_box;
} nms_args;

/* Checks the shapes (boxes (B, N, 4), scores (B, C, N)) and reads the
 * optional scalars; in a dry run a limit computed from the data counts as
 * no limit. */
static void
nms_read (tail_run *r, nms_args *a)
{
  const tail_value *boxes = tail_in (r, 0), *scores = tail_in (r, 1);
  if (!scores)
    tail_refuse (r, "input 1 (scores) is required");
  const hy_shape *b = &boxes->shape, *s = &scores->shape;
  if (b->ndim != 3 || b->dims[2] != 4 || s->ndim != 3
      || s->dims[0] != b->dims[0] || s->dims[2] != b->dims[1]) {
    char bs[HY_SHAPE_STRLEN], ss[HY_SHAPE_STRLEN];
    tail_refuse (r, "boxes %s and scores %s: (batch, boxes, 4) and (batch, "
        "classes, boxes) expected", hy_shape_format (b, bs, sizeof bs),
        hy_shape_format (s, ss, sizeof ss));
  }
  *a = (nms_args) {
    .batches = b->dims[0], .classes = s->dims[1], .boxes = b->dims[1],
    .max_per_class = 0,
    .center_point_box = r->p->steps[r->step].attr[0] != 0,
  };
  const tail_value *m = tail_in (r, 2);
  if (m && m->known && hy_shape_numel (&m->shape) > 0)
    a->max_per_class = MAX (tail_i64 (m->data[0]), 0);
  else if (m && r->mode != TAIL_REAL)
    a->max_per_class = a->boxes;
  const tail_value *iou = tail_in (r, 3), *thr = tail_in (r, 4);
  if (iou && iou->known && hy_shape_numel (&iou->shape) > 0)
    a->iou_threshold = (float) iou->data[0];
  if (thr && thr->known && hy_shape_numel (&thr->shape) > 0) {
    a->has_score_threshold = true;
    a->score_threshold = (float) thr->data[0];
  }
}

void
tail_nms_bound (tail_run *r, int64_t *boxes)
{
  const tail_value *b = tail_in (r, 0);
  if (b->shape.ndim == 3)
    *boxes = MAX (*boxes, b->shape.dims[1]);
}

static void
min_max (float a, float b, float *lo, float *hi)
{
  *lo = a < b ? a : b;
  *hi = a < b ? b : a;
}

/* ONNX Runtime's SuppressByIOU, step for step in float: corners given
 * (y1, x1, y2, x2) in any order, or a centre and a size; an empty
 * intersection or a box without area suppresses nothing. */
static bool
suppressed (const double *b1, const double *b2, bool center_point_box,
    float iou_threshold)
{
  float x1_min, x1_max, y1_min, y1_max, x2_min, x2_max, y2_min, y2_max;
  if (!center_point_box) {
    min_max ((float) b1[1], (float) b1[3], &x1_min, &x1_max);
    min_max ((float) b2[1], (float) b2[3], &x2_min, &x2_max);
    min_max ((float) b1[0], (float) b1[2], &y1_min, &y1_max);
    min_max ((float) b2[0], (float) b2[2], &y2_min, &y2_max);
  } else {
    float w1 = (float) b1[2] / 2, h1 = (float) b1[3] / 2;
    float w2 = (float) b2[2] / 2, h2 = (float) b2[3] / 2;
    x1_min = (float) b1[0] - w1;
    x1_max = (float) b1[0] + w1;
    x2_min = (float) b2[0] - w2;
    x2_max = (float) b2[0] + w2;
    y1_min = (float) b1[1] - h1;
    y1_max = (float) b1[1] + h1;
    y2_min = (float) b2[1] - h2;
    y2_max = (float) b2[1] + h2;
  }
  float ix_min = MAX (x1_min, x2_min), ix_max = MIN (x1_max, x2_max);
  if (ix_max <= ix_min)
    return false;
  float iy_min = MAX (y1_min, y2_min), iy_max = MIN (y1_max, y2_max);
  if (iy_max <= iy_min)
    return false;
  float inter = (ix_max - ix_min) * (iy_max - iy_min);
  if (inter <= 0.0f)
    return false;
  float area1 = (x1_max - x1_min) * (y1_max - y1_min);
  float area2 = (x2_max - x2_min) * (y2_max - y2_min);
  float uni = area1 + area2 - inter;
  if (area1 <= 0.0f || area2 <= 0.0f || uni <= 0.0f)
    return false;
  return inter / uni > iou_threshold;
}

/* Sorts idx[0, n) by descending score, a tie keeping input order (the
 * order ONNX Runtime's priority queue pops them in): a merge sort, stable,
 * through tmp. */
static void
sort_by_score (int64_t *idx, int64_t *tmp, int64_t n, const double *score)
{
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = MIN (lo + width, n), hi = MIN (lo + 2 * width, n);
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        tmp[k++] = (float) score[idx[j]] > (float) score[idx[i]]
            ? idx[j++] : idx[i++];
      while (i < mid)
        tmp[k++] = idx[i++];
      while (j < hi)
        tmp[k++] = idx[j++];
    }
    memcpy (idx, tmp, sizeof (int64_t) * n);
  }
}

void
tail_nms (tail_run *r, tail_value *out)
{
  nms_args a;
  nms_read (r, &a);
  hy_shape shape = { .ndim = 2, .dims = { 0, 3 } };
  if (r->mode != TAIL_REAL) {
    if (r->mode == TAIL_DRY_MOST)
      shape.dims[0] = a.batches * a.classes * MIN (a.boxes, a.max_per_class);
    out->shape = shape;
    out->known = false;
    return;
  }
  const double *boxes = tail_in (r, 0)->data;
  const double *scores = tail_in (r, 1)->data;
  int64_t n = a.boxes;
  int64_t *cand = r->scratch, *tmp = cand + n, *kept = tmp + n;
  int64_t rows = 0, room = out->cap / 3;
  for (int64_t b = 0; b < a.batches; b++)
    for (int64_t c = 0; c < a.classes; c++) {
      const double *score = scores + (b * a.classes + c) * n;
      int64_t n_cand = 0, n_kept = 0;
      for (int64_t i = 0; i < n; i++)
        if (!a.has_score_threshold || (float) score[i] > a.score_threshold)
          cand[n_cand++] = i;
      sort_by_score (cand, tmp, n_cand, score);
      for (int64_t k = 0; k < n_cand && n_kept < a.max_per_class; k++) {
        const double *box = boxes + (b * n + cand[k]) * 4;
        bool keep = true;
        for (int64_t s = 0; s < n_kept && keep; s++)
          keep = !suppressed (box, boxes + (b * n + kept[s]) * 4,
              a.center_point_box, a.iou_threshold);
        if (!keep)
          continue;
        kept[n_kept++] = cand[k];
        if (rows >= room)
          tail_refuse (r, "selects more than the %" G_GINT64_FORMAT " boxes "
              "planned", room);
        out->data[rows * 3] = (double) b;
        out->data[rows * 3 + 1] = (double) c;
        out->data[rows * 3 + 2] = (double) cand[k];
        rows++;
      }
    }
  shape.dims[0] = rows;
  tail_out (r, out, &shape);
}

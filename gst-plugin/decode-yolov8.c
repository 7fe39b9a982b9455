/*
 * decode-yolov8.c — YOLOv8's head (B, 4 + classes, N), decoded as
 * Ultralytics' non_max_suppression does with its defaults: per anchor the
 * best class and its score; anchors whose score reaches the threshold
 * become boxes (cx - w/2, cy - h/2, cx + w/2, cy + h/2); then, best score
 * first, a box is dropped when it overlaps a kept box of its own class by
 * an intersection over union above the IoU threshold (torchvision's
 * nms: area-based IoU, ties of score kept in anchor order).  No cap on
 * the number kept: the head's N bounds it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decode-yolov8.h"
#include "property-parse.h"

gboolean
gst_hybrid_yolov8_head_fits (const hy_shape *shapes, guint n_heads,
    gint64 batch)
{
  const hy_shape *s = &shapes[0];
  return n_heads == 1 && s->ndim == 3 && s->dims[0] == batch
      && s->dims[1] >= 5 && s->dims[2] >= 1 && s->dims[2] != 6;
}

gboolean
gst_hybrid_yolov8_rows_fit (const hy_model *model, const hy_shape *shapes,
    guint n_heads, gint64 batch)
{
  const hy_shape *s = &shapes[0];
  const char *head = hy_model_n_outputs (model) == 1
      ? hy_model_output_name (model, 0) : NULL;
  return n_heads == 1 && s->ndim == 3 && s->dims[0] == batch
      && s->dims[2] == 6 && head && !strcmp (head, "output0");
}

/* Best score first; equal scores in anchor order, so that the result does
 * not depend on qsort's. */
static int
by_score (const void *a, const void *b)
{
  const GstHybridDetection *x = a, *y = b;
  if (x->score != y->score)
    return x->score > y->score ? -1 : 1;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* Corners are kept in x, y (top left) and w, h (bottom right). */
static gfloat
iou (const GstHybridDetection *a, const GstHybridDetection *b)
{
  gfloat iw = MIN (a->w, b->w) - MAX (a->x, b->x);
  gfloat ih = MIN (a->h, b->h) - MAX (a->y, b->y);
  if (!(iw > 0.0f && ih > 0.0f))
    return 0.0f;
  gfloat inter = iw * ih;
  gfloat area_a = (a->w - a->x) * (a->h - a->y);
  gfloat area_b = (b->w - b->x) * (b->h - b->y);
  gfloat uni = area_a + area_b - inter;
  return uni > 0.0f ? inter / uni : 0.0f;
}

guint
gst_hybrid_yolov8_decode (const gfloat *head, gint64 n_classes,
    gint64 n_anchors, const GstHybridResultSpec *spec,
    GstHybridDetection *out)
{
  guint n = 0;
  const gfloat *scores = head + 4 * n_anchors;
  for (gint64 a = 0; a < n_anchors; a++) {
    gint64 best = 0;
    gfloat score = scores[a];
    for (gint64 c = 1; c < n_classes; c++)
      if (scores[c * n_anchors + a] > score) {
        score = scores[c * n_anchors + a];
        best = c;
      }
    gfloat cx = head[a], cy = head[n_anchors + a];
    gfloat w = head[2 * n_anchors + a], h = head[3 * n_anchors + a];
    if (!isfinite (score) || !isfinite (cx) || !isfinite (cy)
        || !isfinite (w) || !isfinite (h) || best > G_MAXINT)
      continue;
    if (!(score >= hyg_class_threshold (spec->class_thresholds, (gint) best,
                spec->threshold)))
      continue;
    GstHybridDetection *d = &out[n++];
    d->class_id = (gint) best;
    d->score = score;
    d->row = (guint) a;
    d->x = cx - w / 2.0f;
    d->y = cy - h / 2.0f;
    d->w = cx + w / 2.0f;
    d->h = cy + h / 2.0f;
  }
  qsort (out, n, sizeof *out, by_score);
  /* Greedy: a box is compared with those kept before it only, which is
   * what suppressing from the best down gives. */
  guint kept = 0;
  for (guint i = 0; i < n; i++) {
    gboolean drop = FALSE;
    for (guint k = 0; k < kept && !drop; k++)
      drop = out[k].class_id == out[i].class_id
          && iou (&out[k], &out[i]) > spec->iou_threshold;
    if (!drop)
      out[kept++] = out[i];
  }
  return kept;
}

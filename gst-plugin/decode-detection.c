/*
 * decode-detection.c — boxes above the threshold (their class's own, from
 * class-thresholds, or `threshold`), mapped from the model input back to
 * the frame (layouts: decode.c).  A MultiBoxDetection head gives its
 * corners as fractions of the model input (its anchors are
 * MultiBoxPrior's): they are scaled to input pixels first.
 *
 * A row is a detection only when its class id is a whole number in
 * [0, 2^31) (GluonCV pads with -1) and its score and corners are finite:
 * anything else (NaN, infinities, an id past what a gint holds, a
 * fractional id) is not something the model detected, and is dropped
 * rather than reported as class -2147483648 or a box at NaN.  Masks
 * (decode-masks.c) follow the rows kept here.
 */
#include <math.h>
#include <string.h>

#include "decode.h"
#include "result-fields.h"
#include "result-pool.h"

gboolean
gst_hybrid_detection_boxes_normalized (const hy_model *model)
{
  const char *head = hy_model_n_outputs (model) >= 1
      ? hy_model_output_name (model, 0) : NULL;
  for (int i = 0; head && i < hy_model_n_nodes (model); i++) {
    hy_node_desc d;
    if (hy_model_node (model, i, &d) && !strcmp (d.name, head))
      return !strcmp (d.op, "_contrib_MultiBoxDetection");
  }
  return FALSE;
}

/* 2^31: the first float past a gint */
#define CLASS_ID_END 2147483648.0f

static gboolean
row_is_detection (gfloat id, gfloat score, const gfloat *box)
{
  if (!(id >= 0.0f && id < CLASS_ID_END) || id != floorf (id)
      || !isfinite (score))
    return FALSE;
  for (int i = 0; i < 4; i++)
    if (!isfinite (box[i]))
      return FALSE;
  return TRUE;
}

void
gst_hybrid_decode_detection (GstHybridResult *r,
    const GstHybridResultSpec *spec)
{
  const GstHybridResultPool *pool = r->pool;
  GstStructure *s = r->results;
  const gfloat *ids, *scores, *boxes;
  gsize stride, box_stride;
  guint k_rows = pool->max_detections;
  /* Three heads (ids and scores (B, K, 1) or (B, K), boxes (B, K, 4)), or
   * one (B, K, 6): decode.c's layouts. */
  if (pool->n_heads >= 3) {
    ids = r->tensors[0].data;
    scores = r->tensors[1].data;
    boxes = r->tensors[2].data;
    stride = 1;
    box_stride = 4;
  } else {
    ids = r->tensors[0].data;
    scores = ids + 1;
    boxes = ids + 2;
    stride = box_stride = 6;
  }
  const hy_frame_config *pc = hy_frame_plan_config (spec->plan);
  gfloat fw = (gfloat) pc->src_width, fh = (gfloat) pc->src_height;
  gfloat sx = 1.0f, sy = 1.0f;
  if (pool->boxes_normalized) {
    sx = (gfloat) pc->dst_width;
    sy = (gfloat) pc->dst_height;
  }
  for (guint k = 0; k < k_rows; k++) {
    gfloat id = ids[k * stride], score = scores[k * stride];
    const gfloat *b = boxes + k * box_stride;
    if (!row_is_detection (id, score, b))
      continue;
    gint class_id = (gint) id;
    if (!(score >= hyg_class_threshold (spec->class_thresholds, class_id,
                spec->threshold)))
      continue;
    gfloat x1, y1, x2, y2;
    hy_frame_plan_to_frame (spec->plan, b[0] * sx, b[1] * sy, &x1, &y1);
    hy_frame_plan_to_frame (spec->plan, b[2] * sx, b[3] * sy, &x2, &y2);
    x1 = CLAMP (x1, 0.0f, fw);
    x2 = CLAMP (x2, x1, fw);
    y1 = CLAMP (y1, 0.0f, fh);
    y2 = CLAMP (y2, y1, fh);
    guint slot = r->n_detections++;
    GstHybridDetection *d = &r->detections[slot];
    d->class_id = class_id;
    d->score = score;
    /* clamped to the picture, then placed in the buffer's frame */
    d->x = x1 + spec->origin_x;
    d->y = y1 + spec->origin_y;
    d->w = x2 - x1;
    d->h = y2 - y1;
    d->label = gst_hybrid_result_label (r, slot, d->class_id);
    d->row = k;
    d->mask_w = d->mask_h = 0;
  }

  guint n = r->n_detections;
  hyg_set_interned (hyg_field (s, hyg_names.type, G_TYPE_STRING),
      hyg_names.detection_type);
  g_value_set_int (hyg_field (s, hyg_names.count, G_TYPE_INT), (gint) n);
  hyg_array_fit (hyg_field (s, hyg_names.labels, GST_TYPE_ARRAY), n,
      G_TYPE_STRING, k_rows);
  hyg_array_fit (hyg_field (s, hyg_names.class_ids, GST_TYPE_ARRAY), n,
      G_TYPE_INT, k_rows);
  hyg_array_fit (hyg_field (s, hyg_names.scores, GST_TYPE_ARRAY), n,
      G_TYPE_FLOAT, k_rows);
  hyg_array_fit (hyg_field (s, hyg_names.boxes, GST_TYPE_ARRAY), n,
      GST_TYPE_ARRAY, k_rows);
  GValue *labels = hyg_field (s, hyg_names.labels, GST_TYPE_ARRAY);
  GValue *class_ids = hyg_field (s, hyg_names.class_ids, GST_TYPE_ARRAY);
  GValue *values = hyg_field (s, hyg_names.scores, GST_TYPE_ARRAY);
  GValue *rects = hyg_field (s, hyg_names.boxes, GST_TYPE_ARRAY);
  for (guint i = 0; i < n; i++) {
    const GstHybridDetection *d = &r->detections[i];
    GValue *rect = hyg_array_item (rects, i);
    g_value_set_float (hyg_array_item (rect, 0), d->x);
    g_value_set_float (hyg_array_item (rect, 1), d->y);
    g_value_set_float (hyg_array_item (rect, 2), d->w);
    g_value_set_float (hyg_array_item (rect, 3), d->h);
    hyg_set_pooled (hyg_array_item (labels, i), d->label);
    g_value_set_int (hyg_array_item (class_ids, i), d->class_id);
    g_value_set_float (hyg_array_item (values, i), d->score);
  }
}

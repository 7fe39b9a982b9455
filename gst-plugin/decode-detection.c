/*
 * decode-detection.c — output=detection: boxes above the threshold (their
 * class's own, from class-thresholds, or `threshold`), mapped from the
 * model input back to the frame.  The layouts (docs/ELEMENT.md):
 *  - one head (B, K, 6): per row [class_id, score, x1, y1, x2, y2];
 *  - three heads ids (B, K, 1), scores (B, K, 1), bboxes (B, K, 4): what
 *    GluonCV's SSD, YOLOv3 and Faster R-CNN exports return;
 *  - those three and masks (B, K, M, M): Mask R-CNN's (decode-masks.c);
 *  - one head (B, 4 + classes, N): YOLOv8's anchors, before NMS, which
 *    decode-yolov8.c runs (iou-threshold);
 *  - one head `output0` (B, N, 6), YOLOv8 exported with NMS in the graph:
 *    per row [x1, y1, x2, y2, score, class] (decode-yolov8.c tells it
 *    from the first layout by Ultralytics' name for it).
 * output=auto picks detection for any of them but YOLOv8's anchors, a
 * shape too common to guess from: output=detection (or the sidecar's)
 * asks for it.  Boxes are in model-input pixels (GluonCV's convention); a
 * MultiBoxDetection head gives its
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

#include "decode-masks.h"
#include "decode-yolov8.h"
#include "detection-classes.h"
#include "result-fields.h"
#include "result-pool.h"

/* (B, K, width) */
static gboolean
is_row_head (const hy_shape *s, gint64 batch, gint64 width)
{
  return s->ndim == 3 && s->dims[0] == batch && s->dims[2] == width;
}

/* (B, K, 1) as SSD, YOLOv3 and Faster R-CNN give ids and scores, or (B, K)
 * as CenterNet does. */
static gboolean
is_value_head (const hy_shape *s, gint64 batch)
{
  return is_row_head (s, batch, 1) || (s->ndim == 2 && s->dims[0] == batch);
}

/* One head (B, K, 6), or ids, scores and boxes (and masks) of K rows. */
static gboolean
claims (const hy_shape *shapes, guint n_heads, gint64 batch)
{
  if (n_heads == 1)
    return is_row_head (&shapes[0], batch, 6);
  return (n_heads == 3 || gst_hybrid_masks_head_fits (shapes, n_heads, batch))
      && is_value_head (&shapes[0], batch)
      && is_value_head (&shapes[1], batch)
      && is_row_head (&shapes[2], batch, 4)
      && shapes[0].dims[1] == shapes[1].dims[1]
      && shapes[0].dims[1] == shapes[2].dims[1];
}

/* What output=detection takes: those, or YOLOv8's head. */
static gboolean
fits (const hy_shape *shapes, guint n_heads, gint64 batch)
{
  return claims (shapes, n_heads, batch)
      || gst_hybrid_yolov8_head_fits (shapes, n_heads, batch);
}

static GQuark boxes_name;

static void
fields (void)
{
  boxes_name = g_quark_from_static_string ("boxes");
  gst_hybrid_masks_fields ();
}

/* What decode reads of the model, once per pool. */
typedef struct {
  /* corners in [0, 1] of the input (MultiBoxDetection), not pixels */
  gboolean boxes_normalized;
  gint mask_head;               /* the (1, K, M, M) masks head, or -1 */
  gboolean yolov8;              /* one (1, 4 + classes, N) head */
  gboolean yolov8_rows;         /* rows [x1, y1, x2, y2, score, class] */
} Heads;

/* Whether the first head comes straight from a _contrib_MultiBoxDetection
 * (MXNet's symbol-API SSD): its rows are [class_id, score, x1, y1, x2, y2]
 * as in the one-head layout, but the corners are fractions of the model
 * input, not input pixels. */
static gboolean
boxes_normalized (const hy_model *model)
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

/* A box, a label slot per row. */
static void
block (GstHybridResultPool *pool, const hy_model *model)
{
  Heads *heads = g_new0 (Heads, 1);
  heads->yolov8 = !claims (pool->shapes, pool->n_heads, pool->batch)
      && gst_hybrid_yolov8_head_fits (pool->shapes, pool->n_heads,
      pool->batch);
  if (heads->yolov8)
    pool->max_detections = (guint) pool->shapes[0].dims[2];
  else if (pool->n_heads >= 1 && pool->layout[0].ndim >= 2)
    pool->max_detections = (guint) pool->layout[0].dims[1];
  pool->n_label_slots = pool->max_detections;
  heads->boxes_normalized = boxes_normalized (model);
  heads->yolov8_rows = gst_hybrid_yolov8_rows_fit (model, pool->shapes,
      pool->n_heads, pool->batch);
  heads->mask_head = gst_hybrid_masks_head_fits (pool->shapes, pool->n_heads,
      pool->batch) ? 3 : -1;
  pool->decoder_data = heads;
  pool->decoder_data_free = g_free;
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

static void
decode (GstHybridResult *r, const GstHybridResultSpec *spec)
{
  const GstHybridResultPool *pool = r->pool;
  const Heads *heads = pool->decoder_data;
  GstStructure *s = r->results;
  const gfloat *ids, *scores, *boxes;
  gsize stride, box_stride;
  guint k_rows = pool->max_detections;
  /* Three heads (ids and scores (B, K, 1) or (B, K), boxes (B, K, 4)), or
   * one (B, K, 6): the layouts above. */
  if (pool->n_heads >= 3) {
    ids = r->tensors[0].data;
    scores = r->tensors[1].data;
    boxes = r->tensors[2].data;
    stride = 1;
    box_stride = 4;
  } else if (heads->yolov8_rows) {
    boxes = r->tensors[0].data;
    scores = boxes + 4;
    ids = boxes + 5;
    stride = box_stride = 6;
  } else {
    ids = r->tensors[0].data;
    scores = ids + 1;
    boxes = ids + 2;
    stride = box_stride = 6;
  }
  const hy_frame_config *pc = hy_frame_plan_config (spec->plan);
  gfloat fw = (gfloat) pc->src_width, fh = (gfloat) pc->src_height;
  gfloat sx = 1.0f, sy = 1.0f;
  if (heads->boxes_normalized) {
    sx = (gfloat) pc->dst_width;
    sy = (gfloat) pc->dst_height;
  }
  if (heads->yolov8) {
    /* Kept boxes come back in place, corners in input pixels. */
    const hy_shape *hs = &pool->shapes[0];
    guint n = gst_hybrid_yolov8_decode (r->tensors[0].data, hs->dims[1] - 4,
        hs->dims[2], spec, r->detections);
    for (guint i = 0; i < n; i++) {
      GstHybridDetection *d = &r->detections[i];
      gfloat b[4] = { d->x, d->y, d->w, d->h };
      gfloat x1, y1, x2, y2;
      hy_frame_plan_to_frame (spec->plan, b[0], b[1], &x1, &y1);
      hy_frame_plan_to_frame (spec->plan, b[2], b[3], &x2, &y2);
      x1 = CLAMP (x1, 0.0f, fw);
      x2 = CLAMP (x2, x1, fw);
      y1 = CLAMP (y1, 0.0f, fh);
      y2 = CLAMP (y2, y1, fh);
      d->x = x1 + spec->origin_x;
      d->y = y1 + spec->origin_y;
      d->w = x2 - x1;
      d->h = y2 - y1;
      d->label = gst_hybrid_result_label (r, i, d->class_id);
      d->mask_w = d->mask_h = 0;
    }
    r->n_detections = n;
  }
  /* YOLOv8's anchors are read above, not as rows */
  guint rows_read = heads->yolov8 ? 0 : k_rows;
  for (guint k = 0; k < rows_read; k++) {
    gfloat id = ids[k * stride], score = scores[k * stride];
    const gfloat *b = boxes + k * box_stride;
    if (!row_is_detection (id, score, b))
      continue;
    /* the NMS export pads its rows with zeros: none is a detection, even
     * at threshold 0 */
    if (heads->yolov8_rows && score == 0.0f && id == 0.0f && b[0] == 0.0f
        && b[1] == 0.0f && b[2] == 0.0f && b[3] == 0.0f)
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
  g_value_set_int (hyg_field (s, hyg_names.count, G_TYPE_INT), (gint) n);
  hyg_array_fit (hyg_field (s, hyg_names.labels, GST_TYPE_ARRAY), n,
      G_TYPE_STRING, k_rows);
  hyg_array_fit (hyg_field (s, hyg_names.class_ids, GST_TYPE_ARRAY), n,
      G_TYPE_INT, k_rows);
  hyg_array_fit (hyg_field (s, hyg_names.scores, GST_TYPE_ARRAY), n,
      G_TYPE_FLOAT, k_rows);
  hyg_array_fit (hyg_field (s, boxes_name, GST_TYPE_ARRAY), n,
      GST_TYPE_ARRAY, k_rows);
  GValue *labels = hyg_field (s, hyg_names.labels, GST_TYPE_ARRAY);
  GValue *class_ids = hyg_field (s, hyg_names.class_ids, GST_TYPE_ARRAY);
  GValue *values = hyg_field (s, hyg_names.scores, GST_TYPE_ARRAY);
  GValue *rects = hyg_field (s, boxes_name, GST_TYPE_ARRAY);
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
  if (heads->mask_head >= 0)
    gst_hybrid_decode_masks (r, spec, (guint) heads->mask_head);
}

const GstHybridDecoder gst_hybrid_decoder_detection = {
  .nick = "detection",
  .description = "Boxes: (B,K,6), ids/scores/bboxes heads, or YOLOv8's "
      "(B,4+classes,N)",
  .sidecar = HY_SIDECAR_OUTPUT_DETECTION,
  .fits = fits,
  .fits_needs = "one head (B, K, 6) or three heads (B, K, 1), (B, K, 1), "
      "(B, K, 4) (ids and scores may be (B, K)), and optionally a "
      "fourth (B, K, M, M) of masks, or one (B, 4 + classes, N) "
      "(YOLOv8's, decoded with NMS)",
  .claims = claims,
  .classes_in_graph = gst_hybrid_detection_classes,
  .fields = fields,
  .block = block,
  .decode = decode,
};

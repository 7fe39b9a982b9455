/*
 * decode.c — which interpretation the heads get, and a frame's result:
 * its tensors copied, the frame's fields, then the interpretation
 * (decode-classification.c, decode-detection.c, decode-raw.c).
 *
 * Detection layouts (docs/ELEMENT.md):
 *  - one head (B, K, 6): per row [class_id, score, x1, y1, x2, y2];
 *  - three heads ids (B, K, 1), scores (B, K, 1), bboxes (B, K, 4): what
 *    GluonCV's SSD, YOLOv3 and Faster R-CNN exports return;
 *  - those three and masks (B, K, M, M): Mask R-CNN's (decode-masks.c).
 * Boxes are in model-input pixels (GluonCV's convention), or fractions of
 * the input from a MultiBoxDetection head (decode-detection.c); a negative
 * class id marks an empty row (GluonCV pads with -1).
 */
#include <string.h>

#include "decode.h"
#include "result-fields.h"
#include "result-pool.h"

static gboolean
is_detection_row_head (const hy_shape *s, gint64 batch, gint64 width)
{
  return s->ndim == 3 && s->dims[0] == batch && s->dims[2] == width;
}

/* (B, K, 1) as SSD, YOLOv3 and Faster R-CNN give ids and scores, or (B, K)
 * as CenterNet does. */
static gboolean
is_detection_value_head (const hy_shape *s, gint64 batch)
{
  return is_detection_row_head (s, batch, 1)
      || (s->ndim == 2 && s->dims[0] == batch);
}

static gboolean
fits_detection (const hy_shape *shapes, guint n_heads, gint64 batch)
{
  if (n_heads == 1)
    return is_detection_row_head (&shapes[0], batch, 6);
  return (n_heads == 3 || gst_hybrid_masks_head_fits (shapes, n_heads, batch))
      && is_detection_value_head (&shapes[0], batch)
      && is_detection_value_head (&shapes[1], batch)
      && is_detection_row_head (&shapes[2], batch, 4)
      && shapes[0].dims[1] == shapes[1].dims[1]
      && shapes[0].dims[1] == shapes[2].dims[1];
}

/* (B, K) or (B, K, 1, …, 1). */
static gboolean
looks_like_classes (const hy_shape *s, gint64 batch)
{
  if (s->ndim < 2 || s->dims[0] != batch)
    return FALSE;
  for (int d = 2; d < s->ndim; d++)
    if (s->dims[d] != 1)
      return FALSE;
  return TRUE;
}

const gchar *
gst_hybrid_output_name (GstHybridOutput output)
{
  switch (output) {
    case GST_HYBRID_OUTPUT_CLASSIFICATION:
      return "classification";
    case GST_HYBRID_OUTPUT_DETECTION:
      return "detection";
    case GST_HYBRID_OUTPUT_RAW:
      return "raw";
    case GST_HYBRID_OUTPUT_SEGMENTATION:
      return "segmentation";
    case GST_HYBRID_OUTPUT_POSE:
      return "pose";
    default:
      return "auto";
  }
}

static gchar *
format_shapes (const hy_shape *shapes, guint n)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < n; i++) {
    char buf[HY_SHAPE_STRLEN];
    g_string_append_printf (s, "%s%s", i ? ", " : "",
        hy_shape_format (&shapes[i], buf, sizeof buf));
  }
  return g_string_free (s, FALSE);
}

gboolean
gst_hybrid_output_resolve (GstHybridOutput requested, const hy_shape *shapes,
    guint n_heads, gint64 batch, GstHybridOutput *resolved, GError **error)
{
  gboolean ok = TRUE;
  const char *expected = NULL;
  switch (requested) {
    case GST_HYBRID_OUTPUT_AUTO:
      if (fits_detection (shapes, n_heads, batch))
        *resolved = GST_HYBRID_OUTPUT_DETECTION;
      else if (n_heads == 1 && looks_like_classes (&shapes[0], batch))
        *resolved = GST_HYBRID_OUTPUT_CLASSIFICATION;
      else
        *resolved = GST_HYBRID_OUTPUT_RAW;
      return TRUE;
    case GST_HYBRID_OUTPUT_CLASSIFICATION:
      ok = n_heads >= 1 && shapes[0].ndim >= 1 && shapes[0].dims[0] == batch;
      expected = "a first head whose first dimension is the batch";
      break;
    case GST_HYBRID_OUTPUT_SEGMENTATION:
      ok = n_heads >= 1 && shapes[0].ndim == 4 && shapes[0].dims[0] == batch;
      expected = "a first head (B, C, H, W): C class scores per pixel";
      break;
    case GST_HYBRID_OUTPUT_POSE:
      ok = n_heads >= 1 && shapes[0].ndim == 4 && shapes[0].dims[0] == batch;
      expected = "a first head (B, K, H, W): one heatmap per keypoint";
      break;
    case GST_HYBRID_OUTPUT_DETECTION:
      ok = fits_detection (shapes, n_heads, batch);
      expected = "one head (B, K, 6) or three heads (B, K, 1), (B, K, 1), "
          "(B, K, 4) (ids and scores may be (B, K)), and optionally a "
          "fourth (B, K, M, M) of masks";
      break;
    default:
      break;
  }
  if (!ok) {
    gchar *got = format_shapes (shapes, n_heads);
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "output=%s needs %s (B = batch-size = %" G_GINT64_FORMAT
        "); the model's heads are %s", gst_hybrid_output_name (requested),
        expected, batch, got);
    g_free (got);
    return FALSE;
  }
  *resolved = requested;
  return TRUE;
}


/* ---- the result ------------------------------------------------------ */

/* Copies this slot's part of every head into the block. */
static void
copy_tensors (GstHybridResult *r, const hy_executor *exec, gint64 batch,
    gint64 slot)
{
  for (guint i = 0; i < r->pool->n_heads; i++) {
    const hy_tensor *t = hy_executor_output (exec, (int) i);
    GstHybridTensor *out = &r->tensors[i];
    gsize offset = 0;
    if (batch > 1 && t && t->shape.ndim >= 1 && t->shape.dims[0] == batch)
      offset = (gsize) slot * out->n_elements;
    if (out->n_elements)
      memcpy ((gfloat *) out->data, t->data + offset,
          out->n_elements * sizeof (gfloat));
  }
}

GstHybridResult *
gst_hybrid_result_new (GstHybridResultPool *pool, const hy_executor *exec,
    gint64 slot, const GstHybridResultFrame *frame,
    const GstHybridResultSpec *spec)
{
  GstHybridResult *r = gst_hybrid_result_pool_acquire (pool);
  r->frame_number = frame->frame_number;
  r->n_detections = 0;
  copy_tensors (r, exec, pool->batch, slot);

  if (!r->results)
    r->results = gst_structure_new_id_empty (hyg_names.hybridinfer);
  GstStructure *s = r->results;
  g_value_set_uint64 (hyg_field (s, hyg_names.frame_number, G_TYPE_UINT64),
      frame->frame_number);
  g_value_set_uint64 (hyg_field (s, hyg_names.timestamp, G_TYPE_UINT64),
      frame->timestamp);
  g_value_set_uint64 (hyg_field (s, hyg_names.running_time, G_TYPE_UINT64),
      frame->running_time);
  g_value_set_double (hyg_field (s, hyg_names.latency_us, G_TYPE_DOUBLE),
      frame->latency_us);
  hyg_set_interned (hyg_field (s, hyg_names.mode, G_TYPE_STRING),
      frame->mode == HY_MODE_HYBRID ? hyg_names.hybrid : hyg_names.imperative);
  switch (pool->output) {
    case GST_HYBRID_OUTPUT_CLASSIFICATION:
      gst_hybrid_decode_classification (r, spec);
      break;
    case GST_HYBRID_OUTPUT_DETECTION:
      gst_hybrid_decode_detection (r, spec);
      if (pool->mask_head >= 0)
        gst_hybrid_decode_masks (r, spec);
      break;
    case GST_HYBRID_OUTPUT_SEGMENTATION:
      gst_hybrid_decode_segmentation (r, spec);
      break;
    case GST_HYBRID_OUTPUT_POSE:
      gst_hybrid_decode_pose (r, spec);
      break;
    default:
      gst_hybrid_decode_raw (r);
      break;
  }
  return r;
}

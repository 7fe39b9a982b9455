/*
 * gsthybridresult.c — reading a forward's outputs into a shared result.
 *
 * Detection layouts (docs/ELEMENT.md):
 *  - one head (B, K, 6): per row [class_id, score, x1, y1, x2, y2];
 *  - three heads ids (B, K, 1), scores (B, K, 1), bboxes (B, K, 4): what
 *    GluonCV's SSD, YOLOv3 and Faster R-CNN exports return.
 * Boxes are in model-input pixels (GluonCV's convention); a negative class
 * id marks an empty row (GluonCV pads with -1).
 */
#include <string.h>

#include "gsthybridresult.h"

static gboolean
is_detection_row_head (const hy_shape *s, gint64 batch, gint64 width)
{
  return s->ndim == 3 && s->dims[0] == batch && s->dims[2] == width;
}

static gboolean
fits_detection (const hy_shape *shapes, guint n_heads, gint64 batch)
{
  if (n_heads == 1)
    return is_detection_row_head (&shapes[0], batch, 6);
  return n_heads == 3 && is_detection_row_head (&shapes[0], batch, 1)
      && is_detection_row_head (&shapes[1], batch, 1)
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
    case GST_HYBRID_OUTPUT_DETECTION:
      ok = fits_detection (shapes, n_heads, batch);
      expected = "one head (B, K, 6) or three heads (B, K, 1), (B, K, 1), "
          "(B, K, 4)";
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

/* ---- the result --------------------------------------------------------- */

static void
result_clear (gpointer data)
{
  GstHybridResult *r = data;
  for (guint i = 0; i < r->n_tensors; i++)
    g_free ((gchar *) r->tensors[i].name);
  if (r->n_tensors)
    g_free ((gfloat *) r->tensors[0].data);
  g_free (r->tensors);
  g_free (r->detections);
  if (r->results)
    gst_structure_free (r->results);
}

GstHybridResult *
gst_hybrid_result_ref (GstHybridResult *result)
{
  return g_atomic_rc_box_acquire (result);
}

void
gst_hybrid_result_unref (GstHybridResult *result)
{
  g_atomic_rc_box_release_full (result, result_clear);
}

/* Copies this slot's part of every head into one block. */
static void
copy_tensors (GstHybridResult *r, const hy_executor *exec,
    const hy_model *model, gint64 batch, gint64 slot)
{
  guint n = (guint) hy_executor_n_outputs (exec);
  gsize total = 0;
  r->n_tensors = n;
  r->tensors = g_new0 (GstHybridTensor, n);
  for (guint i = 0; i < n; i++) {
    const hy_tensor *t = hy_executor_output (exec, (int) i);
    GstHybridTensor *out = &r->tensors[i];
    gint64 numel = t ? hy_shape_numel (&t->shape) : 0;
    out->name = g_strdup (hy_model_output_name (model, (int) i));
    out->ndim = t ? t->shape.ndim : 0;
    for (int d = 0; d < out->ndim; d++)
      out->dims[d] = t->shape.dims[d];
    /* Heads batched along the first dimension are sliced to this frame. */
    if (batch > 1 && out->ndim >= 1 && out->dims[0] == batch) {
      out->dims[0] = 1;
      numel /= batch;
    }
    out->n_elements = (gsize) numel;
    total += (gsize) numel;
  }
  gfloat *data = g_new (gfloat, MAX (total, 1));
  for (guint i = 0; i < n; i++) {
    const hy_tensor *t = hy_executor_output (exec, (int) i);
    GstHybridTensor *out = &r->tensors[i];
    gsize offset = 0;
    if (batch > 1 && t && t->shape.ndim >= 1 && t->shape.dims[0] == batch)
      offset = (gsize) slot * out->n_elements;
    if (out->n_elements)
      memcpy (data, t->data + offset, out->n_elements * sizeof (gfloat));
    out->data = data;
    data += out->n_elements;
  }
}

static const gchar *
label_for (const GstHybridResultSpec *spec, gint id)
{
  if (spec->labels && id >= 0 && (guint) id < spec->n_labels)
    return g_intern_string (spec->labels[id]);
  gchar *name = g_strdup_printf ("class-%d", id);
  const gchar *interned = g_intern_string (name);
  g_free (name);
  return interned;
}

static void
array_append (GValue *array, GType type, gconstpointer value)
{
  GValue v = G_VALUE_INIT;
  g_value_init (&v, type);
  if (type == G_TYPE_STRING)
    g_value_set_string (&v, value);
  else if (type == G_TYPE_INT)
    g_value_set_int (&v, *(const gint *) value);
  else
    g_value_set_float (&v, *(const gfloat *) value);
  gst_value_array_append_and_take_value (array, &v);
}

static GValue
array_new (void)
{
  GValue a = G_VALUE_INIT;
  g_value_init (&a, GST_TYPE_ARRAY);
  return a;
}

/* The k best of n scores, best first; ties keep the lower class first.
 * Insertion into a sorted list of k: O(n k) at worst, with k small. */
static gint
top_k (const gfloat *scores, gint n, gint k, gint *best)
{
  gint filled = 0;
  for (gint i = 0; i < n; i++) {
    if (filled == k && !(scores[i] > scores[best[k - 1]]))
      continue;
    gint at = filled < k ? filled++ : k - 1;
    while (at > 0 && scores[i] > scores[best[at - 1]]) {
      best[at] = best[at - 1];
      at--;
    }
    best[at] = i;
  }
  return filled;
}

static void
classify (GstHybridResult *r, const GstHybridResultSpec *spec)
{
  const GstHybridTensor *head = &r->tensors[0];
  const gfloat *scores = head->data;
  gint n = (gint) head->n_elements;
  gint *taken = g_new (gint, MAX (spec->top_k, 1));
  gint k = top_k (scores, n, (gint) MAX (spec->top_k, 1), taken);
  GValue labels = array_new (), ids = array_new (), values = array_new ();
  for (gint j = 0; j < k; j++) {
    array_append (&labels, G_TYPE_STRING, label_for (spec, taken[j]));
    array_append (&ids, G_TYPE_INT, &taken[j]);
    array_append (&values, G_TYPE_FLOAT, &scores[taken[j]]);
  }
  gst_structure_set (r->results, "type", G_TYPE_STRING, "classification",
      NULL);
  if (k > 0)
    gst_structure_set (r->results,
        "label", G_TYPE_STRING, label_for (spec, taken[0]),
        "class-id", G_TYPE_INT, taken[0],
        "score", G_TYPE_FLOAT, scores[taken[0]], NULL);
  gst_structure_take_value (r->results, "labels", &labels);
  gst_structure_take_value (r->results, "class-ids", &ids);
  gst_structure_take_value (r->results, "scores", &values);
  g_free (taken);
}

static void
detect (GstHybridResult *r, const GstHybridResultSpec *spec)
{
  const gfloat *ids, *scores, *boxes;
  gsize stride, box_stride;
  gint64 k_rows = r->tensors[0].dims[1];
  if (r->n_tensors >= 3 && r->tensors[0].dims[2] == 1) {
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
  const hy_preprocess_config *pc = hy_preprocess_get_config (spec->pp);
  gfloat fw = (gfloat) pc->src_width, fh = (gfloat) pc->src_height;
  r->detections = g_new0 (GstHybridDetection, MAX (k_rows, 1));
  GValue labels = array_new (), class_ids = array_new (),
      values = array_new (), rects = array_new ();
  for (gint64 k = 0; k < k_rows; k++) {
    gfloat id = ids[k * stride], score = scores[k * stride];
    const gfloat *b = boxes + k * box_stride;
    if (!(id >= 0.0f) || !(score >= spec->threshold))
      continue;
    gfloat x1, y1, x2, y2;
    hy_preprocess_to_frame (spec->pp, b[0], b[1], &x1, &y1);
    hy_preprocess_to_frame (spec->pp, b[2], b[3], &x2, &y2);
    x1 = CLAMP (x1, 0.0f, fw);
    x2 = CLAMP (x2, x1, fw);
    y1 = CLAMP (y1, 0.0f, fh);
    y2 = CLAMP (y2, y1, fh);
    GstHybridDetection *d = &r->detections[r->n_detections++];
    d->class_id = (gint) (id + 0.5f);
    d->score = score;
    d->x = x1;
    d->y = y1;
    d->w = x2 - x1;
    d->h = y2 - y1;
    d->label = label_for (spec, d->class_id);

    GValue rect = array_new ();
    array_append (&rect, G_TYPE_FLOAT, &d->x);
    array_append (&rect, G_TYPE_FLOAT, &d->y);
    array_append (&rect, G_TYPE_FLOAT, &d->w);
    array_append (&rect, G_TYPE_FLOAT, &d->h);
    gst_value_array_append_and_take_value (&rects, &rect);
    array_append (&labels, G_TYPE_STRING, d->label);
    array_append (&class_ids, G_TYPE_INT, &d->class_id);
    array_append (&values, G_TYPE_FLOAT, &d->score);
  }
  gst_structure_set (r->results, "type", G_TYPE_STRING, "detection",
      "count", G_TYPE_INT, (gint) r->n_detections, NULL);
  gst_structure_take_value (r->results, "labels", &labels);
  gst_structure_take_value (r->results, "class-ids", &class_ids);
  gst_structure_take_value (r->results, "scores", &values);
  gst_structure_take_value (r->results, "boxes", &rects);
}

/* Raw output: the heads' names and shapes; the values are in the meta. */
static void
describe (GstHybridResult *r)
{
  GValue outputs = array_new ();
  for (guint i = 0; i < r->n_tensors; i++) {
    const GstHybridTensor *t = &r->tensors[i];
    hy_shape s = { .ndim = t->ndim };
    char buf[HY_SHAPE_STRLEN];
    memcpy (s.dims, t->dims, sizeof s.dims);
    gchar *text = g_strdup_printf ("%s %s", t->name,
        hy_shape_format (&s, buf, sizeof buf));
    array_append (&outputs, G_TYPE_STRING, text);
    g_free (text);
  }
  gst_structure_set (r->results, "type", G_TYPE_STRING, "raw", NULL);
  gst_structure_take_value (r->results, "outputs", &outputs);
}

GstHybridResult *
gst_hybrid_result_new (const hy_executor *exec, const hy_model *model,
    gint64 batch, gint64 slot, guint64 frame_number,
    const GstHybridResultSpec *spec, GstStructure *results)
{
  GstHybridResult *r = g_atomic_rc_box_new0 (GstHybridResult);
  r->frame_number = frame_number;
  copy_tensors (r, exec, model, batch, slot);
  r->results = results;
  switch (spec->output) {
    case GST_HYBRID_OUTPUT_CLASSIFICATION:
      classify (r, spec);
      break;
    case GST_HYBRID_OUTPUT_DETECTION:
      detect (r, spec);
      break;
    default:
      describe (r);
      break;
  }
  return r;
}

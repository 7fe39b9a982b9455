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

/* ---- the pool ----------------------------------------------------------- */

struct _GstHybridResultPool {
  gint refcount;                /* atomic: the owner and every block */
  GMutex lock;                  /* free, closed */
  GstHybridResult *free;
  gboolean closed;
  gint n_blocks;                /* atomic */

  /* what every block looks like */
  gint64 batch;
  GstHybridOutput output;
  guint n_tensors;
  hy_shape *shapes;             /* the executor's outputs (batched) */
  GstHybridTensor *layout;      /* per frame: names, dims, sizes; no data */
  gchar **names;
  gsize n_floats;
  guint max_detections;
  gsize block_size, tensors_at, detections_at, data_at;

  const gchar **labels;         /* interned */
  guint n_labels;
  const gchar **outputs;        /* raw: "name (shape)" per head, interned */
  GstStructure *detection_param;        /* the ROI parameter's template */
};

/* Field names and fixed strings, as quarks and interned strings: setting
 * them costs a lookup, never a copy. */
static struct {
  GQuark hybridinfer, frame_number, timestamp, running_time, latency_us,
      mode, type, label, class_id, score, labels, class_ids, scores, count,
      boxes, outputs, detection, confidence;
  const gchar *hybrid, *imperative, *classification, *detection_type, *raw,
      *empty;
} names;

static void
names_init (void)
{
  static gsize done = 0;
  if (!g_once_init_enter (&done))
    return;
  names.hybridinfer = g_quark_from_static_string ("hybridinfer");
  names.frame_number = g_quark_from_static_string ("frame-number");
  names.timestamp = g_quark_from_static_string ("timestamp");
  names.running_time = g_quark_from_static_string ("running-time");
  names.latency_us = g_quark_from_static_string ("latency-us");
  names.mode = g_quark_from_static_string ("mode");
  names.type = g_quark_from_static_string ("type");
  names.label = g_quark_from_static_string ("label");
  names.class_id = g_quark_from_static_string ("class-id");
  names.score = g_quark_from_static_string ("score");
  names.labels = g_quark_from_static_string ("labels");
  names.class_ids = g_quark_from_static_string ("class-ids");
  names.scores = g_quark_from_static_string ("scores");
  names.count = g_quark_from_static_string ("count");
  names.boxes = g_quark_from_static_string ("boxes");
  names.outputs = g_quark_from_static_string ("outputs");
  names.detection = g_quark_from_static_string ("detection");
  names.confidence = g_quark_from_static_string ("confidence");
  names.hybrid = g_intern_static_string ("hybrid");
  names.imperative = g_intern_static_string ("imperative");
  names.classification = g_intern_static_string ("classification");
  names.detection_type = g_intern_static_string ("detection");
  names.raw = g_intern_static_string ("raw");
  names.empty = g_intern_static_string ("");
  g_once_init_leave (&done, 1);
}

/* ---- fields set in place ------------------------------------------------- */

/* A block's structure is built by its first result and refilled by every
 * later one: setting a field that exists overwrites its value where it
 * is, and strings are interned (a GValue holding an interned string is
 * copied by pointer), so a refill allocates nothing.  Fields first set in
 * the order of docs/ELEMENT.md keep that order. */

static GValue *
field (GstStructure *s, GQuark name, GType type)
{
  GValue *v = (GValue *) gst_structure_id_get_value (s, name);
  if (!v || G_VALUE_TYPE (v) != type) {
    GValue init = G_VALUE_INIT;
    g_value_init (&init, type);
    gst_structure_id_take_value (s, name, &init);
    v = (GValue *) gst_structure_id_get_value (s, name);
  }
  return v;
}

static void
set_interned (GValue *v, const gchar *interned)
{
  g_value_set_interned_string (v, interned);
}

/* Makes `array` hold n values of `type` (arrays: of 4 floats), keeping
 * the ones it has.  GStreamer has no way to remove values from an array:
 * a longer one is replaced, with room for `room`. */
static void
array_fit (GValue *array, guint n, GType type, guint room)
{
  guint len = gst_value_array_get_size (array);
  if (len > n) {
    g_value_unset (array);
    gst_value_array_init (array, MAX (n, room));
    len = 0;
  }
  for (; len < n; len++) {
    GValue v = G_VALUE_INIT;
    if (type == GST_TYPE_ARRAY) {
      gst_value_array_init (&v, 4);
      array_fit (&v, 4, G_TYPE_FLOAT, 4);
    } else {
      g_value_init (&v, type);
      if (type == G_TYPE_STRING)
        set_interned (&v, names.empty);
    }
    gst_value_array_append_and_take_value (array, &v);
  }
}

static GValue *
item (const GValue *array, guint i)
{
  return (GValue *) gst_value_array_get_value (array, i);
}

/* ---- blocks -------------------------------------------------------------- */

static GstHybridResultPool *
pool_ref (GstHybridResultPool *pool)
{
  g_atomic_int_inc (&pool->refcount);
  return pool;
}

static void
pool_unref (GstHybridResultPool *pool)
{
  if (!g_atomic_int_dec_and_test (&pool->refcount))
    return;
  g_mutex_clear (&pool->lock);
  g_strfreev (pool->names);
  g_free (pool->shapes);
  g_free (pool->layout);
  g_free (pool->labels);
  g_free (pool->outputs);
  gst_structure_free (pool->detection_param);
  g_free (pool);
}

GstHybridResultPool *
gst_hybrid_result_pool_new (const hy_executor *exec, const hy_model *model,
    gint64 batch, const GstHybridResultSpec *spec)
{
  GstHybridResultPool *pool = g_new0 (GstHybridResultPool, 1);
  guint n = (guint) hy_executor_n_outputs (exec);

  names_init ();
  pool->refcount = 1;
  g_mutex_init (&pool->lock);
  pool->batch = batch;
  pool->output = spec->output;
  pool->n_tensors = n;
  pool->shapes = g_new0 (hy_shape, MAX (n, 1));
  pool->layout = g_new0 (GstHybridTensor, MAX (n, 1));
  pool->names = g_new0 (gchar *, n + 1);
  pool->outputs = g_new0 (const gchar *, MAX (n, 1));
  for (guint i = 0; i < n; i++) {
    const hy_tensor *t = hy_executor_output (exec, (int) i);
    GstHybridTensor *out = &pool->layout[i];
    gint64 numel = t ? hy_shape_numel (&t->shape) : 0;
    pool->shapes[i] = t ? t->shape : (hy_shape) { .ndim = -1 };
    pool->names[i] = g_strdup (hy_model_output_name (model, (int) i));
    out->name = pool->names[i];
    out->ndim = t ? t->shape.ndim : 0;
    for (int d = 0; d < out->ndim; d++)
      out->dims[d] = t->shape.dims[d];
    /* Heads batched along the first dimension are sliced to this frame. */
    if (batch > 1 && out->ndim >= 1 && out->dims[0] == batch) {
      out->dims[0] = 1;
      numel /= batch;
    }
    out->n_elements = (gsize) numel;
    pool->n_floats += (gsize) numel;

    if (spec->output == GST_HYBRID_OUTPUT_RAW) {
      hy_shape s = { .ndim = out->ndim };
      char buf[HY_SHAPE_STRLEN];
      memcpy (s.dims, out->dims, sizeof s.dims);
      gchar *text = g_strdup_printf ("%s %s", out->name,
          hy_shape_format (&s, buf, sizeof buf));
      pool->outputs[i] = g_intern_string (text);
      g_free (text);
    }
  }
  if (spec->output == GST_HYBRID_OUTPUT_DETECTION && n >= 1
      && pool->layout[0].ndim >= 2)
    pool->max_detections = (guint) pool->layout[0].dims[1];

  pool->n_labels = spec->labels ? spec->n_labels : 0;
  pool->labels = g_new0 (const gchar *, MAX (pool->n_labels, 1));
  for (guint i = 0; i < pool->n_labels; i++)
    pool->labels[i] = g_intern_string (spec->labels[i]);

  GstStructure *p = gst_structure_new_id_empty (names.detection);
  set_interned (field (p, names.label, G_TYPE_STRING), names.empty);
  g_value_set_int (field (p, names.class_id, G_TYPE_INT), 0);
  g_value_set_double (field (p, names.confidence, G_TYPE_DOUBLE), 0.0);
  pool->detection_param = p;

  /* one block: the result, its tensors, its detections, then the data */
  pool->tensors_at = GST_ROUND_UP_N (sizeof (GstHybridResult), 16);
  pool->detections_at = GST_ROUND_UP_N (pool->tensors_at
      + n * sizeof (GstHybridTensor), 16);
  pool->data_at = GST_ROUND_UP_N (pool->detections_at
      + MAX (pool->max_detections, 1) * sizeof (GstHybridDetection),
      16);
  pool->block_size = pool->data_at + MAX (pool->n_floats, 1)
      * sizeof (gfloat);
  return pool;
}

gboolean
gst_hybrid_result_pool_fits (const GstHybridResultPool *pool,
    const hy_executor *exec, gint64 batch)
{
  if (batch != pool->batch
      || (guint) hy_executor_n_outputs (exec) != pool->n_tensors)
    return FALSE;
  for (guint i = 0; i < pool->n_tensors; i++) {
    const hy_tensor *t = hy_executor_output (exec, (int) i);
    if (t ? !hy_shape_equal (&t->shape, &pool->shapes[i])
        : pool->shapes[i].ndim != -1)
      return FALSE;
  }
  return TRUE;
}

guint
gst_hybrid_result_pool_n_blocks (GstHybridResultPool *pool)
{
  return (guint) g_atomic_int_get (&pool->n_blocks);
}

static GstHybridResult *
block_new (GstHybridResultPool *pool)
{
  guint8 *mem = g_malloc0 (pool->block_size);
  GstHybridResult *r = (GstHybridResult *) mem;
  gfloat *data = (gfloat *) (mem + pool->data_at);
  r->pool = pool_ref (pool);
  r->n_tensors = pool->n_tensors;
  r->tensors = (GstHybridTensor *) (mem + pool->tensors_at);
  r->detections = (GstHybridDetection *) (mem + pool->detections_at);
  for (guint i = 0; i < pool->n_tensors; i++) {
    r->tensors[i] = pool->layout[i];
    r->tensors[i].data = data;
    data += pool->layout[i].n_elements;
  }
  return r;
}

static void
block_free (GstHybridResult *r)
{
  GstHybridResultPool *pool = r->pool;
  if (r->results)
    gst_structure_free (r->results);
  g_free (r);
  pool_unref (pool);
}

static GstHybridResult *
pool_acquire (GstHybridResultPool *pool)
{
  g_mutex_lock (&pool->lock);
  GstHybridResult *r = pool->free;
  if (r)
    pool->free = r->next_free;
  g_mutex_unlock (&pool->lock);
  if (!r) {
    r = block_new (pool);
    g_atomic_int_inc (&pool->n_blocks);
  }
  r->next_free = NULL;
  r->refcount = 1;
  return r;
}

/* The last reference went: back to the pool, or freed once it is closed. */
static void
pool_return (GstHybridResult *r)
{
  GstHybridResultPool *pool = r->pool;
  g_mutex_lock (&pool->lock);
  if (!pool->closed) {
    r->next_free = pool->free;
    pool->free = r;
    g_mutex_unlock (&pool->lock);
    return;
  }
  g_mutex_unlock (&pool->lock);
  g_atomic_int_add (&pool->n_blocks, -1);
  block_free (r);
}

void
gst_hybrid_result_pool_close (GstHybridResultPool *pool)
{
  g_mutex_lock (&pool->lock);
  GstHybridResult *r = pool->free;
  pool->free = NULL;
  pool->closed = TRUE;
  g_mutex_unlock (&pool->lock);
  while (r) {
    GstHybridResult *next = r->next_free;
    g_atomic_int_add (&pool->n_blocks, -1);
    block_free (r);
    r = next;
  }
  pool_unref (pool);
}

GstHybridResult *
gst_hybrid_result_ref (GstHybridResult *result)
{
  g_atomic_int_inc (&result->refcount);
  return result;
}

void
gst_hybrid_result_unref (GstHybridResult *result)
{
  if (g_atomic_int_dec_and_test (&result->refcount))
    pool_return (result);
}

/* ---- the result ----------------------------------------------------------- */

/* Copies this slot's part of every head into the block. */
static void
copy_tensors (GstHybridResult *r, const hy_executor *exec, gint64 batch,
    gint64 slot)
{
  for (guint i = 0; i < r->n_tensors; i++) {
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

/* Interned: lives as long as the process. */
static const gchar *
label_for (const GstHybridResultPool *pool, gint id)
{
  if (id >= 0 && (guint) id < pool->n_labels)
    return pool->labels[id];
  gchar name[32];
  g_snprintf (name, sizeof name, "class-%d", id);
  return g_intern_string (name);
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
  const GstHybridResultPool *pool = r->pool;
  GstStructure *s = r->results;
  const GstHybridTensor *head = &r->tensors[0];
  const gfloat *scores = head->data;
  gint n = (gint) head->n_elements;
  gint taken[GST_HYBRID_MAX_TOP_K];
  gint k = top_k (scores, n,
      (gint) CLAMP (spec->top_k, 1, GST_HYBRID_MAX_TOP_K), taken);
  set_interned (field (s, names.type, G_TYPE_STRING), names.classification);
  if (k > 0) {
    set_interned (field (s, names.label, G_TYPE_STRING),
        label_for (pool, taken[0]));
    g_value_set_int (field (s, names.class_id, G_TYPE_INT), taken[0]);
    g_value_set_float (field (s, names.score, G_TYPE_FLOAT),
        scores[taken[0]]);
  }
  /* (a field added may move the others: pointers once all are there) */
  array_fit (field (s, names.labels, GST_TYPE_ARRAY), (guint) k,
      G_TYPE_STRING, (guint) k);
  array_fit (field (s, names.class_ids, GST_TYPE_ARRAY), (guint) k,
      G_TYPE_INT, (guint) k);
  array_fit (field (s, names.scores, GST_TYPE_ARRAY), (guint) k,
      G_TYPE_FLOAT, (guint) k);
  GValue *labels = field (s, names.labels, GST_TYPE_ARRAY);
  GValue *ids = field (s, names.class_ids, GST_TYPE_ARRAY);
  GValue *values = field (s, names.scores, GST_TYPE_ARRAY);
  for (gint j = 0; j < k; j++) {
    set_interned (item (labels, j), label_for (pool, taken[j]));
    g_value_set_int (item (ids, j), taken[j]);
    g_value_set_float (item (values, j), scores[taken[j]]);
  }
}

static void
detect (GstHybridResult *r, const GstHybridResultSpec *spec)
{
  const GstHybridResultPool *pool = r->pool;
  GstStructure *s = r->results;
  const gfloat *ids, *scores, *boxes;
  gsize stride, box_stride;
  guint k_rows = pool->max_detections;
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
  for (guint k = 0; k < k_rows; k++) {
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
    d->label = label_for (pool, d->class_id);
  }

  guint n = r->n_detections;
  set_interned (field (s, names.type, G_TYPE_STRING), names.detection_type);
  g_value_set_int (field (s, names.count, G_TYPE_INT), (gint) n);
  array_fit (field (s, names.labels, GST_TYPE_ARRAY), n, G_TYPE_STRING,
      k_rows);
  array_fit (field (s, names.class_ids, GST_TYPE_ARRAY), n, G_TYPE_INT,
      k_rows);
  array_fit (field (s, names.scores, GST_TYPE_ARRAY), n, G_TYPE_FLOAT,
      k_rows);
  array_fit (field (s, names.boxes, GST_TYPE_ARRAY), n, GST_TYPE_ARRAY,
      k_rows);
  GValue *labels = field (s, names.labels, GST_TYPE_ARRAY);
  GValue *class_ids = field (s, names.class_ids, GST_TYPE_ARRAY);
  GValue *values = field (s, names.scores, GST_TYPE_ARRAY);
  GValue *rects = field (s, names.boxes, GST_TYPE_ARRAY);
  for (guint i = 0; i < n; i++) {
    const GstHybridDetection *d = &r->detections[i];
    GValue *rect = item (rects, i);
    g_value_set_float (item (rect, 0), d->x);
    g_value_set_float (item (rect, 1), d->y);
    g_value_set_float (item (rect, 2), d->w);
    g_value_set_float (item (rect, 3), d->h);
    set_interned (item (labels, i), d->label);
    g_value_set_int (item (class_ids, i), d->class_id);
    g_value_set_float (item (values, i), d->score);
  }
}

/* Raw output: the heads' names and shapes; the values are in the meta. */
static void
describe (GstHybridResult *r)
{
  const GstHybridResultPool *pool = r->pool;
  GstStructure *s = r->results;
  set_interned (field (s, names.type, G_TYPE_STRING), names.raw);
  GValue *outputs = field (s, names.outputs, GST_TYPE_ARRAY);
  array_fit (outputs, r->n_tensors, G_TYPE_STRING, r->n_tensors);
  for (guint i = 0; i < r->n_tensors; i++)
    set_interned (item (outputs, i), pool->outputs[i]);
}

GstHybridResult *
gst_hybrid_result_new (GstHybridResultPool *pool, const hy_executor *exec,
    gint64 slot, const GstHybridResultFrame *frame,
    const GstHybridResultSpec *spec)
{
  GstHybridResult *r = pool_acquire (pool);
  r->frame_number = frame->frame_number;
  r->n_detections = 0;
  copy_tensors (r, exec, pool->batch, slot);

  if (!r->results)
    r->results = gst_structure_new_id_empty (names.hybridinfer);
  GstStructure *s = r->results;
  g_value_set_uint64 (field (s, names.frame_number, G_TYPE_UINT64),
      frame->frame_number);
  g_value_set_uint64 (field (s, names.timestamp, G_TYPE_UINT64),
      frame->timestamp);
  g_value_set_uint64 (field (s, names.running_time, G_TYPE_UINT64),
      frame->running_time);
  g_value_set_double (field (s, names.latency_us, G_TYPE_DOUBLE),
      frame->latency_us);
  set_interned (field (s, names.mode, G_TYPE_STRING),
      frame->mode == HY_MODE_HYBRID ? names.hybrid : names.imperative);
  switch (pool->output) {
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

GstStructure *
gst_hybrid_result_detection_param (const GstHybridResult *result, guint i)
{
  const GstHybridDetection *d = &result->detections[i];
  GstStructure *p = gst_structure_copy (result->pool->detection_param);
  set_interned (field (p, names.label, G_TYPE_STRING), d->label);
  g_value_set_int (field (p, names.class_id, G_TYPE_INT), d->class_id);
  g_value_set_double (field (p, names.confidence, G_TYPE_DOUBLE),
      (gdouble) d->score);
  return p;
}

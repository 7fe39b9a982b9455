/*
 * result-pool.c — result blocks sized once for a model's outputs, refilled
 * in place (result-pool.h).
 */
#include <string.h>

#include "property-parse.h"
#include "result-fields.h"
#include "result-pool.h"

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
  if (pool->decoder_data_free)
    pool->decoder_data_free (pool->decoder_data);
  gst_structure_free (pool->detection_param);
  g_free (pool);
}

GstHybridResultPool *
gst_hybrid_result_pool_new (const hy_executor *exec, const hy_model *model,
    gint64 batch, const gchar *type, const gchar *const *labels,
    guint n_labels)
{
  GstHybridResultPool *pool = g_new0 (GstHybridResultPool, 1);
  guint n = (guint) hy_executor_n_outputs (exec);

  hyg_names_init ();
  pool->refcount = 1;
  g_mutex_init (&pool->lock);
  pool->batch = batch;
  pool->type = type;
  pool->n_heads = pool->n_tensors = n;
  pool->shapes = g_new0 (hy_shape, MAX (n, 1));
  pool->layout = g_new0 (GstHybridTensor, MAX (n, 1));
  pool->names = g_new0 (gchar *, n + 1);
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
  }

  pool->n_labels = labels ? n_labels : 0;
  pool->labels = hyg_strv_pack (labels, pool->n_labels);

  GstStructure *p = gst_structure_new_id_empty (hyg_names.detection);
  hyg_set_interned (hyg_field (p, hyg_names.label, G_TYPE_STRING),
      hyg_names.empty);
  g_value_set_int (hyg_field (p, hyg_names.class_id, G_TYPE_INT), 0);
  g_value_set_double (hyg_field (p, hyg_names.confidence, G_TYPE_DOUBLE), 0.0);
  pool->detection_param = p;
  return pool;
}

GstHybridTensor *
gst_hybrid_result_pool_add_tensor (GstHybridResultPool *pool,
    const gchar *name)
{
  g_return_val_if_fail (pool->block_size == 0, NULL);
  pool->layout = g_renew (GstHybridTensor, pool->layout, pool->n_tensors + 1);
  GstHybridTensor *t = &pool->layout[pool->n_tensors++];
  memset (t, 0, sizeof *t);
  t->name = name;
  return t;
}

guint
gst_hybrid_result_pool_label_room (const GstHybridResultPool *pool,
    guint64 ids, guint n)
{
  return ids > pool->n_labels ? n : 0;
}

void
gst_hybrid_result_pool_seal (GstHybridResultPool *pool)
{
  for (guint i = 0; i < pool->n_tensors; i++)
    pool->n_floats += pool->layout[i].n_elements;
  /* one block: the result, its tensors, its detections, its counts, its
   * label slots, then the data */
  pool->tensors_at = GST_ROUND_UP_N (sizeof (GstHybridResult), 16);
  pool->detections_at = GST_ROUND_UP_N (pool->tensors_at
      + pool->n_tensors * sizeof (GstHybridTensor), 16);
  pool->counts_at = GST_ROUND_UP_N (pool->detections_at
      + MAX (pool->max_detections, 1) * sizeof (GstHybridDetection), 16);
  pool->slots_at = GST_ROUND_UP_N (pool->counts_at
      + pool->n_counts * sizeof (guint32), 16);
  pool->data_at = GST_ROUND_UP_N (pool->slots_at
      + pool->n_label_slots * (gsize) GST_HYBRID_LABEL_SLOT, 16);
  pool->block_size = pool->data_at + MAX (pool->n_floats, 1)
      * sizeof (gfloat);
}

gboolean
gst_hybrid_result_pool_fits (const GstHybridResultPool *pool,
    const hy_executor *exec, gint64 batch)
{
  if (batch != pool->batch
      || (guint) hy_executor_n_outputs (exec) != pool->n_heads)
    return FALSE;
  for (guint i = 0; i < pool->n_heads; i++) {
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
  r->class_pixels = (guint32 *) (mem + pool->counts_at);
  r->label_slots = (gchar (*)[GST_HYBRID_LABEL_SLOT]) (mem + pool->slots_at);
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
  g_free (r->masks);
  g_free (r->mask_scratch);
  g_free (r);
  pool_unref (pool);
}

GstHybridResult *
gst_hybrid_result_pool_acquire (GstHybridResultPool *pool)
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


GstStructure *
gst_hybrid_result_detection_param (const GstHybridResult *result, guint i)
{
  const GstHybridDetection *d = &result->detections[i];
  GstStructure *p = gst_structure_copy (result->pool->detection_param);
  /* The region meta may outlive the result (copied to another buffer, or
   * the tensor meta removed): its label is its own. */
  g_value_set_string (hyg_field (p, hyg_names.label, G_TYPE_STRING), d->label);
  g_value_set_int (hyg_field (p, hyg_names.class_id, G_TYPE_INT), d->class_id);
  g_value_set_double (hyg_field (p, hyg_names.confidence, G_TYPE_DOUBLE),
      (gdouble) d->score);
  return p;
}

const gchar *
gst_hybrid_result_label (GstHybridResult *r, guint slot, gint id)
{
  const GstHybridResultPool *pool = r->pool;
  if (id >= 0 && (guint) id < pool->n_labels)
    return pool->labels[id];
  g_return_val_if_fail (slot < pool->n_label_slots, hyg_names.empty);
  g_snprintf (r->label_slots[slot], GST_HYBRID_LABEL_SLOT, "class-%d", id);
  return r->label_slots[slot];
}

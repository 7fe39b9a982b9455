/*
 * decode.c — a frame's result: its tensors copied, the frame's fields,
 * the kind's "type", then the kind's decoder (decode.h); and the pool of
 * blocks a kind's results live in, sized by its decoder.
 */
#include <string.h>

#include "decode.h"
#include "result-fields.h"
#include "result-pool.h"

GstHybridResultPool *
gst_hybrid_decoder_pool_new (const GstHybridDecoder *decoder,
    const hy_executor *exec, const hy_model *model, gint64 batch,
    const gchar *const *labels, guint n_labels)
{
  GstHybridResultPool *pool = gst_hybrid_result_pool_new (exec, model, batch,
      g_intern_static_string (decoder->nick), labels, n_labels);
  if (decoder->block)
    decoder->block (pool, model);
  gst_hybrid_result_pool_seal (pool);
  return pool;
}

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
  hyg_set_interned (hyg_field (s, hyg_names.type, G_TYPE_STRING), pool->type);
  spec->decoder->decode (r, spec);
  return r;
}

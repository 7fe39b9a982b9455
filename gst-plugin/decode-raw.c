/*
 * decode-raw.c — no interpretation: the heads' names and shapes; the
 * values are in the meta.
 */
#include "decode.h"
#include "result-fields.h"
#include "result-pool.h"

void
gst_hybrid_decode_raw (GstHybridResult *r)
{
  const GstHybridResultPool *pool = r->pool;
  GstStructure *s = r->results;
  hyg_set_interned (hyg_field (s, hyg_names.type, G_TYPE_STRING),
      hyg_names.raw);
  GValue *outputs = hyg_field (s, hyg_names.outputs, GST_TYPE_ARRAY);
  hyg_array_fit (outputs, r->n_tensors, G_TYPE_STRING, r->n_tensors);
  for (guint i = 0; i < r->n_tensors; i++)
    hyg_set_pooled (hyg_array_item (outputs, i), pool->outputs[i]);
}

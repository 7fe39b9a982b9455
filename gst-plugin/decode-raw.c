/*
 * decode-raw.c — output=raw: no interpretation, the heads' names and
 * shapes; the values are in the meta.  output=auto falls back to it when
 * no other kind claims the heads.
 */
#include <string.h>

#include "decode.h"
#include "result-fields.h"
#include "result-pool.h"

static GQuark outputs_name;

static void
fields (void)
{
  outputs_name = g_quark_from_static_string ("outputs");
}

/* "name (shape)" per head, per frame: the pool's strings. */
static void
block (GstHybridResultPool *pool, const hy_model *model)
{
  gchar **outputs = g_new0 (gchar *, pool->n_heads + 1);
  for (guint i = 0; i < pool->n_heads; i++) {
    const GstHybridTensor *t = &pool->layout[i];
    hy_shape s = {.ndim = t->ndim };
    char buf[HY_SHAPE_STRLEN];
    memcpy (s.dims, t->dims, sizeof s.dims);
    outputs[i] = g_strdup_printf ("%s %s", t->name,
        hy_shape_format (&s, buf, sizeof buf));
  }
  pool->decoder_data = outputs;
  pool->decoder_data_free = (GDestroyNotify) g_strfreev;
}

static void
decode (GstHybridResult *r, const GstHybridResultSpec *spec)
{
  gchar **outputs = r->pool->decoder_data;
  GValue *list = hyg_field (r->results, outputs_name, GST_TYPE_ARRAY);
  hyg_array_fit (list, r->n_tensors, G_TYPE_STRING, r->n_tensors);
  for (guint i = 0; i < r->n_tensors; i++)
    hyg_set_pooled (hyg_array_item (list, i), outputs[i]);
}

const GstHybridDecoder gst_hybrid_decoder_raw = {
  .nick = "raw",
  .description = "Tensors only (in the meta)",
  .sidecar = HY_SIDECAR_OUTPUT_RAW,
  .fallback = TRUE,
  .fields = fields,
  .block = block,
  .decode = decode,
};

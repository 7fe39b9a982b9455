/*
 * decode-segmentation.c — output=segmentation: the first head
 * (B, C, H, W) as a class per pixel: the class map (the tensor
 * "class-map", (1, H, W), after the heads), the classes present by the
 * share of pixels they cover, and where the map lies over the frame.
 *
 * A pixel's class is the one with the highest score (ties: the lower
 * class, as numpy's argmax); a one-channel head is a binary map, class 1
 * where the score reaches `threshold`.  The map keeps the model's
 * resolution: map pixel (u, v) covers the frame rectangle from
 * (map-x + u·map-width/W, map-y + v·map-height/H), one W-th of map-width
 * wide — with letterboxing part of the map lies outside the frame.
 */
#include "decode.h"
#include "result-fields.h"
#include "result-pool.h"

/* The derived tensor a segmentation result adds after the heads: the
 * class of every pixel of the first head's map, (1, H, W), as floats (ids
 * as MXNet gives them). */
#define CLASS_MAP_NAME "class-map"

/* A first head (B, C, H, W): C class scores per pixel. */
static gboolean
fits (const hy_shape *shapes, guint n_heads, gint64 batch)
{
  return n_heads >= 1 && shapes[0].ndim == 4 && shapes[0].dims[0] == batch;
}

static struct {
  GQuark width, height, map_x, map_y, map_width, map_height, coverage;
} names;

static void
fields (void)
{
  names.width = g_quark_from_static_string ("width");
  names.height = g_quark_from_static_string ("height");
  names.map_x = g_quark_from_static_string ("map-x");
  names.map_y = g_quark_from_static_string ("map-y");
  names.map_width = g_quark_from_static_string ("map-width");
  names.map_height = g_quark_from_static_string ("map-height");
  names.coverage = g_quark_from_static_string ("coverage");
}

/* The classes a map counts: C, or two for a binary map (C = 1: below and
 * above the threshold). */
static guint
n_classes (const GstHybridTensor *head)
{
  return MAX ((guint) head->dims[1], 2);
}

/* The class map (1, H, W) after the heads, a pixel count per class, a
 * label slot per class reported. */
static void
block (GstHybridResultPool *pool, const hy_model *model)
{
  const GstHybridTensor *head = &pool->layout[0];
  gint64 h = head->dims[2], w = head->dims[3];
  guint classes = n_classes (head);
  GstHybridTensor *map = gst_hybrid_result_pool_add_tensor (pool,
      CLASS_MAP_NAME);
  map->ndim = 3;
  map->dims[0] = 1;
  map->dims[1] = h;
  map->dims[2] = w;
  map->n_elements = (gsize) (h * w);
  pool->n_counts = classes;
  pool->n_label_slots = gst_hybrid_result_pool_label_room (pool, classes,
      MIN (classes, GST_HYBRID_MAX_TOP_K));
}

/* The k classes covering the most pixels, most first (ties: the lower
 * class); classes covering none are left out. */
static guint
top_classes (const guint32 *pixels, guint n, guint k, gint *best)
{
  guint filled = 0;
  for (guint c = 0; c < n; c++) {
    if (!pixels[c] || (filled == k && pixels[c] <= pixels[best[k - 1]]))
      continue;
    guint at = filled < k ? filled++ : k - 1;
    while (at > 0 && pixels[c] > pixels[best[at - 1]]) {
      best[at] = best[at - 1];
      at--;
    }
    best[at] = (gint) c;
  }
  return filled;
}

static void
classify_pixels (GstHybridResult *r, gfloat threshold)
{
  const GstHybridResultPool *pool = r->pool;
  const GstHybridTensor *head = &r->tensors[0];
  GstHybridTensor *map = &r->tensors[pool->n_heads];
  gfloat *out = (gfloat *) map->data;
  gsize plane = map->n_elements;
  guint c_count = (guint) head->dims[1];
  guint n_counts = n_classes (head);
  for (guint c = 0; c < n_counts; c++)
    r->class_pixels[c] = 0;
  for (gsize i = 0; i < plane; i++) {
    guint best = 0;
    if (c_count == 1) {
      best = head->data[i] >= threshold;
    } else {
      gfloat top = head->data[i];
      for (guint c = 1; c < c_count; c++) {
        gfloat v = head->data[c * plane + i];
        if (v > top) {
          top = v;
          best = c;
        }
      }
    }
    out[i] = (gfloat) best;
    r->class_pixels[best]++;
  }
}

static void
decode (GstHybridResult *r, const GstHybridResultSpec *spec)
{
  const GstHybridResultPool *pool = r->pool;
  GstStructure *s = r->results;
  const GstHybridTensor *map = &r->tensors[pool->n_heads];
  classify_pixels (r, spec->threshold);

  gint best[GST_HYBRID_MAX_TOP_K];
  guint k = top_classes (r->class_pixels, n_classes (&r->tensors[0]),
      CLAMP (spec->top_k, 1, GST_HYBRID_MAX_TOP_K), best);
  g_value_set_int (hyg_field (s, names.width, G_TYPE_INT),
      (gint) map->dims[2]);
  g_value_set_int (hyg_field (s, names.height, G_TYPE_INT),
      (gint) map->dims[1]);
  /* the map spans the model input: its corners, in frame pixels */
  const hy_frame_config *pc = hy_frame_plan_config (spec->plan);
  gfloat x0, y0, x1, y1;
  gst_hybrid_spec_to_frame (spec, 0, 0, &x0, &y0);
  gst_hybrid_spec_to_frame (spec, (gfloat) pc->dst_width,
      (gfloat) pc->dst_height, &x1, &y1);
  g_value_set_float (hyg_field (s, names.map_x, G_TYPE_FLOAT), x0);
  g_value_set_float (hyg_field (s, names.map_y, G_TYPE_FLOAT), y0);
  g_value_set_float (hyg_field (s, names.map_width, G_TYPE_FLOAT),
      x1 - x0);
  g_value_set_float (hyg_field (s, names.map_height, G_TYPE_FLOAT),
      y1 - y0);

  /* (a field added may move the others: pointers once all are there) */
  hyg_array_fit (hyg_field (s, hyg_names.labels, GST_TYPE_ARRAY), k,
      G_TYPE_STRING, k);
  hyg_array_fit (hyg_field (s, hyg_names.class_ids, GST_TYPE_ARRAY), k,
      G_TYPE_INT, k);
  hyg_array_fit (hyg_field (s, names.coverage, GST_TYPE_ARRAY), k,
      G_TYPE_FLOAT, k);
  GValue *labels = hyg_field (s, hyg_names.labels, GST_TYPE_ARRAY);
  GValue *ids = hyg_field (s, hyg_names.class_ids, GST_TYPE_ARRAY);
  GValue *coverage = hyg_field (s, names.coverage, GST_TYPE_ARRAY);
  for (guint j = 0; j < k; j++) {
    hyg_set_pooled (hyg_array_item (labels, j),
        gst_hybrid_result_label (r, j, best[j]));
    g_value_set_int (hyg_array_item (ids, j), best[j]);
    g_value_set_float (hyg_array_item (coverage, j),
        (gfloat) r->class_pixels[best[j]] / (gfloat) map->n_elements);
  }
}

/* A score per class and pixel: the first head's channels, C of
 * (B, C, H, W).  A model whose labels count another head's channels
 * would label every pixel of this map wrongly. */
static gint64
classes_of (const hy_shape *shapes, guint n_heads, gint64 batch)
{
  return fits (shapes, n_heads, batch) ? shapes[0].dims[1] : -1;
}

const GstHybridDecoder gst_hybrid_decoder_segmentation = {
  .nick = "segmentation",
  .description = "A class per pixel of the first head "
      "(B,C,H,W): the class-map tensor",
  .sidecar = HY_SIDECAR_OUTPUT_SEGMENTATION,
  .fits = fits,
  .fits_needs = "a first head (B, C, H, W): C class scores per pixel",
  .classes_of = classes_of,
  .fields = fields,
  .block = block,
  .decode = decode,
};

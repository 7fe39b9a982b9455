/*
 * decode-segmentation.c — the first head (B, C, H, W) as a class per
 * pixel: the class map (the tensor "class-map", (1, H, W), after the
 * heads), the classes present by the share of pixels they cover, and
 * where the map lies over the frame.
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
  guint c_count = pool->n_classes;
  guint n_counts = MAX (c_count, 2);
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

void
gst_hybrid_decode_segmentation (GstHybridResult *r,
    const GstHybridResultSpec *spec)
{
  const GstHybridResultPool *pool = r->pool;
  GstStructure *s = r->results;
  const GstHybridTensor *map = &r->tensors[pool->n_heads];
  classify_pixels (r, spec->threshold);

  gint best[GST_HYBRID_MAX_TOP_K];
  guint k = top_classes (r->class_pixels, MAX (pool->n_classes, 2),
      CLAMP (spec->top_k, 1, GST_HYBRID_MAX_TOP_K), best);
  hyg_set_interned (hyg_field (s, hyg_names.type, G_TYPE_STRING),
      hyg_names.segmentation);
  g_value_set_int (hyg_field (s, hyg_names.width, G_TYPE_INT),
      (gint) map->dims[2]);
  g_value_set_int (hyg_field (s, hyg_names.height, G_TYPE_INT),
      (gint) map->dims[1]);
  /* the map spans the model input: its corners, in frame pixels */
  const hy_frame_config *pc = hy_frame_plan_config (spec->plan);
  gfloat x0, y0, x1, y1;
  gst_hybrid_spec_to_frame (spec, 0, 0, &x0, &y0);
  gst_hybrid_spec_to_frame (spec, (gfloat) pc->dst_width,
      (gfloat) pc->dst_height, &x1, &y1);
  g_value_set_float (hyg_field (s, hyg_names.map_x, G_TYPE_FLOAT), x0);
  g_value_set_float (hyg_field (s, hyg_names.map_y, G_TYPE_FLOAT), y0);
  g_value_set_float (hyg_field (s, hyg_names.map_width, G_TYPE_FLOAT),
      x1 - x0);
  g_value_set_float (hyg_field (s, hyg_names.map_height, G_TYPE_FLOAT),
      y1 - y0);

  /* (a field added may move the others: pointers once all are there) */
  hyg_array_fit (hyg_field (s, hyg_names.labels, GST_TYPE_ARRAY), k,
      G_TYPE_STRING, k);
  hyg_array_fit (hyg_field (s, hyg_names.class_ids, GST_TYPE_ARRAY), k,
      G_TYPE_INT, k);
  hyg_array_fit (hyg_field (s, hyg_names.coverage, GST_TYPE_ARRAY), k,
      G_TYPE_FLOAT, k);
  GValue *labels = hyg_field (s, hyg_names.labels, GST_TYPE_ARRAY);
  GValue *ids = hyg_field (s, hyg_names.class_ids, GST_TYPE_ARRAY);
  GValue *coverage = hyg_field (s, hyg_names.coverage, GST_TYPE_ARRAY);
  for (guint j = 0; j < k; j++) {
    hyg_set_pooled (hyg_array_item (labels, j),
        gst_hybrid_result_label (r, j, best[j]));
    g_value_set_int (hyg_array_item (ids, j), best[j]);
    g_value_set_float (hyg_array_item (coverage, j),
        (gfloat) r->class_pixels[best[j]] / (gfloat) map->n_elements);
  }
}

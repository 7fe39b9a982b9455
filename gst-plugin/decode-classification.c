/*
 * decode-classification.c — output=classification: the first head as
 * class scores: the top k, best first, with their labels, the scores
 * through the output activation (the tensor in the meta keeps the
 * model's own values).  output=auto picks it for one head (B, K) or
 * (B, K, 1, …, 1).
 * A class with a threshold of its own (class-thresholds) is reported only
 * when its score reaches it.
 */
#include <math.h>

#include "decode.h"
#include "result-fields.h"
#include "result-pool.h"

/* output=classification: a first head whose first dimension is the
 * batch. */
static gboolean
fits (const hy_shape *shapes, guint n_heads, gint64 batch)
{
  return n_heads >= 1 && shapes[0].ndim >= 1 && shapes[0].dims[0] == batch;
}

/* output=auto: one head (B, K) or (B, K, 1, …, 1). */
static gboolean
claims (const hy_shape *shapes, guint n_heads, gint64 batch)
{
  const hy_shape *s = &shapes[0];
  if (n_heads != 1 || s->ndim < 2 || s->dims[0] != batch)
    return FALSE;
  for (int d = 2; d < s->ndim; d++)
    if (s->dims[d] != 1)
      return FALSE;
  return TRUE;
}

/* A label slot per class reported: at most the classes, at most
 * GST_HYBRID_MAX_TOP_K. */
static void
block (GstHybridResultPool *pool, const hy_model *model)
{
  guint64 classes = pool->n_heads ? pool->layout[0].n_elements : 0;
  pool->n_label_slots = gst_hybrid_result_pool_label_room (pool, classes,
      (guint) MIN (classes, GST_HYBRID_MAX_TOP_K));
}

/* What score i reports: the activation needs, for softmax, the maximum
 * and the sum of exp(s - max) over every class (one pass per frame). */
typedef struct {
  GstHybridActivation activation;
  gfloat max, sum;
} score_map;

static gfloat score_map_apply (const score_map *m, gfloat s);

/* Whether class i may be reported: a class with a threshold of its own
 * only when its reported score reaches it (the threshold means the score
 * the user sees). */
static gboolean
eligible (const hyg_class_thresholds *t, const score_map *map, gint i,
    gfloat score)
{
  gfloat own = hyg_class_threshold (t, i, -INFINITY);
  return own == -INFINITY || score_map_apply (map, score) >= own;
}

/* The k best of n eligible scores, best first; ties keep the lower class
 * first.  Insertion into a sorted list of k: O(n k) at worst, with k
 * small. */
static gint
top_k (const gfloat *scores, gint n, gint k, const hyg_class_thresholds *t,
    const score_map *map, gint *best)
{
  gint filled = 0;
  gboolean own = t && t->n;
  for (gint i = 0; i < n; i++) {
    if (filled == k && !(scores[i] > scores[best[k - 1]]))
      continue;
    if (own && !eligible (t, map, i, scores[i]))
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

static score_map
score_map_new (GstHybridActivation activation, const gfloat *s, gint n)
{
  score_map m = {.activation = activation,.max = -INFINITY,.sum = 0 };
  if (activation != GST_HYBRID_ACTIVATION_SOFTMAX || n == 0)
    return m;
  for (gint i = 0; i < n; i++)
    m.max = fmaxf (m.max, s[i]);
  for (gint i = 0; i < n; i++)
    m.sum += expf (s[i] - m.max);
  return m;
}

static gfloat
score_map_apply (const score_map *m, gfloat s)
{
  switch (m->activation) {
    case GST_HYBRID_ACTIVATION_SOFTMAX:
      return expf (s - m->max) / m->sum;
    case GST_HYBRID_ACTIVATION_SIGMOID:
      return 1.0f / (1.0f + expf (-s));
    default:
      return s;
  }
}

static void
decode (GstHybridResult *r, const GstHybridResultSpec *spec)
{
  GstStructure *s = r->results;
  const GstHybridTensor *head = &r->tensors[0];
  const gfloat *scores = head->data;
  gint n = (gint) head->n_elements;
  gint taken[GST_HYBRID_MAX_TOP_K];
  /* monotonic: the top k of the raw scores are those of the mapped ones */
  score_map map = score_map_new (spec->activation, scores, n);
  gint k = top_k (scores, n,
      (gint) CLAMP (spec->top_k, 1, GST_HYBRID_MAX_TOP_K),
      spec->class_thresholds, &map, taken);
  if (k > 0) {
    hyg_set_pooled (hyg_field (s, hyg_names.label, G_TYPE_STRING),
        gst_hybrid_result_label (r, 0, taken[0]));
    g_value_set_int (hyg_field (s, hyg_names.class_id, G_TYPE_INT), taken[0]);
    g_value_set_float (hyg_field (s, hyg_names.score, G_TYPE_FLOAT),
        score_map_apply (&map, scores[taken[0]]));
  } else {
    /* every class held back by its own threshold: no best class (a
     * refilled block must not keep an earlier frame's) */
    gst_structure_remove_fields (s, g_quark_to_string (hyg_names.label),
        g_quark_to_string (hyg_names.class_id),
        g_quark_to_string (hyg_names.score), NULL);
  }
  /* (a field added may move the others: pointers once all are there) */
  hyg_array_fit (hyg_field (s, hyg_names.labels, GST_TYPE_ARRAY), (guint) k,
      G_TYPE_STRING, (guint) k);
  hyg_array_fit (hyg_field (s, hyg_names.class_ids, GST_TYPE_ARRAY), (guint) k,
      G_TYPE_INT, (guint) k);
  hyg_array_fit (hyg_field (s, hyg_names.scores, GST_TYPE_ARRAY), (guint) k,
      G_TYPE_FLOAT, (guint) k);
  GValue *labels = hyg_field (s, hyg_names.labels, GST_TYPE_ARRAY);
  GValue *ids = hyg_field (s, hyg_names.class_ids, GST_TYPE_ARRAY);
  GValue *values = hyg_field (s, hyg_names.scores, GST_TYPE_ARRAY);
  for (gint j = 0; j < k; j++) {
    hyg_set_pooled (hyg_array_item (labels, j),
        gst_hybrid_result_label (r, (guint) j, taken[j]));
    g_value_set_int (hyg_array_item (ids, j), taken[j]);
    g_value_set_float (hyg_array_item (values, j),
        score_map_apply (&map, scores[taken[j]]));
  }
}

/* One score per class: the first head's values per frame. */
static gint64
classes_of (const hy_shape *shapes, guint n_heads, gint64 batch)
{
  if (n_heads < 1 || shapes[0].ndim < 1)
    return -1;
  return hy_shape_numel (&shapes[0]) / MAX (shapes[0].dims[0], 1);
}

const GstHybridDecoder gst_hybrid_decoder_classification = {
  .nick = "classification",
  .description = "Top-k classes of the first head",
  .sidecar = HY_SIDECAR_OUTPUT_CLASSIFICATION,
  .fits = fits,
  .fits_needs = "a first head whose first dimension is the batch",
  .claims = claims,
  .class_scores = TRUE,
  .classes_of = classes_of,
  .block = block,
  .decode = decode,
};

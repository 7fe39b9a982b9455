/*
 * detection-classes.c — a detector's class count from its graph
 * (detection-classes.h).
 *
 * Walking back from the class-id head, the nearest node that makes class
 * ids from per-class scores says how many classes there are:
 *  - argmax over the class axis (the layer a Gluon block writes as
 *    F.argmax): the size of the axis it reduces;
 *  - _contrib_MultiBoxDetection (MXNet's symbol-API SSD): its class
 *    probabilities (B, 1 + C, N), the first row the background;
 *  - _contrib_box_nms over a Concat along the anchors of one
 *    [id, score, box] Concat per class (GluonCV's SSD): that many classes.
 * Anything else (YOLOv3's and CenterNet's decoders, Faster R-CNN's) is
 * not recognised: -1, and no labels check.  The shapes are the model's own
 * graph's for the executor's input shapes, inferred once here: the
 * executor's planned graph may have been rewritten by its passes.
 */
#include "detection-classes.h"

#include <string.h>

/* how far back the walk looks: a detector's decoding tail, not its
 * backbone */
#define WALK_NODES 256

typedef struct {
  const hy_model *model;
  const hy_shapes *shapes;
  GHashTable *index;            /* node name -> index + 1 */
} Graph;

/* The node feeding input k of node i, -1 when unknown. */
static int
input_node (const Graph * g, int i, int k)
{
  const char *name = hy_model_node_input (g->model, i, k, NULL);
  gpointer found = name ? g_hash_table_lookup (g->index, name) : NULL;
  return found ? GPOINTER_TO_INT (found) - 1 : -1;
}

static const hy_shape *
output_shape (const Graph * g, int i)
{
  const hy_shape *s = hy_shapes_node (g->shapes, i);
  return s && s->ndim >= 0 ? s : NULL;
}

static gboolean
node_is (const Graph * g, int i, const char *op, hy_node_desc * d)
{
  return i >= 0 && hy_model_node (g->model, i, d) && !strcmp (d->op, op);
}

/* argmax: the axis it reduced is where its input and output first differ
 * (kept as 1 with keepdims, gone without). */
static gint64
argmax_classes (const Graph * g, int i)
{
  const hy_shape *out = output_shape (g, i);
  int from = input_node (g, i, 0);
  const hy_shape *in = from >= 0 ? output_shape (g, from) : NULL;
  if (!in || !out)
    return -1;
  for (int a = 0; a < in->ndim; a++)
    if (a >= out->ndim || in->dims[a] != out->dims[a])
      return in->dims[a];
  return -1;
}

static gint64
multibox_classes (const Graph * g, int i)
{
  int from = input_node (g, i, 0);
  const hy_shape *probs = from >= 0 ? output_shape (g, from) : NULL;
  return probs && probs->ndim == 3 && probs->dims[1] >= 2
      ? probs->dims[1] - 1 : -1;
}

static gint64
per_class_nms_classes (const Graph * g, int i)
{
  hy_node_desc outer, inner;
  int from = input_node (g, i, 0);
  if (!node_is (g, from, "Concat", &outer) || outer.n_inputs < 1)
    return -1;
  for (int k = 0; k < outer.n_inputs; k++)
    if (!node_is (g, input_node (g, from, k), "Concat", &inner))
      return -1;
  return outer.n_inputs;
}

/* The class count at node i, or -1 when it does not make class ids. */
static gint64
classes_at (const Graph * g, int i)
{
  hy_node_desc d;
  if (!hy_model_node (g->model, i, &d))
    return -1;
  if (!strcmp (d.op, "argmax"))
    return argmax_classes (g, i);
  if (!strcmp (d.op, "_contrib_MultiBoxDetection"))
    return multibox_classes (g, i);
  if (!strcmp (d.op, "_contrib_box_nms"))
    return per_class_nms_classes (g, i);
  return -1;
}

/* Breadth first from the head: the nearest node that makes class ids. */
static gint64
walk (const Graph * g, int head)
{
  GQueue queue = G_QUEUE_INIT;
  GHashTable *seen = g_hash_table_new (NULL, NULL);
  gint64 classes = -1;
  guint visited = 0;
  g_queue_push_tail (&queue, GINT_TO_POINTER (head + 1));
  while (classes < 0 && !g_queue_is_empty (&queue)
      && visited++ < WALK_NODES) {
    int i = GPOINTER_TO_INT (g_queue_pop_head (&queue)) - 1;
    if (!g_hash_table_add (seen, GINT_TO_POINTER (i + 1)))
      continue;
    hy_node_desc d;
    if (!hy_model_node (g->model, i, &d) || strcmp (d.kind, "op") != 0)
      continue;
    classes = classes_at (g, i);
    for (int k = 0; k < d.n_inputs; k++) {
      int from = input_node (g, i, k);
      if (from >= 0)
        g_queue_push_tail (&queue, GINT_TO_POINTER (from + 1));
    }
  }
  g_queue_clear (&queue);
  g_hash_table_unref (seen);
  return classes;
}

gint64
gst_hybrid_detection_classes (const hy_model * model,
    const hy_shapes * running)
{
  if (hy_model_n_outputs (model) < 1)
    return -1;
  hy_shapes *shapes = hy_shapes_new (model);
  for (int i = 0; i < hy_model_n_inputs (model); i++) {
    hy_shape in = hy_shapes_input (running, i);
    if (in.ndim >= 0 && !hy_shapes_set_input (shapes,
            hy_model_input_name (model, i), &in, NULL)) {
      hy_shapes_free (shapes);
      return -1;
    }
  }
  gint64 classes = -1;
  if (hy_shapes_infer (shapes, NULL)) {
    Graph g = {.model = model,.shapes = shapes,
      .index = g_hash_table_new (g_str_hash, g_str_equal)
    };
    int head = -1;
    const char *head_name = hy_model_output_name (model, 0);
    for (int i = 0; i < hy_model_n_nodes (model); i++) {
      hy_node_desc d;
      if (hy_model_node (model, i, &d)) {
        g_hash_table_insert (g.index, (gpointer) d.name,
            GINT_TO_POINTER (i + 1));
        if (head_name && !strcmp (d.name, head_name))
          head = i;
      }
    }
    if (head >= 0)
      classes = walk (&g, head);
    g_hash_table_unref (g.index);
  }
  hy_shapes_free (shapes);
  return classes;
}

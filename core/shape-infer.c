/*
 * shape-infer.c — forward shape inference over a resolved graph.
 *
 * Variables carry their shapes already (parameters from the params file,
 * inputs from the caller); op nodes are visited in index order, which is
 * topological.  Each op's infer_shape() also validates its inputs, so a
 * shape that does not fit is reported at the first node it breaks, with
 * that node's name and op.
 */
#include "core/model-impl.h"
#include "core/shape-learn.h"

#define HY_MAX_NUMEL ((int64_t) 1 << 40)

/* The window hy_shape_learn() writes into: the input shapes of the node
 * being inferred, on this thread.  Thread-local because executors infer
 * shapes on their own threads. */
static _Thread_local struct {
  hy_shape *in;
  gboolean *learned;
  guint n;
} window;

void
hy_shape_learn_window (hy_shape *in, gboolean *learned, guint n)
{
  window.in = in;
  window.learned = learned;
  window.n = n;
}

gboolean
hy_shape_learn (const hy_shape *got, const hy_shape *want)
{
  if (got->ndim >= 0 || window.n == 0 || got < window.in
      || got >= window.in + window.n)
    return FALSE;
  const gsize i = (gsize) (got - window.in);
  window.in[i] = *want;
  window.learned[i] = TRUE;
  return TRUE;
}

/* A weight of a model loaded without weights whose shape no op has
 * inferred yet: its consumer may learn it. */
static gboolean
is_weight_to_learn (const hy_node *src)
{
  return !src->op && (src->var_kind == HY_VAR_ARG
      || src->var_kind == HY_VAR_AUX) && !src->value
      && src->shapes[0].ndim < 0;
}

static gboolean
check_output (const hy_node *node, guint k, GError **error)
{
  const hy_shape *s = &node->shapes[k];
  char buf[HY_SHAPE_STRLEN];
  if (s->ndim < 0 || s->ndim > HY_MAX_DIMS) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "node '%s' (op %s): output %u has no valid shape", node->name,
        node->op_name, k);
    return FALSE;
  }
  int64_t numel = 1;
  for (int d = 0; d < s->ndim; d++) {
    if (s->dims[d] < 0 || (s->dims[d] > 0 && numel > HY_MAX_NUMEL / s->dims[d])) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "node '%s' (op %s): output %u shape %s is negative or too large",
          node->name, node->op_name, k, hy_shape_format (s, buf, sizeof buf));
      return FALSE;
    }
    numel *= s->dims[d];
  }
  return TRUE;
}

/* After `node`'s infer_shape: each weight it learned gets that shape (its
 * other readers then check against it); one it did not learn has no shape
 * this op can give it. */
static gboolean
learn_weights (hy_graph *graph, const hy_node *node, const hy_shape *in,
    const gboolean *learned, GError **error)
{
  for (guint k = 0; k < node->n_inputs; k++) {
    hy_node *src = hy_graph_node (graph, node->inputs[k].node);
    if (!is_weight_to_learn (src))
      continue;
    if (!learned[k]) {
      char buf[32];
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "node '%s' (op %s): input '%s' ('%s') is a parameter the model "
          "was loaded without, and this op cannot infer its shape",
          node->name, node->op_name,
          hy_op_input_name (node->op, node->params, k, buf, sizeof buf),
          src->name);
      return FALSE;
    }
    src->shapes[0] = in[k];
  }
  return TRUE;
}

gboolean
hy_graph_infer_shapes (hy_graph *graph, GError **error)
{
  /* Concat, add_n and stack take any number of inputs (SSD on COCO
   * concatenates one value per class): the widest node's shapes go on
   * the heap, the usual ones on the stack, since a forward with a new
   * input shape infers again and should allocate no more than it must. */
  hy_shape on_stack[64];
  guint widest = 1;
  for (guint i = 0; i < hy_graph_n_nodes (graph); i++)
    widest = MAX (widest, hy_graph_node (graph, i)->n_inputs);
  g_autofree hy_shape *on_heap = widest > G_N_ELEMENTS (on_stack)
      ? g_new (hy_shape, widest) : NULL;
  hy_shape *in_shapes = on_heap ? on_heap : on_stack;
  gboolean learned_on_stack[G_N_ELEMENTS (on_stack)];
  g_autofree gboolean *learned_on_heap = on_heap ? g_new (gboolean, widest)
      : NULL;
  gboolean *learned = on_heap ? learned_on_heap : learned_on_stack;
  for (guint i = 0; i < hy_graph_n_nodes (graph); i++) {
    hy_node *node = hy_graph_node (graph, i);
    if (!node->op)
      continue;                 /* variables: shapes set by the model */
    gboolean learning = FALSE;
    for (guint k = 0; k < node->n_inputs; k++) {
      const hy_entry *e = &node->inputs[k];
      const hy_node *src = hy_graph_node (graph, e->node);
      in_shapes[k] = src->shapes[e->index];
      learned[k] = FALSE;
      gboolean unused = k < 32 && (node->op->def->unused_inputs & (1u << k));
      if (is_weight_to_learn (src)) {
        learning = TRUE;
        continue;
      }
      if (in_shapes[k].ndim < 0 && !unused) {
        char buf[32];
        g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
            "node '%s' (op %s): input '%s' ('%s') has no known shape%s",
            node->name, node->op_name,
            hy_op_input_name (node->op, node->params, k, buf, sizeof buf),
            src->name, src->op ? "" :
            " (a variable with neither a parameter nor an input shape)");
        return FALSE;
      }
    }
    GError *local = NULL;
    if (learning)
      hy_shape_learn_window (in_shapes, learned, node->n_inputs);
    gboolean ok = node->op->def->infer_shape (node->params, in_shapes,
        (int) node->n_inputs, node->shapes, (int) node->n_outputs, &local);
    hy_shape_learn_window (NULL, NULL, 0);
    if (!ok) {
      g_propagate_prefixed_error (error, local, "node '%s' (op %s): ",
          node->name, node->op_name);
      return FALSE;
    }
    if (learning && !learn_weights (graph, node, in_shapes, learned, error))
      return FALSE;
    for (guint k = 0; k < node->n_outputs; k++)
      if (!check_output (node, k, error))
        return FALSE;
  }
  return TRUE;
}

/*
 * pass-early-stride.c — computes only the positions a strided pointwise
 * convolution reads.
 *
 * A 1×1 convolution with stride s and no padding reads every s-th row and
 * column of its input and nothing else.  When every reader of a value is
 * such a convolution, with one stride, the producer need not compute the
 * rest: if the producer is itself a 1×1 convolution without padding, it
 * takes the stride over (a 1×1 with stride a then one with stride b is
 * one with stride a·b) and its readers become stride 1.  ResNet v1's
 * bottlenecks are the case: the last 1×1 of a stage, with its residual
 * add and relu fused, feeds only the next stage's two stride-2 1×1
 * convolutions (the block's first and its shortcut), so three quarters of
 * what it computed were thrown away.  The residual the producer adds is
 * then read at the same positions, through a strided slice of it (its
 * other readers still want all of it).
 *
 * Every output keeps its value: the positions computed are the ones read,
 * each by the same sum.
 *
 * Only a 1×1 producer takes the stride, though the 3×3 before ResNet's
 * could too (its readers are then one strided 1×1) and it saved 0.5 ms
 * of 26 at batch 1: a 3×3 at stride 2 leaves Winograd for a direct
 * kernel, and that moved hybrid mode's output from imperative mode's by
 * 1e-4, ten times what the two modes are held to (test-conformance.c).
 */
#include "core/passes/passes.h"
#include "core/passes/graph-edit.h"
#include "hybrid.h"

/* A 2-D convolution with a 1×1 kernel and no padding: *stride set to its
 * stride.  (Dilation means nothing for a 1×1 kernel.) */
static gboolean
is_pointwise_conv (const hy_node *node, const int64_t **stride)
{
  if (!hy_node_is_op (node, HY_OP_CONVOLUTION))
    return FALSE;
  const hy_conv_params *p = node->params;
  if (p->n_spatial != 2)
    return FALSE;
  for (int a = 0; a < 2; a++)
    if (p->kernel[a] != 1 || p->pad[a] != 0)
      return FALSE;
  *stride = p->stride;
  return TRUE;
}

/* The stride every reader of node p's output takes it with: TRUE when
 * each is a live pointwise convolution reading it as its data, all with
 * the same stride, larger than 1 on some axis, and no head reads it. */
static gboolean
common_reader_stride (const hy_graph *graph, const gboolean *live, guint p,
    int64_t stride[2])
{
  guint heads;
  if (hy_graph_count_uses (graph, p, 0, &heads) == 0 || heads > 0)
    return FALSE;
  gboolean found = FALSE;
  stride[0] = stride[1] = 1;
  for (guint i = p + 1; i < hy_graph_n_nodes (graph); i++) {
    const hy_node *node = hy_graph_node (graph, i);
    if (!live[i])
      continue;
    for (guint k = 0; k < node->n_inputs; k++) {
      if (node->inputs[k].node != p)
        continue;
      const int64_t *s;
      if (k != 0 || !is_pointwise_conv (node, &s))
        return FALSE;
      if (found && (s[0] != stride[0] || s[1] != stride[1]))
        return FALSE;
      stride[0] = s[0];
      stride[1] = s[1];
      found = TRUE;
    }
  }
  return found && (stride[0] > 1 || stride[1] > 1);
}

/* Sets a convolution's stride, in its attributes too (what a dump of the
 * rewritten graph shows). */
static void
set_stride (hy_node *node, int64_t sh, int64_t sw)
{
  hy_conv_params *p = node->params;
  p->stride[0] = sh;
  p->stride[1] = sw;
  g_hash_table_replace (node->attrs, g_strdup ("stride"),
      g_strdup_printf ("(%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")",
          (gint64) sh, (gint64) sw));
}

/* A node that takes every stride[0]-th row and stride[1]-th column of a
 * 4-D value shaped `in`: MXNet's slice with steps. */
static hy_node *
strided_slice_new (const char *name, const hy_shape *in,
    const int64_t stride[2], GError **error)
{
  hy_node *n = hy_node_new_variable (name);
  g_free (n->op_name);
  n->op_name = g_strdup ("slice");
  n->op = hy_op_lookup ("slice");
  g_hash_table_replace (n->attrs, g_strdup ("begin"),
      g_strdup ("(None, None, None, None)"));
  g_hash_table_replace (n->attrs, g_strdup ("end"),
      g_strdup ("(None, None, None, None)"));
  g_hash_table_replace (n->attrs, g_strdup ("step"),
      g_strdup_printf ("(1, 1, %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")",
          (gint64) stride[0], (gint64) stride[1]));
  n->params = n->op ? hy_op_params_new (n->op, n->attrs, error) : NULL;
  if (!n->params || !n->op->def->infer_shape (n->params, in, 1, n->shapes, 1,
          error)) {
    if (!n->op)
      g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
          "the op 'slice' is not registered");
    hy_node_free (n);
    return NULL;
  }
  return n;
}

/* Moves the readers' stride into node p; FALSE on error. */
static gboolean
take_stride (hy_graph *graph, const gboolean *live, guint p,
    const int64_t stride[2], GError **error)
{
  hy_node *prod = hy_graph_node (graph, p);
  hy_conv_params *pp = prod->params;

  for (guint i = p + 1; i < hy_graph_n_nodes (graph); i++) {
    hy_node *node = hy_graph_node (graph, i);
    if (live[i] && node->n_inputs > 0 && node->inputs[0].node == p)
      set_stride (node, 1, 1);
  }
  hy_shape *out = &prod->shapes[0];
  for (int a = 0; a < 2; a++)
    out->dims[2 + a] = (out->dims[2 + a] - 1) / stride[a] + 1;
  set_stride (prod, pp->stride[0] * stride[0], pp->stride[1] * stride[1]);

  if (!pp->fused.residual)
    return TRUE;
  const hy_entry res = prod->inputs[prod->n_inputs - 1];
  const hy_node *res_node = hy_graph_node (graph, res.node);
  g_autofree char *name = g_strdup_printf ("%s_residual_strided",
      prod->name);
  hy_node *slice = strided_slice_new (name, &res_node->shapes[res.index],
      stride, error);
  if (!slice)
    return FALSE;
  /* Right before the producer, its one reader. */
  hy_node_append_input (slice, res);
  hy_graph_insert_node (graph, p, slice);
  prod->inputs[prod->n_inputs - 1] = (hy_entry) { p, 0 };
  return TRUE;
}

gboolean
hy_pass_early_stride (hy_graph *graph, hy_pass_stats *stats, GError **error)
{
  g_autofree gboolean *live = hy_graph_live_mask (graph);
  /* Last to first: a producer that took its readers' stride may pass it
   * on to its own producer, visited next (a chain of 1×1 convolutions).
   * A slice goes in at p, which moves only the nodes already visited. */
  for (guint p = hy_graph_n_nodes (graph); p-- > 0;) {
    const int64_t *own;
    int64_t stride[2];
    if (!live[p] || !is_pointwise_conv (hy_graph_node (graph, p), &own)
        || !common_reader_stride (graph, live, p, stride))
      continue;
    if (!take_stride (graph, live, p, stride, error))
      return FALSE;
    g_free (live);
    live = hy_graph_live_mask (graph);
    if (stats)
      stats->strides_taken++;
  }
  return TRUE;
}

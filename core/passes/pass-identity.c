/*
 * pass-identity.c — drops the ops that are the identity at inference
 * (Dropout, _copy, BlockGrad): their consumers read the producer instead.
 *
 * Reshape, Flatten, expand_dims and squeeze stay nodes: they change the
 * shape, and the plan turns them into views of their input's memory.
 */
#include "core/passes/passes.h"
#include "core/passes/graph-edit.h"

static gboolean
is_identity (const hy_node *node)
{
  return hy_node_is_op (node, HY_OP_DROPOUT)
      || hy_node_is_op (node, HY_OP_IDENTITY)
      || hy_node_is_op (node, HY_OP_BLOCK_GRAD);
}

gboolean
hy_pass_drop_identities (hy_graph *graph, hy_pass_stats *stats,
    GError **error)
{
  for (guint i = 0; i < hy_graph_n_nodes (graph); i++) {
    const hy_node *node = hy_graph_node (graph, i);
    if (!is_identity (node) || node->n_inputs != 1)
      continue;
    const hy_entry self = { i, 0 }, src = node->inputs[0];
    guint heads;
    hy_graph_count_uses (graph, i, 0, &heads);
    /* A graph output stays computed by an op, so that the plan gives every
     * output its own arena slot rather than handing back an input or a
     * weight. */
    if (heads > 0 && !hy_graph_node (graph, src.node)->op)
      continue;
    hy_graph_replace_uses (graph, self, src);
    if (stats)
      stats->identities_dropped++;
  }
  return TRUE;
}

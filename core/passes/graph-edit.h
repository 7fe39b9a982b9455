/*
 * graph-edit.h — the small rewiring steps the graph passes are made of.
 *
 * Every helper keeps the graph's invariant that index order is
 * topological: nodes are only inserted before their first consumer, and
 * uses are only redirected to entries that come earlier.  Nodes that lose
 * their last use stay in place until hy_graph_prune (passes.h) drops them,
 * so indices held by a pass stay valid while it walks the graph.
 */
#ifndef HY_GRAPH_EDIT_H
#define HY_GRAPH_EDIT_H

#include "core/graph.h"
#include "kernels/params/nn.h"

/* A variable holds a bound value (parameter, aux state, folded constant). */
static inline gboolean
hy_node_is_constant (const hy_node *node)
{
  return !node->op && node->value != NULL;
}

static inline gboolean
hy_node_is_op (const hy_node *node, hy_op_id id)
{
  return node->op && node->op->id == id;
}

/* The fused epilogue of a Convolution or FullyConnected, NULL for any
 * other node. */
hy_fused_epilogue *hy_node_epilogue (hy_node *node);

/* live[i] (g_free it): some head depends on node i, or it is a data
 * input, which stays even when nothing reads it (callers feed inputs by
 * name). */
gboolean *hy_graph_live_mask (const hy_graph *graph);

/* How many inputs of live nodes (those some head depends on) read output
 * `index` of `node`; heads are counted apart in *n_heads (may be NULL). */
guint hy_graph_count_uses (const hy_graph *graph, guint node, guint index,
    guint *n_heads);

/* TRUE when live node `consumer` reads output `index` of `node` once and
 * nothing else reads it, graph outputs included: the only case where the
 * producer may absorb what the consumer does.  (A bypassed consumer must
 * not count: the producer's real readers would see the change.) */
gboolean hy_graph_is_sole_consumer (const hy_graph *graph, guint node,
    guint index, guint consumer);

/* Every op input and head reading `from` reads `to` instead. */
void hy_graph_replace_uses (hy_graph *graph, hy_entry from, hy_entry to);

/* Inserts `node` (taking ownership) at index `at`, shifting the nodes from
 * `at` on by one and renumbering every entry that points at them. */
void hy_graph_insert_node (hy_graph *graph, guint at, hy_node *node);

/* A variable bound to `value` (not owned: the caller keeps it alive). */
hy_node *hy_node_new_constant (const char *name, hy_tensor *value);

/* Appends one input to an op node. */
void hy_node_append_input (hy_node *node, hy_entry entry);

#endif /* HY_GRAPH_EDIT_H */

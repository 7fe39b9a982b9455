/*
 * graph-edit.c — copying, pruning and rewiring graphs for the passes.
 *
 * Use counts are recomputed by a walk over the graph each time they are
 * asked for rather than cached: passes change the wiring as they go, and a
 * few thousand nodes walked per question costs far less than keeping a
 * cache right.  Only live nodes count as users: a node a pass bypassed
 * still reads its old input until hy_graph_prune removes it.
 */
#include <string.h>

#include "core/passes/passes.h"
#include "core/passes/graph-edit.h"

/* g_memdup2 needs GLib 2.68; the build asks for 2.66. */
static void *
dup_bytes (const void *src, gsize size)
{
  void *dst = g_malloc (size);
  memcpy (dst, src, size);
  return dst;
}

static GHashTable *
copy_attrs (GHashTable *attrs)
{
  GHashTable *t = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      g_free);
  if (!attrs)
    return t;
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init (&it, attrs);
  while (g_hash_table_iter_next (&it, &k, &v))
    g_hash_table_insert (t, g_strdup (k), g_strdup (v));
  return t;
}

static hy_node *
copy_node (const hy_node *src)
{
  hy_node *n = g_new0 (hy_node, 1);
  n->name = g_strdup (src->name);
  n->op_name = g_strdup (src->op_name);
  n->op = src->op;
  n->attrs = copy_attrs (src->attrs);
  n->n_inputs = src->n_inputs;
  if (src->n_inputs)
    n->inputs = dup_bytes (src->inputs, src->n_inputs * sizeof (hy_entry));
  if (src->params && src->op && src->op->def)
    n->params = dup_bytes (src->params, src->op->def->params_size);
  n->n_outputs = src->n_outputs;
  if (src->shapes)
    n->shapes = dup_bytes (src->shapes, src->n_outputs * sizeof (hy_shape));
  n->var_kind = src->var_kind;
  n->value = src->value;        /* shared: the model owns its parameters */
  return n;
}

hy_graph *
hy_graph_copy (const hy_graph *graph)
{
  hy_graph *g = hy_graph_new ();
  for (guint i = 0; i < hy_graph_n_nodes (graph); i++)
    hy_graph_add_node (g, copy_node (hy_graph_node (graph, i)));
  g->n_heads = graph->n_heads;
  if (graph->n_heads)
    g->heads = dup_bytes (graph->heads, graph->n_heads * sizeof (hy_entry));
  g->mxnet_version = graph->mxnet_version;
  return g;
}

/* Data inputs survive even when nothing reads them any more: callers feed
 * the model's inputs by name and must still find each one. */
static gboolean
always_kept (const hy_node *node)
{
  return !node->op && !strcmp (node->op_name, "null")
      && node->var_kind == HY_VAR_INPUT;
}

gboolean *
hy_graph_live_mask (const hy_graph *graph)
{
  const guint n = hy_graph_n_nodes (graph);
  gboolean *live = g_new0 (gboolean, MAX (n, 1));
  for (guint h = 0; h < graph->n_heads; h++)
    live[graph->heads[h].node] = TRUE;
  /* Consumers come after producers, so one backward walk settles it. */
  for (guint i = n; i-- > 0;) {
    const hy_node *node = hy_graph_node (graph, i);
    if (always_kept (node))
      live[i] = TRUE;
    if (!live[i])
      continue;
    for (guint k = 0; k < node->n_inputs; k++)
      live[node->inputs[k].node] = TRUE;
  }
  return live;
}

guint
hy_graph_count_uses (const hy_graph *graph, guint node, guint index,
    guint *n_heads)
{
  g_autofree gboolean *live = hy_graph_live_mask (graph);
  guint uses = 0, heads = 0;
  for (guint i = node + 1; i < hy_graph_n_nodes (graph); i++) {
    const hy_node *n = hy_graph_node (graph, i);
    if (!live[i])
      continue;                 /* bypassed by a pass, not pruned yet */
    for (guint k = 0; k < n->n_inputs; k++)
      if (n->inputs[k].node == node && n->inputs[k].index == index)
        uses++;
  }
  for (guint h = 0; h < graph->n_heads; h++)
    if (graph->heads[h].node == node && graph->heads[h].index == index)
      heads++;
  if (n_heads)
    *n_heads = heads;
  return uses;
}

gboolean
hy_graph_is_sole_consumer (const hy_graph *graph, guint node, guint index,
    guint consumer)
{
  g_autofree gboolean *live = hy_graph_live_mask (graph);
  if (consumer >= hy_graph_n_nodes (graph) || !live[consumer])
    return FALSE;
  const hy_node *c = hy_graph_node (graph, consumer);
  guint reads = 0, heads;
  for (guint k = 0; k < c->n_inputs; k++)
    reads += c->inputs[k].node == node && c->inputs[k].index == index;
  return reads == 1
      && hy_graph_count_uses (graph, node, index, &heads) == 1 && heads == 0;
}

static inline gboolean
entry_equal (const hy_entry *a, const hy_entry *b)
{
  return a->node == b->node && a->index == b->index;
}

void
hy_graph_replace_uses (hy_graph *graph, hy_entry from, hy_entry to)
{
  for (guint i = from.node + 1; i < hy_graph_n_nodes (graph); i++) {
    hy_node *n = hy_graph_node (graph, i);
    for (guint k = 0; k < n->n_inputs; k++)
      if (entry_equal (&n->inputs[k], &from))
        n->inputs[k] = to;
  }
  for (guint h = 0; h < graph->n_heads; h++)
    if (entry_equal (&graph->heads[h], &from))
      graph->heads[h] = to;
}

void
hy_graph_insert_node (hy_graph *graph, guint at, hy_node *node)
{
  for (guint i = 0; i < hy_graph_n_nodes (graph); i++) {
    hy_node *n = hy_graph_node (graph, i);
    for (guint k = 0; k < n->n_inputs; k++)
      if (n->inputs[k].node >= at)
        n->inputs[k].node++;
  }
  for (guint h = 0; h < graph->n_heads; h++)
    if (graph->heads[h].node >= at)
      graph->heads[h].node++;
  g_ptr_array_insert (graph->nodes, (gint) at, node);
}

hy_fused_epilogue *
hy_node_epilogue (hy_node *node)
{
  if (hy_node_is_op (node, HY_OP_CONVOLUTION))
    return &((hy_conv_params *) node->params)->fused;
  if (hy_node_is_op (node, HY_OP_FULLY_CONNECTED))
    return &((hy_fc_params *) node->params)->fused;
  return NULL;
}

hy_node *
hy_node_new_constant (const char *name, hy_tensor *value)
{
  hy_node *n = hy_node_new_variable (name);
  n->var_kind = HY_VAR_ARG;
  n->value = value;
  n->shapes[0] = value->shape;
  return n;
}

void
hy_node_append_input (hy_node *node, hy_entry entry)
{
  node->inputs = g_renew (hy_entry, node->inputs, node->n_inputs + 1);
  node->inputs[node->n_inputs++] = entry;
}

/* Parameters nothing reads any more (a folded BatchNorm's, the inputs of
 * a constant-folded op) go too: they are variables, but keeping them would
 * only make every later walk longer.  Data inputs stay. */
void
hy_graph_prune (hy_graph *graph)
{
  const guint n = hy_graph_n_nodes (graph);
  if (n == 0)
    return;
  g_autofree gboolean *live = hy_graph_live_mask (graph);

  g_autofree guint *remap = g_new (guint, n);
  GPtrArray *kept = g_ptr_array_new_full (n, (GDestroyNotify) hy_node_free);
  for (guint i = 0; i < n; i++) {
    hy_node *node = hy_graph_node (graph, i);
    if (!live[i]) {
      hy_node_free (node);
      continue;
    }
    remap[i] = kept->len;
    for (guint k = 0; k < node->n_inputs; k++)
      node->inputs[k].node = remap[node->inputs[k].node];
    g_ptr_array_add (kept, node);
  }
  for (guint h = 0; h < graph->n_heads; h++)
    graph->heads[h].node = remap[graph->heads[h].node];
  g_ptr_array_set_free_func (graph->nodes, NULL);
  g_ptr_array_unref (graph->nodes);
  graph->nodes = kept;
}

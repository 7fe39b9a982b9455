/*
 * pass-const-fold.c — computes once, at plan time, every op whose inputs
 * are all bound parameters (directly or through other such ops): a weight
 * scaled by _mul_scalar, a transposed embedding, an _arange.  A CPU
 * backend computes it through the one op-running path (hy_backend_run_op),
 * exactly as an imperative forward would, and its outputs become
 * variables bound to the results: host tensors, which a device plan then
 * uploads with the weights.
 *
 * Graph outputs stay ops even when constant, so that the plan gives every
 * output its own slot rather than handing back a parameter.
 */
#include "core/passes/passes.h"
#include "core/passes/graph-edit.h"
#include "core/backend.h"

static gboolean
is_foldable (const hy_graph *graph, guint i, hy_backend *cpu)
{
  const hy_node *node = hy_graph_node (graph, i);
  if (!node->op || !cpu->iface->kernel_for (node->op->id))
    return FALSE;
  for (guint k = 0; k < node->n_inputs; k++)
    if (!hy_node_is_constant (hy_graph_node (graph, node->inputs[k].node)))
      return FALSE;
  for (guint k = 0; k < node->n_outputs; k++) {
    guint heads;
    hy_graph_count_uses (graph, i, k, &heads);
    if (heads > 0 || node->shapes[k].ndim < 0)
      return FALSE;
  }
  return TRUE;
}

/* Runs node i's kernel on its constant inputs; the results go to `owned`
 * and become variables inserted just before it, which its consumers then
 * read.  *n_inserted says how many were inserted. */
static gboolean
fold_node (hy_graph *graph, guint i, hy_backend *cpu, GPtrArray *owned,
    guint *n_inserted, GError **error)
{
  hy_node *node = hy_graph_node (graph, i);
  const guint n_in = node->n_inputs, n_out = node->n_outputs;
  g_autofree const hy_tensor **in = g_new0 (const hy_tensor *, n_in + 1);
  g_autofree hy_tensor **out = g_new0 (hy_tensor *, n_out);
  for (guint k = 0; k < n_in; k++)
    in[k] = hy_graph_node (graph, node->inputs[k].node)->value;
  for (guint k = 0; k < n_out; k++) {
    out[k] = hy_tensor_new (&node->shapes[k]);
    g_ptr_array_add (owned, out[k]);
  }
  if (!hy_backend_run_op (cpu, node->op->id, node->params,
          (const hy_tensor *const *) in, (int) n_in, out, (int) n_out,
          error)) {
    g_prefix_error (error, "folding node '%s' (op %s): ", node->name,
        node->op->name);
    return FALSE;
  }

  for (guint k = 0; k < n_out; k++) {
    g_autofree char *name = n_out == 1 ? g_strdup (node->name)
        : g_strdup_printf ("%s_output%u", node->name, k);
    hy_graph_insert_node (graph, i + k, hy_node_new_constant (name, out[k]));
  }
  /* The op itself now sits at i + n_out. */
  for (guint k = 0; k < n_out; k++)
    hy_graph_replace_uses (graph, (hy_entry) { i + n_out, k },
        (hy_entry) { i + k, 0 });
  *n_inserted = n_out;
  return TRUE;
}

gboolean
hy_pass_const_fold (hy_graph *graph, GPtrArray *owned, hy_pass_stats *stats,
    GError **error)
{
  /* One thread: folding runs once per plan, on small tensors, and must not
   * start a pool beside the executor's. */
  hy_backend *cpu = hy_backend_new ((hy_device) { HY_DEVICE_CPU, 0 }, 1,
      error);
  if (!cpu)
    return FALSE;
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < hy_graph_n_nodes (graph); i++) {
    if (!is_foldable (graph, i, cpu))
      continue;
    /* Nodes a pass already bypassed need no computing. */
    g_autofree gboolean *live = hy_graph_live_mask (graph);
    if (!live[i])
      continue;
    guint inserted = 0;
    ok = fold_node (graph, i, cpu, owned, &inserted, error);
    i += inserted;
    if (ok && stats)
      stats->nodes_const_folded++;
  }
  hy_backend_free (cpu);
  return ok;
}

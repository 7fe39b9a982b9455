/*
 * graph.c — graph ownership and op resolution.
 *
 * Resolution is where a parsed symbol file meets the op table: names and
 * aliases become op ids, attribute strings become params, input counts are
 * checked, and the auxiliary states that pre-0.9 files leave out are
 * created as variables placed just before their consumer (so index order
 * stays topological).
 */
#include <string.h>

#include "hybrid.h"
#include "core/graph.h"

hy_graph *
hy_graph_new (void)
{
  hy_graph *g = g_new0 (hy_graph, 1);
  g->nodes = g_ptr_array_new_with_free_func ((GDestroyNotify) hy_node_free);
  return g;
}

void
hy_graph_free (hy_graph *graph)
{
  if (!graph)
    return;
  g_ptr_array_unref (graph->nodes);
  g_free (graph->heads);
  g_free (graph);
}

guint
hy_graph_add_node (hy_graph *graph, hy_node *node)
{
  g_ptr_array_add (graph->nodes, node);
  return graph->nodes->len - 1;
}

hy_node *
hy_node_new_variable (const char *name)
{
  hy_node *n = g_new0 (hy_node, 1);
  n->name = g_strdup (name);
  n->op_name = g_strdup ("null");
  n->attrs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  n->n_outputs = 1;
  n->shapes = g_new0 (hy_shape, 1);
  n->shapes[0].ndim = -1;
  return n;
}

void
hy_node_free (hy_node *node)
{
  if (!node)
    return;
  g_free (node->name);
  g_free (node->op_name);
  if (node->attrs)
    g_hash_table_unref (node->attrs);
  g_free (node->inputs);
  g_free (node->params);
  g_free (node->shapes);
  /* node->value belongs to the model's parameter list. */
  g_free (node);
}

int
hy_graph_find (const hy_graph *graph, const char *name)
{
  for (guint i = 0; i < graph->nodes->len; i++)
    if (!strcmp (hy_graph_node (graph, i)->name, name))
      return (int) i;
  return -1;
}

static gboolean
is_variable (const hy_node *node)
{
  return !strcmp (node->op_name, "null");
}

/* Lists an op's expected inputs as "data, weight, bias" for messages. */
static char *
describe_inputs (const hy_op_info *op, const void *params, int n)
{
  GString *s = g_string_new (NULL);
  char buf[32];
  for (int i = 0; i < n; i++)
    g_string_append_printf (s, "%s%s", i ? ", " : "",
        hy_op_input_name (op, params, i, buf, sizeof buf));
  return g_string_free (s, FALSE);
}

/* Resolves one op node in place.  Auxiliary-state variables it had to
 * create are appended to `new_vars`; they feed the node's trailing inputs,
 * whose indices the caller fills in once it has placed them. */
static gboolean
resolve_node (hy_node *node, GPtrArray *new_vars, GError **error)
{
  const hy_op_info *op = hy_op_lookup (node->op_name);
  if (!op) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "unknown op '%s'", node->op_name);
    return FALSE;
  }
  if (!op->def) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "op '%s' is known but not implemented yet", op->name);
    return FALSE;
  }
  node->op = op;
  node->params = hy_op_params_new (op, node->attrs, error);
  if (!node->params)
    return FALSE;

  int want = hy_op_num_inputs (op, node->params);
  int have = (int) node->n_inputs;
  int missing = want - have;
  if (missing > 0 && missing <= op->def->n_aux) {
    /* Pre-0.9 files leave out auxiliary states: MXNet named them
     * {node}_{input}, and so do we. */
    node->inputs = g_renew (hy_entry, node->inputs, want);
    for (int i = have; i < want; i++) {
      char buf[32];
      g_autofree char *vname = g_strdup_printf ("%s_%s", node->name,
          hy_op_input_name (op, node->params, i, buf, sizeof buf));
      g_ptr_array_add (new_vars, hy_node_new_variable (vname));
      node->inputs[i] = (hy_entry) { G_MAXUINT, 0 };
    }
    node->n_inputs = want;
  } else if (missing != 0) {
    g_autofree char *names = describe_inputs (op, node->params, want);
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "has %d inputs, expected %d (%s)", have, want, names);
    return FALSE;
  }

  int n_out = hy_op_num_outputs (op, node->params);
  if (n_out < 1 || n_out > 4096) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "would have %d outputs", n_out);
    return FALSE;
  }
  node->n_outputs = n_out;
  g_free (node->shapes);
  node->shapes = g_new0 (hy_shape, n_out);
  for (int k = 0; k < n_out; k++)
    node->shapes[k].ndim = -1;
  return TRUE;
}

gboolean
hy_node_resolve (hy_node *node, GError **error)
{
  g_autoptr (GPtrArray) new_vars =
      g_ptr_array_new_with_free_func ((GDestroyNotify) hy_node_free);
  guint had = node->n_inputs;
  if (!resolve_node (node, new_vars, error))
    return FALSE;
  if (new_vars->len > 0) {
    /* Only symbol files may leave auxiliary states out. */
    node->n_inputs = had;
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "has %u inputs, expected %u", had, had + new_vars->len);
    return FALSE;
  }
  return TRUE;
}

/* On failure the graph is left consistent enough to free, nothing more. */
gboolean
hy_graph_resolve (hy_graph *graph, GPtrArray *unsupported, GError **error)
{
  guint n = graph->nodes->len;
  g_autofree guint *remap = g_new (guint, MAX (n, 1));
  GPtrArray *order = g_ptr_array_new_full (n, (GDestroyNotify) hy_node_free);
  g_autoptr (GPtrArray) new_vars = g_ptr_array_new ();

  for (guint i = 0; i < n; i++) {
    hy_node *node = hy_graph_node (graph, i);
    guint first_new = node->n_inputs;
    g_ptr_array_set_size (new_vars, 0);

    if (!is_variable (node)) {
      GError *local = NULL;
      gboolean ok = resolve_node (node, new_vars, &local);
      /* Place the created variables first so order stays topological. */
      for (guint v = 0; v < new_vars->len; v++) {
        node->inputs[first_new + v].node = order->len;
        g_ptr_array_add (order, g_ptr_array_index (new_vars, v));
      }
      for (guint k = 0; k < first_new && k < node->n_inputs; k++)
        node->inputs[k].node = remap[node->inputs[k].node];
      if (!ok) {
        if (unsupported && local->code == HY_ERROR_UNSUPPORTED) {
          g_ptr_array_add (unsupported, g_strdup_printf ("%s (%s)",
                  node->name, node->op_name));
          g_clear_error (&local);
          node->op = NULL;
          g_clear_pointer (&node->params, g_free);
        } else {
          g_propagate_prefixed_error (error, local,
              "node %u '%s' (op %s): ", i, node->name, node->op_name);
          /* Hand every node, old and new, to the graph for freeing. */
          for (guint j = i; j < n; j++)
            g_ptr_array_add (order, hy_graph_node (graph, j));
          g_ptr_array_set_free_func (graph->nodes, NULL);
          g_ptr_array_unref (graph->nodes);
          graph->nodes = order;
          return FALSE;
        }
      }
    }
    remap[i] = order->len;
    g_ptr_array_add (order, node);
  }
  /* Output counts are only known now that ops are resolved: an entry
   * naming output 5 of a one-output op would read past its shapes. */
  for (guint i = 0; i < order->len; i++) {
    hy_node *node = g_ptr_array_index (order, i);
    for (guint k = 0; k < node->n_inputs; k++) {
      const hy_node *src = g_ptr_array_index (order, node->inputs[k].node);
      if (node->inputs[k].index >= src->n_outputs) {
        g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
            "node '%s': input %u refers to output %u of '%s', which has %u",
            node->name, k, node->inputs[k].index, src->name, src->n_outputs);
        goto bad_entry;
      }
    }
  }
  for (guint h = 0; h < graph->n_heads; h++) {
    const hy_node *src = g_ptr_array_index (order, remap[graph->heads[h].node]);
    if (graph->heads[h].index >= src->n_outputs) {
      g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
          "head %u refers to output %u of '%s', which has %u", h,
          graph->heads[h].index, src->name, src->n_outputs);
      goto bad_entry;
    }
  }
  for (guint h = 0; h < graph->n_heads; h++)
    graph->heads[h].node = remap[graph->heads[h].node];
  g_ptr_array_set_free_func (graph->nodes, NULL);
  g_ptr_array_unref (graph->nodes);
  graph->nodes = order;
  return TRUE;

bad_entry:
  /* Every node is in `order` now: it becomes the graph's, for freeing. */
  g_ptr_array_set_free_func (graph->nodes, NULL);
  g_ptr_array_unref (graph->nodes);
  graph->nodes = order;
  return FALSE;
}

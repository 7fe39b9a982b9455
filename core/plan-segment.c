/*
 * plan-segment.c — values held in the backend's own layout between calls
 * (plan-segment.h).
 *
 * Why in the plan: a value's layout is a contract between its producer
 * and every reader, and only the plan sees them all.  On the CPU in bf16
 * the convolutions, pooling and residual adds of a ResNet run one after
 * another in oneDNN; between them their activations would otherwise go
 * from oneDNN's bf16 nhwc to fp32 planes and back at every call, passes
 * over memory that cost as much as the small layers themselves.  Held in
 * the backend's layout they are converted only where a segment is
 * entered and left.  The bytes asked for here are what the planner packs
 * into the arena (half a plane's for bf16), so nothing is allocated per
 * forward.
 */
#include "core/plan-segment.h"

static guint
value_of (const hy_segment_input *in, const hy_entry *e)
{
  return in->first_value[e->node] + e->index;
}

static hy_call_shape
shape_of (const hy_segment_input *in, guint i)
{
  const hy_node *node = hy_graph_node (in->graph, i);
  const hy_node *data = node->n_inputs > 0
      ? hy_graph_node (in->graph, node->inputs[0].node) : NULL;
  const hy_call_shape s = {
    node->op->id, node->params,
    data ? &data->shapes[node->inputs[0].index] : NULL,
    node->n_outputs > 0 ? &node->shapes[0] : NULL, FALSE, NULL,
  };
  return s;
}

/* Nodes in a pair the planner kept fusable, first or second. */
static gboolean *
pair_members (const hy_segment_input *in)
{
  const guint n = hy_graph_n_nodes (in->graph);
  gboolean *member = g_new0 (gboolean, MAX (n, 1));
  for (guint i = 0; i < n; i++) {
    const hy_node *node = hy_graph_node (in->graph, i);
    if (in->fusable[i] && node->n_inputs > 0) {
      member[i] = TRUE;
      member[node->inputs[0].node] = TRUE;
    }
  }
  return member;
}

size_t *
hy_plan_private_values (const hy_segment_input *in)
{
  size_t *bytes = g_new0 (size_t, MAX (in->n_values, 1));
  const hy_backend_iface *iface = in->backend->iface;
  if (!iface->private_output_bytes || !iface->reads_private)
    return bytes;
  const hy_graph *g = in->graph;
  const guint n = hy_graph_n_nodes (g);
  gboolean *member = pair_members (in);
  /* Per value: every reader so far can read it in the backend's layout
   * (starts TRUE; a value nobody reads stays planes below). */
  gboolean *readable = g_new (gboolean, MAX (in->n_values, 1));
  int *n_readers = g_new0 (int, MAX (in->n_values, 1));
  gboolean *as_operand = g_new0 (gboolean, MAX (in->n_values, 1));
  for (guint v = 0; v < in->n_values; v++)
    readable[v] = TRUE;
  for (guint i = 0; i < n; i++) {
    const hy_node *node = hy_graph_node (g, i);
    for (guint k = 0; k < node->n_inputs; k++) {
      const guint v = value_of (in, &node->inputs[k]);
      n_readers[v]++;
      as_operand[v] |= k > 0;
      if (!readable[v])
        continue;
      gboolean twice = FALSE;
      for (guint j = 0; j < k; j++)
        twice |= value_of (in, &node->inputs[j]) == v;
      if (!node->op || hy_op_is_view (node->op->id) || member[i] || twice
          || k >= 32) {
        readable[v] = FALSE;
        continue;
      }
      const hy_call_shape s = shape_of (in, i);
      readable[v] = iface->reads_private (in->backend, &s, (int) k);
    }
  }
  /* In graph order, so that a producer knows whether its data input is
   * held in the backend's layout (pooling can only keep a layout it is
   * given).  Only output 0 is ever held so: a quantized convolution's
   * other two are its range, one float each. */
  for (guint i = 0; i < n; i++) {
    const hy_node *node = hy_graph_node (g, i);
    if (!node->op || node->n_outputs < 1 || node->n_inputs < 1
        || member[i] || hy_op_is_view (node->op->id))
      continue;
    const guint v = in->first_value[i];
    if (!readable[v] || n_readers[v] == 0
        || in->value_last[v] >= in->step_after_all)
      continue;
    const hy_call_shape s = shape_of (in, i);
    const gboolean in0_private = bytes[value_of (in, &node->inputs[0])] > 0;
    bytes[v] = iface->private_output_bytes (in->backend, &s, in0_private,
        as_operand[v]);
  }
  g_free (as_operand);
  g_free (n_readers);
  g_free (readable);
  g_free (member);
  return bytes;
}

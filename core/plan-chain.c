/*
 * plan-chain.c — finds the chains the backend may run as one call
 * (plan-chain.h) while the memory is planned, and makes each one call
 * once the calls are prepared (hy_plan_fuse_chains, plan-impl.h).
 *
 * Unlike the pairs of plan-fuse.c, whose calls read and write planes,
 * a chain starts and ends at values held in the backend's layout, so it
 * is found after those values are chosen: its inner values stay planes,
 * keep their places in the arena and are never written.  Imperative
 * mode runs no plan: there every op of the chain still runs by itself
 * (and dumps its layer).
 */
#include <string.h>

#include "core/plan-chain.h"
#include "core/plan-impl.h"
#include "core/backend.h"
#include "kernels/params/quantized.h"

static guint
value_of (const hy_segment_input *in, const hy_entry *e)
{
  return in->first_value[e->node] + e->index;
}

/* Per value, its only reader reading it as its data (an op node), or -1
 * where it has none, several, reads it otherwise or is a graph output. */
static int *
sole_data_readers (const hy_segment_input *in)
{
  const hy_graph *g = in->graph;
  int *reader = g_new (int, MAX (in->n_values, 1));
  int *count = g_new0 (int, MAX (in->n_values, 1));
  for (guint v = 0; v < in->n_values; v++)
    reader[v] = -1;
  for (guint i = 0; i < hy_graph_n_nodes (g); i++) {
    const hy_node *node = hy_graph_node (g, i);
    for (guint k = 0; k < node->n_inputs; k++) {
      const guint v = value_of (in, &node->inputs[k]);
      if (count[v]++ == 0 && k == 0 && node->op)
        reader[v] = (int) i;
      else
        reader[v] = -1;
    }
  }
  for (guint h = 0; h < g->n_heads; h++)
    reader[value_of (in, &g->heads[h])] = -1;
  g_free (count);
  return reader;
}

static hy_call_shape
shape_of (const hy_segment_input *in, const hy_node *node)
{
  const hy_node *data = hy_graph_node (in->graph, node->inputs[0].node);
  const hy_call_shape s = {
    node->op->id, node->params, &data->shapes[node->inputs[0].index],
    &node->shapes[0], FALSE, NULL,
  };
  return s;
}

/* The last node of the chain that starts at dequantize node i, or -1. */
static int
chain_from (const hy_segment_input *in, const size_t *private_bytes,
    const int *reader, guint i)
{
  const hy_node *node = hy_graph_node (in->graph, i);
  if (!node->op || node->op->id != HY_OP_DEQUANTIZE || node->n_inputs != 3
      || node->n_outputs != 1
      || !private_bytes[value_of (in, &node->inputs[0])])
    return -1;
  for (int links = 0;; links++) {
    const int r = reader[in->first_value[i]];
    if (r < 0)
      return -1;
    const hy_node *next = hy_graph_node (in->graph, (guint) r);
    if (next->op->id == HY_OP_QUANTIZE_V2)
      return ((const hy_quantize_params *) next->params)->calibrated
          && next->n_outputs == 3
          && private_bytes[in->first_value[r]] ? r : -1;
    const hy_call_shape s = shape_of (in, next);
    if (links == HY_PLAN_MAX_CHAIN_LINKS || next->n_inputs != 1 || next->n_outputs != 1
        || !in->backend->iface->chain_link (in->backend, &s))
      return -1;
    i = (guint) r;
  }
}

int *
hy_plan_find_chains (const hy_segment_input *in, const size_t *private_bytes,
    int *value_last)
{
  if (!in->backend->iface->chain_link || !in->backend->iface->fuse_chain)
    return NULL;
  const hy_graph *g = in->graph;
  const guint n = hy_graph_n_nodes (g);
  int *last = g_new (int, MAX (n, 1));
  int *reader = sole_data_readers (in);
  for (guint i = 0; i < n; i++) {
    last[i] = chain_from (in, private_bytes, reader, i);
    if (last[i] < 0)
      continue;
    const hy_node *node = hy_graph_node (g, i);
    for (guint k = 0; k < node->n_inputs; k++) {
      const guint v = value_of (in, &node->inputs[k]);
      value_last[v] = MAX (value_last[v], last[i]);
    }
  }
  g_free (reader);
  return last;
}

/* Whether calls [c, c + n) run nodes first..last of a chain, each
 * reading the one before's output as its data. */
static gboolean
chain_calls (const hy_plan *plan, int c, int n, guint last)
{
  if (plan->call_nodes[c + n - 1] != last)
    return FALSE;
  for (int k = 1; k < n; k++)
    if (plan->call_nodes[c + k] == G_MAXUINT
        || plan->calls[c + k].in[0] != plan->calls[c + k - 1].out[0])
      return FALSE;
  return TRUE;
}

void
hy_plan_fuse_chains (hy_plan *plan, const int *chain_last)
{
  hy_backend *be = plan->backend;
  if (!chain_last || plan->n_prepared != plan->n_calls)
    return;
  for (int c = 0; c < plan->n_calls; c++) {
    const guint first = plan->call_nodes[c];
    if (first == G_MAXUINT || chain_last[first] < 0)
      continue;
    const guint last = (guint) chain_last[first];
    int n = 1;
    while (c + n < plan->n_calls && plan->call_nodes[c + n] != G_MAXUINT
        && plan->call_nodes[c + n] < last)
      n++;
    n++;
    if (c + n > plan->n_calls || !chain_calls (plan, c, n, last))
      continue;
    const void **node_params = g_newa (const void *, n);
    for (int k = 0; k < n; k++)
      node_params[k] = hy_graph_node (plan->graph,
          plan->call_nodes[c + k])->params;
    const hy_call *head = &plan->calls[c], *tail = &plan->calls[c + n - 1];
    hy_call fused = {
      .in = head->in, .n_in = head->n_in, .out = tail->out,
      .n_out = tail->n_out, .op = tail->op,
      .const_inputs = head->const_inputs,
      .private_inputs = head->private_inputs,
      .private_wide_inputs = head->private_wide_inputs,
      .private_outputs = tail->private_outputs,
      .private_wide_outputs = tail->private_wide_outputs,
    };
    if (!be->iface->fuse_chain (be, head, n, node_params, &fused))
      continue;
    for (int k = 0; be->iface->release_call && k < n; k++)
      be->iface->release_call (be, &plan->calls[c + k]);
    plan->calls[c] = fused;
    plan->call_first_nodes[c] = first;
    plan->call_nodes[c] = last;
    const int rest = plan->n_calls - c - n;
    memmove (&plan->calls[c + 1], &plan->calls[c + n],
        (size_t) rest * sizeof *plan->calls);
    memmove (&plan->call_nodes[c + 1], &plan->call_nodes[c + n],
        (size_t) rest * sizeof *plan->call_nodes);
    memmove (&plan->call_first_nodes[c + 1], &plan->call_first_nodes[c + n],
        (size_t) rest * sizeof *plan->call_first_nodes);
    plan->n_calls -= n - 1;
    plan->n_prepared -= n - 1;
    /* the dequantize left the backend's layout, the quantize_v2 entered
     * it: the fused call does neither */
    plan->memory.segment_exits--;
    plan->memory.segment_entries--;
  }
}

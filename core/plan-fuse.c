/*
 * plan-fuse.c — two consecutive calls of a plan as one, where the
 * backend has a kernel for the pair (hy_backend_iface.fuse_calls): the
 * value between them then never leaves the kernel's buffers.
 *
 * The graph passes fuse what any backend runs as one op (a convolution's
 * BatchNorm and activation); this is for pairs that only a backend's own
 * kernel can run together (on the CPU, MobileNet's expansion and the
 * depthwise layer that reads it, kernels/cpu/conv-pw-dw.h).  The fused
 * call keeps the second call's node (errors name it; the profile counts
 * both nodes' arithmetic there) and the first's node is remembered in
 * call_first_nodes.  The value between them keeps its place in the arena
 * (the memory plan is made before calls are fused), but no call writes
 * it.
 */
#include <stdint.h>
#include <string.h>

#include "plan-impl.h"
#include "backend.h"

/* How many inputs of graph nodes, and graph outputs, read node `node`'s
 * output 0. */
static guint
readers_of (const hy_graph *g, guint node)
{
  guint n = 0;
  for (guint i = 0; i < hy_graph_n_nodes (g); i++) {
    const hy_node *other = hy_graph_node (g, i);
    for (guint k = 0; k < other->n_inputs; k++)
      n += other->inputs[k].node == node && other->inputs[k].index == 0;
  }
  for (guint h = 0; h < g->n_heads; h++)
    n += g->heads[h].node == node && g->heads[h].index == 0;
  return n;
}

/* Whether call c + 1 reads call c's only output as its data and nothing
 * else reads it: no other node, no view, no graph output. */
static gboolean
reads_only (const hy_plan *plan, int c)
{
  const guint first = plan->call_nodes[c], second = plan->call_nodes[c + 1];
  if (first == G_MAXUINT || second == G_MAXUINT)
    return FALSE;
  const hy_node *node = hy_graph_node (plan->graph, second);
  return plan->calls[c].n_out == 1 && node->n_inputs >= 1
      && node->inputs[0].node == first && node->inputs[0].index == 0
      && plan->calls[c + 1].in[0] == plan->calls[c].out[0]
      && readers_of (plan->graph, first) == 1;
}

/* Whether the bytes of a and b overlap.  A caller's input has no data
 * until a forward binds it (NULL here), and never lies in the arena. */
static gboolean
overlap (const hy_tensor *a, const hy_tensor *b)
{
  if (!a->data || !b->data)
    return FALSE;
  const uintptr_t a0 = (uintptr_t) a->data, b0 = (uintptr_t) b->data;
  return a0 < b0 + hy_tensor_nbytes (b) && b0 < a0 + hy_tensor_nbytes (a);
}

/* Whether the fused call would write an output where one of its inputs
 * lies (the planner keeps the inputs of pairs the backend may fuse live
 * through the second call; this holds the rest off). */
static gboolean
writes_over_inputs (const hy_call *fused)
{
  for (int j = 0; j < fused->n_out; j++)
    for (int k = 0; k < fused->n_in; k++)
      if (fused->in[k] && overlap (fused->out[j], fused->in[k]))
        return TRUE;
  return FALSE;
}

gboolean
hy_plan_fuse_next (hy_plan *plan, int c)
{
  hy_backend *be = plan->backend;
  if (!be->iface->fuse_calls || c + 1 >= plan->n_calls
      || !reads_only (plan, c))
    return FALSE;
  const hy_call *first = &plan->calls[c], *second = &plan->calls[c + 1];
  const int n_in = first->n_in + second->n_in - 1;
  const hy_tensor **in = g_new0 (const hy_tensor *, n_in + 1);
  memcpy (in, first->in, (size_t) first->n_in * sizeof *in);
  memcpy (in + first->n_in, second->in + 1,
      (size_t) (second->n_in - 1) * sizeof *in);
  hy_call fused = {
    .params = second->params, .in = in, .out = second->out,
    .n_in = n_in, .n_out = second->n_out, .op = second->op,
    .const_inputs = first->const_inputs,
  };
  for (int k = 1; k < second->n_in; k++)
    if (second->const_inputs >> k & 1u && first->n_in + k - 1 < 32)
      fused.const_inputs |= 1u << (first->n_in + k - 1);
  if (writes_over_inputs (&fused)
      || !be->iface->fuse_calls (be, first, second, &fused)) {
    g_free (in);
    return FALSE;
  }
  g_ptr_array_add (plan->fused_args, in);
  plan->calls[c] = fused;
  plan->call_first_nodes[c] = plan->call_nodes[c];
  plan->call_nodes[c] = plan->call_nodes[c + 1];
  const int rest = plan->n_calls - c - 2;
  memmove (&plan->calls[c + 1], &plan->calls[c + 2],
      (size_t) rest * sizeof *plan->calls);
  memmove (&plan->call_nodes[c + 1], &plan->call_nodes[c + 2],
      (size_t) rest * sizeof *plan->call_nodes);
  memmove (&plan->call_first_nodes[c + 1], &plan->call_first_nodes[c + 2],
      (size_t) rest * sizeof *plan->call_first_nodes);
  plan->n_calls--;
  return TRUE;
}

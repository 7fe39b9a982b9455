/*
 * plan-fuse.c — two consecutive calls of a plan as one, where the
 * backend has a kernel for the pair (hy_backend_iface.fuse_calls): the
 * value between them then never leaves the kernel's buffers.
 *
 * The graph passes fuse what any backend runs as one op (a convolution's
 * BatchNorm and activation); this is for pairs that only a backend's own
 * kernel can run together (on the CPU, MobileNet's expansion and the
 * depthwise layer that reads it, kernels/cpu/conv/conv-pw-dw.h).  A fused
 * call may take the next call in too (the CPU's expansion, depthwise and
 * projection): a chain.  The fused call keeps the last call's node
 * (errors name it; the profile counts every node's arithmetic there) and
 * the chain's first node is remembered in call_first_nodes.  The values
 * between them keep their places in the arena (the memory plan is made
 * before calls are fused), but no call writes them.
 */
#include <string.h>

#include "core/plan-impl.h"
#include "core/backend.h"

/* Whether calls c and c + 1 run the pair the planner kept fusable: call
 * c + 1 reads call c's only output, and only it, as its data (the
 * planner checked that no other node, view or graph output reads it, and
 * kept call c's inputs live through call c + 1, so the fused call's
 * output lies over none of them). */
static gboolean
planned_pair (const hy_plan *plan, int c, const gboolean *fusable)
{
  const guint first = plan->call_nodes[c], second = plan->call_nodes[c + 1];
  if (first == G_MAXUINT || second == G_MAXUINT || !fusable[second])
    return FALSE;
  const hy_node *node = hy_graph_node (plan->graph, second);
  return plan->calls[c].n_out == 1 && node->inputs[0].node == first
      && plan->calls[c + 1].in[0] == plan->calls[c].out[0];
}

gboolean
hy_plan_fuse_next (hy_plan *plan, int c, const gboolean *fusable)
{
  hy_backend *be = plan->backend;
  if (!be->iface->fuse_calls || c + 1 >= plan->n_calls
      || !planned_pair (plan, c, fusable))
    return FALSE;
  const hy_call *first = &plan->calls[c], *second = &plan->calls[c + 1];
  const int n_in = first->n_in + second->n_in - 1;
  const hy_tensor **in = g_new0 (const hy_tensor *, n_in + 1);
  memcpy (in, first->in, (size_t) first->n_in * sizeof *in);
  memcpy (in + first->n_in, second->in + 1,
      (size_t) (second->n_in - 1) * sizeof *in);
  uint32_t *const_bits = g_new0 (uint32_t, hy_const_bits_words (n_in));
  for (int k = 0; k < first->n_in; k++)
    if (hy_call_input_const (first, k))
      hy_const_bits_set (const_bits, k);
  for (int k = 1; k < second->n_in; k++)
    if (hy_call_input_const (second, k))
      hy_const_bits_set (const_bits, first->n_in + k - 1);
  hy_call fused = {
    .params = second->params, .in = in, .out = second->out,
    .n_in = n_in, .n_out = second->n_out, .op = second->op,
    .const_inputs = const_bits,
  };
  if (!be->iface->fuse_calls (be, first, second, &fused)) {
    g_free (in);
    g_free (const_bits);
    return FALSE;
  }
  g_ptr_array_add (plan->fused_args, in);
  g_ptr_array_add (plan->fused_args, const_bits);
  plan->calls[c] = fused;
  /* A chain keeps its first node. */
  if (plan->call_first_nodes[c] == G_MAXUINT)
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

/*
 * pass-fuse.c — moves what follows a Convolution or FullyConnected into
 * its epilogue (hy_fused_epilogue, nn.h), so the kernel applies it while
 * the output is still in cache instead of a separate op reading it back:
 *
 *  - an activation (relu, sigmoid, tanh; clip, relu6 included; leaky):
 *    y = act (W·x + b);
 *  - a residual add, elemwise_add (or a broadcast_add of equal shapes) of
 *    the product and any other value: y = W·x + b + other, "other"
 *    becoming the producer's last input; an activation after the add then
 *    fuses too, which turns ResNet v1's conv → BN → add → relu into one
 *    kernel call once BatchNorm is folded.
 *
 * The product must have no other reader: nobody may see it without what
 * was fused.  An add fuses into whichever operand's producer comes later
 * in the graph, so the other operand is computed before it (index order
 * stays topological); an activation already fused rules out a later add,
 * since act (y) + other is not act (y + other).
 */
#include "passes.h"
#include "graph-edit.h"
#include "kernels/params/elementwise.h"

/* Output k > 0 of a node must be read by nothing (rrelu's mask). */
static gboolean
only_output_0_used (const hy_graph *graph, guint index)
{
  const hy_node *node = hy_graph_node (graph, index);
  for (guint k = 1; k < node->n_outputs; k++) {
    guint heads;
    if (hy_graph_count_uses (graph, index, k, &heads) > 0 || heads > 0)
      return FALSE;
  }
  return TRUE;
}

/* The activation `node` applies, as an epilogue; FALSE if it has none an
 * epilogue can apply. */
static gboolean
activation_of (const hy_node *node, hy_fused_epilogue *out)
{
  *out = (hy_fused_epilogue) { .act = HY_FUSED_ACT_NONE };
  if (!node->op)
    return FALSE;
  switch (node->op->id) {
    case HY_OP_ACTIVATION:{
      const hy_activation_params *p = node->params;
      if (p->act_type == HY_ACT_RELU)
        out->act = HY_FUSED_ACT_RELU;
      else if (p->act_type == HY_ACT_SIGMOID)
        out->act = HY_FUSED_ACT_SIGMOID;
      else if (p->act_type == HY_ACT_TANH)
        out->act = HY_FUSED_ACT_TANH;
      break;
    }
    case HY_OP_RELU:
      out->act = HY_FUSED_ACT_RELU;
      break;
    case HY_OP_SIGMOID:
      out->act = HY_FUSED_ACT_SIGMOID;
      break;
    case HY_OP_TANH:
      out->act = HY_FUSED_ACT_TANH;
      break;
    case HY_OP_CLIP:{
      const hy_clip_params *p = node->params;
      out->act = HY_FUSED_ACT_CLIP;
      out->alpha = p->a_min;
      out->beta = p->a_max;
      break;
    }
    case HY_OP_LEAKY_RELU:{
      /* rrelu runs at inference as leaky with the mean slope (parse()
       * stored it). */
      const hy_leaky_relu_params *p = node->params;
      if (p->act_type == HY_LEAKY_LEAKY || p->act_type == HY_LEAKY_RRELU) {
        out->act = HY_FUSED_ACT_LEAKY;
        out->alpha = p->slope;
      }
      break;
    }
    default:
      break;
  }
  return out->act != HY_FUSED_ACT_NONE;
}

/* The producer whose epilogue can absorb what node `consumer` does to its
 * input `in`, or NULL. */
static hy_node *
absorbing_producer (const hy_graph *graph, hy_entry in, guint consumer)
{
  hy_node *prod = hy_graph_node (graph, in.node);
  hy_fused_epilogue *e = hy_node_epilogue (prod);
  if (!e || in.index != 0 || e->act != HY_FUSED_ACT_NONE)
    return NULL;
  return hy_graph_is_sole_consumer (graph, in.node, 0, consumer) ? prod
      : NULL;
}

static gboolean
fuse_activation (hy_graph *graph, guint i)
{
  const hy_node *node = hy_graph_node (graph, i);
  hy_fused_epilogue act;
  if (!activation_of (node, &act) || node->n_inputs < 1
      || !only_output_0_used (graph, i))
    return FALSE;
  const hy_entry in = node->inputs[0];
  hy_node *prod = absorbing_producer (graph, in, i);
  if (!prod)
    return FALSE;
  hy_fused_epilogue *e = hy_node_epilogue (prod);
  e->act = act.act;
  e->alpha = act.alpha;
  e->beta = act.beta;
  hy_graph_replace_uses (graph, (hy_entry) { i, 0 }, in);
  return TRUE;
}

/* elemwise_add, or broadcast_add that broadcasts nothing. */
static gboolean
is_plain_add (const hy_graph *graph, const hy_node *node)
{
  if (node->n_inputs != 2)
    return FALSE;
  if (hy_node_is_op (node, HY_OP_ELEMWISE_ADD))
    return TRUE;
  if (!hy_node_is_op (node, HY_OP_BROADCAST_ADD))
    return FALSE;
  for (guint k = 0; k < 2; k++) {
    const hy_entry *e = &node->inputs[k];
    if (!hy_shape_equal (&hy_graph_node (graph, e->node)->shapes[e->index],
            &node->shapes[0]))
      return FALSE;
  }
  return TRUE;
}

static gboolean
fuse_residual_add (hy_graph *graph, guint i)
{
  hy_node *node = hy_graph_node (graph, i);
  if (!is_plain_add (graph, node))
    return FALSE;
  for (guint side = 0; side < 2; side++) {
    const hy_entry in = node->inputs[side], other = node->inputs[1 - side];
    if (other.node >= in.node)
      continue;                 /* would read a value computed after it */
    hy_node *prod = absorbing_producer (graph, in, i);
    if (!prod)
      continue;
    hy_fused_epilogue *e = hy_node_epilogue (prod);
    if (e->residual)
      continue;
    e->residual = TRUE;
    hy_node_append_input (prod, other);
    hy_graph_replace_uses (graph, (hy_entry) { i, 0 }, in);
    return TRUE;
  }
  return FALSE;
}

gboolean
hy_pass_fuse_epilogues (hy_graph *graph, hy_pass_stats *stats,
    GError **error)
{
  /* In index order, so an add fuses before the activation that follows
   * it. */
  for (guint i = 0; i < hy_graph_n_nodes (graph); i++) {
    if (fuse_residual_add (graph, i)) {
      if (stats)
        stats->adds_fused++;
    } else if (fuse_activation (graph, i)) {
      if (stats)
        stats->activations_fused++;
    }
  }
  return TRUE;
}

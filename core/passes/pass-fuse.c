/*
 * pass-fuse.c — moves what follows a Convolution or FullyConnected into
 * its epilogue (hy_fused_epilogue, nn.h), so the kernel applies it while
 * the output is still in cache instead of a separate op reading it back:
 *
 *  - an activation (relu, sigmoid, tanh; clip, relu6 included; leaky):
 *    y = act (W·x + b);
 *  - MobileNetV3's hard sigmoid and hard swish, which MXNet exports as
 *    ops of their own: v → _plus_scalar 3 → clip [0, 6] → _div_scalar 6
 *    (hard sigmoid), then an elemwise_mul (or broadcast_mul of equal
 *    shapes) of v by that (hard swish) — four kernel calls each, which
 *    become one activation of the epilogue;
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
 * since act (y) + other is not act (y + other).  Of a hard sigmoid or
 * swish chain every link must be exactly that op with exactly those
 * scalars, read by nothing but the next link (hard swish: v by the chain
 * and the multiply only), since the epilogue repeats those very float
 * operations and nothing else.
 */
#include "core/passes/passes.h"
#include "core/passes/graph-edit.h"
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

/* Whether `node` is the scalar op `id` computing x ⊕ scalar on float
 * data (not scalar ⊕ x). */
static gboolean
is_scalar_op (const hy_node *node, hy_op_id id, float scalar)
{
  if (!hy_node_is_op (node, id) || node->n_inputs != 1)
    return FALSE;
  const hy_scalar_params *p = node->params;
  return !p->scalar_first && p->scalar == scalar
      && p->int_dtype == HY_DTYPE_FLOAT32;
}

/* Whether output 0 of node `link` is read by `next` alone, and it has no
 * other output anyone reads. */
static gboolean
only_feeds (const hy_graph *graph, guint link, guint next)
{
  return hy_graph_is_sole_consumer (graph, link, 0, next)
      && only_output_0_used (graph, link);
}

/* If output `out` is relu6 (v + 3) / 6 as GluonCV's HardSigmoid exports
 * it — _plus_scalar 3, clip [0, 6], _div_scalar 6, each link read only by
 * the next — the v it is of: the entry the _plus_scalar reads. */
static gboolean
hard_sigmoid_of (const hy_graph *graph, hy_entry out, hy_entry *v)
{
  const hy_node *div = hy_graph_node (graph, out.node);
  if (out.index != 0 || !is_scalar_op (div, HY_OP_DIV_SCALAR, 6.0f))
    return FALSE;
  const hy_entry c = div->inputs[0];
  const hy_node *clip = hy_graph_node (graph, c.node);
  if (c.index != 0 || !hy_node_is_op (clip, HY_OP_CLIP)
      || clip->n_inputs != 1 || !only_feeds (graph, c.node, out.node))
    return FALSE;
  const hy_clip_params *cp = clip->params;
  if (cp->a_min != 0.0f || cp->a_max != 6.0f
      || cp->int_dtype != HY_DTYPE_FLOAT32)
    return FALSE;
  const hy_entry a = clip->inputs[0];
  const hy_node *add = hy_graph_node (graph, a.node);
  if (a.index != 0 || !is_scalar_op (add, HY_OP_PLUS_SCALAR, 3.0f)
      || !only_feeds (graph, a.node, c.node))
    return FALSE;
  *v = add->inputs[0];
  return TRUE;
}

/* The producer of v, when its epilogue can take an activation and v has
 * exactly `readers` readers, none of them a graph output. */
static hy_node *
producer_read_by (const hy_graph *graph, hy_entry v, guint readers)
{
  hy_node *prod = hy_graph_node (graph, v.node);
  hy_fused_epilogue *e = hy_node_epilogue (prod);
  guint heads;
  if (!e || v.index != 0 || e->act != HY_FUSED_ACT_NONE
      || hy_graph_count_uses (graph, v.node, 0, &heads) != readers
      || heads > 0)
    return NULL;
  return prod;
}

/* Node i the end of a hard sigmoid of a product nothing else reads. */
static gboolean
fuse_hard_sigmoid (hy_graph *graph, guint i)
{
  hy_entry v;
  if (!hard_sigmoid_of (graph, (hy_entry) { i, 0 }, &v)
      || !only_output_0_used (graph, i))
    return FALSE;
  /* Its one reader, the _plus_scalar (live, since node i is). */
  hy_node *prod = producer_read_by (graph, v, 1);
  if (!prod)
    return FALSE;
  hy_node_epilogue (prod)->act = HY_FUSED_ACT_HARD_SIGMOID;
  hy_graph_replace_uses (graph, (hy_entry) { i, 0 }, v);
  return TRUE;
}

/* Whether `node` is a binary op `same` (elemwise_*), or its broadcast_*
 * `bcast` of operands shaped like the result (broadcasting nothing). */
static gboolean
is_plain_binary (const hy_graph *graph, const hy_node *node, hy_op_id same,
    hy_op_id bcast)
{
  if (node->n_inputs != 2)
    return FALSE;
  if (hy_node_is_op (node, same))
    return TRUE;
  if (!hy_node_is_op (node, bcast))
    return FALSE;
  for (guint k = 0; k < 2; k++) {
    const hy_entry *e = &node->inputs[k];
    if (!hy_shape_equal (&hy_graph_node (graph, e->node)->shapes[e->index],
            &node->shapes[0]))
      return FALSE;
  }
  return TRUE;
}

/* Node i a multiply of a product v by the hard sigmoid of v, either
 * operand first: GluonCV's HardSwish. */
static gboolean
fuse_hard_swish (hy_graph *graph, guint i)
{
  const hy_node *node = hy_graph_node (graph, i);
  if (!is_plain_binary (graph, node, HY_OP_ELEMWISE_MUL, HY_OP_BROADCAST_MUL)
      || !only_output_0_used (graph, i))
    return FALSE;
  for (guint side = 0; side < 2; side++) {
    const hy_entry hs = node->inputs[side], x = node->inputs[1 - side];
    hy_entry v;
    if (!hard_sigmoid_of (graph, hs, &v) || v.node != x.node
        || v.index != x.index || !only_feeds (graph, hs.node, i))
      continue;
    /* Two readers: the chain's _plus_scalar and this multiply (the other
     * operand being the chain's end, it reads v once). */
    hy_node *prod = producer_read_by (graph, v, 2);
    if (!prod)
      continue;
    hy_node_epilogue (prod)->act = HY_FUSED_ACT_HARD_SWISH;
    hy_graph_replace_uses (graph, (hy_entry) { i, 0 }, v);
    return TRUE;
  }
  return FALSE;
}

/* elemwise_add, or broadcast_add that broadcasts nothing. */
static gboolean
is_plain_add (const hy_graph *graph, const hy_node *node)
{
  return is_plain_binary (graph, node, HY_OP_ELEMWISE_ADD,
      HY_OP_BROADCAST_ADD);
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
    } else if (fuse_activation (graph, i) || fuse_hard_sigmoid (graph, i)
        || fuse_hard_swish (graph, i)) {
      if (stats)
        stats->activations_fused++;
    }
  }
  return TRUE;
}

/*
 * pass-fold-bn.c — folds an inference BatchNorm into the Convolution or
 * FullyConnected that feeds it: the BN's per-channel arithmetic joins the
 * producer's epilogue (hy_fused_epilogue, nn.h), applied while the output
 * is still in cache, and the BN node goes.
 *
 * Why not scale the weights (W' = α·W, b' = β + α·(b − mean)), the usual
 * fold?  Two reasons.  The model's weights stay in use by imperative mode,
 * so every plan would carry a scaled copy of them (94 MB more for
 * resnet50_v1).  And rounding α·W perturbs every weight by up to half an
 * ulp, which deep networks amplify: one-ulp weight noise moves
 * resnet50_v1's output by 3.7e-5 relative, beyond the 1e-5 that hybrid and
 * imperative mode must agree to.  The epilogue instead repeats
 * batch-norm.c's arithmetic exactly, for one multiply-add per output value
 * in a pass that happens anyway: bit for bit what the unfused graph gives.
 *
 * Folding needs the BN to be the producer's only consumer (nobody else may
 * see the unnormalised values), its axis to be the producer's channel axis
 * (1 for a convolution, the last for FullyConnected), and its parameters
 * to be bound.
 */
#include <math.h>

#include "core/passes/passes.h"
#include "core/passes/graph-edit.h"
#include "kernels/params/nn.h"

/* BatchNorm's inputs, in order. */
enum { BN_DATA, BN_GAMMA, BN_BETA, BN_MEAN, BN_VAR };

static const hy_tensor *
bound_input (const hy_graph *graph, const hy_node *node, guint k)
{
  const hy_node *src = hy_graph_node (graph, node->inputs[k].node);
  return hy_node_is_constant (src) ? src->value : NULL;
}

/* The producer `bn` can fold into, or -1. */
static int
foldable_producer (const hy_graph *graph, guint bn_index)
{
  const hy_node *bn = hy_graph_node (graph, bn_index);
  const hy_batch_norm_params *bp = bn->params;
  if (bn->n_inputs != 5)
    return -1;
  /* The extra mean/var outputs would have to be kept: leave it alone. */
  for (guint k = 1; k < bn->n_outputs; k++) {
    guint heads;
    if (hy_graph_count_uses (graph, bn_index, k, &heads) > 0 || heads > 0)
      return -1;
  }
  for (guint k = BN_GAMMA; k <= BN_VAR; k++)
    if (!bound_input (graph, bn, k))
      return -1;

  const hy_entry in = bn->inputs[BN_DATA];
  hy_node *prod = hy_graph_node (graph, in.node);
  const hy_fused_epilogue *e = hy_node_epilogue (prod);
  if (!e || in.index != 0)
    return -1;
  if (!hy_graph_is_sole_consumer (graph, in.node, 0, bn_index))
    return -1;
  /* Nothing may already come after the product: BN must be first. */
  if (e->act != HY_FUSED_ACT_NONE || e->batch_norm || e->residual)
    return -1;

  const gboolean conv = hy_node_is_op (prod, HY_OP_CONVOLUTION);
  const int ndim = prod->shapes[0].ndim;
  int axis;
  if (ndim < 1 || !hy_axis_normalize (bp->axis, ndim, &axis))
    return -1;
  if (axis != (conv ? 1 : ndim - 1))
    return -1;
  return (int) in.node;
}

/* The epilogue's operand: rows mean, scale, shift, the scale computed
 * exactly as batch-norm.c computes it. */
static hy_tensor *
bn_operand (const hy_batch_norm_params *bp, const hy_tensor *gamma,
    const hy_tensor *beta, const hy_tensor *mean, const hy_tensor *var)
{
  const int64_t channels = hy_shape_numel (&mean->shape);
  const hy_shape shape = { .ndim = 2, .dims = { 3, channels } };
  hy_tensor *t = hy_tensor_new (&shape);
  float *m = t->data, *scale = m + channels, *shift = scale + channels;
  for (int64_t c = 0; c < channels; c++) {
    const float inv_std = 1.0f / sqrtf (var->data[c] + bp->eps);
    m[c] = mean->data[c];
    scale[c] = bp->fix_gamma ? inv_std : gamma->data[c] * inv_std;
    shift[c] = beta->data[c];
  }
  return t;
}

/* Moves BN node `bn_index` into the epilogue of producer `prod_index`
 * (which precedes it); returns the number of nodes inserted before the
 * producer. */
static guint
fold_into (hy_graph *graph, guint bn_index, guint prod_index,
    GPtrArray *owned)
{
  hy_node *bn = hy_graph_node (graph, bn_index);
  hy_node *prod = hy_graph_node (graph, prod_index);
  hy_tensor *operand = bn_operand (bn->params,
      bound_input (graph, bn, BN_GAMMA), bound_input (graph, bn, BN_BETA),
      bound_input (graph, bn, BN_MEAN), bound_input (graph, bn, BN_VAR));
  g_ptr_array_add (owned, operand);

  /* The BN's consumers read the producer: both indices move up by one
   * once the operand sits before the producer.  With no residual yet, the
   * operand is the producer's last input. */
  hy_graph_replace_uses (graph, (hy_entry) { bn_index, 0 },
      (hy_entry) { prod_index, 0 });
  g_autofree char *name = g_strdup_printf ("%s_fused", bn->name);
  hy_graph_insert_node (graph, prod_index,
      hy_node_new_constant (name, operand));
  hy_node_append_input (prod, (hy_entry) { prod_index, 0 });
  hy_node_epilogue (prod)->batch_norm = true;
  return 1;
}

gboolean
hy_pass_fold_batchnorm (hy_graph *graph, GPtrArray *owned,
    hy_pass_stats *stats, GError **error)
{
  for (guint i = 0; i < hy_graph_n_nodes (graph); i++) {
    const hy_node *node = hy_graph_node (graph, i);
    if (!hy_node_is_op (node, HY_OP_BATCH_NORM)
        && !hy_node_is_op (node, HY_OP_SYNC_BATCH_NORM))
      continue;
    int prod = foldable_producer (graph, i);
    if (prod < 0)
      continue;
    i += fold_into (graph, i, (guint) prod, owned);
    if (stats)
      stats->batchnorms_folded++;
  }
  return TRUE;
}

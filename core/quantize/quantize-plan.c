/*
 * quantize-plan.c — which fp32 nodes become which int8 layers, as MXNet
 * 1.9.1's MKLDNN_QUANTIZE pass groups them: a Convolution with the
 * BatchNorm, ReLU and residual add (and the ReLU after it) that follow it
 * alone; a FullyConnected; Pooling and Flatten.  Everything else stays
 * fp32, its int8 inputs dequantized.
 *
 * MXNet numbers its fused layers in the order a depth-first walk from the
 * outputs finishes them (inputs in order), and a residual add goes to the
 * first convolution of that walk that reaches it: both are followed here
 * so that the layers carry MXNet's names.
 */
#include <string.h>

#include "core/model-impl.h"
#include "core/quantize/quantize-impl.h"

void
hy_qgroup_free (gpointer data)
{
  hy_qgroup *g = data;
  g_free (g->fp32_name);
  g_free (g);
}

static const char *
op_of (const hy_node *n)
{
  return n->op ? n->op->name : n->op_name;
}

static gboolean
listed (const char *const *list, const char *name)
{
  for (; list && *list; list++)
    if (!strcmp (*list, name))
      return TRUE;
  return FALSE;
}

static gboolean
excluded (const hy_quantizer *q, const hy_node *n)
{
  return listed (q->options.exclude_layers, n->name)
      || listed (q->options.exclude_ops, op_of (n));
}

gboolean
hy_quantize_is_relu (const hy_node *n)
{
  if (!n->op || strcmp (op_of (n), "Activation"))
    return FALSE;
  const char *t = g_hash_table_lookup (n->attrs, "act_type");
  return t && !strcmp (t, "relu");
}

static gboolean
is_bound_var (const hy_graph *g, hy_entry e)
{
  return hy_graph_node (g, e.node)->value != NULL;
}

/* Readers of each node's output 0, and whether anything else (another
 * output, a head) is read. */
typedef struct readers {
  guint *count;                 /* per node: readers of any output */
  int *only;                    /* per node: the one reader, or -1 */
  int *only_input;              /* which of its inputs */
} readers;

static void
count_readers (const hy_graph *g, readers *r)
{
  guint n = hy_graph_n_nodes (g);
  r->count = g_new0 (guint, n);
  r->only = g_new (int, n);
  r->only_input = g_new (int, n);
  for (guint i = 0; i < n; i++)
    r->only[i] = -1;
  for (guint i = 0; i < n; i++) {
    const hy_node *node = hy_graph_node (g, i);
    for (guint k = 0; k < node->n_inputs; k++) {
      hy_entry e = node->inputs[k];
      r->count[e.node]++;
      r->only[e.node] = e.index == 0 ? (int) i : -2;
      r->only_input[e.node] = (int) k;
    }
  }
  for (guint h = 0; h < g->n_heads; h++)
    r->count[g->heads[h].node] += 2;    /* a head is never fused away */
}

static int
sole_reader (const readers *r, guint node, int *input)
{
  if (r->count[node] != 1 || r->only[node] < 0)
    return -1;
  *input = r->only_input[node];
  return r->only[node];
}

/* A convolution MXNet's int8 layer runs: 2-D, weights bound. */
static gboolean
quantizable_conv (const hy_graph *g, const hy_node *n)
{
  if (strcmp (op_of (n), "Convolution") || n->n_inputs < 2
      || !is_bound_var (g, n->inputs[1]))
    return FALSE;
  const char *kernel = g_hash_table_lookup (n->attrs, "kernel");
  return kernel && strchr (kernel, ',') && !strchr (strchr (kernel, ',') + 1,
      ',');
}

static gboolean
bn_fusable (const hy_graph *g, const hy_node *bn)
{
  if (strcmp (op_of (bn), "BatchNorm") || bn->n_inputs != 5)
    return FALSE;
  for (guint k = 1; k < 5; k++)
    if (!is_bound_var (g, bn->inputs[k]))
      return FALSE;
  return TRUE;
}

/* The chain from `conv`: conv [bn] then [relu] or [add [relu]]. */
static hy_qgroup *
conv_group (const hy_quantizer *q, const readers *r, guint conv,
    const gboolean *taken)
{
  const hy_graph *g = q->graph;
  hy_qgroup *grp = g_new0 (hy_qgroup, 1);
  grp->kind = HY_Q_CONV;
  grp->sum_input = -1;
  grp->members[grp->n_members++] = conv;
  guint cur = conv;
  int in, next = sole_reader (r, cur, &in);
  if (next >= 0 && in == 0 && !taken[next]
      && bn_fusable (g, hy_graph_node (g, next))) {
    grp->with_bn = TRUE;
    grp->members[grp->n_members++] = cur = next;
    next = sole_reader (r, cur, &in);
  }
  if (next >= 0 && !taken[next]
      && hy_quantize_is_relu (hy_graph_node (g, next))) {
    grp->with_act = TRUE;
    grp->members[grp->n_members++] = cur = next;
  } else if (next >= 0 && !taken[next] && in < 2
      && !strcmp (op_of (hy_graph_node (g, next)), "elemwise_add")
      && hy_graph_node (g, next)->inputs[1 - in].node != cur) {
    /* the first chain to reach the add in MXNet's walk takes it (the
     * walk is in the order the chains are tried in): in a ResNet v1
     * block with a shortcut convolution, the shortcut, the add's first
     * input */
    grp->with_sum = TRUE;
    grp->sum_input = 1 - in;
    grp->members[grp->n_members++] = cur = next;
    next = sole_reader (r, cur, &in);
    if (next >= 0 && !taken[next]
      && hy_quantize_is_relu (hy_graph_node (g, next))) {
      grp->with_postsum_act = TRUE;
      grp->members[grp->n_members++] = cur = next;
    }
  }
  grp->last = cur;
  return grp;
}

/* Depth-first from the heads, inputs in order: the order MXNet's passes
 * see the nodes in. */
static guint *
dfs_order (const hy_graph *g, guint *n_out)
{
  guint n = hy_graph_n_nodes (g);
  guint *order = g_new (guint, n);
  guint *stack = g_new (guint, n + 1);
  guint *next_input = g_new0 (guint, n);
  guint8 *state = g_new0 (guint8, n);   /* 0 new, 1 open, 2 done */
  guint n_order = 0;
  for (guint h = 0; h < g->n_heads; h++) {
    guint top = 0;
    guint root = g->heads[h].node;
    if (state[root])
      continue;
    stack[top++] = root;
    state[root] = 1;
    while (top) {
      guint v = stack[top - 1];
      const hy_node *node = hy_graph_node (g, v);
      if (next_input[v] < node->n_inputs) {
        guint u = node->inputs[next_input[v]++].node;
        if (!state[u]) {
          state[u] = 1;
          stack[top++] = u;
        }
        continue;
      }
      state[v] = 2;
      order[n_order++] = v;
      top--;
    }
  }
  g_free (stack);
  g_free (next_input);
  g_free (state);
  *n_out = n_order;
  return order;
}

/* The data and residual a layer quantizes are their producers' first
 * outputs: the ones calibration measures. */
static gboolean
reads_first_outputs (const hy_graph *g, const hy_qgroup *grp)
{
  const hy_node *first = hy_graph_node (g, grp->members[0]);
  if (first->inputs[0].index != 0)
    return FALSE;
  if (!grp->with_sum)
    return TRUE;
  const hy_node *add = hy_graph_node (g, grp->members[grp->n_members - 1
          - (grp->with_postsum_act ? 1 : 0)]);
  return add->inputs[grp->sum_input].index == 0;
}

static char *
conv_name (const hy_qgroup *grp, int id)
{
  return g_strdup_printf ("sg_mkldnn_conv%s%s%s_%d",
      grp->with_bn ? "_bn" : "", grp->with_sum ? "_add" : "",
      grp->with_act || grp->with_postsum_act ? "_act" : "", id);
}

gboolean
hy_quantize_plan (hy_quantizer *q, GError **error)
{
  const hy_graph *g = q->graph;
  guint n = hy_graph_n_nodes (g);
  for (const char *const *l = q->options.exclude_layers; l && *l; l++) {
    if (hy_graph_find (g, *l) < 0) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "%s: excluded layer '%s' is no node of the model",
          hy_model_symbol_path (q->model), *l);
      return FALSE;
    }
  }
  readers r;
  count_readers (g, &r);
  guint n_order;
  g_autofree guint *order = dfs_order (g, &n_order);
  g_autofree gboolean *taken = g_new0 (gboolean, n);
  q->group_of = g_new (int, n);
  for (guint i = 0; i < n; i++)
    q->group_of[i] = -1;
  q->groups = g_ptr_array_new_with_free_func (hy_qgroup_free);
  int conv_id = 0, fc_id = 0;

  for (guint o = 0; o < n_order; o++) {
    guint i = order[o];
    const hy_node *node = hy_graph_node (g, i);
    if (!node->op || taken[i])
      continue;
    const char *op = op_of (node);
    hy_qgroup *grp = NULL;
    if (quantizable_conv (g, node)) {
      grp = conv_group (q, &r, i, taken);
      grp->fp32_name = conv_name (grp, conv_id++);
      if (excluded (q, node)) {  /* stays fp32, unfused */
        hy_qgroup_free (grp);
        continue;
      }
    } else if (!strcmp (op, "FullyConnected") && node->n_inputs >= 2
        && is_bound_var (g, node->inputs[1])
        && (node->n_inputs < 3 || is_bound_var (g, node->inputs[2]))) {
      grp = g_new0 (hy_qgroup, 1);
      grp->kind = HY_Q_FC;
      grp->fp32_name = g_strdup_printf ("sg_mkldnn_fully_connected_%d",
          fc_id++);
      if (excluded (q, node)) {
        hy_qgroup_free (grp);
        continue;
      }
    } else if (excluded (q, node)) {
      continue;
    } else if (!strcmp (op, "Pooling")) {
      const char *t = g_hash_table_lookup (node->attrs, "pool_type");
      if (t && strcmp (t, "max") && strcmp (t, "avg"))
        continue;
      grp = g_new0 (hy_qgroup, 1);
      grp->kind = HY_Q_POOL;
    } else if (!strcmp (op, "Flatten")) {
      grp = g_new0 (hy_qgroup, 1);
      grp->kind = HY_Q_FLATTEN;
    } else {
      continue;
    }
    if (grp->n_members == 0) {
      grp->members[grp->n_members++] = i;
      grp->last = i;
    }
    if (!reads_first_outputs (g, grp)) {  /* calibration keeps output 0 */
      hy_qgroup_free (grp);
      continue;
    }
    if (!grp->fp32_name)
      grp->fp32_name = g_strdup (node->name);
    for (guint m = 0; m < grp->n_members; m++) {
      taken[grp->members[m]] = TRUE;
      q->group_of[grp->members[m]] = (int) q->groups->len;
    }
    g_ptr_array_add (q->groups, grp);
  }
  g_free (r.count);
  g_free (r.only);
  g_free (r.only_input);

  int n_layers = 0;
  for (guint k = 0; k < q->groups->len; k++) {
    hy_qkind kind = ((hy_qgroup *) q->groups->pdata[k])->kind;
    n_layers += kind == HY_Q_CONV || kind == HY_Q_FC;
  }
  if (!n_layers) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: no convolution or fully connected layer left to quantize "
        "(the int8 graph would be the fp32 one)",
        hy_model_symbol_path (q->model));
    return FALSE;
  }
  return TRUE;
}

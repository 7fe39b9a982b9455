/*
 * quantize-write.c — the int8 graph in the form MXNet 1.9.1's
 * quantize_net_v2 exports it, so that MXNet loads it: the nodes are built
 * here from the plan (quantize-plan.c) and the calibrated ranges, put in
 * the order MXNet's own export walks a graph (depth first from the
 * outputs), and written with their subgraphs; the params hold the fp32
 * weights MXNet keeps, and the fully connected layers' int8 weights.
 */
#include <math.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "core/model-impl.h"
#include "core/io/params-io.h"
#include "core/quantize/quantize-impl.h"

#define MXNET_VERSION 10901

typedef struct qnode {
  char *op;                     /* "null": a variable */
  char *name;
  GTree *attrs;                 /* sorted, as MXNet writes them */
  GArray *inputs;               /* hy_entry into the qnode list */
  JsonNode *subgraph;           /* owned; NULL when none */
  const hy_tensor *value;       /* variables: the bound weight */
  hy_tensor *owned;             /* ... when made here */
  gboolean aux;
  int dtype;                    /* HY_DTYPE_* of the stored weight */
} qnode;

typedef struct wctx {
  const hy_quantizer *q;
  const hy_graph *g;
  GPtrArray *nodes;             /* qnode * */
  int *fp32_id;                 /* per orig node: its qnode, or -1 */
  int *group_out;               /* per group: the layer's qnode, or -1 */
  int *dequant;                 /* per group: its dequantize, or -1 */
  int *quant;                   /* per orig node: quantize of output 0 */
} wctx;

static void
qnode_free (gpointer data)
{
  qnode *n = data;
  g_free (n->op);
  g_free (n->name);
  g_tree_unref (n->attrs);
  g_array_unref (n->inputs);
  if (n->subgraph)
    json_node_unref (n->subgraph);
  if (n->owned)
    hy_tensor_free (n->owned);
  g_free (n);
}

static int
cmp_str (gconstpointer a, gconstpointer b, gpointer user_data)
{
  (void) user_data;
  return strcmp (a, b);
}

static int
add_node (wctx *c, const char *op, char *name)
{
  qnode *n = g_new0 (qnode, 1);
  n->op = g_strdup (op);
  n->name = name;
  n->attrs = g_tree_new_full (cmp_str, NULL, g_free, g_free);
  n->inputs = g_array_new (FALSE, FALSE, sizeof (hy_entry));
  n->dtype = HY_DTYPE_FLOAT32;
  g_ptr_array_add (c->nodes, n);
  return (int) c->nodes->len - 1;
}

static qnode *
qn (wctx *c, int id)
{
  return c->nodes->pdata[id];
}

static void
set_attr (wctx *c, int id, const char *key, const char *value)
{
  g_tree_insert (qn (c, id)->attrs, g_strdup (key), g_strdup (value));
}

static void
copy_attrs (GTree *to, GHashTable *from)
{
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init (&it, from);
  while (g_hash_table_iter_next (&it, &k, &v))
    g_tree_insert (to, g_strdup (k), g_strdup (v));
}

static void
add_input (wctx *c, int id, int node, int index)
{
  hy_entry e = { (guint) node, (guint) index };
  g_array_append_val (qn (c, id)->inputs, e);
}

static const char *
op_of (const hy_node *n)
{
  return n->op ? n->op->name : n->op_name;
}

static const hy_qgroup *
group_of (const wctx *c, guint node)
{
  int g = c->q->group_of[node];
  return g < 0 ? NULL : c->q->groups->pdata[g];
}

static gboolean
makes_int8 (const hy_qgroup *g)
{
  return g && g->kind != HY_Q_FC;
}

/* MXNet's calib attributes print a float with std::to_string ("%f"). */
static void
set_range_attrs (wctx *c, int id, guint orig)
{
  float lo, hi;
  hy_quantize_range (c->q, orig, &lo, &hi);
  g_autofree char *a = g_strdup_printf ("%f", (double) hi);
  g_autofree char *b = g_strdup_printf ("%f", (double) lo);
  set_attr (c, id, "max_calib_range", a);
  set_attr (c, id, "min_calib_range", b);
}

static int variable_node (wctx *c, guint orig);

/* The fp32 value of an original entry in the new graph. */
static hy_entry
fp32_entry (wctx *c, hy_entry e)
{
  const hy_qgroup *g = group_of (c, e.node);
  if (g) {
    int gi = c->q->group_of[e.node];
    if (!makes_int8 (g))
      return (hy_entry) { (guint) c->group_out[gi], 0 };
    if (c->dequant[gi] < 0) {
      int d = add_node (c, "_contrib_dequantize",
          g_strdup_printf ("%s_dequantize", g->fp32_name));
      for (int k = 0; k < 3; k++)
        add_input (c, d, c->group_out[gi], k);
      c->dequant[gi] = d;
    }
    return (hy_entry) { (guint) c->dequant[gi], 0 };
  }
  if (c->fp32_id[e.node] < 0)
    variable_node (c, e.node);
  return (hy_entry) { (guint) c->fp32_id[e.node], e.index };
}

static int
variable_node (wctx *c, guint orig)
{
  const hy_node *v = hy_graph_node (c->g, orig);
  int id = add_node (c, "null", g_strdup (v->name));
  copy_attrs (qn (c, id)->attrs, v->attrs);
  qn (c, id)->value = v->value;
  qn (c, id)->aux = v->var_kind == HY_VAR_AUX;
  c->fp32_id[orig] = id;
  return id;
}

static const char *
out_type (const hy_quantizer *q)
{
  switch (q->options.dtype) {
    case HY_QUANTIZED_INT8: return "int8";
    case HY_QUANTIZED_UINT8: return "uint8";
    case HY_QUANTIZED_AUTO: break;
  }
  return "auto";
}

/* The node whose three outputs (data, min, max) are the int8 form of an
 * original entry: an int8 layer's own, or a _contrib_quantize_v2. */
static int
int8_node (wctx *c, hy_entry e)
{
  const hy_qgroup *g = group_of (c, e.node);
  if (makes_int8 (g))
    return c->group_out[c->q->group_of[e.node]];
  if (c->quant[e.node] >= 0)
    return c->quant[e.node];
  const hy_node *src = hy_graph_node (c->g, e.node);
  char *name = !strcmp (src->op_name, "null")
      ? g_strdup_printf ("%s_quantize", src->name)
      : g_strdup_printf ("%s_%u_quantize", g ? g->fp32_name : src->name,
          e.index);
  hy_entry in = fp32_entry (c, e);
  int id = add_node (c, "_contrib_quantize_v2", name);
  add_input (c, id, (int) in.node, (int) in.index);
  set_range_attrs (c, id, e.node);
  set_attr (c, id, "out_type", out_type (c->q));
  c->quant[e.node] = id;
  return id;
}

/* How MXNet names a subgraph's input variable: the value's name (a
 * variable's own, else "<node>_output"), then how often it was used. */
static char *
entry_name (wctx *c, hy_entry e, GHashTable *counts)
{
  const hy_node *src = hy_graph_node (c->g, e.node);
  const hy_qgroup *g = group_of (c, e.node);
  g_autofree char *base = NULL;
  if (!strcmp (src->op_name, "null"))
    base = g_strdup (src->name);
  else if (src->n_outputs > 1)
    base = g_strdup_printf ("%s_output%u", g ? g->fp32_name : src->name,
        e.index);
  else
    base = g_strdup_printf ("%s_output", g ? g->fp32_name : src->name);
  guint n = GPOINTER_TO_UINT (g_hash_table_lookup (counts, base));
  g_hash_table_insert (counts, g_strdup (base), GUINT_TO_POINTER (n + 1));
  return g_strdup_printf ("%s%u", base, n);
}

static void
json_attrs (JsonBuilder *b, GTree *attrs)
{
  if (g_tree_nnodes (attrs) == 0)
    return;
  json_builder_set_member_name (b, "attrs");
  json_builder_begin_object (b);
  GTreeNode *t = g_tree_node_first (attrs);
  for (; t; t = g_tree_node_next (t)) {
    json_builder_set_member_name (b, g_tree_node_key (t));
    json_builder_add_string_value (b, g_tree_node_value (t));
  }
  json_builder_end_object (b);
}

static void
json_entry (JsonBuilder *b, guint node, guint index)
{
  json_builder_begin_array (b);
  json_builder_add_int_value (b, node);
  json_builder_add_int_value (b, index);
  json_builder_add_int_value (b, 0);
  json_builder_end_array (b);
}

/* A fused layer's subgraph: its members as they were, reading variables
 * that stand for the layer's inputs.  `outer` gets the original entries
 * the variables stand for, in order. */
static JsonNode *
subgraph_of (wctx *c, const guint *members, guint n_members, int swapped,
    GArray *outer)
{
  g_autoptr (GHashTable) counts = g_hash_table_new_full (g_str_hash,
      g_str_equal, g_free, NULL);
  JsonBuilder *b = json_builder_new ();
  GArray *args = g_array_new (FALSE, FALSE, sizeof (guint));
  int *member_id = g_new (int, n_members);
  guint n_sub = 0;
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "nodes");
  json_builder_begin_array (b);
  for (guint m = 0; m < n_members; m++) {
    const hy_node *node = hy_graph_node (c->g, members[m]);
    GArray *ins = g_array_new (FALSE, FALSE, sizeof (guint));
    for (guint kk = 0; kk < node->n_inputs; kk++) {
      /* MXNet's layer reads its residual add as (chain, residual) */
      guint k = (int) m == swapped && node->n_inputs == 2 ? 1 - kk : kk;
      hy_entry e = node->inputs[k];
      int inner = -1;
      for (guint j = 0; j < m; j++)
        if (members[j] == e.node)
          inner = member_id[j];
      if (inner < 0) {
        for (guint j = 0; j < outer->len; j++) {
          hy_entry o = g_array_index (outer, hy_entry, j);
          if (o.node == e.node && o.index == e.index)
            inner = (int) g_array_index (args, guint, j);
        }
      }
      if (inner < 0) {
        g_autofree char *name = entry_name (c, e, counts);
        json_builder_begin_object (b);
        json_builder_set_member_name (b, "op");
        json_builder_add_string_value (b, "null");
        json_builder_set_member_name (b, "name");
        json_builder_add_string_value (b, name);
        json_builder_set_member_name (b, "inputs");
        json_builder_begin_array (b);
        json_builder_end_array (b);
        json_builder_end_object (b);
        inner = (int) n_sub++;
        g_array_append_val (args, inner);
        g_array_append_val (outer, e);
      }
      guint u = (guint) inner;
      g_array_append_val (ins, u);
    }
    json_builder_begin_object (b);
    json_builder_set_member_name (b, "op");
    json_builder_add_string_value (b, op_of (node));
    json_builder_set_member_name (b, "name");
    json_builder_add_string_value (b, node->name);
    GTree *attrs = g_tree_new_full (cmp_str, NULL, g_free, g_free);
    copy_attrs (attrs, node->attrs);
    json_attrs (b, attrs);
    g_tree_unref (attrs);
    json_builder_set_member_name (b, "inputs");
    json_builder_begin_array (b);
    for (guint k = 0; k < ins->len; k++)
      json_entry (b, g_array_index (ins, guint, k), 0);
    json_builder_end_array (b);
    json_builder_end_object (b);
    g_array_unref (ins);
    member_id[m] = (int) n_sub++;
  }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "arg_nodes");
  json_builder_begin_array (b);
  for (guint j = 0; j < args->len; j++)
    json_builder_add_int_value (b, g_array_index (args, guint, j));
  json_builder_end_array (b);
  json_builder_set_member_name (b, "node_row_ptr");
  json_builder_begin_array (b);
  for (guint k = 0; k <= n_sub; k++)
    json_builder_add_int_value (b, k);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "heads");
  json_builder_begin_array (b);
  json_entry (b, (guint) member_id[n_members - 1], 0);
  json_builder_end_array (b);
  json_builder_end_object (b);
  JsonNode *root = json_builder_get_root (b);
  g_object_unref (b);
  g_array_unref (args);
  g_free (member_id);
  return root;
}

static gboolean
is_int8_input (const hy_qgroup *g, const hy_graph *graph, hy_entry e)
{
  const hy_node *first = hy_graph_node (graph, g->members[0]);
  if (first->inputs[0].node == e.node && first->inputs[0].index == e.index)
    return TRUE;
  if (!g->with_sum)
    return FALSE;
  const hy_node *add = hy_graph_node (graph,
      g->members[g->n_members - 1 - (g->with_postsum_act ? 1 : 0)]);
  hy_entry s = add->inputs[g->sum_input];
  return s.node == e.node && s.index == e.index;
}

static void
emit_conv (wctx *c, int gi, const hy_qgroup *g)
{
  GArray *outer = g_array_new (FALSE, FALSE, sizeof (hy_entry));
  int add = g->with_sum && g->sum_input == 0
      ? (int) g->n_members - 1 - (g->with_postsum_act ? 1 : 0) : -1;
  JsonNode *sub = subgraph_of (c, g->members, g->n_members, add, outer);
  GArray *ins = g_array_new (FALSE, FALSE, sizeof (hy_entry));
  int q_ids[2], n_q = 0;
  for (guint j = 0; j < outer->len; j++) {
    hy_entry e = g_array_index (outer, hy_entry, j);
    hy_entry to;
    if (is_int8_input (g, c->g, e) && n_q < 2) {
      q_ids[n_q] = int8_node (c, e);
      to = (hy_entry) { (guint) q_ids[n_q++], 0 };
    } else {
      to = fp32_entry (c, e);
    }
    g_array_append_val (ins, to);
  }
  g_array_unref (outer);
  int id = add_node (c, "_sg_mkldnn_conv",
      g_strdup_printf ("quantized_%s", g->fp32_name));
  qn (c, id)->subgraph = sub;
  for (guint j = 0; j < ins->len; j++) {
    hy_entry e = g_array_index (ins, hy_entry, j);
    add_input (c, id, (int) e.node, (int) e.index);
  }
  g_array_unref (ins);
  for (int k = 0; k < n_q; k++) {
    add_input (c, id, q_ids[k], 1);
    add_input (c, id, q_ids[k], 2);
  }
  set_range_attrs (c, id, g->last);
  set_attr (c, id, "quantized", "true");
  if (g->with_act)
    set_attr (c, id, "with_act", "true");
  if (g->with_bn)
    set_attr (c, id, "with_bn", "true");
  if (g->with_postsum_act)
    set_attr (c, id, "with_postsum_act", "true");
  if (g->with_sum)
    set_attr (c, id, "with_sum", "true");
  c->group_out[gi] = id;
}

/* MXNet's offline int8 weights (contrib.quantize, out_type int8): zero
 * centred on the largest magnitude, rounded half away from zero. */
static int
quantized_weight (wctx *c, const hy_node *w, int *min_id, int *max_id)
{
  const hy_tensor *t = w->value;
  gint64 n = hy_shape_numel (&t->shape);
  float lo = INFINITY, hi = -INFINITY;
  for (gint64 i = 0; i < n; i++) {
    lo = MIN (lo, t->data[i]);
    hi = MAX (hi, t->data[i]);
  }
  float range = n ? MAX (fabsf (lo), fabsf (hi)) : 0;
  hy_tensor *qt = hy_tensor_new (&t->shape);
  float scale = range > 0 ? 127.0f / range : 0;
  for (gint64 i = 0; i < n; i++) {
    float x = t->data[i];
    float m = MIN (fabsf (x) * scale + 0.5f, 127.0f);
    qt->data[i] = (float) (gint8) (x < 0 ? -m : x > 0 ? m : 0);
  }
  int id = add_node (c, "null", g_strdup_printf ("%s_quantize", w->name));
  qn (c, id)->owned = qt;
  qn (c, id)->value = qt;
  qn (c, id)->dtype = HY_DTYPE_INT8;
  hy_shape one = { .ndim = 1, .dims = { 1 } };
  const float bounds[2] = { -range, range };
  int *ids[2] = { min_id, max_id };
  for (int k = 0; k < 2; k++) {
    hy_tensor *b = hy_tensor_new (&one);
    b->data[0] = bounds[k];
    *ids[k] = add_node (c, "null", g_strdup_printf ("%s_quantize_%s",
            w->name, k ? "max" : "min"));
    qn (c, *ids[k])->owned = b;
    qn (c, *ids[k])->value = b;
  }
  return id;
}

static void
emit_fc (wctx *c, int gi, const hy_qgroup *g)
{
  const hy_node *fc = hy_graph_node (c->g, g->members[0]);
  GArray *outer = g_array_new (FALSE, FALSE, sizeof (hy_entry));
  JsonNode *sub = subgraph_of (c, g->members, 1, -1, outer);
  g_array_unref (outer);
  int data = int8_node (c, fc->inputs[0]);
  gboolean bias = fc->n_inputs >= 3;
  int wmin, wmax, bmin = -1, bmax = -1, bq = -1;
  int wq = quantized_weight (c, hy_graph_node (c->g, fc->inputs[1].node),
      &wmin, &wmax);
  if (bias)
    bq = quantized_weight (c, hy_graph_node (c->g, fc->inputs[2].node),
        &bmin, &bmax);
  int id = add_node (c, "_sg_mkldnn_fully_connected",
      g_strdup_printf ("quantized_%s", g->fp32_name));
  qn (c, id)->subgraph = sub;
  add_input (c, id, data, 0);
  add_input (c, id, wq, 0);
  if (bias)
    add_input (c, id, bq, 0);
  add_input (c, id, data, 1);
  add_input (c, id, data, 2);
  add_input (c, id, wmin, 0);
  add_input (c, id, wmax, 0);
  if (bias) {
    add_input (c, id, bmin, 0);
    add_input (c, id, bmax, 0);
  }
  /* its output is fp32: MXNet fuses the dequantize into the layer */
  set_attr (c, id, "enable_float_output", "True");
  set_attr (c, id, "quantized", "True");
  c->group_out[gi] = id;
}

static void
emit_simple (wctx *c, int gi, const hy_qgroup *g, const char *op)
{
  const hy_node *node = hy_graph_node (c->g, g->members[0]);
  int data = int8_node (c, node->inputs[0]);
  int id = add_node (c, op, g_strdup_printf ("quantized_%s", node->name));
  copy_attrs (qn (c, id)->attrs, node->attrs);
  for (int k = 0; k < 3; k++)
    add_input (c, id, data, k);
  c->group_out[gi] = id;
}

static void
emit_fp32 (wctx *c, guint i)
{
  const hy_node *node = hy_graph_node (c->g, i);
  g_autofree hy_entry *ins = g_new (hy_entry, node->n_inputs + 1);
  for (guint k = 0; k < node->n_inputs; k++)
    ins[k] = fp32_entry (c, node->inputs[k]);
  int id = add_node (c, op_of (node), g_strdup (node->name));
  copy_attrs (qn (c, id)->attrs, node->attrs);
  for (guint k = 0; k < node->n_inputs; k++)
    add_input (c, id, (int) ins[k].node, (int) ins[k].index);
  c->fp32_id[i] = id;
}

/* Depth first from the heads, inputs in order: MXNet's node order. */
static guint *
final_order (wctx *c, const hy_entry *heads, guint n_heads, guint *n_out)
{
  guint n = c->nodes->len;
  guint *order = g_new (guint, n), *stack = g_new (guint, n + 1);
  guint *next = g_new0 (guint, n);
  guint8 *seen = g_new0 (guint8, n);
  guint n_order = 0;
  for (guint h = 0; h < n_heads; h++) {
    guint root = heads[h].node, top = 0;
    if (seen[root])
      continue;
    seen[root] = 1;
    stack[top++] = root;
    while (top) {
      guint v = stack[top - 1];
      GArray *ins = qn (c, (int) v)->inputs;
      if (next[v] < ins->len) {
        guint u = g_array_index (ins, hy_entry, next[v]++).node;
        if (!seen[u]) {
          seen[u] = 1;
          stack[top++] = u;
        }
        continue;
      }
      order[n_order++] = v;
      top--;
    }
  }
  g_free (stack);
  g_free (next);
  g_free (seen);
  *n_out = n_order;
  return order;
}

static char *
symbol_json (wctx *c, const hy_entry *heads, guint n_heads, guint *order,
    guint n_order)
{
  g_autofree int *pos = g_new (int, c->nodes->len);
  for (guint k = 0; k < n_order; k++)
    pos[order[k]] = (int) k;
  JsonBuilder *b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "nodes");
  json_builder_begin_array (b);
  for (guint k = 0; k < n_order; k++) {
    qnode *n = qn (c, (int) order[k]);
    json_builder_begin_object (b);
    json_builder_set_member_name (b, "op");
    json_builder_add_string_value (b, n->op);
    json_builder_set_member_name (b, "name");
    json_builder_add_string_value (b, n->name);
    json_attrs (b, n->attrs);
    json_builder_set_member_name (b, "inputs");
    json_builder_begin_array (b);
    for (guint j = 0; j < n->inputs->len; j++) {
      hy_entry e = g_array_index (n->inputs, hy_entry, j);
      json_entry (b, (guint) pos[e.node], e.index);
    }
    json_builder_end_array (b);
    if (n->subgraph) {
      json_builder_set_member_name (b, "subgraphs");
      json_builder_begin_array (b);
      json_builder_add_value (b, json_node_copy (n->subgraph));
      json_builder_end_array (b);
    }
    json_builder_end_object (b);
  }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "arg_nodes");
  json_builder_begin_array (b);
  for (guint k = 0; k < n_order; k++)
    if (!strcmp (qn (c, (int) order[k])->op, "null"))
      json_builder_add_int_value (b, k);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "node_row_ptr");
  json_builder_begin_array (b);
  for (guint k = 0; k <= n_order; k++)
    json_builder_add_int_value (b, k);  /* MXNet's loader ignores it */
  json_builder_end_array (b);
  json_builder_set_member_name (b, "heads");
  json_builder_begin_array (b);
  for (guint h = 0; h < n_heads; h++)
    json_entry (b, (guint) pos[heads[h].node], heads[h].index);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "attrs");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "mxnet_version");
  json_builder_begin_array (b);
  json_builder_add_string_value (b, "int");
  json_builder_add_int_value (b, MXNET_VERSION);
  json_builder_end_array (b);
  json_builder_end_object (b);
  json_builder_end_object (b);
  JsonGenerator *gen = json_generator_new ();
  JsonNode *root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  char *text = json_generator_to_data (gen, NULL);
  json_node_unref (root);
  g_object_unref (gen);
  g_object_unref (b);
  return text;
}

/* Collects the params the written graph binds, in its order; the
 * tensors stay the writer's or the model's (only read). */
static GBytes *
params_bytes (wctx *c, const guint *order, guint n_order)
{
  GArray *items = g_array_new (FALSE, TRUE, sizeof (hy_param));
  for (guint k = 0; k < n_order; k++) {
    qnode *n = qn (c, (int) order[k]);
    if (strcmp (n->op, "null") || !n->value)
      continue;
    hy_param p = {
      .name = n->name,
      .kind = n->aux ? HY_PARAM_AUX : HY_PARAM_ARG,
      .stored_dtype = n->dtype,
      .write_int8 = n->dtype == HY_DTYPE_INT8,
      .tensor = (hy_tensor *) n->value,
    };
    g_array_append_val (items, p);
  }
  hy_param_list list = { (hy_param *) items->data, items->len };
  GBytes *bytes = hy_params_write (&list);
  g_array_unref (items);
  return bytes;
}

void
hy_quantize_emit (const hy_quantizer *q, char **symbol_json_out,
    GBytes **params_out)
{
  const hy_graph *g = q->graph;
  guint n = hy_graph_n_nodes (g), n_groups = q->groups->len;
  wctx c = { .q = q, .g = g };
  c.nodes = g_ptr_array_new_with_free_func (qnode_free);
  c.fp32_id = g_new (int, n);
  c.quant = g_new (int, n);
  c.group_out = g_new (int, n_groups + 1);
  c.dequant = g_new (int, n_groups + 1);
  for (guint i = 0; i < n; i++)
    c.fp32_id[i] = c.quant[i] = -1;
  for (guint k = 0; k < n_groups; k++)
    c.group_out[k] = c.dequant[k] = -1;

  for (guint i = 0; i < n; i++) {
    const hy_node *node = hy_graph_node (g, i);
    if (!node->op)
      continue;                 /* variables: made when read */
    int gi = q->group_of[i];
    if (gi < 0) {
      emit_fp32 (&c, i);
      continue;
    }
    const hy_qgroup *grp = q->groups->pdata[gi];
    if (grp->last != i)
      continue;
    switch (grp->kind) {
      case HY_Q_CONV: emit_conv (&c, gi, grp); break;
      case HY_Q_FC: emit_fc (&c, gi, grp); break;
      case HY_Q_POOL:
        emit_simple (&c, gi, grp, "_contrib_quantized_pooling");
        break;
      case HY_Q_FLATTEN:
        emit_simple (&c, gi, grp, "_contrib_quantized_flatten");
        break;
      case HY_Q_FP32: break;
    }
  }
  g_autofree hy_entry *heads = g_new (hy_entry, g->n_heads + 1);
  for (guint h = 0; h < g->n_heads; h++)
    heads[h] = fp32_entry (&c, g->heads[h]);
  guint n_order;
  g_autofree guint *order = final_order (&c, heads, g->n_heads, &n_order);
  *symbol_json_out = symbol_json (&c, heads, g->n_heads, order, n_order);
  *params_out = params_bytes (&c, order, n_order);
  g_ptr_array_unref (c.nodes);
  g_free (c.fp32_id);
  g_free (c.quant);
  g_free (c.group_out);
  g_free (c.dequant);
}

gboolean
hy_quantize_write (const hy_quantizer *q, const char *prefix, GError **error)
{
  g_autofree char *text = NULL;
  g_autoptr (GBytes) params = NULL;
  hy_quantize_emit (q, &text, &params);
  g_autofree char *sym = g_strdup_printf ("%s-symbol.json", prefix);
  g_autofree char *par = g_strdup_printf ("%s-0000.params", prefix);
  const char *failed = sym;
  gsize len;
  const char *data = g_bytes_get_data (params, &len);
  GError *local = NULL;
  if (g_file_set_contents (sym, text, -1, &local)
      && (failed = par, g_file_set_contents (par, data, (gssize) len,
              &local)))
    return TRUE;
  g_set_error (error, HY_ERROR, HY_ERROR_IO, "%s: cannot write: %s", failed,
      local->message);
  g_error_free (local);
  return FALSE;
}

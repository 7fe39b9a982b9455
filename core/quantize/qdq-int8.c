/*
 * qdq-int8.c — an ONNX QDQ model onto the int8 layers.
 *
 * A QDQ file says where its author quantizes and with which scale; the
 * importer keeps each QuantizeLinear/DequantizeLinear pair as one float
 * op (_hy_quantize_dequantize, core/io/onnx-qdq.c).  Here the pairs
 * become what calibration would have given the quantizer (the range of
 * the tensor each pair reads), the pairs leave the graph, and the
 * quantizer writes the int8 graph exactly as for an MXNet model: one
 * path of int8 layers, whichever file the model came from.
 *
 * A layer keeps fp32 when the file gives no range for a tensor its int8
 * form needs (the author did not quantize it there).
 */
#include <string.h>

#include "core/model-impl.h"
#include "core/passes/passes.h"
#include "core/passes/graph-edit.h"
#include "core/quantize/quantize-impl.h"
#include "kernels/params/elementwise.h"
#include "kernels/params/quantized.h"

/* The range a pair stands for, as quantize_v2's calibrated min and max.
 * With zero point 0 quantize_v2's grid is the pair's own: it maps ±max
 * onto ±127 (int8) or [0, max] onto [0, 255] (uint8), so max = 127 or
 * 255 steps of the scale.  Another zero point (asymmetric uint8, ONNX
 * Runtime's default) has no counterpart in MXNet's scheme: the pair's
 * whole range is given and covered symmetrically, a step at most twice
 * the file's. */
typedef struct qdq_range {
  float min, max;
  float scale;
  gboolean shifted;             /* from a zero point other than 0 */
} qdq_range;

static gboolean
pair_range (const hy_graph *g, const hy_node *pair, qdq_range *out)
{
  const hy_quantize_dequantize_params *p = pair->params;
  const hy_tensor *scale = hy_graph_node (g, pair->inputs[1].node)->value;
  const hy_tensor *zero = hy_graph_node (g, pair->inputs[2].node)->value;
  if (!scale || !zero || hy_shape_numel (&scale->shape) != 1)
    return FALSE;               /* one scale per channel: no tensor range */
  float s = scale->data[0], z = zero->data[0];
  float qmin = p->out_uint8 ? 0.0f : -128.0f;
  float qmax = p->out_uint8 ? 255.0f : 127.0f;
  if (!(s > 0.0f))
    return FALSE;
  out->scale = s;
  out->shifted = z != 0.0f;
  if (!out->shifted) {
    out->min = p->out_uint8 ? 0.0f : -127.0f * s;
    out->max = qmax * s;
  } else {
    out->min = (qmin - z) * s;
    out->max = (qmax - z) * s;
  }
  return TRUE;
}

/* Gives node `n` MXNet's op `op` with one attribute (key NULL: none). */
static void
become (hy_node *n, const char *op, const char *key, const char *value)
{
  g_free (n->op_name);
  n->op_name = g_strdup (op);
  g_hash_table_remove_all (n->attrs);
  if (key)
    g_hash_table_replace (n->attrs, g_strdup (key), g_strdup (value));
  hy_shape shape = n->shapes[0];
  g_clear_pointer (&n->params, g_free);
  gboolean ok = hy_node_resolve (n, NULL);
  g_assert (ok);                /* a one-input or two-input op, as before */
  n->shapes[0] = shape;
}

/* The ops an ONNX file brings in the form MXNet's quantizer fuses into
 * its int8 layers: Relu as Activation relu, Add of two like shapes as
 * elemwise_add (the same values). */
static void
mxnet_forms (hy_graph *g)
{
  for (guint i = 0; i < hy_graph_n_nodes (g); i++) {
    hy_node *n = hy_graph_node (g, i);
    if (hy_node_is_op (n, HY_OP_RELU))
      become (n, "Activation", "act_type", "relu");
    else if (hy_node_is_op (n, HY_OP_BROADCAST_ADD)
        && hy_shape_equal (&hy_graph_node (g, n->inputs[0].node)
            ->shapes[n->inputs[0].index],
            &hy_graph_node (g, n->inputs[1].node)
            ->shapes[n->inputs[1].index]))
      become (n, "elemwise_add", NULL, NULL);
  }
}

/* Whether a node's output 0 is never negative, so that a clamp at 0
 * changes nothing: a relu, sigmoid or softmax; a pooling, flatten or
 * reshape of such an output. */
static gboolean
never_negative (const hy_graph *g, guint node)
{
  const hy_node *n = hy_graph_node (g, node);
  if (!n->op)
    return FALSE;
  if (hy_quantize_is_relu (n) || hy_node_is_op (n, HY_OP_SIGMOID)
      || hy_node_is_op (n, HY_OP_SOFTMAX)
      || hy_node_is_op (n, HY_OP_SOFTMAX_ACTIVATION))
    return TRUE;
  if (hy_node_is_op (n, HY_OP_CLIP))
    return ((const hy_clip_params *) n->params)->a_min >= 0.0f;
  if (hy_node_is_op (n, HY_OP_POOLING) || hy_node_is_op (n, HY_OP_FLATTEN)
      || hy_node_is_op (n, HY_OP_RESHAPE))
    return never_negative (g, n->inputs[0].node);
  return FALSE;
}

/* A relu node reading `src`, for the pair `pair` that clamps at 0. */
static hy_node *
relu_for (const hy_graph *g, const hy_node *pair, hy_entry src)
{
  hy_node *n = g_new0 (hy_node, 1);
  n->name = g_strdup_printf ("%s_relu", pair->name);
  n->op_name = g_strdup ("Activation");
  n->attrs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_hash_table_replace (n->attrs, g_strdup ("act_type"), g_strdup ("relu"));
  n->inputs = g_new (hy_entry, 1);
  n->inputs[0] = src;
  n->n_inputs = 1;
  gboolean ok = hy_node_resolve (n, NULL);
  g_assert (ok);
  n->shapes[0] = hy_graph_node (g, src.node)->shapes[src.index];
  return n;
}

/* Drops every pair from `g`, each reader reading what the pair
 * quantized; returns the ranges by the name of the node whose output 0
 * a pair read (the first pair's, when several read one).
 *
 * A pair whose range starts at 0 (uint8, zero point 0) also clamps what
 * it reads at 0: ONNX Runtime's quantizer drops a Relu into such a pair.
 * The clamp stays, as a relu, which the int8 layer before it then takes
 * in (a graph input's quantize clamps by itself). */
static GHashTable *
take_pairs (hy_graph *g, int *n_pairs)
{
  GHashTable *ranges = g_hash_table_new_full (g_str_hash, g_str_equal,
      g_free, g_free);
  *n_pairs = 0;
  for (guint i = 0; i < hy_graph_n_nodes (g); i++) {
    hy_node *pair = hy_graph_node (g, i);
    if (!hy_node_is_op (pair, HY_OP_QUANTIZE_DEQUANTIZE))
      continue;
    (*n_pairs)++;
    hy_entry src = pair->inputs[0];
    qdq_range r;
    gboolean has_range = src.index == 0 && pair_range (g, pair, &r);
    const hy_node *from = hy_graph_node (g, src.node);
    if (has_range && !r.shifted && r.min == 0.0f && from->op
        && !never_negative (g, src.node)) {
      hy_graph_insert_node (g, i, relu_for (g, pair, src));
      src = (hy_entry) { i, 0 };
      pair = hy_graph_node (g, ++i);
    }
    const char *name = hy_graph_node (g, src.node)->name;
    if (has_range && !g_hash_table_contains (ranges, name))
      g_hash_table_insert (ranges, g_strdup (name),
          g_memdup2 (&r, sizeof r));
    hy_graph_replace_uses (g, (hy_entry) { i, 0 }, src);
  }
  hy_graph_prune (g);
  return ranges;
}

static const qdq_range *
range_of (const hy_graph *g, GHashTable *ranges, guint node)
{
  return g_hash_table_lookup (ranges, hy_graph_node (g, node)->name);
}

/* Plans the int8 graph, leaving fp32 each layer whose int8 form needs a
 * range the file does not give.  Each round excludes at least one more
 * layer, so it ends. */
static hy_quantizer *
plan (const hy_model *view, GHashTable *ranges, GPtrArray *excluded,
    GError **error)
{
  for (;;) {
    hy_quantize_options opts = {
      .calib_mode = HY_CALIB_NAIVE,
      .dtype = HY_QUANTIZED_AUTO,
      .exclude_layers = (const char *const *) excluded->pdata,
    };
    hy_quantizer *q = hy_quantizer_new (view, &opts, error);
    if (!q)
      return NULL;
    gboolean complete = TRUE;
    for (guint k = 0; k < q->groups->len; k++) {
      const hy_qgroup *grp = q->groups->pdata[k];
      guint needed[3];
      guint n = hy_qgroup_needed_ranges (view->graph, grp, needed);
      for (guint j = 0; j < n; j++) {
        if (range_of (view->graph, ranges, needed[j]))
          continue;
        const hy_node *first = hy_graph_node (view->graph, grp->members[0]);
        g_ptr_array_insert (excluded, (int) excluded->len - 1, first->name);
        complete = FALSE;
        break;
      }
    }
    if (complete)
      return q;
    hy_quantizer_free (q);
  }
}

static hy_model *
model_from_text (const char *json, GBytes *params_bytes, const char *source,
    GError **error)
{
  gsize len;
  const guint8 *data = g_bytes_get_data (params_bytes, &len);
  hy_graph *graph = hy_symbol_json_parse (json, strlen (json), source, error);
  if (!graph)
    return NULL;
  hy_param_list *params = NULL;
  if (!hy_graph_resolve (graph, NULL, error)
      || !(params = hy_params_parse (data, len, source, error))) {
    hy_graph_free (graph);
    return NULL;
  }
  return hy_model_new_from_graph (graph, params, source, error);
}

gboolean
hy_qdq_mode_parse (const char *text, hy_qdq_mode *out, GError **error)
{
  if (text && !strcmp (text, "int8"))
    *out = HY_QDQ_INT8;
  else if (text && !strcmp (text, "float"))
    *out = HY_QDQ_FLOAT;
  else {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "QDQ mode '%s': expected int8 or float", text ? text : "(none)");
    return FALSE;
  }
  return TRUE;
}

gboolean
hy_model_has_qdq (const hy_model *model)
{
  for (guint i = 0; i < hy_graph_n_nodes (model->graph); i++)
    if (hy_node_is_op (hy_graph_node (model->graph, i),
            HY_OP_QUANTIZE_DEQUANTIZE))
      return TRUE;
  return FALSE;
}

/* The quantizer of a QDQ model, its ranges set from the pairs, over
 * `view` (a model of the graph without the pairs, which the caller frees
 * with qdq_view_clear after the quantizer). */
static hy_quantizer *
qdq_quantizer (const hy_model *model, hy_model *view, hy_qdq_summary *sum,
    GError **error)
{
  const char *source = hy_model_symbol_path (model);
  int n_pairs;
  /* The copy shares the model's weights; it is the fp32 graph the
   * quantizer reads, through a model that owns nothing else. */
  *view = (hy_model) { .symbol_path = (char *) source };
  view->graph = hy_graph_copy (model->graph);
  mxnet_forms (view->graph);
  g_autoptr (GHashTable) ranges = take_pairs (view->graph, &n_pairs);
  g_autoptr (GPtrArray) excluded = g_ptr_array_new ();
  g_ptr_array_add (excluded, NULL);
  if (n_pairs == 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "%s: no QuantizeLinear/DequantizeLinear pair quantizes data: "
        "not a QDQ int8 model", source);
    return NULL;
  }
  hy_quantizer *q = plan (view, ranges, excluded, error);
  if (q)
    q->options.exclude_layers = NULL;   /* planned: the list goes now */
  if (!q) {
    g_prefix_error (error, "%s: no layer runs int8 from the file's "
        "QuantizeLinear/DequantizeLinear pairs: ", source);
    return NULL;
  }
  *sum = (hy_qdq_summary) { .pairs = n_pairs,
    .float_layers = (int) excluded->len - 1 };
  for (guint i = 0; i < hy_graph_n_nodes (view->graph); i++) {
    const qdq_range *r = range_of (view->graph, ranges, i);
    if (!q->needs_range[i] || !r)
      continue;                 /* plan () left no needed one without */
    float min = r->min, max = r->max;
    /* A relu's output quantized int8 (ActivationSymmetric files) wastes
     * its negative half; MXNet's int8 layers take such an output as
     * uint8 only, its range from 0.  The same step: 255 of the scale. */
    if (min < 0.0f
        && hy_quantize_is_relu (hy_graph_node (view->graph, i))) {
      min = 0.0f;
      max = r->shifted ? r->max : 255.0f * r->scale;
    }
    q->stats[i].seen = TRUE;
    q->stats[i].min = min;
    q->stats[i].max = max;
    sum->shifted_ranges += r->shifted;
  }
  q->n_batches = 1;
  for (guint k = 0; k < q->groups->len; k++) {
    hy_qkind kind = ((hy_qgroup *) q->groups->pdata[k])->kind;
    sum->int8_layers += kind == HY_Q_CONV || kind == HY_Q_FC;
  }
  return q;
}

hy_model *
hy_model_quantize_qdq (const hy_model *model, hy_qdq_summary *summary,
    GError **error)
{
  hy_model view;
  hy_qdq_summary sum;
  hy_model *out = NULL;
  hy_quantizer *q = qdq_quantizer (model, &view, &sum, error);
  if (q) {
    g_autofree char *json = NULL;
    g_autoptr (GBytes) params = NULL;
    hy_quantize_emit (q, &json, &params);
    out = model_from_text (json, params, view.symbol_path, error);
    if (out && summary)
      *summary = sum;
  }
  hy_quantizer_free (q);
  hy_graph_free (view.graph);
  return out;
}

gboolean
hy_qdq_save (const hy_model *model, const char *prefix,
    hy_qdq_summary *summary, GError **error)
{
  hy_model view;
  hy_qdq_summary sum;
  hy_quantizer *q = qdq_quantizer (model, &view, &sum, error);
  gboolean ok = q && hy_quantize_write (q, prefix, error);
  if (ok && summary)
    *summary = sum;
  hy_quantizer_free (q);
  hy_graph_free (view.graph);
  return ok;
}

char *
hy_qdq_summary_format (const hy_qdq_summary *s)
{
  GString *out = g_string_new (NULL);
  g_string_printf (out, "%d int8 layer%s from %d quantize-dequantize "
      "pair%s", s->int8_layers, s->int8_layers == 1 ? "" : "s", s->pairs,
      s->pairs == 1 ? "" : "s");
  if (s->float_layers)
    g_string_append_printf (out, "; %d layer%s left fp32 (the file gives "
        "no range for a tensor %s int8 form needs)", s->float_layers,
        s->float_layers == 1 ? "" : "s",
        s->float_layers == 1 ? "its" : "their");
  if (s->shifted_ranges)
    g_string_append_printf (out, "; %d range%s with a zero point other "
        "than 0, quantized symmetrically", s->shifted_ranges,
        s->shifted_ranges == 1 ? "" : "s");
  return g_string_free (out, FALSE);
}

gboolean
hy_model_apply_qdq_mode (hy_model **model, hy_qdq_mode mode, char **note,
    GError **error)
{
  *note = NULL;
  if (mode == HY_QDQ_FLOAT || !hy_model_has_qdq (*model))
    return TRUE;
  const char *path = hy_model_symbol_path (*model);
  hy_qdq_summary sum;
  GError *local = NULL;
  hy_model *int8 = hy_model_quantize_qdq (*model, &sum, &local);
  if (int8) {
    g_autofree char *text = hy_qdq_summary_format (&sum);
    *note = g_strdup_printf ("%s: int8: %s", path, text);
    hy_model_free (*model);
    *model = int8;
    return TRUE;
  }
  if (local->code != HY_ERROR_UNSUPPORTED) {
    g_propagate_error (error, local);
    return FALSE;
  }
  /* Nothing maps onto the int8 layers: the file's own arithmetic, in
   * float, is still right. */
  *note = g_strdup_printf ("runs in float: %s", local->message);
  g_error_free (local);
  return TRUE;
}

hy_model *
hy_model_load_qdq (const char *path, const char *params_path,
    hy_qdq_mode mode, char **note, GError **error)
{
  *note = NULL;
  hy_model *model = hy_model_load (path, params_path, error);
  if (model && !hy_model_apply_qdq_mode (&model, mode, note, error)) {
    hy_model_free (model);
    return NULL;
  }
  return model;
}

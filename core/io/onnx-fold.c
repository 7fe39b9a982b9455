/*
 * onnx-fold.c — the import's bookkeeping: ONNX value names to graph
 * entries or constants, node attributes, placing resolved op nodes, and
 * folding the integer arithmetic exporters write on shapes.
 *
 * Shapes are folded at load (not left to the graph passes) because ONNX
 * gives Reshape its target shape as a tensor computed in the graph, where
 * the core's Reshape takes it as an attribute: only a constant can become
 * one.
 */
#include <stdarg.h>
#include <string.h>

#include "core/io/onnx-import.h"
#include "core/model-impl.h"

/* ---- refusals ------------------------------------------------------ */

gboolean
hy_onnx_refuse (hy_onnx_importer *imp, GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *what = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED, "%s: node '%s' (%s): %s",
      imp->source, HY_ONNX_NODE_NAME (imp), imp->node->op_type, what);
  return FALSE;
}

/* ---- attributes ---------------------------------------------------- */

const Onnx__AttributeProto *
hy_onnx_attr (const Onnx__NodeProto *node, const char *name)
{
  for (size_t i = 0; i < node->n_attribute; i++)
    if (node->attribute[i]->name && !strcmp (node->attribute[i]->name, name))
      return node->attribute[i];
  return NULL;
}

gint64
hy_onnx_attr_int (const Onnx__NodeProto *node, const char *name, gint64 def)
{
  const Onnx__AttributeProto *a = hy_onnx_attr (node, name);
  return a && a->has_i ? a->i : def;
}

double
hy_onnx_attr_float (const Onnx__NodeProto *node, const char *name,
    double def)
{
  const Onnx__AttributeProto *a = hy_onnx_attr (node, name);
  return a && a->has_f ? a->f : def;
}

const char *
hy_onnx_attr_string (const Onnx__NodeProto *node, const char *name,
    const char *def, hy_onnx_word buf)
{
  /* Protobuf bytes carry no NUL: only short, clean strings are read. */
  const Onnx__AttributeProto *a = hy_onnx_attr (node, name);
  if (!a || !a->has_s || a->s.len >= sizeof (hy_onnx_word)
      || memchr (a->s.data, 0, a->s.len))
    return def;
  memcpy (buf, a->s.data, a->s.len);
  buf[a->s.len] = '\0';
  return buf;
}

const gint64 *
hy_onnx_attr_ints (const Onnx__NodeProto *node, const char *name, int *n)
{
  const Onnx__AttributeProto *a = hy_onnx_attr (node, name);
  if (!a || (a->n_ints == 0 && (!a->has_type
              || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS))) {
    *n = -1;
    return NULL;
  }
  *n = (int) MIN (a->n_ints, (size_t) G_MAXINT);
  return (const gint64 *) a->ints;
}

char *
hy_onnx_tuple (const gint64 *v, int n)
{
  GString *s = g_string_new ("(");
  for (int i = 0; i < n; i++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? ", " : "", v[i]);
  if (n == 1)
    g_string_append_c (s, ',');
  g_string_append_c (s, ')');
  return g_string_free (s, FALSE);
}

/* ---- values -------------------------------------------------------- */

static const char *
node_label (const Onnx__NodeProto *node)
{
  if (node->name && node->name[0])
    return node->name;
  return node->n_output > 0 && node->output[0] ? node->output[0] : "?";
}

const char *
hy_onnx_input_name (hy_onnx_importer *imp, guint k)
{
  const Onnx__NodeProto *node = imp->node;
  if (k >= node->n_input || !node->input[k] || !node->input[k][0])
    return NULL;
  return node->input[k];
}

hy_onnx_value *
hy_onnx_input (hy_onnx_importer *imp, guint k, GError **error)
{
  const char *name = hy_onnx_input_name (imp, k);
  hy_onnx_value *v = name ? g_hash_table_lookup (imp->values, name) : NULL;
  if (!v)
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: node '%s' (%s): input %u '%s' is %s", imp->source,
        node_label (imp->node), imp->node->op_type, k, name ? name : "",
        name ? "produced by no node before it" : "missing");
  else if (v->quantized) {
    /* Integer activations exist only between a QuantizeLinear and its
     * DequantizeLinear (onnx-qdq.c reads them itself). */
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: node '%s' (%s): input %u '%s' is the integers of "
        "QuantizeLinear '%s'; only a DequantizeLinear may read them",
        imp->source, node_label (imp->node), imp->node->op_type, k, name,
        v->quantized->node);
    return NULL;
  }
  return v;
}

hy_onnx_value *
hy_onnx_input_const (hy_onnx_importer *imp, guint k, GError **error)
{
  hy_onnx_value *v = hy_onnx_input (imp, k, error);
  if (v && !v->is_const) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: node '%s' (%s): input %u '%s' must be a constant (an "
        "initializer, a Constant, or shape arithmetic on static shapes)",
        imp->source, node_label (imp->node), imp->node->op_type, k,
        hy_onnx_input_name (imp, k));
    return NULL;
  }
  return v;
}

hy_entry
hy_onnx_add_weight (hy_onnx_importer *imp, const char *name,
    const hy_shape *shape, float *f)
{
  hy_tensor *t = g_new0 (hy_tensor, 1);
  t->shape = *shape;
  t->data = f;
  t->owns_data = true;
  /* Weights are bound by name: one made here (Gemm's transposed B) must
   * not take the name of anything in the graph already. */
  char *unique = g_strdup (name);
  for (guint i = 1; hy_graph_find (imp->graph, unique) >= 0; i++) {
    g_free (unique);
    unique = g_strdup_printf ("%s_%u", name, i);
  }
  hy_param p = { .name = unique, .kind = HY_PARAM_ARG,
    .stored_dtype = 0, .tensor = t };
  g_array_append_val (imp->params, p);
  hy_node *var = hy_node_new_variable (unique);
  var->shapes[0] = *shape;
  return (hy_entry) { hy_graph_add_node (imp->graph, var), 0 };
}

gboolean
hy_onnx_input_entry (hy_onnx_importer *imp, guint k, hy_entry *out,
    GError **error)
{
  hy_onnx_value *v = hy_onnx_input (imp, k, error);
  if (!v)
    return FALSE;
  if (!v->has_entry) {
    gsize n = MAX (hy_shape_numel (&v->shape), 1);
    v->entry = hy_onnx_add_weight (imp, hy_onnx_input_name (imp, k),
        &v->shape, g_memdup2 (v->f, n * sizeof (float)));
    v->has_entry = TRUE;
  }
  *out = v->entry;
  return TRUE;
}

gboolean
hy_onnx_input_shape (hy_onnx_importer *imp, guint k, hy_shape *out,
    GError **error)
{
  hy_onnx_value *v = hy_onnx_input (imp, k, error);
  if (!v)
    return FALSE;
  if (v->is_const) {
    *out = v->shape;
    return TRUE;
  }
  GError *local = NULL;
  const hy_node *src = hy_graph_node (imp->graph, v->entry.node);
  if (src->shapes[v->entry.index].ndim < 0
      && !hy_graph_infer_shapes (imp->graph, &local)) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "%s: node '%s' (%s) needs the static shape of '%s', which the "
        "graph's declared input shapes do not give: %s", imp->source,
        node_label (imp->node), imp->node->op_type,
        hy_onnx_input_name (imp, k), local->message);
    g_error_free (local);
    return FALSE;
  }
  *out = src->shapes[v->entry.index];
  if (out->ndim < 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "%s: node '%s' (%s) needs the static shape of '%s', which has none",
        imp->source, node_label (imp->node), imp->node->op_type,
        hy_onnx_input_name (imp, k));
    return FALSE;
  }
  return TRUE;
}

static hy_onnx_value *
output_value (hy_onnx_importer *imp, guint k)
{
  const Onnx__NodeProto *node = imp->node;
  if (k >= node->n_output || !node->output[k] || !node->output[k][0])
    return NULL;
  hy_onnx_value *v = g_new0 (hy_onnx_value, 1);
  g_hash_table_replace (imp->values, g_strdup (node->output[k]), v);
  return v;
}

void
hy_onnx_set_output (hy_onnx_importer *imp, guint k, hy_entry entry)
{
  hy_onnx_value *v = output_value (imp, k);
  if (!v)
    return;
  v->has_entry = TRUE;
  v->entry = entry;
}

void
hy_onnx_set_const (hy_onnx_importer *imp, guint k, const hy_shape *shape,
    float *f, gint64 *ints)
{
  hy_onnx_value *v = output_value (imp, k);
  if (!v) {
    g_free (f);
    g_free (ints);
    return;
  }
  v->is_const = TRUE;
  v->shape = *shape;
  gint64 n = MAX (hy_shape_numel (shape), 1);
  if (!f && ints) {
    f = g_new (float, n);
    for (gint64 i = 0; i < n; i++)
      f[i] = (float) ints[i];
  }
  v->f = f;
  v->ints = ints;
  v->is_int = ints != NULL;
}

/* ---- op nodes ------------------------------------------------------ */

hy_entry
hy_onnx_add_op (hy_onnx_importer *imp, const char *op,
    const hy_entry *inputs, guint n_inputs, GError **error, ...)
{
  const char *base = node_label (imp->node);
  hy_node *n = g_new0 (hy_node, 1);
  /* The first op keeps the ONNX node's name; helpers around it get a
   * suffix, so names stay unique. */
  n->name = imp->n_made++ ? g_strdup_printf ("%s/%s%u", base, op,
      imp->n_made - 1) : g_strdup (base);
  n->op_name = g_strdup (op);
  n->attrs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  n->inputs = g_memdup2 (inputs, MAX (n_inputs, 1) * sizeof (hy_entry));
  n->n_inputs = n_inputs;
  n->n_outputs = 1;
  va_list ap;
  va_start (ap, error);
  const char *key;
  while ((key = va_arg (ap, const char *))) {
    const char *value = va_arg (ap, const char *);
    g_hash_table_replace (n->attrs, g_strdup (key), g_strdup (value));
  }
  va_end (ap);
  guint index = hy_graph_add_node (imp->graph, n);
  GError *local = NULL;
  if (!hy_node_resolve (n, &local)) {
    g_set_error (error, local->domain, local->code,
        "%s: node '%s' (ONNX %s, as %s): %s", imp->source, base,
        imp->node->op_type, op, local->message);
    g_error_free (local);
    return HY_ONNX_BAD_ENTRY;
  }
  return (hy_entry) { index, 0 };
}

/* ---- integer folding ------------------------------------------------- */

static gboolean
all_inputs_int (hy_onnx_importer *imp)
{
  gboolean any = FALSE;
  for (guint k = 0; k < imp->node->n_input; k++) {
    const char *name = hy_onnx_input_name (imp, k);
    if (!name)
      continue;
    hy_onnx_value *v = g_hash_table_lookup (imp->values, name);
    if (!v || !v->is_const || !v->is_int)
      return FALSE;
    any = TRUE;
  }
  return any;
}

static gint64
numel_of (const hy_onnx_value *v)
{
  return hy_shape_numel (&v->shape);
}

static gboolean
fold_binary (hy_onnx_importer *imp, const char *op, GError **error)
{
  hy_onnx_value *a = hy_onnx_input (imp, 0, error);
  hy_onnx_value *b = a ? hy_onnx_input (imp, 1, error) : NULL;
  if (!b)
    return FALSE;
  gint64 na = numel_of (a), nb = numel_of (b);
  if (na != nb && na != 1 && nb != 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: node '%s' (%s): integer constants of %" G_GINT64_FORMAT
        " and %" G_GINT64_FORMAT " values do not fold", imp->source,
        node_label (imp->node), op, na, nb);
    return FALSE;
  }
  gint64 n = MAX (na, nb);
  gint64 *out = g_new (gint64, MAX (n, 1));
  for (gint64 i = 0; i < n; i++) {
    /* Unsigned arithmetic wraps where hostile values would overflow. */
    guint64 x = (guint64) a->ints[na == 1 ? 0 : i];
    guint64 y = (guint64) b->ints[nb == 1 ? 0 : i];
    gint64 sx = (gint64) x, sy = (gint64) y;
    if (!strcmp (op, "Add"))
      out[i] = (gint64) (x + y);
    else if (!strcmp (op, "Sub"))
      out[i] = (gint64) (x - y);
    else if (!strcmp (op, "Mul"))
      out[i] = (gint64) (x * y);
    else                        /* Div */
      out[i] = sy == 0 || (sy == -1 && sx == G_MININT64) ? 0 : sx / sy;
  }
  hy_shape s = na >= nb ? a->shape : b->shape;
  hy_onnx_set_const (imp, 0, &s, NULL, out);
  return TRUE;
}

static gboolean
fold_concat (hy_onnx_importer *imp, GError **error)
{
  GArray *all = g_array_new (FALSE, FALSE, sizeof (gint64));
  for (guint k = 0; k < imp->node->n_input; k++) {
    hy_onnx_value *v = hy_onnx_input (imp, k, error);
    if (!v) {
      g_array_unref (all);
      return FALSE;
    }
    if (v->shape.ndim > 1) {
      g_array_unref (all);
      g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
          "%s: node '%s' (Concat): integer constants of more than one "
          "dimension do not fold", imp->source, node_label (imp->node));
      return FALSE;
    }
    g_array_append_vals (all, v->ints, numel_of (v));
  }
  hy_shape s = { .ndim = 1, .dims = { all->len } };
  gint64 *ints = g_new0 (gint64, MAX (all->len, 1));
  memcpy (ints, all->data, all->len * sizeof (gint64));
  g_array_unref (all);
  hy_onnx_set_const (imp, 0, &s, NULL, ints);
  return TRUE;
}

/* Gather on axis 0 of a 1-D constant: picking dimensions of a shape. */
static gboolean
fold_gather (hy_onnx_importer *imp, GError **error)
{
  hy_onnx_value *data = hy_onnx_input (imp, 0, error);
  hy_onnx_value *idx = data ? hy_onnx_input (imp, 1, error) : NULL;
  if (!idx)
    return FALSE;
  gint64 n = numel_of (data), m = numel_of (idx);
  if (data->shape.ndim != 1 || hy_onnx_attr_int (imp->node, "axis", 0) != 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: node '%s' (Gather): only axis 0 of a 1-D integer constant "
        "folds", imp->source, node_label (imp->node));
    return FALSE;
  }
  gint64 *out = g_new (gint64, MAX (m, 1));
  for (gint64 i = 0; i < m; i++) {
    gint64 j = idx->ints[i];
    if (j < -n || j >= n) {
      g_free (out);
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "%s: node '%s' (Gather): index %" G_GINT64_FORMAT " is outside "
          "0..%" G_GINT64_FORMAT, imp->source, node_label (imp->node), j,
          n - 1);
      return FALSE;
    }
    out[i] = data->ints[j < 0 ? j + n : j];
  }
  hy_onnx_set_const (imp, 0, &idx->shape, NULL, out);
  return TRUE;
}

/* Unsqueeze and Squeeze of shape values: only the shape changes. */
static gboolean
fold_reshaped (hy_onnx_importer *imp, GError **error)
{
  hy_onnx_value *v = hy_onnx_input (imp, 0, error);
  if (!v)
    return FALSE;
  gint64 n = numel_of (v);
  gboolean squeeze = !strcmp (imp->node->op_type, "Squeeze");
  if (squeeze ? v->shape.ndim != 1 || n != 1 : v->shape.ndim != 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: node '%s' (%s): only a scalar integer constant and its "
        "one-element vector fold", imp->source, node_label (imp->node),
        imp->node->op_type);
    return FALSE;
  }
  hy_shape s = { .ndim = squeeze ? 0 : 1, .dims = { n } };
  hy_onnx_set_const (imp, 0, &s, NULL, g_memdup2 (v->ints,
          MAX (n, 1) * sizeof (gint64)));
  return TRUE;
}

static gboolean
fold_slice (hy_onnx_importer *imp, GError **error)
{
  hy_onnx_value *v = hy_onnx_input (imp, 0, error);
  hy_onnx_value *st = v ? hy_onnx_input (imp, 1, error) : NULL;
  hy_onnx_value *en = st ? hy_onnx_input (imp, 2, error) : NULL;
  if (!en)
    return FALSE;
  hy_onnx_value *steps = hy_onnx_input_name (imp, 4)
      ? hy_onnx_input (imp, 4, error) : NULL;
  if (v->shape.ndim != 1 || numel_of (st) != 1 || numel_of (en) != 1
      || (steps && (numel_of (steps) != 1 || steps->ints[0] != 1))) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: node '%s' (Slice): only a unit-step slice of a 1-D integer "
        "constant folds", imp->source, node_label (imp->node));
    return FALSE;
  }
  gint64 n = numel_of (v);
  gint64 b = st->ints[0], e = en->ints[0];
  b = b < 0 ? MAX (b + n, 0) : MIN (b, n);
  e = e < 0 ? MAX (e + n, 0) : MIN (e, n);
  gint64 m = MAX (e - b, 0);
  hy_shape s = { .ndim = 1, .dims = { m } };
  hy_onnx_set_const (imp, 0, &s, NULL,
      g_memdup2 (v->ints + (m ? b : 0), MAX (m, 1) * sizeof (gint64)));
  return TRUE;
}

gboolean
hy_onnx_fold_ints (hy_onnx_importer *imp, gboolean *folded, GError **error)
{
  const char *op = imp->node->op_type;
  *folded = FALSE;
  if (!all_inputs_int (imp))
    return TRUE;
  gboolean ok;
  if (!strcmp (op, "Add") || !strcmp (op, "Sub") || !strcmp (op, "Mul")
      || !strcmp (op, "Div"))
    ok = fold_binary (imp, op, error);
  else if (!strcmp (op, "Concat"))
    ok = fold_concat (imp, error);
  else if (!strcmp (op, "Gather"))
    ok = fold_gather (imp, error);
  else if (!strcmp (op, "Unsqueeze") || !strcmp (op, "Squeeze"))
    ok = fold_reshaped (imp, error);
  else if (!strcmp (op, "Slice"))
    ok = fold_slice (imp, error);
  else if (!strcmp (op, "Identity") || !strcmp (op, "Cast")) {
    hy_onnx_value *v = hy_onnx_input (imp, 0, error);
    ok = v != NULL;
    if (ok)
      hy_onnx_set_const (imp, 0, &v->shape, NULL, g_memdup2 (v->ints,
              MAX (numel_of (v), 1) * sizeof (gint64)));
  } else
    return TRUE;
  *folded = ok;
  return ok;
}

/*
 * onnx-load.c — reading an ONNX ModelProto: the opsets, the initializers
 * (weights, external data files included), the graph's inputs and
 * outputs; every node is then handed to onnx-ops.c in file order, which
 * ONNX requires to be topological.
 *
 * Built only with protobuf-c; without it a .onnx file is refused with
 * what to install.
 */
#include <math.h>
#include <string.h>

#include "core/io/onnx-import.h"
#include "core/io/onnx-tensor.h"

#define ONNX_MIN_OPSET 11
#define ONNX_MAX_OPSET 19

#ifndef HY_HAVE_ONNX

gboolean
hy_onnx_parse (const guint8 *data, gsize size, const char *source,
    const char *dir, hy_graph **graph, hy_param_list **params,
    GError **error)
{
  g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
      "%s is an ONNX model, and this build of hybridinfer reads none: it "
      "was built without protobuf-c (install libprotobuf-c-dev, "
      "protobuf-c-compiler and libonnx-dev, then reconfigure)", source);
  return FALSE;
}

gboolean
hy_onnx_load (const char *path, hy_graph **graph, hy_param_list **params,
    GError **error)
{
  return hy_onnx_parse (NULL, 0, path, NULL, graph, params, error);
}

#else

#include "core/io/file-read.h"

static void
value_free (hy_onnx_value *v)
{
  g_free (v->f);
  g_free (v->ints);
  if (v->quantized) {
    g_free (v->quantized->node);
    g_free (v->quantized->scale);
    g_free (v->quantized->zero_point);
    g_free (v->quantized);
  }
  g_free (v);
}

/* The declared shape of a graph input; symbolic or unknown dimensions
 * (a batch the exporter left open) are 1, which the caller may change
 * per forward as with a Gluon export. */
static gboolean
input_shape (hy_onnx_importer *imp, const Onnx__ValueInfoProto *vi,
    hy_shape *out, GError **error)
{
  const Onnx__TypeProto *tp = vi->type;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE
      || !tp->tensor_type) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: graph input '%s' is not a tensor", imp->source, vi->name);
    return FALSE;
  }
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  if (tt->has_elem_type && tt->elem_type != ONNX_FLOAT) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: graph input '%s' is of type %s; only float inputs are "
        "supported", imp->source, vi->name, hy_onnx_dtype_name (tt->elem_type));
    return FALSE;
  }
  if (!tt->shape) {
    out->ndim = -1;
    return TRUE;
  }
  if (tt->shape->n_dim > HY_MAX_DIMS) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: graph input '%s' has %zu dimensions, at most %d are supported",
        imp->source, vi->name, tt->shape->n_dim, HY_MAX_DIMS);
    return FALSE;
  }
  out->ndim = (int) tt->shape->n_dim;
  for (int d = 0; d < out->ndim; d++) {
    const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
    gint64 v = dim->value_case
        == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
        ? dim->dim_value : 1;
    if (v < 1 || v > G_MAXINT32) {
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "%s: graph input '%s': dimension %d = %" G_GINT64_FORMAT " is not "
          "a size", imp->source, vi->name, d, v);
      return FALSE;
    }
    out->dims[d] = v;
  }
  return TRUE;
}

static gboolean
read_opset (hy_onnx_importer *imp, const Onnx__ModelProto *model,
    GError **error)
{
  imp->opset = 0;
  for (size_t i = 0; i < model->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = model->opset_import[i];
    if (!o->domain || !o->domain[0] || !strcmp (o->domain, "ai.onnx"))
      imp->opset = o->has_version ? (int) CLAMP (o->version, 0, 10000) : 0;
  }
  if (imp->opset < ONNX_MIN_OPSET || imp->opset > ONNX_MAX_OPSET) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: ONNX opset %d; opsets %d to %d are supported (re-export the "
        "model with one of them)", imp->source, imp->opset, ONNX_MIN_OPSET,
        ONNX_MAX_OPSET);
    return FALSE;
  }
  return TRUE;
}

/* An initializer of a type we do not read is refused naming the first
 * node that reads it (a QDQ file's int16 or float8 zero point names its
 * QuantizeLinear), or as a tensor when nothing does. */
static gboolean
refuse_initializer_type (hy_onnx_importer *imp, const Onnx__GraphProto *g,
    const Onnx__TensorProto *t, GError **error)
{
  int dtype = t->has_data_type ? t->data_type : 0;
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *node = g->node[i];
    for (size_t k = 0; k < node->n_input; k++) {
      if (!node->input[k] || strcmp (node->input[k], t->name))
        continue;
      g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
          "%s: node '%s' (%s): input %zu '%s' is of type %s (%d); float32, "
          "double, int64, int32, int8, uint8 and bool are supported",
          imp->source, node->name && node->name[0] ? node->name
          : node->n_output > 0 && node->output[0] ? node->output[0] : "",
          node->op_type ? node->op_type : "", k, t->name,
          hy_onnx_dtype_name (dtype), dtype);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
import_graph (hy_onnx_importer *imp, const Onnx__GraphProto *g,
    GError **error)
{
  for (size_t i = 0; i < g->n_initializer; i++) {
    const Onnx__TensorProto *t = g->initializer[i];
    if (!t->name || !t->name[0]) {
      g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
          "%s: initializer %zu has no name", imp->source, i);
      return FALSE;
    }
    if (!hy_onnx_elem_size (t->has_data_type ? t->data_type : 0)
        && !refuse_initializer_type (imp, g, t, error))
      return FALSE;
    hy_onnx_value *v = g_new0 (hy_onnx_value, 1);
    if (!hy_onnx_tensor_value (imp, t, v, error)) {
      value_free (v);
      return FALSE;
    }
    g_hash_table_replace (imp->values, g_strdup (t->name), v);
  }
  for (size_t i = 0; i < g->n_input; i++) {
    const Onnx__ValueInfoProto *vi = g->input[i];
    /* Before IR 4 every initializer is listed as an input too. */
    if (!vi->name || g_hash_table_contains (imp->values, vi->name))
      continue;
    hy_shape shape;
    if (!input_shape (imp, vi, &shape, error))
      return FALSE;
    hy_node *var = hy_node_new_variable (vi->name);
    if (shape.ndim >= 0) {
      g_autofree char *s = hy_onnx_tuple (shape.dims, shape.ndim);
      g_hash_table_insert (var->attrs, g_strdup ("__shape__"),
          g_steal_pointer (&s));
    }
    var->shapes[0] = shape;
    hy_onnx_value *v = g_new0 (hy_onnx_value, 1);
    v->has_entry = TRUE;
    v->entry = (hy_entry) { hy_graph_add_node (imp->graph, var), 0 };
    g_hash_table_replace (imp->values, g_strdup (vi->name), v);
  }
  for (size_t i = 0; i < g->n_node; i++) {
    imp->node = g->node[i];
    if (!hy_onnx_import_node (imp, error))
      return FALSE;
  }
  imp->node = NULL;
  if (!hy_onnx_tail_finish (imp, g, error))
    return FALSE;
  if (g->n_output == 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: the graph has no outputs", imp->source);
    return FALSE;
  }
  imp->graph->heads = g_new0 (hy_entry, g->n_output);
  for (size_t i = 0; i < g->n_output; i++) {
    const char *name = g->output[i]->name;
    hy_onnx_value *v = name ? g_hash_table_lookup (imp->values, name) : NULL;
    if (!v) {
      g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
          "%s: graph output '%s' is produced by no node", imp->source,
          name ? name : "");
      return FALSE;
    }
    if (v->in_tail && !v->has_entry) {
      g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
          "%s: graph output '%s' is a value of the data-dependent tail "
          "that no output of the tail's op gives", imp->source, name);
      return FALSE;
    }
    if (v->quantized) {
      g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
          "%s: graph output '%s' is the integers of QuantizeLinear '%s'; "
          "only a DequantizeLinear may read them (a graph of float "
          "outputs is supported)", imp->source, name, v->quantized->node);
      return FALSE;
    }
    if (!v->has_entry) {
      /* An output the import folded to a constant: a weight it returns. */
      hy_shape s = v->shape;
      v->entry = hy_onnx_add_weight (imp, name, &s,
          g_memdup2 (v->f, MAX (hy_shape_numel (&s), 1) * sizeof (float)));
      v->has_entry = TRUE;
    }
    imp->graph->heads[i] = v->entry;
    imp->graph->n_heads = (guint) i + 1;
  }
  return TRUE;
}

static void
params_free (GArray *params)
{
  for (guint i = 0; i < params->len; i++) {
    hy_param *p = &g_array_index (params, hy_param, i);
    g_free (p->name);
    hy_tensor_free (p->tensor);
  }
  g_array_unref (params);
}

gboolean
hy_onnx_parse (const guint8 *data, gsize size, const char *source,
    const char *dir, hy_graph **graph, hy_param_list **params,
    GError **error)
{
  Onnx__ModelProto *model = onnx__model_proto__unpack (NULL, size, data);
  if (!model) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: not a valid ONNX model (the protobuf ModelProto does not "
        "decode)", source);
    return FALSE;
  }
  hy_onnx_importer imp = {
    .source = source,
    .dir = dir,
    .graph = hy_graph_new (),
    .params = g_array_new (FALSE, TRUE, sizeof (hy_param)),
    .values = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
        (GDestroyNotify) value_free),
  };
  gboolean ok = read_opset (&imp, model, error);
  if (ok && !model->graph) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: the ONNX model holds no graph", source);
    ok = FALSE;
  }
  ok = ok && import_graph (&imp, model->graph, error);
  g_hash_table_unref (imp.values);
  hy_onnx_tail_free (imp.tail);
  onnx__model_proto__free_unpacked (model, NULL);
  if (!ok) {
    hy_graph_free (imp.graph);
    params_free (imp.params);
    return FALSE;
  }
  hy_param_list *list = g_new0 (hy_param_list, 1);
  list->n = imp.params->len;
  list->items = (hy_param *) g_array_free (imp.params, FALSE);
  *graph = imp.graph;
  *params = list;
  return TRUE;
}

gboolean
hy_onnx_load (const char *path, hy_graph **graph, hy_param_list **params,
    GError **error)
{
  g_autofree char *data = NULL;
  gsize length = 0;
  if (!hy_file_read_bounded (path, "ONNX model", ONNX_MAX_BYTES, &data,
          &length, error))
    return FALSE;
  g_autofree char *dir = g_path_get_dirname (path);
  return hy_onnx_parse ((const guint8 *) data, length, path, dir, graph,
      params, error);
}

#endif /* HY_HAVE_ONNX */

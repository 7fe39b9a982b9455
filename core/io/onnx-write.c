/*
 * onnx-write.c — a loaded model as an ONNX file: the graph's inputs with
 * their static shapes, each op node as the ONNX nodes onnx-write-ops.c
 * gives it, every weight a node reads as a float32 initializer, the heads
 * as the graph's outputs under the names the model gives them.  The
 * ModelProto is packed by protobuf-c and written under a temporary name,
 * then renamed: a refusal or a failed write leaves no file behind.
 *
 * Built only with protobuf-c; without it the export is refused with what
 * to install, as reading is.
 */
#include <string.h>

#include "core/io/onnx-write.h"
#include "core/model-impl.h"

#ifndef HY_HAVE_ONNX

gboolean
hy_model_export_onnx (const hy_model *model G_GNUC_UNUSED,
    const hy_shapes *shapes G_GNUC_UNUSED, const char *path,
    GError **error)
{
  g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
      "cannot write %s: this build of hybridinfer writes no ONNX: it was "
      "built without protobuf-c (install libprotobuf-c-dev, "
      "protobuf-c-compiler and libonnx-dev, then reconfigure)", path);
  return FALSE;
}

#else

#include "core/io/onnx-tensor.h"

/* ONNX IR version 7 is the one that goes with opset 13. */
#define ONNX_IR_VERSION 7

/* ---- the graph --------------------------------------------------------- */

static Onnx__ValueInfoProto *
value_info (hy_onnx_writer *w, const char *name, const hy_shape *shape)
{
  Onnx__TensorShapeProto *sp = hy_onnx_w_alloc (w, sizeof *sp);
  *sp = (Onnx__TensorShapeProto) ONNX__TENSOR_SHAPE_PROTO__INIT;
  sp->n_dim = (size_t) MAX (shape->ndim, 0);
  sp->dim = hy_onnx_w_alloc (w, MAX (shape->ndim, 1) * sizeof *sp->dim);
  for (int d = 0; d < shape->ndim; d++) {
    Onnx__TensorShapeProto__Dimension *dim = hy_onnx_w_alloc (w,
        sizeof *dim);
    *dim = (Onnx__TensorShapeProto__Dimension)
        ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
    dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    dim->dim_value = shape->dims[d];
    sp->dim[d] = dim;
  }
  Onnx__TypeProto__Tensor *tt = hy_onnx_w_alloc (w, sizeof *tt);
  *tt = (Onnx__TypeProto__Tensor) ONNX__TYPE_PROTO__TENSOR__INIT;
  tt->has_elem_type = TRUE;
  tt->elem_type = ONNX_FLOAT;
  tt->shape = sp;
  Onnx__TypeProto *tp = hy_onnx_w_alloc (w, sizeof *tp);
  *tp = (Onnx__TypeProto) ONNX__TYPE_PROTO__INIT;
  tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp->tensor_type = tt;
  Onnx__ValueInfoProto *vi = hy_onnx_w_alloc (w, sizeof *vi);
  *vi = (Onnx__ValueInfoProto) ONNX__VALUE_INFO_PROTO__INIT;
  vi->name = (char *) name;
  vi->type = tp;
  return vi;
}

/* Every output of every node gets its ONNX value name: a variable's is
 * its own, an op's first output the node's name (MXNet's output names
 * are the node names), later outputs the name and the index. */
static void
name_values (hy_onnx_writer *w)
{
  guint n = hy_graph_n_nodes (w->graph);
  /* ONNX values are defined once; a symbol file may repeat a node name,
   * whose later values then take a suffix. */
  g_autoptr (GHashTable) taken = g_hash_table_new (g_str_hash, g_str_equal);
  w->names = hy_onnx_w_alloc (w, MAX (n, 1) * sizeof (char **));
  for (guint i = 0; i < n; i++) {
    const hy_node *node = hy_graph_node (w->graph, i);
    w->names[i] = hy_onnx_w_alloc (w, MAX (node->n_outputs, 1)
        * sizeof (char *));
    for (guint k = 0; k < node->n_outputs; k++) {
      char *s = k ? g_strdup_printf ("%s_output%u", node->name, k)
          : g_strdup (node->name);
      for (guint dup = 1; g_hash_table_contains (taken, s); dup++) {
        g_free (s);
        s = g_strdup_printf ("%s_output%u_%u", node->name, k, dup);
      }
      g_ptr_array_add (w->owned, s);
      g_hash_table_add (taken, s);
      w->names[i][k] = s;
    }
  }
  w->later_outputs_read = hy_onnx_w_alloc (w, MAX (n, 1) * sizeof (gboolean));
  for (guint i = 0; i < n; i++) {
    const hy_node *node = hy_graph_node (w->graph, i);
    for (guint k = 0; k < node->n_inputs; k++)
      if (node->inputs[k].index > 0)
        w->later_outputs_read[node->inputs[k].node] = TRUE;
  }
  for (guint h = 0; h < w->graph->n_heads; h++)
    if (w->graph->heads[h].index > 0)
      w->later_outputs_read[w->graph->heads[h].node] = TRUE;
}

/* The graph's outputs: each head under its value's name, through an
 * Identity where that name cannot be an output as it is (a graph input or
 * a weight returned, or a value listed twice). */
static void
write_outputs (hy_onnx_writer *w, GPtrArray *outputs)
{
  g_autoptr (GHashTable) used = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < w->graph->n_heads; i++) {
    hy_entry e = w->graph->heads[i];
    const hy_node *src = hy_graph_node (w->graph, e.node);
    const char *name = w->names[e.node][e.index];
    if (!src->op || g_hash_table_contains (used, name)) {
      w->node = e.node;
      hy_onnx_w_weight (w, e.node);
      const char *out = hy_onnx_w_temp (w, "output");
      hy_onnx_w_node (w, "Identity", &name, 1, out);
      name = out;
    }
    g_hash_table_add (used, (gpointer) name);
    g_ptr_array_add (outputs, value_info (w, name, &src->shapes[e.index]));
  }
}

static gboolean
write_graph (hy_onnx_writer *w, GPtrArray *inputs, GPtrArray *outputs,
    GError **error)
{
  name_values (w);
  for (guint i = 0; i < hy_graph_n_nodes (w->graph); i++) {
    const hy_node *node = hy_graph_node (w->graph, i);
    w->node = i;
    w->n_made = 0;
    if (!node->op) {
      if (node->var_kind == HY_VAR_INPUT)
        g_ptr_array_add (inputs, value_info (w, w->names[i][0],
                &node->shapes[0]));
      continue;
    }
    if (!hy_onnx_write_node (w, error))
      return FALSE;
  }
  write_outputs (w, outputs);
  return TRUE;
}

static gboolean
pack_and_save (Onnx__ModelProto *mp, const char *path, GError **error)
{
  size_t size = onnx__model_proto__get_packed_size (mp);
  if (size > G_MAXINT32) {
    /* protobuf's 2 GiB limit: readers refuse a larger message. */
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "cannot write %s: the model is %zu bytes, more than the 2 GiB a "
        "protobuf message may hold", path, size);
    return FALSE;
  }
  g_autofree guint8 *buf = g_try_malloc (MAX (size, 1));
  if (!buf) {
    g_set_error (error, HY_ERROR, HY_ERROR_NO_MEMORY,
        "cannot write %s: no memory for its %zu bytes", path, size);
    return FALSE;
  }
  onnx__model_proto__pack (mp, buf);
  /* g_file_set_contents writes a temporary file beside `path` and renames
   * it: no half-written model is ever seen under the name. */
  GError *io = NULL;
  if (!g_file_set_contents (path, (const char *) buf, (gssize) size, &io)) {
    g_set_error (error, HY_ERROR, HY_ERROR_IO, "cannot write %s: %s", path,
        io->message);
    g_error_free (io);
    return FALSE;
  }
  return TRUE;
}

static gboolean
export_graph (const hy_graph *graph, const char *source, const char *path,
    GError **error)
{
  hy_onnx_writer w = {
    .source = source,
    .graph = graph,
    .owned = g_ptr_array_new_with_free_func (g_free),
    .nodes = g_ptr_array_new (),
    .inits = g_ptr_array_new (),
    .init_done = g_hash_table_new (g_direct_hash, g_direct_equal),
  };
  g_autoptr (GPtrArray) inputs = g_ptr_array_new ();
  g_autoptr (GPtrArray) outputs = g_ptr_array_new ();
  gboolean ok = write_graph (&w, inputs, outputs, error);
  if (ok) {
    Onnx__GraphProto gp = ONNX__GRAPH_PROTO__INIT;
    g_autofree char *base = g_path_get_basename (source);
    gp.name = base;
    gp.n_node = w.nodes->len;
    gp.node = (Onnx__NodeProto **) w.nodes->pdata;
    gp.n_initializer = w.inits->len;
    gp.initializer = (Onnx__TensorProto **) w.inits->pdata;
    gp.n_input = inputs->len;
    gp.input = (Onnx__ValueInfoProto **) inputs->pdata;
    gp.n_output = outputs->len;
    gp.output = (Onnx__ValueInfoProto **) outputs->pdata;
    Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT;
    opset.domain = (char *) "";
    opset.has_version = TRUE;
    opset.version = HY_ONNX_WRITE_OPSET;
    Onnx__OperatorSetIdProto *opsets[1] = { &opset };
    Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
    mp.has_ir_version = TRUE;
    mp.ir_version = ONNX_IR_VERSION;
    mp.n_opset_import = 1;
    mp.opset_import = opsets;
    mp.producer_name = (char *) "hybridinfer";
    mp.graph = &gp;
    ok = pack_and_save (&mp, path, error);
  }
  g_hash_table_unref (w.init_done);
  g_ptr_array_unref (w.inits);
  g_ptr_array_unref (w.nodes);
  g_ptr_array_unref (w.owned);
  return ok;
}

gboolean
hy_model_export_onnx (const hy_model *model, const hy_shapes *shapes,
    const char *path, GError **error)
{
  if (model->weightless) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "%s was loaded without its weights: an ONNX file needs them",
        model->symbol_path);
    return FALSE;
  }
  hy_shapes *own = NULL;
  if (!shapes) {
    own = hy_shapes_new (model);
    shapes = own;
  }
  /* The shapes fix every Reshape's target and the declared input and
   * output shapes; inferring them here also refuses an input left
   * without one, naming it. */
  gboolean ok = hy_shapes_inferred (shapes)
      || (own && hy_shapes_infer (own, error));
  if (!ok && !own)
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "%s: the input shapes are not inferred (hy_shapes_infer)",
        model->symbol_path);
  ok = ok && export_graph (hy_shapes_graph (shapes), model->symbol_path,
      path, error);
  hy_shapes_free (own);
  return ok;
}

#endif /* HY_HAVE_ONNX */

/*
 * dtype-infer.c — which values of a graph are integers, found once at load.
 *
 * Every value is held as float32, but MXNet computes on a tensor in its
 * dtype: broadcast_div of two int64 tensors truncates, uint8 sums wrap.
 * Graphs make integer tensors on purpose (GluonCV's CenterNet turns topk
 * indices into rows and columns with Cast(int64), shape_array and integer
 * division), so the dtype of every value is inferred here, in index order
 * (topological), from the ops' infer_dtype hooks (core/op.h).  The hooks
 * of ops whose arithmetic differs on integers record the dtype in their
 * params, which the kernels honour; nothing is decided per forward.
 *
 * Sources of integers are the ops that say so: Cast to an integer dtype,
 * shape_array, _arange and topk/argsort indices of an integer dtype.
 * Variables are float32 (parameters are loaded as float32, inputs fed so).
 */
#include "core/model-impl.h"

gboolean
hy_dtype_is_integer (int dtype)
{
  switch (dtype) {
    case HY_DTYPE_UINT8: case HY_DTYPE_INT32: case HY_DTYPE_INT8:
    case HY_DTYPE_INT64: case HY_DTYPE_BOOL: case HY_DTYPE_INT16:
    case HY_DTYPE_UINT16: case HY_DTYPE_UINT32: case HY_DTYPE_UINT64:
      return TRUE;
    default:
      return FALSE;
  }
}

/* Floating dtypes all compute as float32 here, so they count as one. */
static gboolean
dtypes_alike (int a, int b)
{
  if (hy_dtype_is_integer (a) || hy_dtype_is_integer (b))
    return a == b;
  return TRUE;
}

gboolean
hy_dtype_check_alike (const void *params, const hy_dtype *in, int first,
    int n, GError **error)
{
  const hy_op_info *op = hy_op_info_get (*(const hy_op_id *) params);
  for (int k = first + 1; k < first + n; k++) {
    if (dtypes_alike (in[first], in[k]))
      continue;
    char b0[32], b1[32];
    /* MXNet 1.9.1 refuses these too ("Incompatible attr ... expected
     * int64, got float32"): it never converts between them implicitly. */
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "input '%s' is %s but input '%s' is %s: MXNet needs one dtype here "
        "(Cast one of them)",
        hy_op_input_name (op, params, k, b1, sizeof b1),
        hy_dtype_name (in[k]),
        hy_op_input_name (op, params, first, b0, sizeof b0),
        hy_dtype_name (in[first]));
    return FALSE;
  }
  return TRUE;
}

gboolean
hy_dtype_like_data (void *params, const hy_dtype *in, int n_in,
    hy_dtype *out, int n_out, GError **error)
{
  for (int k = 0; k < n_out; k++)
    out[k] = n_in > 0 ? in[0] : HY_DTYPE_FLOAT32;
  return TRUE;
}

gboolean
hy_dtype_all_alike (void *params, const hy_dtype *in, int n_in,
    hy_dtype *out, int n_out, GError **error)
{
  if (n_in > 0 && !hy_dtype_check_alike (params, in, 0, n_in, error))
    return FALSE;
  return hy_dtype_like_data (params, in, n_in, out, n_out, error);
}

/* An op without a dtype rule runs on floating-point data only. */
static gboolean
float_only (const hy_graph *graph, const hy_node *node, const hy_dtype *in,
    hy_dtype *out, GError **error)
{
  for (guint k = 0; k < node->n_inputs; k++) {
    if (!hy_dtype_is_integer (in[k]))
      continue;
    char buf[32];
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "node '%s' (op %s): input '%s' ('%s') holds %s values, but this op "
        "runs on floating-point data only: Cast it to float32 first",
        node->name, node->op_name,
        hy_op_input_name (node->op, node->params, (int) k, buf, sizeof buf),
        hy_graph_node (graph, node->inputs[k].node)->name,
        hy_dtype_name (in[k]));
    return FALSE;
  }
  for (guint k = 0; k < node->n_outputs; k++)
    out[k] = HY_DTYPE_FLOAT32;
  return TRUE;
}

gboolean
hy_graph_infer_dtypes (hy_graph *graph, GError **error)
{
  const guint n = hy_graph_n_nodes (graph);
  /* Output k of node i is dtypes[first[i] + k]. */
  g_autofree guint *first = g_new (guint, n + 1);
  first[0] = 0;
  for (guint i = 0; i < n; i++)
    first[i + 1] = first[i] + hy_graph_node (graph, i)->n_outputs;
  g_autofree hy_dtype *dtypes = g_new0 (hy_dtype, MAX (first[n], 1));
  g_autofree hy_dtype *in = NULL;
  guint in_size = 0;

  for (guint i = 0; i < n; i++) {
    hy_node *node = hy_graph_node (graph, i);
    hy_dtype *out = dtypes + first[i];
    if (!node->op || !node->op->def)
      continue;                 /* variables, unresolved ops: float32 */
    if (node->n_inputs > in_size) {
      in_size = node->n_inputs;
      in = g_renew (hy_dtype, in, in_size);
    }
    for (guint k = 0; k < node->n_inputs; k++)
      in[k] = dtypes[first[node->inputs[k].node] + node->inputs[k].index];

    const hy_op_def *def = node->op->def;
    if (!def->infer_dtype) {
      if (!float_only (graph, node, in, out, error))
        return FALSE;
      continue;
    }
    GError *local = NULL;
    if (!def->infer_dtype (node->params, in, (int) node->n_inputs, out,
            (int) node->n_outputs, &local)) {
      g_propagate_prefixed_error (error, local, "node '%s' (op %s): ",
          node->name, node->op_name);
      return FALSE;
    }
  }
  return TRUE;
}

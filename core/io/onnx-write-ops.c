/*
 * onnx-write-ops.c — each of the core's ops as ONNX (opset 13) nodes: the
 * inverse of onnx-ops.c.  The writers read the op's parsed params (the
 * defaults MXNet applies are already in them) and the static shapes of
 * the node's inputs; a Reshape-like op (Reshape, expand_dims, squeeze,
 * reshape_like) is written as a Reshape to its inferred output shape.
 *
 * An op, or an attribute value, without an ONNX form here is refused
 * naming the node and the op.
 */
#include <math.h>
#include <string.h>

#include "core/io/onnx-write.h"
#include "kernels/params/elementwise.h"
#include "kernels/params/nn.h"
#include "kernels/params/shape.h"
#include "kernels/params/vision.h"

typedef hy_onnx_write_op write_op;

#define PARAMS HY_ONNX_W_PARAMS

static const hy_node *
node_of (hy_onnx_writer *w)
{
  return hy_graph_node (w->graph, w->node);
}

/* One ONNX node reading input 0 and writing the node's output. */
static Onnx__NodeProto *
unary_node (hy_onnx_writer *w, const char *op_type)
{
  const char *in = hy_onnx_w_input (w, 0);
  return hy_onnx_w_node (w, op_type, &in, 1, hy_onnx_w_output (w, 0));
}

static const char *
scalar_const (hy_onnx_writer *w, const char *what, float v)
{
  hy_shape scalar = { .ndim = 0 };
  return hy_onnx_w_const_floats (w, what, &scalar, &v);
}

/* Windows of Conv, ConvTranspose and the pools: MXNet's symmetric pad as
 * ONNX's begin and end pads. */
static void
window_attrs (hy_onnx_writer *w, Onnx__NodeProto *n, int n_spatial,
    const int64_t *kernel, const int64_t *stride, const int64_t *pad)
{
  gint64 pads[2 * HY_NN_MAX_SPATIAL];
  for (int i = 0; i < n_spatial; i++)
    pads[i] = pads[n_spatial + i] = pad[i];
  hy_onnx_w_attr_ints (w, n, "kernel_shape", kernel, n_spatial);
  hy_onnx_w_attr_ints (w, n, "strides", stride, n_spatial);
  hy_onnx_w_attr_ints (w, n, "pads", pads, 2 * n_spatial);
}

static gboolean
unfused (hy_onnx_writer *w, const hy_fused_epilogue *f, GError **error)
{
  if (f->act != HY_FUSED_ACT_NONE || f->batch_norm || f->residual)
    return hy_onnx_w_refuse (w, error, "a fused epilogue has no ONNX form "
        "(export the model as loaded, before the graph passes)");
  return TRUE;
}

/* ---- layers with weights ------------------------------------------------ */

static gboolean
write_conv (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error)
{
  const hy_conv_params *p = PARAMS (w, hy_conv_params);
  if (!unfused (w, &p->fused, error))
    return FALSE;
  const char *in[3];
  guint n_in = p->no_bias ? 2 : 3;
  for (guint k = 0; k < n_in; k++)
    in[k] = hy_onnx_w_input (w, k);
  Onnx__NodeProto *n = hy_onnx_w_node (w, "Conv", in, n_in,
      hy_onnx_w_output (w, 0));
  window_attrs (w, n, p->n_spatial, p->kernel, p->stride, p->pad);
  hy_onnx_w_attr_ints (w, n, "dilations", p->dilate, p->n_spatial);
  hy_onnx_w_attr_int (w, n, "group", p->num_group);
  return TRUE;
}

static gboolean
write_deconv (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error)
{
  const hy_deconv_params *p = PARAMS (w, hy_deconv_params);
  /* ONNX Runtime's ConvTranspose gives other values than MXNet's
   * Deconvolution once dilated (the fixtures' op_Deconvolution_*dilate*):
   * not written rather than written wrong. */
  for (int i = 0; i < p->n_spatial; i++)
    if (p->dilate[i] != 1)
      return hy_onnx_w_refuse (w, error, "dilate other than 1 is not "
          "written (ONNX Runtime computes a dilated ConvTranspose "
          "otherwise than MXNet)");
  const hy_shape *data = hy_onnx_w_input_shape (w, 0);
  gint64 pad[HY_NN_MAX_SPATIAL], adj[HY_NN_MAX_SPATIAL];
  for (int i = 0; i < p->n_spatial; i++) {
    int64_t pi, ai;
    hy_deconv_pads (p, i, data->dims[2 + i], &pi, &ai);
    pad[i] = pi;
    adj[i] = ai;
  }
  const char *in[3];
  guint n_in = p->no_bias ? 2 : 3;
  for (guint k = 0; k < n_in; k++)
    in[k] = hy_onnx_w_input (w, k);
  Onnx__NodeProto *n = hy_onnx_w_node (w, "ConvTranspose", in, n_in,
      hy_onnx_w_output (w, 0));
  window_attrs (w, n, p->n_spatial, p->kernel, p->stride, pad);
  hy_onnx_w_attr_ints (w, n, "dilations", p->dilate, p->n_spatial);
  hy_onnx_w_attr_ints (w, n, "output_padding", adj, p->n_spatial);
  hy_onnx_w_attr_int (w, n, "group", p->num_group);
  return TRUE;
}

/* FullyConnected: Gemm on 2-D data (a Flatten first where MXNet's flatten
 * folds the trailing axes); without flatten on N-D data, MatMul by the
 * transposed weight and the bias added. */
static gboolean
write_fc (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error)
{
  const hy_fc_params *p = PARAMS (w, hy_fc_params);
  if (!unfused (w, &p->fused, error))
    return FALSE;
  const hy_shape *data = hy_onnx_w_input_shape (w, 0);
  const char *in[3] = { hy_onnx_w_input (w, 0), hy_onnx_w_input (w, 1),
    p->no_bias ? NULL : hy_onnx_w_input (w, 2) };
  if (data->ndim != 2 && p->flatten) {
    const char *flat = hy_onnx_w_temp (w, "flatten");
    hy_onnx_w_attr_int (w, hy_onnx_w_node (w, "Flatten", in, 1, flat),
        "axis", 1);
    in[0] = flat;
  }
  if (data->ndim == 2 || p->flatten) {
    Onnx__NodeProto *n = hy_onnx_w_node (w, "Gemm", in, p->no_bias ? 2 : 3,
        hy_onnx_w_output (w, 0));
    hy_onnx_w_attr_int (w, n, "transB", 1);
    return TRUE;
  }
  const char *wt = hy_onnx_w_temp (w, "weight_t");
  gint64 perm[2] = { 1, 0 };
  hy_onnx_w_attr_ints (w, hy_onnx_w_node (w, "Transpose", &in[1], 1, wt),
      "perm", perm, 2);
  const char *mm[2] = { in[0], wt };
  if (p->no_bias) {
    hy_onnx_w_node (w, "MatMul", mm, 2, hy_onnx_w_output (w, 0));
    return TRUE;
  }
  const char *prod = hy_onnx_w_temp (w, "matmul");
  hy_onnx_w_node (w, "MatMul", mm, 2, prod);
  const char *add[2] = { prod, in[2] };
  hy_onnx_w_node (w, "Add", add, 2, hy_onnx_w_output (w, 0));
  return TRUE;
}

static gboolean
write_pool (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error)
{
  const hy_pool_params *p = PARAMS (w, hy_pool_params);
  if (p->pool_type != HY_POOL_MAX && p->pool_type != HY_POOL_AVG)
    return hy_onnx_w_refuse (w, error, "pool_type sum and lp have no ONNX "
        "form here (max and avg do)");
  gboolean avg = p->pool_type == HY_POOL_AVG;
  if (p->global_pool) {
    unary_node (w, avg ? "GlobalAveragePool" : "GlobalMaxPool");
    return TRUE;
  }
  if (p->convention == HY_POOL_SAME)
    return hy_onnx_w_refuse (w, error, "pooling_convention 'same' has no "
        "ONNX form here (valid and full do)");
  for (int i = 0; i < p->n_spatial; i++)
    if (p->pad[i] >= p->kernel[i])
      return hy_onnx_w_refuse (w, error, "pad %" G_GINT64_FORMAT " on axis "
          "%d is not smaller than the kernel (%" G_GINT64_FORMAT "), which "
          "ONNX requires", (gint64) p->pad[i], i, (gint64) p->kernel[i]);
  Onnx__NodeProto *n = unary_node (w, avg ? "AveragePool" : "MaxPool");
  window_attrs (w, n, p->n_spatial, p->kernel, p->stride, p->pad);
  if (p->convention == HY_POOL_FULL)
    hy_onnx_w_attr_int (w, n, "ceil_mode", 1);
  if (avg)
    hy_onnx_w_attr_int (w, n, "count_include_pad", p->count_include_pad);
  return TRUE;
}

static gboolean
write_batch_norm (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error)
{
  const hy_batch_norm_params *p = PARAMS (w, hy_batch_norm_params);
  const hy_shape *data = hy_onnx_w_input_shape (w, 0);
  int axis = p->axis < 0 ? p->axis + data->ndim : p->axis;
  if (axis != 1)
    return hy_onnx_w_refuse (w, error, "axis %d: ONNX normalises axis 1 "
        "only", p->axis);
  if (p->output_mean_var)
    return hy_onnx_w_refuse (w, error, "output_mean_var has no ONNX form "
        "at inference");
  const char *in[5];
  for (guint k = 0; k < 5; k++)
    in[k] = hy_onnx_w_input (w, k);
  if (p->fix_gamma) {
    /* MXNet reads gamma as 1 whatever the file holds. */
    const hy_shape *gs = hy_onnx_w_input_shape (w, 1);
    g_autofree float *ones = g_new (float, MAX (hy_shape_numel (gs), 1));
    for (gint64 i = 0; i < hy_shape_numel (gs); i++)
      ones[i] = 1.0f;
    in[1] = hy_onnx_w_const_floats (w, "gamma_fixed", gs, ones);
  }
  Onnx__NodeProto *n = hy_onnx_w_node (w, "BatchNormalization", in, 5,
      hy_onnx_w_output (w, 0));
  hy_onnx_w_attr_float (w, n, "epsilon", p->eps);
  return TRUE;
}

/* ---- activations -------------------------------------------------------- */

static gboolean
write_activation (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error G_GNUC_UNUSED)
{
  static const char *const onnx[] = {
    [HY_ACT_RELU] = "Relu", [HY_ACT_SIGMOID] = "Sigmoid",
    [HY_ACT_TANH] = "Tanh", [HY_ACT_SOFTRELU] = "Softplus",
    [HY_ACT_SOFTSIGN] = "Softsign",
  };
  unary_node (w, onnx[PARAMS (w, hy_activation_params)->act_type]);
  return TRUE;
}

static gboolean
write_leaky (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error)
{
  const hy_leaky_relu_params *p = PARAMS (w, hy_leaky_relu_params);
  switch (p->act_type) {
    case HY_LEAKY_LEAKY:
    case HY_LEAKY_RRELU:        /* at inference: the fixed slope */
      hy_onnx_w_attr_float (w, unary_node (w, "LeakyRelu"), "alpha",
          p->slope);
      return TRUE;
    case HY_LEAKY_ELU:
      hy_onnx_w_attr_float (w, unary_node (w, "Elu"), "alpha", p->slope);
      return TRUE;
    case HY_LEAKY_SELU:
      /* MXNet's constants are ONNX's defaults. */
      unary_node (w, "Selu");
      return TRUE;
    case HY_LEAKY_PRELU: {
      /* MXNet's gamma runs along axis 1; ONNX broadcasts the slope from
       * the right, so it is reshaped to (C, 1, ...). */
      const hy_shape *data = hy_onnx_w_input_shape (w, 0);
      const hy_shape *gs = hy_onnx_w_input_shape (w, 1);
      const char *in[2] = { hy_onnx_w_input (w, 0), hy_onnx_w_input (w, 1) };
      if (data->ndim > 2 && hy_shape_numel (gs) > 1) {
        gint64 dims[HY_MAX_DIMS];
        dims[0] = hy_shape_numel (gs);
        for (int d = 1; d < data->ndim - 1; d++)
          dims[d] = 1;
        const char *r[2] = { in[1], hy_onnx_w_const_ints (w, "slope_shape",
              dims, data->ndim - 1) };
        in[1] = hy_onnx_w_temp (w, "slope");
        hy_onnx_w_node (w, "Reshape", r, 2, in[1]);
      }
      hy_onnx_w_node (w, "PRelu", in, 2, hy_onnx_w_output (w, 0));
      return TRUE;
    }
    case HY_LEAKY_GELU:
      break;
  }
  return hy_onnx_w_refuse (w, error, "act_type gelu has no ONNX form in "
      "opset %d", HY_ONNX_WRITE_OPSET);
}

static gboolean
write_unary (hy_onnx_writer *w, const write_op *op, GError **error)
{
  if (!hy_onnx_w_float_data (w, PARAMS (w, hy_unary_params)->int_dtype,
          error))
    return FALSE;
  const char *x = hy_onnx_w_input (w, 0);
  if (op->id == HY_OP_SQUARE) {
    const char *in[2] = { x, x };
    hy_onnx_w_node (w, "Mul", in, 2, hy_onnx_w_output (w, 0));
  } else if (op->id == HY_OP_RSQRT) {
    const char *root = hy_onnx_w_temp (w, "sqrt");
    hy_onnx_w_node (w, "Sqrt", &x, 1, root);
    hy_onnx_w_node (w, "Reciprocal", &root, 1, hy_onnx_w_output (w, 0));
  } else {
    unary_node (w, op->onnx);
  }
  return TRUE;
}

static gboolean
write_clip (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error)
{
  const hy_clip_params *p = PARAMS (w, hy_clip_params);
  if (!hy_onnx_w_float_data (w, p->int_dtype, error))
    return FALSE;
  const char *in[3] = { hy_onnx_w_input (w, 0),
    scalar_const (w, "min", p->a_min), scalar_const (w, "max", p->a_max) };
  hy_onnx_w_node (w, "Clip", in, 3, hy_onnx_w_output (w, 0));
  return TRUE;
}

static gboolean
write_hard_sigmoid (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error G_GNUC_UNUSED)
{
  const hy_hard_sigmoid_params *p = PARAMS (w, hy_hard_sigmoid_params);
  Onnx__NodeProto *n = unary_node (w, "HardSigmoid");
  hy_onnx_w_attr_float (w, n, "alpha", p->alpha);
  hy_onnx_w_attr_float (w, n, "beta", p->beta);
  return TRUE;
}

/* ---- arithmetic --------------------------------------------------------- */

static gboolean
write_binary (hy_onnx_writer *w, const write_op *op, GError **error)
{
  if (!hy_onnx_w_float_data (w, PARAMS (w, hy_binary_params)->int_dtype,
          error))
    return FALSE;
  const char *in[2] = { hy_onnx_w_input (w, 0), hy_onnx_w_input (w, 1) };
  hy_onnx_w_node (w, op->onnx, in, 2, hy_onnx_w_output (w, 0));
  return TRUE;
}

static gboolean
write_scalar (hy_onnx_writer *w, const write_op *op, GError **error)
{
  const hy_scalar_params *p = PARAMS (w, hy_scalar_params);
  if (!hy_onnx_w_float_data (w, p->int_dtype, error))
    return FALSE;
  const char *x = hy_onnx_w_input (w, 0);
  const char *s = scalar_const (w, "scalar", p->scalar);
  const char *in[2] = { p->scalar_first ? s : x, p->scalar_first ? x : s };
  hy_onnx_w_node (w, op->onnx, in, 2, hy_onnx_w_output (w, 0));
  return TRUE;
}

static gboolean
write_add_n (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error)
{
  const hy_add_n_params *p = PARAMS (w, hy_add_n_params);
  if (!hy_onnx_w_float_data (w, p->int_dtype, error))
    return FALSE;
  guint n = node_of (w)->n_inputs;
  g_autofree const char **in = g_new (const char *, MAX (n, 1));
  for (guint k = 0; k < n; k++)
    in[k] = hy_onnx_w_input (w, k);
  hy_onnx_w_node (w, "Sum", in, n, hy_onnx_w_output (w, 0));
  return TRUE;
}

static gboolean
write_dot (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error)
{
  const hy_dot_params *p = PARAMS (w, hy_dot_params);
  int want = p->op == HY_OP_BATCH_DOT ? 3 : 2;
  const char *in[2];
  for (guint k = 0; k < 2; k++) {
    if (hy_onnx_w_input_shape (w, k)->ndim != want)
      return hy_onnx_w_refuse (w, error, "operand %u has %d dimensions; "
          "%d are written (MXNet's dot of other ranks is no MatMul)", k,
          hy_onnx_w_input_shape (w, k)->ndim, want);
    in[k] = hy_onnx_w_input (w, k);
    if (k ? p->transpose_b : p->transpose_a) {
      gint64 perm[3] = { 0, 2, 1 };
      const char *t = hy_onnx_w_temp (w, k ? "b_t" : "a_t");
      Onnx__NodeProto *n = hy_onnx_w_node (w, "Transpose", &in[k], 1, t);
      if (want == 2) {
        perm[0] = 1;
        perm[1] = 0;
      }
      hy_onnx_w_attr_ints (w, n, "perm", perm, want);
      in[k] = t;
    }
  }
  hy_onnx_w_node (w, "MatMul", in, 2, hy_onnx_w_output (w, 0));
  return TRUE;
}

static gboolean
write_reduce (hy_onnx_writer *w, const write_op *op, GError **error)
{
  const hy_reduce_params *p = PARAMS (w, hy_reduce_params);
  if (!hy_onnx_w_float_data (w, p->int_dtype, error))
    return FALSE;
  int ndim = hy_onnx_w_input_shape (w, 0)->ndim;
  uint32_t mask;
  if (ndim > 31 || hy_reduce_axes_mask (p, ndim, &mask) != HY_REDUCE_AXES_OK)
    return hy_onnx_w_refuse (w, error, "axes do not fit the data's %d "
        "dimensions", ndim);
  gint64 axes[HY_MAX_DIMS];
  int n = 0;
  for (int d = 0; d < ndim; d++)
    if (mask & (1u << d))
      axes[n++] = d;
  const char *x = hy_onnx_w_input (w, 0);
  /* Every axis folded without keepdims: ONNX gives a scalar where MXNet
   * gives shape (1,), so the result is reshaped to MXNet's. */
  gboolean to_1d = !p->keepdims && hy_onnx_w_out_shape (w)->ndim != ndim - n;
  const char *out = to_1d ? hy_onnx_w_temp (w, "reduced")
      : hy_onnx_w_output (w, 0);
  Onnx__NodeProto *node;
  if (op->id == HY_OP_SUM) {
    /* Opset 13 made ReduceSum's axes an input; the others follow in 18. */
    const char *in[2] = { x, hy_onnx_w_const_ints (w, "axes", axes, n) };
    node = hy_onnx_w_node (w, op->onnx, in, 2, out);
  } else {
    node = hy_onnx_w_node (w, op->onnx, &x, 1, out);
    hy_onnx_w_attr_ints (w, node, "axes", axes, n);
  }
  hy_onnx_w_attr_int (w, node, "keepdims", p->keepdims);
  if (to_1d) {
    hy_onnx_w_to_out_shape (w, "Reshape", out);
  }
  return TRUE;
}

/* ---- softmax ------------------------------------------------------------ */

static gboolean
write_softmax (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error G_GNUC_UNUSED)
{
  const hy_softmax_params *p = PARAMS (w, hy_softmax_params);
  const hy_shape *data = hy_onnx_w_input_shape (w, 0);
  const char *x = hy_onnx_w_input (w, 0);
  if (p->temperature != 1.0f) {
    const char *in[2] = { x, scalar_const (w, "temperature",
          p->temperature) };
    x = hy_onnx_w_temp (w, "scaled");
    hy_onnx_w_node (w, "Div", in, 2, x);
  }
  const char *kind = p->log ? "LogSoftmax" : "Softmax";
  /* Over all axes after the first: softmax of the 2-D view, reshaped
   * back (opset 13's Softmax takes one axis). */
  gboolean flat = p->flat && data->ndim != 2;
  int axis = p->flat ? 1 : p->axis;
  const char *out = flat ? hy_onnx_w_temp (w, "softmax")
      : hy_onnx_w_output (w, 0);
  if (flat) {
    const char *f = hy_onnx_w_temp (w, "flatten");
    hy_onnx_w_attr_int (w, hy_onnx_w_node (w, "Flatten", &x, 1, f), "axis",
        1);
    x = f;
  }
  hy_onnx_w_attr_int (w, hy_onnx_w_node (w, kind, &x, 1, out), "axis", axis);
  if (flat) {
    const char *in[2] = { out, hy_onnx_w_const_ints (w, "shape", data->dims,
          data->ndim) };
    hy_onnx_w_node (w, "Reshape", in, 2, hy_onnx_w_output (w, 0));
  }
  return TRUE;
}

/* ---- shapes ------------------------------------------------------------- */

static gboolean
write_identity (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error G_GNUC_UNUSED)
{
  unary_node (w, "Identity");
  return TRUE;
}

static gboolean
write_cast (hy_onnx_writer *w, const write_op *op, GError **error)
{
  if (PARAMS (w, hy_cast_params)->dtype != HY_DTYPE_FLOAT32)
    return hy_onnx_w_refuse (w, error, "a cast to another type than float32 "
        "is not written");
  return write_identity (w, op, error);
}

static gboolean
write_flatten (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error G_GNUC_UNUSED)
{
  hy_onnx_w_attr_int (w, unary_node (w, "Flatten"), "axis", 1);
  return TRUE;
}

/* Reshape and the ops that only relabel the axes: a Reshape to the static
 * output shape, which MXNet's codes resolved to. */
static gboolean
write_reshape (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error G_GNUC_UNUSED)
{
  hy_onnx_w_to_out_shape (w, "Reshape", hy_onnx_w_input (w, 0));
  return TRUE;
}

static gboolean
write_transpose (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error G_GNUC_UNUSED)
{
  int ndim = hy_onnx_w_input_shape (w, 0)->ndim;
  int axes[HY_SHAPE_PARAM_MAX];
  hy_transpose_axes (PARAMS (w, hy_transpose_params), ndim, axes);
  gint64 perm[HY_SHAPE_PARAM_MAX];
  for (int i = 0; i < ndim; i++)
    perm[i] = axes[i];
  hy_onnx_w_attr_ints (w, unary_node (w, "Transpose"), "perm", perm, ndim);
  return TRUE;
}

static gboolean
write_concat (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error G_GNUC_UNUSED)
{
  const hy_concat_params *p = PARAMS (w, hy_concat_params);
  guint n = node_of (w)->n_inputs;
  g_autofree const char **in = g_new (const char *, MAX (n, 1));
  for (guint k = 0; k < n; k++)
    in[k] = hy_onnx_w_input (w, k);
  int ndim = hy_onnx_w_out_shape (w)->ndim;
  Onnx__NodeProto *node = hy_onnx_w_node (w, "Concat", in, n,
      hy_onnx_w_output (w, 0));
  hy_onnx_w_attr_int (w, node, "axis", p->dim < 0 ? p->dim + ndim : p->dim);
  return TRUE;
}

static gboolean
write_slice_axis (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error G_GNUC_UNUSED)
{
  const hy_slice_axis_params *p = PARAMS (w, hy_slice_axis_params);
  gint64 start = p->begin, end = p->end_none ? G_MAXINT64 : p->end;
  gint64 axis = p->axis;
  const char *in[4] = { hy_onnx_w_input (w, 0),
    hy_onnx_w_const_ints (w, "starts", &start, 1),
    hy_onnx_w_const_ints (w, "ends", &end, 1),
    hy_onnx_w_const_ints (w, "axes", &axis, 1) };
  hy_onnx_w_node (w, "Slice", in, 4, hy_onnx_w_output (w, 0));
  return TRUE;
}

static gboolean
write_pad (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error G_GNUC_UNUSED)
{
  static const char *const modes[] = {
    [HY_PAD_CONSTANT] = "constant", [HY_PAD_EDGE] = "edge",
    [HY_PAD_REFLECT] = "reflect",
  };
  const hy_pad_params *p = PARAMS (w, hy_pad_params);
  int n = p->n_widths / 2;
  gint64 pads[HY_SHAPE_PARAM_MAX];
  for (int i = 0; i < n; i++) {
    pads[i] = p->before[i];
    pads[n + i] = p->after[i];
  }
  const char *in[3] = { hy_onnx_w_input (w, 0),
    hy_onnx_w_const_ints (w, "pads", pads, 2 * n),
    scalar_const (w, "value", p->value) };
  Onnx__NodeProto *node = hy_onnx_w_node (w, "Pad", in,
      p->mode == HY_PAD_CONSTANT ? 3 : 2, hy_onnx_w_output (w, 0));
  hy_onnx_w_attr_string (w, node, "mode", modes[p->mode]);
  return TRUE;
}

/* slice: MXNet's begin/end/step per leading axis, None as the ends of
 * the axis in the step's direction (ONNX clamps the extremes). */
static gboolean
write_slice (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error G_GNUC_UNUSED)
{
  const hy_slice_params *p = PARAMS (w, hy_slice_params);
  gint64 starts[HY_SHAPE_PARAM_MAX], ends[HY_SHAPE_PARAM_MAX];
  gint64 axes[HY_SHAPE_PARAM_MAX], steps[HY_SHAPE_PARAM_MAX];
  for (int i = 0; i < p->n; i++) {
    gboolean has_step = i < p->n_step && !(p->step_none & (1u << i));
    steps[i] = has_step ? p->step[i] : 1;
    gboolean back = steps[i] < 0;
    starts[i] = p->begin_none & (1u << i) ? (back ? G_MAXINT64 : 0)
        : p->begin[i];
    ends[i] = p->end_none & (1u << i) ? (back ? G_MININT64 : G_MAXINT64)
        : p->end[i];
    axes[i] = i;
  }
  const char *in[5] = { hy_onnx_w_input (w, 0),
    hy_onnx_w_const_ints (w, "starts", starts, p->n),
    hy_onnx_w_const_ints (w, "ends", ends, p->n),
    hy_onnx_w_const_ints (w, "axes", axes, p->n),
    hy_onnx_w_const_ints (w, "steps", steps, p->n) };
  hy_onnx_w_node (w, "Slice", in, 5, hy_onnx_w_output (w, 0));
  return TRUE;
}

/* Resize to the inferred output size: ONNX's sizes input. */
static Onnx__NodeProto *
resize_to_output (hy_onnx_writer *w, const char *mode)
{
  const hy_shape *s = hy_onnx_w_out_shape (w);
  const char *in[4] = { hy_onnx_w_input (w, 0), "", "",
    hy_onnx_w_const_ints (w, "sizes", s->dims, s->ndim) };
  Onnx__NodeProto *n = hy_onnx_w_node (w, "Resize", in, 4,
      hy_onnx_w_output (w, 0));
  hy_onnx_w_attr_string (w, n, "mode", mode);
  return n;
}

/* UpSampling nearest of one input: output pixel o reads floor(o / s),
 * ONNX's asymmetric coordinates with floor. */
static gboolean
write_upsampling (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error)
{
  const hy_upsampling_params *p = PARAMS (w, hy_upsampling_params);
  if (p->sample_type != HY_UPSAMPLING_NEAREST || p->num_args != 1)
    return hy_onnx_w_refuse (w, error, "only nearest sampling of one input "
        "is written");
  Onnx__NodeProto *n = resize_to_output (w, "nearest");
  hy_onnx_w_attr_string (w, n, "coordinate_transformation_mode",
      "asymmetric");
  hy_onnx_w_attr_string (w, n, "nearest_mode", "floor");
  return TRUE;
}

/* _contrib_BilinearResize2D: half-pixel coordinates clamped at 0 (ONNX's
 * half_pixel, which ONNX Runtime clamps alike), or corner-aligned. */
static gboolean
write_bilinear_resize (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error G_GNUC_UNUSED)
{
  const hy_bilinear_resize_params *p = PARAMS (w, hy_bilinear_resize_params);
  hy_onnx_w_attr_string (w, resize_to_output (w, "linear"),
      "coordinate_transformation_mode",
      p->align_corners ? "align_corners" : "half_pixel");
  return TRUE;
}

/* SliceChannel: Split into equal parts along the axis, each part
 * reshaped to its output shape where squeeze_axis drops the axis. */
static gboolean
write_split (hy_onnx_writer *w, const write_op *op G_GNUC_UNUSED,
    GError **error G_GNUC_UNUSED)
{
  const hy_split_params *p = PARAMS (w, hy_split_params);
  const hy_node *node = node_of (w);
  const hy_shape *data = hy_onnx_w_input_shape (w, 0);
  int axis = p->axis < 0 ? p->axis + data->ndim : p->axis;
  guint n = node->n_outputs;
  g_autofree gint64 *sizes = g_new (gint64, MAX (n, 1));
  for (guint k = 0; k < n; k++)
    sizes[k] = data->dims[axis] / (gint64) n;
  const char *in[2] = { hy_onnx_w_input (w, 0),
    hy_onnx_w_const_ints (w, "split", sizes, (int) n) };
  Onnx__NodeProto *split = hy_onnx_w_node (w, "Split", in, 2,
      hy_onnx_w_output (w, 0));
  hy_onnx_w_attr_int (w, split, "axis", axis);
  split->n_output = n;
  split->output = hy_onnx_w_alloc (w, MAX (n, 1) * sizeof (char *));
  for (guint k = 0; k < n; k++) {
    const char *name = hy_onnx_w_output (w, k);
    if (p->squeeze_axis) {
      const hy_shape *s = &node->shapes[k];
      const char *r[2] = { hy_onnx_w_temp (w, "part"),
        hy_onnx_w_const_ints (w, "shape", s->dims, s->ndim) };
      split->output[k] = (char *) r[0];
      hy_onnx_w_node (w, "Reshape", r, 2, name);
    } else {
      split->output[k] = (char *) name;
    }
  }
  split->name = split->output[0];
  return TRUE;
}

/* The core's ops that have an ONNX form, in ops.def's order. */
static const write_op ops[] = {
  { HY_OP_CONVOLUTION, write_conv, "Conv" },
  { HY_OP_DECONVOLUTION, write_deconv, "ConvTranspose" },
  { HY_OP_FULLY_CONNECTED, write_fc, "Gemm" },
  { HY_OP_POOLING, write_pool, "MaxPool" },
  { HY_OP_BATCH_NORM, write_batch_norm, "BatchNormalization" },
  { HY_OP_ACTIVATION, write_activation, "Relu" },
  { HY_OP_LEAKY_RELU, write_leaky, "LeakyRelu" },
  { HY_OP_DOT, write_dot, "MatMul" },
  { HY_OP_BATCH_DOT, write_dot, "MatMul" },
  { HY_OP_SOFTMAX, write_softmax, "Softmax" },
  { HY_OP_LOG_SOFTMAX, write_softmax, "LogSoftmax" },
  { HY_OP_SOFTMAX_ACTIVATION, write_softmax, "Softmax" },
  { HY_OP_SOFTMAX_OUTPUT, write_softmax, "Softmax" },
  { HY_OP_RELU, write_unary, "Relu" },
  { HY_OP_SIGMOID, write_unary, "Sigmoid" },
  { HY_OP_TANH, write_unary, "Tanh" },
  { HY_OP_SOFTSIGN, write_unary, "Softsign" },
  { HY_OP_EXP, write_unary, "Exp" },
  { HY_OP_LOG, write_unary, "Log" },
  { HY_OP_SQRT, write_unary, "Sqrt" },
  { HY_OP_RSQRT, write_unary, "Sqrt" },
  { HY_OP_SQUARE, write_unary, "Mul" },
  { HY_OP_ABS, write_unary, "Abs" },
  { HY_OP_NEGATIVE, write_unary, "Neg" },
  { HY_OP_RECIPROCAL, write_unary, "Reciprocal" },
  { HY_OP_FLOOR, write_unary, "Floor" },
  { HY_OP_CEIL, write_unary, "Ceil" },
  { HY_OP_SIGN, write_unary, "Sign" },
  { HY_OP_ERF, write_unary, "Erf" },
  { HY_OP_SIN, write_unary, "Sin" },
  { HY_OP_COS, write_unary, "Cos" },
  { HY_OP_PLUS_SCALAR, write_scalar, "Add" },
  { HY_OP_MINUS_SCALAR, write_scalar, "Sub" },
  { HY_OP_RMINUS_SCALAR, write_scalar, "Sub" },
  { HY_OP_MUL_SCALAR, write_scalar, "Mul" },
  { HY_OP_DIV_SCALAR, write_scalar, "Div" },
  { HY_OP_RDIV_SCALAR, write_scalar, "Div" },
  { HY_OP_POWER_SCALAR, write_scalar, "Pow" },
  { HY_OP_RPOWER_SCALAR, write_scalar, "Pow" },
  { HY_OP_MAXIMUM_SCALAR, write_scalar, "Max" },
  { HY_OP_MINIMUM_SCALAR, write_scalar, "Min" },
  { HY_OP_ELEMWISE_ADD, write_binary, "Add" },
  { HY_OP_ELEMWISE_SUB, write_binary, "Sub" },
  { HY_OP_ELEMWISE_MUL, write_binary, "Mul" },
  { HY_OP_ELEMWISE_DIV, write_binary, "Div" },
  { HY_OP_ELEMWISE_MAXIMUM, write_binary, "Max" },
  { HY_OP_ELEMWISE_MINIMUM, write_binary, "Min" },
  { HY_OP_ELEMWISE_POWER, write_binary, "Pow" },
  { HY_OP_BROADCAST_ADD, write_binary, "Add" },
  { HY_OP_BROADCAST_SUB, write_binary, "Sub" },
  { HY_OP_BROADCAST_MUL, write_binary, "Mul" },
  { HY_OP_BROADCAST_DIV, write_binary, "Div" },
  { HY_OP_BROADCAST_MAXIMUM, write_binary, "Max" },
  { HY_OP_BROADCAST_MINIMUM, write_binary, "Min" },
  { HY_OP_BROADCAST_POWER, write_binary, "Pow" },
  { HY_OP_ADD_N, write_add_n, "Sum" },
  { HY_OP_CLIP, write_clip, "Clip" },
  { HY_OP_HARD_SIGMOID, write_hard_sigmoid, "HardSigmoid" },
  { HY_OP_CAST, write_cast, "Identity" },
  { HY_OP_SUM, write_reduce, "ReduceSum" },
  { HY_OP_MEAN, write_reduce, "ReduceMean" },
  { HY_OP_MAX, write_reduce, "ReduceMax" },
  { HY_OP_MIN, write_reduce, "ReduceMin" },
  { HY_OP_PROD, write_reduce, "ReduceProd" },
  { HY_OP_IDENTITY, write_identity, "Identity" },
  { HY_OP_DROPOUT, write_identity, "Identity" },
  { HY_OP_BLOCK_GRAD, write_identity, "Identity" },
  { HY_OP_FLATTEN, write_flatten, "Flatten" },
  { HY_OP_RESHAPE, write_reshape, "Reshape" },
  { HY_OP_RESHAPE_LIKE, write_reshape, "Reshape" },
  { HY_OP_EXPAND_DIMS, write_reshape, "Reshape" },
  { HY_OP_SQUEEZE, write_reshape, "Reshape" },
  { HY_OP_TRANSPOSE, write_transpose, "Transpose" },
  { HY_OP_SWAP_AXIS, write_transpose, "Transpose" },
  { HY_OP_SLICE, write_slice, "Slice" },
  { HY_OP_SLICE_AXIS, write_slice_axis, "Slice" },
  { HY_OP_CONCAT, write_concat, "Concat" },
  { HY_OP_SLICE_CHANNEL, write_split, "Split" },
  { HY_OP_PAD, write_pad, "Pad" },
  { HY_OP_BILINEAR_RESIZE_2D, write_bilinear_resize, "Resize" },
  { HY_OP_UP_SAMPLING, write_upsampling, "Resize" },
};

/* The writer of op `id`, from this table or onnx-write-select.c's. */
static const write_op *
find_op (hy_op_id id)
{
  for (gsize i = 0; i < G_N_ELEMENTS (ops); i++)
    if (ops[i].id == id)
      return &ops[i];
  for (gsize i = 0; i < hy_onnx_write_n_select_ops; i++)
    if (hy_onnx_write_select_ops[i].id == id)
      return &hy_onnx_write_select_ops[i];
  return NULL;
}

static void
append_names (GString *list, const write_op *table, gsize n)
{
  for (gsize i = 0; i < n; i++) {
    const hy_op_info *info = hy_op_info_get (table[i].id);
    g_string_append_printf (list, "%s%s", list->len ? ", " : "",
        info ? info->name : "?");
  }
}

char *
hy_onnx_write_supported_ops (void)
{
  GString *list = g_string_new (NULL);
  append_names (list, ops, G_N_ELEMENTS (ops));
  append_names (list, hy_onnx_write_select_ops, hy_onnx_write_n_select_ops);
  return g_string_free (list, FALSE);
}

gboolean
hy_onnx_write_node (hy_onnx_writer *w, GError **error)
{
  const hy_node *n = node_of (w);
  for (guint k = 0; k < n->n_inputs; k++) {
    const hy_shape *s = hy_onnx_w_input_shape (w, k);
    /* SoftmaxOutput's label is read by nothing at inference. */
    if (s->ndim < 0 && !(k < 32 && (n->op->def->unused_inputs & (1u << k))))
      return hy_onnx_w_refuse (w, error, "input %u has no inferred shape",
          k);
  }
  const write_op *op = find_op (n->op->id);
  if (op) {
    /* Outputs past the first (BatchNorm's statistics, Dropout's and
     * rrelu's masks) are written only by the ops made for them. */
    if (w->later_outputs_read[w->node] && n->op->id != HY_OP_SLICE_CHANNEL)
      return hy_onnx_w_refuse (w, error, "output %u is read; only output "
          "0 has an ONNX form", 1u);
    return op->write (w, op, error);
  }
  g_autofree char *known = hy_onnx_write_supported_ops ();
  return hy_onnx_w_refuse (w, error, "op '%s' has no ONNX form in this "
      "writer (these ops have one: %s)", n->op->name, known);
}

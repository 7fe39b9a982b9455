/*
 * onnx-ops.c — each ONNX op (opsets 11-19) as the core's ops, with ONNX's
 * semantics rewritten into MXNet's attributes: ONNX's pads list becomes
 * MXNet's symmetric `pad` (or a Pad op before, when it is not symmetric),
 * Gemm's transposes and scales are applied to the constant weights once
 * here, Softmax's opset-dependent axis is made explicit, and so on.
 *
 * An op, attribute value or input form not mapped is refused naming the
 * node and the op, never guessed.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/io/onnx-import.h"
#include "core/io/onnx-tensor.h"


/* One ONNX op: its importer, and what that importer is told about it (the
 * core op it becomes, a flag) so that one importer serves a family
 * (Relu, Sigmoid, ... are all import_unary).  ops[] at the end is the one
 * list of what is taken: the dispatch and the refusal's list of the
 * supported ops both read it. */
typedef struct onnx_op onnx_op;
typedef gboolean (*onnx_import_fn) (hy_onnx_importer *imp,
    const onnx_op *op, GError **error);
struct onnx_op {
  const char *name;             /* ONNX op_type */
  onnx_import_fn import;
  const char *core;             /* the core op or mode it becomes, if fixed */
  int arg;                      /* the importer's flag or number */
  /* For docs/ONNX.md (tools/gen_onnx_doc.py reads them from here): what
   * the op becomes, and what of it is taken. */
  const char *becomes;
  const char *notes;
};

static gboolean
set_out (hy_onnx_importer *imp, hy_entry e)
{
  if (e.node == G_MAXUINT)
    return FALSE;
  hy_onnx_set_output (imp, 0, e);
  return TRUE;
}

static char *
fmt_float (double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup (g_ascii_dtostr (buf, sizeof buf, v));
}

/* ---- convolution and pooling windows ------------------------------- */

typedef struct window {
  int n;                        /* spatial axes */
  gint64 kernel[HY_MAX_DIMS], stride[HY_MAX_DIMS], dilate[HY_MAX_DIMS];
  gint64 begin[HY_MAX_DIMS], end[HY_MAX_DIMS];
} window;

/* kernel_shape (or the weight's), strides, dilations, and the pads that
 * auto_pad or pads give, from the data's static shape where SAME needs
 * it. */
static gboolean
read_window (hy_onnx_importer *imp, const gint64 *kernel, int n, window *w,
    GError **error)
{
  const Onnx__NodeProto *node = imp->node;
  if (n < 1 || n > 3)
    return hy_onnx_refuse (imp, error, "%d spatial axes; 1 to 3 are supported", n);
  w->n = n;
  int ns, nd, np;
  const gint64 *strides = hy_onnx_attr_ints (node, "strides", &ns);
  const gint64 *dil = hy_onnx_attr_ints (node, "dilations", &nd);
  const gint64 *pads = hy_onnx_attr_ints (node, "pads", &np);
  if ((ns >= 0 && ns != n) || (nd >= 0 && nd != n) || (np >= 0 && np != 2 * n))
    return hy_onnx_refuse (imp, error, "strides, dilations or pads do not match the "
        "%d spatial axes of the kernel", n);
  for (int i = 0; i < n; i++) {
    w->kernel[i] = kernel[i];
    w->stride[i] = ns > 0 ? strides[i] : 1;
    w->dilate[i] = nd > 0 ? dil[i] : 1;
    w->begin[i] = np > 0 ? pads[i] : 0;
    w->end[i] = np > 0 ? pads[n + i] : 0;
    if (w->kernel[i] < 1 || w->kernel[i] > 4096 || w->stride[i] < 1
        || w->stride[i] > 4096 || w->dilate[i] < 1 || w->dilate[i] > 4096
        || w->begin[i] < 0 || w->begin[i] > 4096 || w->end[i] < 0
        || w->end[i] > 4096)
      return hy_onnx_refuse (imp, error, "kernel, stride, dilation or pad on axis %d "
          "is out of range", i);
  }
  hy_onnx_word buf;
  const char *auto_pad = hy_onnx_attr_string (node, "auto_pad", "NOTSET",
      buf);
  if (!strcmp (auto_pad, "NOTSET"))
    return TRUE;
  if (!strcmp (auto_pad, "VALID")) {
    for (int i = 0; i < n; i++)
      w->begin[i] = w->end[i] = 0;
    return TRUE;
  }
  gboolean upper = !strcmp (auto_pad, "SAME_UPPER");
  if (!upper && strcmp (auto_pad, "SAME_LOWER"))
    return hy_onnx_refuse (imp, error, "auto_pad '%s' is not NOTSET, VALID, "
        "SAME_UPPER or SAME_LOWER", auto_pad);
  hy_shape in;
  if (!hy_onnx_input_shape (imp, 0, &in, error))
    return FALSE;
  if (in.ndim != n + 2)
    return hy_onnx_refuse (imp, error, "data has %d dimensions, the kernel %d "
        "spatial axes", in.ndim, n);
  for (int i = 0; i < n; i++) {
    gint64 size = in.dims[2 + i], s = w->stride[i];
    gint64 out = (size + s - 1) / s;
    gint64 span = (w->kernel[i] - 1) * w->dilate[i] + 1;
    gint64 total = MAX ((out - 1) * s + span - size, 0);
    w->begin[i] = upper ? total / 2 : total - total / 2;
    w->end[i] = total - w->begin[i];
  }
  return TRUE;
}

static gboolean
symmetric (const window *w)
{
  for (int i = 0; i < w->n; i++)
    if (w->begin[i] != w->end[i])
      return FALSE;
  return TRUE;
}

/* Asymmetric padding as a Pad op before the window op (MXNet's Pad takes
 * 4-D and 5-D data, padding only the spatial axes). */
static gboolean
pad_before (hy_onnx_importer *imp, window *w, hy_entry *data, double value,
    GError **error)
{
  if (symmetric (w))
    return TRUE;
  if (w->n < 2)
    return hy_onnx_refuse (imp, error, "asymmetric padding of 1-D data is not "
        "supported");
  gint64 widths[2 * (HY_MAX_DIMS + 2)] = { 0 };
  for (int i = 0; i < w->n; i++) {
    widths[4 + 2 * i] = w->begin[i];
    widths[5 + 2 * i] = w->end[i];
    w->begin[i] = w->end[i] = 0;
  }
  g_autofree char *pw = hy_onnx_tuple (widths, 2 * (w->n + 2));
  g_autofree char *cv = fmt_float (value);
  *data = hy_onnx_add_op (imp, "Pad", data, 1, error, "mode", "constant",
      "pad_width", pw, "constant_value", cv, NULL);
  return data->node != G_MAXUINT;
}

static gboolean
import_conv (hy_onnx_importer *imp, const onnx_op *op, GError **error)
{
  const gboolean transposed = op->arg;
  hy_shape ws;
  hy_entry in[3];
  if (!hy_onnx_input_shape (imp, 1, &ws, error)
      || !hy_onnx_input_entry (imp, 0, &in[0], error)
      || !hy_onnx_input_entry (imp, 1, &in[1], error))
    return FALSE;
  gboolean bias = hy_onnx_input_name (imp, 2) != NULL;
  if (bias && !hy_onnx_input_entry (imp, 2, &in[2], error))
    return FALSE;
  if (ws.ndim < 3)
    return hy_onnx_refuse (imp, error, "weight has %d dimensions, at least 3 needed",
        ws.ndim);
  int nk;
  const gint64 *ks = hy_onnx_attr_ints (imp->node, "kernel_shape", &nk);
  if (nk >= 0 && nk != ws.ndim - 2)
    return hy_onnx_refuse (imp, error, "kernel_shape has %d axes, the weight %d",
        nk, ws.ndim - 2);
  window w;
  if (!read_window (imp, nk > 0 ? ks : ws.dims + 2, ws.ndim - 2, &w, error))
    return FALSE;
  gint64 group = hy_onnx_attr_int (imp->node, "group", 1);
  if (group < 1 || group > ws.dims[0] * 65536)
    return hy_onnx_refuse (imp, error, "group %" G_GINT64_FORMAT " is out of range",
        group);
  gint64 filters = transposed ? ws.dims[1] * group : ws.dims[0];
  g_autofree char *k = hy_onnx_tuple (w.kernel, w.n);
  g_autofree char *s = hy_onnx_tuple (w.stride, w.n);
  g_autofree char *d = hy_onnx_tuple (w.dilate, w.n);
  g_autofree char *nf = g_strdup_printf ("%" G_GINT64_FORMAT, filters);
  g_autofree char *ng = g_strdup_printf ("%" G_GINT64_FORMAT, group);
  if (!transposed) {
    if (!pad_before (imp, &w, &in[0], 0.0, error))
      return FALSE;
    g_autofree char *p = hy_onnx_tuple (w.begin, w.n);
    return set_out (imp, hy_onnx_add_op (imp, "Convolution", in,
            bias ? 3 : 2, error, "kernel", k, "stride", s, "dilate", d,
            "pad", p, "num_filter", nf, "num_group", ng, "no_bias",
            bias ? "False" : "True", NULL));
  }
  if (hy_onnx_attr (imp->node, "output_shape"))
    return hy_onnx_refuse (imp, error, "attribute output_shape is not supported "
        "(give pads and output_padding)");
  hy_onnx_word buf;
  if (strcmp (hy_onnx_attr_string (imp->node, "auto_pad", "NOTSET", buf),
          "NOTSET") || !symmetric (&w))
    return hy_onnx_refuse (imp, error, "only explicit symmetric pads are supported");
  int na;
  const gint64 *adj = hy_onnx_attr_ints (imp->node, "output_padding", &na);
  gint64 zeros[HY_MAX_DIMS] = { 0 };
  if (na >= 0 && na != w.n)
    return hy_onnx_refuse (imp, error, "output_padding does not match the kernel");
  g_autofree char *p = hy_onnx_tuple (w.begin, w.n);
  g_autofree char *a = hy_onnx_tuple (na > 0 ? adj : zeros, w.n);
  return set_out (imp, hy_onnx_add_op (imp, "Deconvolution", in,
          bias ? 3 : 2, error, "kernel", k, "stride", s, "dilate", d,
          "pad", p, "adj", a, "num_filter", nf, "num_group", ng, "no_bias",
          bias ? "False" : "True", NULL));
}

static gboolean
import_pool (hy_onnx_importer *imp, const onnx_op *op, GError **error)
{
  const char *type = op->core;
  hy_entry in;
  if (!hy_onnx_input_entry (imp, 0, &in, error))
    return FALSE;
  if (imp->node->n_output > 1 && imp->node->output[1]
      && imp->node->output[1][0])
    return hy_onnx_refuse (imp, error, "the Indices output is not supported");
  int nk;
  const gint64 *ks = hy_onnx_attr_ints (imp->node, "kernel_shape", &nk);
  if (nk < 1)
    return hy_onnx_refuse (imp, error, "attribute kernel_shape is missing");
  window w;
  if (!read_window (imp, ks, nk, &w, error))
    return FALSE;
  for (int i = 0; i < w.n; i++)
    if (w.dilate[i] != 1)
      return hy_onnx_refuse (imp, error, "dilations other than 1 are not supported");
  gboolean avg = !strcmp (type, "avg");
  gboolean include = hy_onnx_attr_int (imp->node, "count_include_pad", 0);
  if (!symmetric (&w) && avg && !include)
    return hy_onnx_refuse (imp, error, "asymmetric padding with count_include_pad=0 "
        "is not supported");
  if (!pad_before (imp, &w, &in, avg ? 0.0 : -FLT_MAX, error))
    return FALSE;
  g_autofree char *k = hy_onnx_tuple (w.kernel, w.n);
  g_autofree char *s = hy_onnx_tuple (w.stride, w.n);
  g_autofree char *p = hy_onnx_tuple (w.begin, w.n);
  gboolean ceil_mode = hy_onnx_attr_int (imp->node, "ceil_mode", 0);
  return set_out (imp, hy_onnx_add_op (imp, "Pooling", &in, 1, error,
          "pool_type", type, "kernel", k, "stride", s, "pad", p,
          "pooling_convention", ceil_mode ? "full" : "valid",
          "count_include_pad", include ? "True" : "False", NULL));
}

static gboolean
import_global_pool (hy_onnx_importer *imp, const onnx_op *op, GError **error)
{
  const char *type = op->core;
  hy_entry in;
  hy_shape shape;
  if (!hy_onnx_input_entry (imp, 0, &in, error)
      || !hy_onnx_input_shape (imp, 0, &shape, error))
    return FALSE;
  if (shape.ndim < 3 || shape.ndim > 5)
    return hy_onnx_refuse (imp, error, "data of %d dimensions; 3 to 5 supported",
        shape.ndim);
  gint64 ones[3] = { 1, 1, 1 };
  g_autofree char *k = hy_onnx_tuple (ones, shape.ndim - 2);
  return set_out (imp, hy_onnx_add_op (imp, "Pooling", &in, 1, error,
          "pool_type", type, "kernel", k, "global_pool", "True", NULL));
}

/* ---- layers with weights --------------------------------------------- */

static gboolean
import_batch_norm (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  hy_entry in[5];
  for (guint k = 0; k < 5; k++)
    if (!hy_onnx_input_entry (imp, k, &in[k], error))
      return FALSE;
  if (hy_onnx_attr_int (imp->node, "training_mode", 0))
    return hy_onnx_refuse (imp, error, "training_mode=1 is not inference");
  g_autofree char *eps = fmt_float (hy_onnx_attr_float (imp->node,
          "epsilon", 1e-5));
  return set_out (imp, hy_onnx_add_op (imp, "BatchNorm", in, 5, error,
          "eps", eps, "fix_gamma", "False", "use_global_stats", "True",
          "axis", "1", NULL));
}

/* A constant 2-D matrix as FullyConnected's (out, in) weight: B of
 * Gemm/MatMul is (in, out) unless transposed, scaled by alpha. */
static hy_entry
fc_weight (hy_onnx_importer *imp, const hy_onnx_value *b, gboolean trans,
    double alpha)
{
  gint64 r = b->shape.dims[0], c = b->shape.dims[1];
  gint64 out = trans ? r : c, in = trans ? c : r;
  float *w = g_new (float, MAX (out * in, 1));
  for (gint64 o = 0; o < out; o++)
    for (gint64 i = 0; i < in; i++)
      w[o * in + i] = (float) (alpha * b->f[trans ? o * c + i : i * c + o]);
  hy_shape s = { .ndim = 2, .dims = { out, in } };
  g_autofree char *name = g_strdup_printf ("%s_weight", HY_ONNX_NODE_NAME (imp));
  return hy_onnx_add_weight (imp, name, &s, w);
}

static gboolean
import_gemm (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  const Onnx__NodeProto *node = imp->node;
  double alpha = hy_onnx_attr_float (node, "alpha", 1.0);
  double beta = hy_onnx_attr_float (node, "beta", 1.0);
  gboolean trans_a = hy_onnx_attr_int (node, "transA", 0);
  gboolean trans_b = hy_onnx_attr_int (node, "transB", 0);
  hy_onnx_value *b = hy_onnx_input (imp, 1, error);
  if (!b)
    return FALSE;
  hy_onnx_value *c = NULL;
  if (hy_onnx_input_name (imp, 2) && !(c = hy_onnx_input (imp, 2, error)))
    return FALSE;
  if (trans_a || !b->is_const || b->shape.ndim != 2
      || (c && (!c->is_const)))
    return hy_onnx_refuse (imp, error, "only transA=0 with constant 2-D B and C is "
        "supported");
  hy_entry in[3];
  if (!hy_onnx_input_entry (imp, 0, &in[0], error))
    return FALSE;
  in[1] = fc_weight (imp, b, trans_b, alpha);
  gint64 units = trans_b ? b->shape.dims[0] : b->shape.dims[1];
  if (c) {
    gint64 n = hy_shape_numel (&c->shape);
    if (n != units && n != 1)
      return hy_onnx_refuse (imp, error, "C of %" G_GINT64_FORMAT " values does not "
          "broadcast over %" G_GINT64_FORMAT " units as a bias", n, units);
    float *bias = g_new (float, MAX (units, 1));
    for (gint64 i = 0; i < units; i++)
      bias[i] = (float) (beta * c->f[n == 1 ? 0 : i]);
    hy_shape s = { .ndim = 1, .dims = { units } };
    g_autofree char *name = g_strdup_printf ("%s_bias", HY_ONNX_NODE_NAME (imp));
    in[2] = hy_onnx_add_weight (imp, name, &s, bias);
  }
  g_autofree char *nh = g_strdup_printf ("%" G_GINT64_FORMAT, units);
  return set_out (imp, hy_onnx_add_op (imp, "FullyConnected", in,
          c ? 3 : 2, error, "num_hidden", nh, "no_bias", c ? "False" : "True",
          "flatten", "True", NULL));
}

static gboolean
import_matmul (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  hy_onnx_value *b = hy_onnx_input (imp, 1, error);
  hy_entry in[2];
  if (!b || !hy_onnx_input_entry (imp, 0, &in[0], error))
    return FALSE;
  if (b->is_const && b->shape.ndim == 2) {
    in[1] = fc_weight (imp, b, FALSE, 1.0);
    g_autofree char *nh = g_strdup_printf ("%" G_GINT64_FORMAT,
        b->shape.dims[1]);
    return set_out (imp, hy_onnx_add_op (imp, "FullyConnected", in, 2,
            error, "num_hidden", nh, "no_bias", "True", "flatten", "False",
            NULL));
  }
  hy_shape sa, sb;
  if (!hy_onnx_input_entry (imp, 1, &in[1], error)
      || !hy_onnx_input_shape (imp, 0, &sa, error)
      || !hy_onnx_input_shape (imp, 1, &sb, error))
    return FALSE;
  if (sa.ndim == 2 && sb.ndim == 2)
    return set_out (imp, hy_onnx_add_op (imp, "dot", in, 2, error, NULL));
  if (sa.ndim == 3 && sb.ndim == 3)
    return set_out (imp, hy_onnx_add_op (imp, "batch_dot", in, 2, error,
            NULL));
  return hy_onnx_refuse (imp, error, "operands of %d and %d dimensions; both 2-D, "
      "both 3-D, or a constant 2-D B are supported", sa.ndim, sb.ndim);
}

/* ---- elementwise ------------------------------------------------------- */

static gboolean
import_unary (hy_onnx_importer *imp, const onnx_op *entry, GError **error)
{
  const char *op = entry->core;
  hy_entry in;
  if (!hy_onnx_input_entry (imp, 0, &in, error))
    return FALSE;
  return set_out (imp, hy_onnx_add_op (imp, op, &in, 1, error, NULL));
}

static gboolean
import_binary (hy_onnx_importer *imp, const onnx_op *entry, GError **error)
{
  const char *onnx = entry->name;
  static const struct {
    const char *onnx, *broadcast, *scalar, *rscalar;
  } map[] = {
    { "Add", "broadcast_add", "_plus_scalar", "_plus_scalar" },
    { "Sub", "broadcast_sub", "_minus_scalar", "_rminus_scalar" },
    { "Mul", "broadcast_mul", "_mul_scalar", "_mul_scalar" },
    { "Div", "broadcast_div", "_div_scalar", "_rdiv_scalar" },
    { "Pow", "broadcast_power", "_power_scalar", "_rpower_scalar" },
    { "Max", "broadcast_maximum", "_maximum_scalar", "_maximum_scalar" },
    { "Min", "broadcast_minimum", "_minimum_scalar", "_minimum_scalar" },
    /* comparisons: MXNet's 0/1 floats; the swapped side's mirror */
    { "Equal", "broadcast_equal", "_equal_scalar", "_equal_scalar" },
    { "Greater", "broadcast_greater", "_greater_scalar", "_lesser_scalar" },
    { "GreaterOrEqual", "broadcast_greater_equal", "_greater_equal_scalar",
      "_lesser_equal_scalar" },
    { "Less", "broadcast_lesser", "_lesser_scalar", "_greater_scalar" },
    { "LessOrEqual", "broadcast_lesser_equal", "_lesser_equal_scalar",
      "_greater_equal_scalar" },
  };
  guint m = 0;
  while (strcmp (map[m].onnx, onnx))
    m++;
  if (imp->node->n_input != 2)
    return hy_onnx_refuse (imp, error, "%zu inputs; two are supported",
        imp->node->n_input);
  hy_onnx_value *a = hy_onnx_input (imp, 0, error);
  hy_onnx_value *b = a ? hy_onnx_input (imp, 1, error) : NULL;
  if (!b)
    return FALSE;
  /* A one-value constant on either side is a scalar op: no weight, and
   * the passes fuse scalar chains (hard swish). */
  for (int side = 0; side < 2; side++) {
    hy_onnx_value *c = side ? a : b;
    hy_onnx_value *x = side ? b : a;
    if (c->is_const && !x->is_const && hy_shape_numel (&c->shape) == 1
        && c->shape.ndim <= 1) {
      hy_shape xs;
      if (!hy_onnx_input_shape (imp, side ? 1 : 0, &xs, error))
        return FALSE;
      if (xs.ndim < c->shape.ndim)
        break;
      hy_entry in;
      if (!hy_onnx_input_entry (imp, side ? 1 : 0, &in, error))
        return FALSE;
      g_autofree char *v = fmt_float (c->f[0]);
      return set_out (imp, hy_onnx_add_op (imp,
              side ? map[m].rscalar : map[m].scalar, &in, 1, error,
              "scalar", v, NULL));
    }
  }
  hy_entry in[2];
  if (!hy_onnx_input_entry (imp, 0, &in[0], error)
      || !hy_onnx_input_entry (imp, 1, &in[1], error))
    return FALSE;
  return set_out (imp, hy_onnx_add_op (imp, map[m].broadcast, in, 2, error,
          NULL));
}

static gboolean
import_clip (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  double lo = -FLT_MAX, hi = FLT_MAX;
  for (guint k = 1; k <= 2; k++) {
    if (!hy_onnx_input_name (imp, k))
      continue;
    hy_onnx_value *v = hy_onnx_input_const (imp, k, error);
    if (!v)
      return FALSE;
    if (hy_shape_numel (&v->shape) != 1)
      return hy_onnx_refuse (imp, error, "min and max must be scalars");
    *(k == 1 ? &lo : &hi) = v->f[0];
  }
  hy_entry in;
  if (!hy_onnx_input_entry (imp, 0, &in, error))
    return FALSE;
  g_autofree char *a = fmt_float (lo);
  g_autofree char *b = fmt_float (hi);
  return set_out (imp, hy_onnx_add_op (imp, "clip", &in, 1, error,
          "a_min", a, "a_max", b, NULL));
}

static gboolean
import_hard_sigmoid (hy_onnx_importer *imp, const onnx_op *op, GError **error)
{
  const gboolean swish = op->arg;
  hy_entry in[2];
  if (!hy_onnx_input_entry (imp, 0, &in[0], error))
    return FALSE;
  g_autofree char *a = fmt_float (swish ? 1.0 / 6.0
      : hy_onnx_attr_float (imp->node, "alpha", 0.2));
  g_autofree char *b = fmt_float (swish ? 0.5
      : hy_onnx_attr_float (imp->node, "beta", 0.5));
  in[1] = hy_onnx_add_op (imp, "hard_sigmoid", in, 1, error, "alpha", a,
      "beta", b, NULL);
  if (!swish || in[1].node == G_MAXUINT)
    return set_out (imp, in[1]);
  return set_out (imp, hy_onnx_add_op (imp, "elemwise_mul", in, 2, error,
          NULL));
}

static gboolean
import_leaky (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  hy_entry in;
  if (!hy_onnx_input_entry (imp, 0, &in, error))
    return FALSE;
  g_autofree char *s = fmt_float (hy_onnx_attr_float (imp->node, "alpha",
          0.01));
  return set_out (imp, hy_onnx_add_op (imp, "LeakyReLU", &in, 1, error,
          "act_type", "leaky", "slope", s, NULL));
}

/* ---- shapes ------------------------------------------------------------ */

/* Normalises axis values against `ndim`; FALSE when one is outside. */
static gboolean
normalize_axes (gint64 *axes, int n, int ndim)
{
  for (int i = 0; i < n; i++) {
    if (axes[i] < -ndim || axes[i] >= ndim)
      return FALSE;
    if (axes[i] < 0)
      axes[i] += ndim;
  }
  return TRUE;
}

/* The axes of Squeeze, Unsqueeze, Reduce*: an attribute before the
 * opset that made them input 1.  *n = -1 when absent. */
static gboolean
read_axes (hy_onnx_importer *imp, int input_from, gint64 *axes, int *n,
    GError **error)
{
  *n = -1;
  if (imp->opset >= input_from) {
    if (!hy_onnx_input_name (imp, 1))
      return TRUE;
    hy_onnx_value *v = hy_onnx_input_const (imp, 1, error);
    if (!v)
      return FALSE;
    if (!v->is_int || hy_shape_numel (&v->shape) > HY_MAX_DIMS)
      return hy_onnx_refuse (imp, error, "axes must be at most %d integers",
          HY_MAX_DIMS);
    *n = (int) hy_shape_numel (&v->shape);
    memcpy (axes, v->ints, *n * sizeof (gint64));
    return TRUE;
  }
  int na;
  const gint64 *a = hy_onnx_attr_ints (imp->node, "axes", &na);
  if (na > HY_MAX_DIMS)
    return hy_onnx_refuse (imp, error, "more than %d axes", HY_MAX_DIMS);
  if (na >= 0)
    memcpy (axes, a, na * sizeof (gint64));
  *n = na;
  return TRUE;
}

static gboolean
import_reshape (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  hy_onnx_value *shape = hy_onnx_input_const (imp, 1, error);
  hy_entry in;
  if (!shape || !hy_onnx_input_entry (imp, 0, &in, error))
    return FALSE;
  gint64 n = hy_shape_numel (&shape->shape);
  if (!shape->is_int || shape->shape.ndim != 1 || n > HY_MAX_DIMS)
    return hy_onnx_refuse (imp, error, "shape must be a 1-D integer constant of at "
        "most %d values", HY_MAX_DIMS);
  gboolean allowzero = hy_onnx_attr_int (imp->node, "allowzero", 0);
  for (gint64 i = 0; i < n; i++)
    if (shape->ints[i] < -1 || (allowzero && shape->ints[i] == 0))
      return hy_onnx_refuse (imp, error, "shape value %" G_GINT64_FORMAT " is not "
          "supported", shape->ints[i]);
  g_autofree char *s = hy_onnx_tuple (shape->ints, (int) n);
  return set_out (imp, hy_onnx_add_op (imp, "Reshape", &in, 1, error,
          "shape", s, NULL));
}

static gboolean
import_flatten (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  hy_entry in;
  hy_shape s;
  if (!hy_onnx_input_entry (imp, 0, &in, error)
      || !hy_onnx_input_shape (imp, 0, &s, error))
    return FALSE;
  gint64 axis = hy_onnx_attr_int (imp->node, "axis", 1);
  if (axis < -s.ndim || axis > s.ndim)
    return hy_onnx_refuse (imp, error, "axis %" G_GINT64_FORMAT " is outside the "
        "data's %d dimensions", axis, s.ndim);
  if (axis < 0)
    axis += s.ndim;
  if (axis == 1)
    return set_out (imp, hy_onnx_add_op (imp, "Flatten", &in, 1, error,
            NULL));
  gint64 outer = 1;
  for (int d = 0; d < axis; d++)
    outer *= s.dims[d];
  gint64 dims[2] = { outer, -1 };
  g_autofree char *t = hy_onnx_tuple (dims, 2);
  return set_out (imp, hy_onnx_add_op (imp, "Reshape", &in, 1, error,
          "shape", t, NULL));
}

static gboolean
import_transpose (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  hy_entry in;
  if (!hy_onnx_input_entry (imp, 0, &in, error))
    return FALSE;
  int n;
  const gint64 *perm = hy_onnx_attr_ints (imp->node, "perm", &n);
  if (n < 0)
    return set_out (imp, hy_onnx_add_op (imp, "transpose", &in, 1, error,
            NULL));
  if (n > HY_MAX_DIMS)
    return hy_onnx_refuse (imp, error, "perm of %d axes", n);
  g_autofree char *axes = hy_onnx_tuple (perm, n);
  return set_out (imp, hy_onnx_add_op (imp, "transpose", &in, 1, error,
          "axes", axes, NULL));
}

static gboolean
import_squeeze (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  gint64 axes[HY_MAX_DIMS];
  int n;
  hy_entry in;
  hy_shape s;
  if (!read_axes (imp, 13, axes, &n, error)
      || !hy_onnx_input_entry (imp, 0, &in, error)
      || !hy_onnx_input_shape (imp, 0, &s, error))
    return FALSE;
  if (n < 0)
    return set_out (imp, hy_onnx_add_op (imp, "squeeze", &in, 1, error,
            NULL));
  if (!normalize_axes (axes, n, s.ndim))
    return hy_onnx_refuse (imp, error, "an axis is outside the data's %d "
        "dimensions", s.ndim);
  g_autofree char *t = hy_onnx_tuple (axes, n);
  return set_out (imp, hy_onnx_add_op (imp, "squeeze", &in, 1, error,
          "axis", t, NULL));
}

static int
cmp_int64 (const void *a, const void *b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

static gboolean
import_unsqueeze (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  gint64 axes[HY_MAX_DIMS];
  int n;
  hy_entry in;
  hy_shape s;
  if (!read_axes (imp, 13, axes, &n, error)
      || !hy_onnx_input_entry (imp, 0, &in, error)
      || !hy_onnx_input_shape (imp, 0, &s, error))
    return FALSE;
  if (n < 1 || s.ndim + n > HY_MAX_DIMS
      || !normalize_axes (axes, n, s.ndim + n))
    return hy_onnx_refuse (imp, error, "axes do not fit the %d output dimensions",
        s.ndim + MAX (n, 0));
  /* Ascending, each inserted into the result so far: ONNX's meaning. */
  qsort (axes, n, sizeof *axes, cmp_int64);
  for (int i = 0; i < n; i++) {
    g_autofree char *a = g_strdup_printf ("%" G_GINT64_FORMAT, axes[i]);
    in = hy_onnx_add_op (imp, "expand_dims", &in, 1, error, "axis", a, NULL);
    if (in.node == G_MAXUINT)
      return FALSE;
  }
  return set_out (imp, in);
}

static gboolean
import_concat (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  guint n = (guint) imp->node->n_input;
  if (n < 1 || n > 4096)
    return hy_onnx_refuse (imp, error, "%u inputs", n);
  g_autofree hy_entry *in = g_new (hy_entry, n);
  for (guint k = 0; k < n; k++)
    if (!hy_onnx_input_entry (imp, k, &in[k], error))
      return FALSE;
  hy_shape s;
  if (!hy_onnx_input_shape (imp, 0, &s, error))
    return FALSE;
  gint64 axis = hy_onnx_attr_int (imp->node, "axis", 0);
  if (!normalize_axes (&axis, 1, s.ndim))
    return hy_onnx_refuse (imp, error, "axis %" G_GINT64_FORMAT " is outside the "
        "data's %d dimensions", axis, s.ndim);
  g_autofree char *d = g_strdup_printf ("%" G_GINT64_FORMAT, axis);
  g_autofree char *na = g_strdup_printf ("%u", n);
  return set_out (imp, hy_onnx_add_op (imp, "Concat", in, n, error, "dim", d,
          "num_args", na, NULL));
}

static gboolean
import_softmax (hy_onnx_importer *imp, const onnx_op *entry, GError **error)
{
  const char *op = entry->core;
  hy_entry in;
  hy_shape s;
  if (!hy_onnx_input_entry (imp, 0, &in, error)
      || !hy_onnx_input_shape (imp, 0, &s, error))
    return FALSE;
  gint64 axis = hy_onnx_attr_int (imp->node, "axis",
      imp->opset >= 13 ? -1 : 1);
  if (!normalize_axes (&axis, 1, s.ndim))
    return hy_onnx_refuse (imp, error, "axis %" G_GINT64_FORMAT " is outside the "
        "data's %d dimensions", axis, s.ndim);
  g_autofree char *a = g_strdup_printf ("%" G_GINT64_FORMAT, axis);
  if (imp->opset >= 13 || axis == s.ndim - 1)
    return set_out (imp, hy_onnx_add_op (imp, op, &in, 1, error, "axis", a,
            NULL));
  /* Before opset 13 the data is coerced to 2-D at `axis`: one softmax
   * over all the trailing axes together. */
  gint64 outer = 1;
  for (int d = 0; d < axis; d++)
    outer *= s.dims[d];
  gint64 flat[2] = { outer, -1 };
  g_autofree char *f = hy_onnx_tuple (flat, 2);
  g_autofree char *back = hy_onnx_tuple (s.dims, s.ndim);
  in = hy_onnx_add_op (imp, "Reshape", &in, 1, error, "shape", f, NULL);
  if (in.node != G_MAXUINT)
    in = hy_onnx_add_op (imp, op, &in, 1, error, "axis", "-1", NULL);
  if (in.node == G_MAXUINT)
    return FALSE;
  return set_out (imp, hy_onnx_add_op (imp, "Reshape", &in, 1, error,
          "shape", back, NULL));
}

static gboolean
import_shape (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  hy_shape s;
  if (!hy_onnx_input_shape (imp, 0, &s, error))
    return FALSE;
  gint64 start = hy_onnx_attr_int (imp->node, "start", 0);
  gint64 end = hy_onnx_attr_int (imp->node, "end", s.ndim);
  start = start < 0 ? MAX (start + s.ndim, 0) : MIN (start, s.ndim);
  end = end < 0 ? MAX (end + s.ndim, 0) : MIN (end, s.ndim);
  gint64 n = MAX (end - start, 0);
  gint64 *dims = g_new (gint64, MAX (n, 1));
  for (gint64 i = 0; i < n; i++)
    dims[i] = s.dims[start + i];
  hy_shape out = { .ndim = 1, .dims = { n } };
  hy_onnx_set_const (imp, 0, &out, NULL, dims);
  return TRUE;
}

static gboolean
import_constant (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  const Onnx__NodeProto *node = imp->node;
  const Onnx__AttributeProto *a;
  if ((a = hy_onnx_attr (node, "value")) && a->t) {
    hy_onnx_value v = { 0 };
    if (!hy_onnx_tensor_value (imp, a->t, &v, error))
      return FALSE;
    hy_onnx_set_const (imp, 0, &v.shape, v.f, v.ints);
    /* int8 or uint8 tells a quantized value's range (onnx-qdq.c) */
    hy_onnx_value *made = g_hash_table_lookup (imp->values, node->output[0]);
    if (made)
      made->dtype = v.dtype;
    return TRUE;
  }
  hy_shape scalar = { .ndim = 0 };
  if ((a = hy_onnx_attr (node, "value_float")) && a->has_f) {
    float *f = g_new (float, 1);
    f[0] = a->f;
    hy_onnx_set_const (imp, 0, &scalar, f, NULL);
    return TRUE;
  }
  if ((a = hy_onnx_attr (node, "value_int")) && a->has_i) {
    hy_onnx_set_const (imp, 0, &scalar, NULL, g_memdup2 (&a->i,
            sizeof (gint64)));
    return TRUE;
  }
  if ((a = hy_onnx_attr (node, "value_floats"))) {
    hy_shape s = { .ndim = 1, .dims = { (gint64) a->n_floats } };
    float *f = g_new (float, MAX (a->n_floats, 1));
    memcpy (f, a->floats, a->n_floats * sizeof (float));
    hy_onnx_set_const (imp, 0, &s, f, NULL);
    return TRUE;
  }
  if ((a = hy_onnx_attr (node, "value_ints"))) {
    hy_shape s = { .ndim = 1, .dims = { (gint64) a->n_ints } };
    hy_onnx_set_const (imp, 0, &s, NULL, g_memdup2 (a->ints,
            MAX (a->n_ints, 1) * sizeof (gint64)));
    return TRUE;
  }
  return hy_onnx_refuse (imp, error, "no value attribute this importer reads "
      "(value, value_float(s), value_int(s))");
}

/* Identity, Dropout (inference), Cast to float: the input, unchanged. */
static gboolean
import_alias (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  if (!strcmp (imp->node->op_type, "Cast")
      && hy_onnx_attr_int (imp->node, "to", 1) != 1)
    return hy_onnx_refuse (imp, error, "casting to type %" G_GINT64_FORMAT " is not "
        "supported (float only)", hy_onnx_attr_int (imp->node, "to", 1));
  for (guint k = 1; k < imp->node->n_output; k++)
    if (imp->node->output[k] && imp->node->output[k][0])
      return hy_onnx_refuse (imp, error, "output %u (a training mask) is not "
          "supported", k);
  hy_onnx_value *v = hy_onnx_input (imp, 0, error);
  if (!v)
    return FALSE;
  if (v->is_const) {
    gint64 n = MAX (hy_shape_numel (&v->shape), 1);
    hy_onnx_set_const (imp, 0, &v->shape,
        g_memdup2 (v->f, n * sizeof (float)),
        v->is_int ? g_memdup2 (v->ints, n * sizeof (gint64)) : NULL);
    return TRUE;
  }
  hy_onnx_set_output (imp, 0, v->entry);
  return TRUE;
}

static gboolean
import_reduce (hy_onnx_importer *imp, const onnx_op *entry, GError **error)
{
  const char *op = entry->core;
  /* The opset from which the axes come as an input, not an attribute. */
  const int axes_input_from = entry->arg;
  gint64 axes[HY_MAX_DIMS];
  int n;
  hy_entry in;
  hy_shape s;
  if (!read_axes (imp, axes_input_from, axes, &n, error)
      || !hy_onnx_input_entry (imp, 0, &in, error)
      || !hy_onnx_input_shape (imp, 0, &s, error))
    return FALSE;
  const char *keep = hy_onnx_attr_int (imp->node, "keepdims", 1)
      ? "True" : "False";
  if (n <= 0) {
    if (n == 0 && hy_onnx_attr_int (imp->node, "noop_with_empty_axes", 0))
      return set_out (imp, in);
    return set_out (imp, hy_onnx_add_op (imp, op, &in, 1, error,
            "keepdims", keep, NULL));
  }
  if (!normalize_axes (axes, n, s.ndim))
    return hy_onnx_refuse (imp, error, "an axis is outside the data's %d "
        "dimensions", s.ndim);
  g_autofree char *t = hy_onnx_tuple (axes, n);
  return set_out (imp, hy_onnx_add_op (imp, op, &in, 1, error, "axis", t,
          "keepdims", keep, NULL));
}

static gboolean
import_slice (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  hy_onnx_value *c[5] = { NULL };
  for (guint k = 1; k < 5; k++)
    if (hy_onnx_input_name (imp, k)
        && !(c[k] = hy_onnx_input_const (imp, k, error)))
      return FALSE;
  hy_entry in;
  hy_shape s;
  if (!c[1] || !c[2] || !hy_onnx_input_entry (imp, 0, &in, error)
      || !hy_onnx_input_shape (imp, 0, &s, error))
    return c[1] && c[2] ? FALSE : hy_onnx_refuse (imp, error, "starts and ends are "
        "required");
  gint64 n = hy_shape_numel (&c[1]->shape);
  for (guint k = 2; k < 5; k++)
    if (c[k] && (!c[k]->is_int || hy_shape_numel (&c[k]->shape) != n))
      return hy_onnx_refuse (imp, error, "starts, ends, axes and steps must be "
          "integer lists of one length");
  if (!c[1]->is_int || n > s.ndim)
    return hy_onnx_refuse (imp, error, "starts must be integers, one per axis at "
        "most");
  /* Every axis of the data spelled out; ONNX's huge "to the end" values
   * clamped to the dimension, which MXNet's slice then reads plainly. */
  gint64 begin[HY_MAX_DIMS], end[HY_MAX_DIMS], step[HY_MAX_DIMS];
  for (int d = 0; d < s.ndim; d++) {
    begin[d] = 0;
    end[d] = s.dims[d];
    step[d] = 1;
  }
  for (gint64 i = 0; i < n; i++) {
    gint64 axis = c[3] ? c[3]->ints[i] : i;
    if (!normalize_axes (&axis, 1, s.ndim))
      return hy_onnx_refuse (imp, error, "axis %" G_GINT64_FORMAT " is outside the "
          "data's %d dimensions", axis, s.ndim);
    gint64 dim = s.dims[axis], st = c[4] ? c[4]->ints[i] : 1;
    if (st == 0 || st < -dim - 1 || st > G_MAXINT32)
      return hy_onnx_refuse (imp, error, "step %" G_GINT64_FORMAT " is not "
          "supported", st);
    gint64 b = c[1]->ints[i], e = c[2]->ints[i];
    b = b < 0 ? MAX (b + dim, st > 0 ? 0 : -1) : b;
    e = e < 0 ? MAX (e + dim, st > 0 ? 0 : -1) : e;
    b = MIN (b, st > 0 ? dim : dim - 1);
    e = MIN (e, dim);
    if (st < 0 && (b < 0 || e >= b))
      return hy_onnx_refuse (imp, error, "an empty or reversed-to-nothing slice is "
          "not supported");
    begin[axis] = b;
    end[axis] = e;
    step[axis] = st;
  }
  GString *bs = g_string_new ("("), *es = g_string_new ("(");
  for (int d = 0; d < s.ndim; d++) {
    g_string_append_printf (bs, "%s%" G_GINT64_FORMAT, d ? ", " : "",
        begin[d]);
    if (end[d] < 0)
      g_string_append_printf (es, "%sNone", d ? ", " : "");
    else
      g_string_append_printf (es, "%s%" G_GINT64_FORMAT, d ? ", " : "",
          end[d]);
  }
  g_string_append (bs, s.ndim == 1 ? ",)" : ")");
  g_string_append (es, s.ndim == 1 ? ",)" : ")");
  g_autofree char *b = g_string_free (bs, FALSE);
  g_autofree char *e = g_string_free (es, FALSE);
  g_autofree char *st = hy_onnx_tuple (step, s.ndim);
  return set_out (imp, hy_onnx_add_op (imp, "slice", &in, 1, error,
          "begin", b, "end", e, "step", st, NULL));
}

static gboolean
import_split (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  hy_entry in;
  hy_shape s;
  if (!hy_onnx_input_entry (imp, 0, &in, error)
      || !hy_onnx_input_shape (imp, 0, &s, error))
    return FALSE;
  gint64 axis = hy_onnx_attr_int (imp->node, "axis", 0);
  if (!normalize_axes (&axis, 1, s.ndim))
    return hy_onnx_refuse (imp, error, "axis %" G_GINT64_FORMAT " is outside the "
        "data's %d dimensions", axis, s.ndim);
  guint parts = (guint) imp->node->n_output;
  if (parts < 1 || parts > 4096)
    return hy_onnx_refuse (imp, error, "%u outputs", parts);
  g_autofree gint64 *sizes = g_new (gint64, parts);
  int ns = -1;
  const gint64 *given = NULL;
  if (imp->opset >= 13 && hy_onnx_input_name (imp, 1)) {
    hy_onnx_value *v = hy_onnx_input_const (imp, 1, error);
    if (!v)
      return FALSE;
    ns = v->is_int ? (int) hy_shape_numel (&v->shape) : -2;
    given = v->ints;
  } else if (imp->opset < 13) {
    given = hy_onnx_attr_ints (imp->node, "split", &ns);
  }
  gint64 total = 0;
  for (guint i = 0; i < parts; i++) {
    sizes[i] = ns >= 0 ? (i < (guint) ns ? given[i] : -1)
        : (s.dims[axis] + parts - 1) / parts;
    if (ns < 0 && i == parts - 1)
      sizes[i] = s.dims[axis] - total;
    if (sizes[i] < 0 || sizes[i] > s.dims[axis] - total)
      return hy_onnx_refuse (imp, error, "split sizes do not add up to the axis's "
          "%" G_GINT64_FORMAT, s.dims[axis]);
    total += sizes[i];
  }
  if (ns >= 0 && ((guint) ns != parts || total != s.dims[axis]))
    return hy_onnx_refuse (imp, error, "split sizes do not add up to the axis's "
        "%" G_GINT64_FORMAT, s.dims[axis]);
  g_autofree char *a = g_strdup_printf ("%" G_GINT64_FORMAT, axis);
  gint64 begin = 0;
  for (guint i = 0; i < parts; i++) {
    g_autofree char *b = g_strdup_printf ("%" G_GINT64_FORMAT, begin);
    g_autofree char *e = g_strdup_printf ("%" G_GINT64_FORMAT,
        begin + sizes[i]);
    hy_entry out = hy_onnx_add_op (imp, "slice_axis", &in, 1, error, "axis",
        a, "begin", b, "end", e, NULL);
    if (out.node == G_MAXUINT)
      return FALSE;
    hy_onnx_set_output (imp, i, out);
    begin += sizes[i];
  }
  return TRUE;
}

static gboolean
import_pad (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  hy_onnx_word buf;
  const char *mode = hy_onnx_attr_string (imp->node, "mode", "constant",
      buf);
  if (strcmp (mode, "constant") && strcmp (mode, "edge")
      && strcmp (mode, "reflect"))
    return hy_onnx_refuse (imp, error, "mode '%s' is not supported", mode);
  hy_onnx_value *pads = hy_onnx_input_const (imp, 1, error);
  hy_entry in;
  hy_shape s;
  if (!pads || !hy_onnx_input_entry (imp, 0, &in, error)
      || !hy_onnx_input_shape (imp, 0, &s, error))
    return FALSE;
  double value = 0.0;
  if (hy_onnx_input_name (imp, 2)) {
    hy_onnx_value *v = hy_onnx_input_const (imp, 2, error);
    if (!v)
      return FALSE;
    value = hy_shape_numel (&v->shape) ? v->f[0] : 0.0;
  }
  if (hy_onnx_input_name (imp, 3))
    return hy_onnx_refuse (imp, error, "the axes input is not supported");
  if (!pads->is_int || hy_shape_numel (&pads->shape) != 2 * s.ndim
      || (s.ndim != 4 && s.ndim != 5))
    return hy_onnx_refuse (imp, error, "only 4-D and 5-D data with one begin and "
        "end pad per axis are supported");
  gint64 widths[2 * HY_MAX_DIMS];
  for (int d = 0; d < s.ndim; d++) {
    widths[2 * d] = pads->ints[d];
    widths[2 * d + 1] = pads->ints[s.ndim + d];
    if (widths[2 * d] < 0 || widths[2 * d + 1] < 0
        || widths[2 * d] > 65536 || widths[2 * d + 1] > 65536
        || (d < 2 && (widths[2 * d] || widths[2 * d + 1])))
      return hy_onnx_refuse (imp, error, "pads must be non-negative and leave the "
          "batch and channel axes alone");
  }
  g_autofree char *pw = hy_onnx_tuple (widths, 2 * s.ndim);
  g_autofree char *cv = fmt_float (value);
  return set_out (imp, hy_onnx_add_op (imp, "Pad", &in, 1, error, "mode",
          mode, "pad_width", pw, "constant_value", cv, NULL));
}

/* data[:axis] + indices + data[axis + 1:] from gather_nd: the gathered
 * axis moved first (gather_nd picks along leading axes, taking negative
 * indices as ONNX does), the picked axes moved back in its place. */
static hy_entry
add_gather (hy_onnx_importer *imp, hy_entry data, const hy_shape *s,
    int axis, hy_entry idx, const hy_shape *is, GError **error)
{
  const int out_ndim = is->ndim + s->ndim - 1;
  if (axis) {
    gint64 perm[HY_MAX_DIMS];
    perm[0] = axis;
    for (int d = 0, k = 1; d < s->ndim; d++)
      if (d != axis)
        perm[k++] = d;
    g_autofree char *t = hy_onnx_tuple (perm, s->ndim);
    data = hy_onnx_add_op (imp, "transpose", &data, 1, error, "axes", t,
        NULL);
    if (data.node == G_MAXUINT)
      return HY_ONNX_BAD_ENTRY;
  }
  hy_shape lead = { .ndim = is->ndim + 1 };
  lead.dims[0] = 1;
  memcpy (lead.dims + 1, is->dims, is->ndim * sizeof (gint64));
  g_autofree char *ls = hy_onnx_tuple (lead.dims, lead.ndim);
  idx = hy_onnx_add_op (imp, "Reshape", &idx, 1, error, "shape", ls, NULL);
  if (idx.node == G_MAXUINT)
    return HY_ONNX_BAD_ENTRY;
  hy_entry pair[2] = { data, idx };
  hy_entry out = hy_onnx_add_op (imp, "gather_nd", pair, 2, error, NULL);
  if (out.node == G_MAXUINT || !axis)
    return out;
  /* gather_nd gives indices + data[:axis] + data[axis + 1:]. */
  gint64 perm[HY_MAX_DIMS];
  int k = 0;
  for (int d = 0; d < axis; d++)
    perm[k++] = is->ndim + d;
  for (int d = 0; d < is->ndim; d++)
    perm[k++] = d;
  for (int d = is->ndim + axis; d < out_ndim; d++)
    perm[k++] = d;
  g_autofree char *t = hy_onnx_tuple (perm, out_ndim);
  return hy_onnx_add_op (imp, "transpose", &out, 1, error, "axes", t, NULL);
}

/* Gather on data (what is not shape arithmetic, folded before), with
 * add_gather; a scalar index is a slice_axis instead, as gather_nd wants
 * indices of rank >= 1. */
static gboolean
import_gather (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  hy_entry data, idx;
  hy_shape s, is;
  if (!hy_onnx_input_entry (imp, 0, &data, error)
      || !hy_onnx_input_shape (imp, 0, &s, error)
      || !hy_onnx_input_shape (imp, 1, &is, error))
    return FALSE;
  gint64 axis = hy_onnx_attr_int (imp->node, "axis", 0);
  if (s.ndim < 1 || !normalize_axes (&axis, 1, s.ndim))
    return hy_onnx_refuse (imp, error, "axis %" G_GINT64_FORMAT " is outside the "
        "data's %d dimensions", axis, s.ndim);
  /* gather_nd's indices take one axis more than Gather's */
  if (is.ndim + s.ndim - 1 > HY_MAX_DIMS || is.ndim + 1 > HY_MAX_DIMS)
    return hy_onnx_refuse (imp, error, "indices of %d and data of %d dimensions; "
        "at most %d are supported", is.ndim, s.ndim, HY_MAX_DIMS);
  const gint64 n = s.dims[axis];
  hy_onnx_value *iv = g_hash_table_lookup (imp->values,
      hy_onnx_input_name (imp, 1) ? hy_onnx_input_name (imp, 1) : "");
  if (iv && iv->is_const) {
    /* Checked here for an error naming the node, not at the forward. */
    gint64 numel = hy_shape_numel (&iv->shape);
    for (gint64 i = 0; i < numel; i++) {
      double v = iv->is_int ? (double) iv->ints[i] : iv->f[i];
      if (!(v >= -n && v < n) || v != floor (v))
        return hy_onnx_refuse (imp, error, "index %g is outside [-%" G_GINT64_FORMAT
            ", %" G_GINT64_FORMAT "] (axis %" G_GINT64_FORMAT ")", v, n,
            n - 1, axis);
    }
  }
  hy_shape os = { .ndim = is.ndim + s.ndim - 1 };
  for (int d = 0; d < axis; d++)
    os.dims[d] = s.dims[d];
  for (int d = 0; d < is.ndim; d++)
    os.dims[axis + d] = is.dims[d];
  for (int d = (int) axis + 1; d < s.ndim; d++)
    os.dims[is.ndim + d - 1] = s.dims[d];
  g_autofree char *out_shape = hy_onnx_tuple (os.dims, os.ndim);
  if (is.ndim == 0) {
    if (!iv || !iv->is_const)
      return hy_onnx_refuse (imp, error, "a scalar index must be a constant");
    gint64 i = iv->is_int ? iv->ints[0] : (gint64) iv->f[0];
    if (i < 0)
      i += n;
    g_autofree char *ax = g_strdup_printf ("%" G_GINT64_FORMAT, axis);
    g_autofree char *b = g_strdup_printf ("%" G_GINT64_FORMAT, i);
    g_autofree char *e = g_strdup_printf ("%" G_GINT64_FORMAT, i + 1);
    hy_entry one = hy_onnx_add_op (imp, "slice_axis", &data, 1, error,
        "axis", ax, "begin", b, "end", e, NULL);
    if (one.node == G_MAXUINT)
      return FALSE;
    return set_out (imp, hy_onnx_add_op (imp, "Reshape", &one, 1, error,
            "shape", out_shape, NULL));
  }
  if (!hy_onnx_input_entry (imp, 1, &idx, error))
    return FALSE;
  return set_out (imp, add_gather (imp, data, &s, (int) axis, idx, &is,
          error));
}

/* ---- Resize ------------------------------------------------------------
 * ONNX Resize as ONNX Runtime computes it (in float): per resized axis,
 * output index o maps to a source coordinate x by
 * coordinate_transformation_mode, then nearest rounds x by nearest_mode
 * and linear blends the two pixels around it (x clamped to [0, in - 1]).
 * Common cases become one kernel: UpSampling for whole nearest scales,
 * _contrib_BilinearResize2D for 2-D linear resizes whose coordinates it
 * computes the same way.  Anything else is spelled with the core's ops:
 * per axis a gather of the source rows (two for linear, blended with
 * constant weights), exact for every mode and any scale. */

/* 8 GiB of floats: more than any frame, little enough that hostile sizes
 * stop here. */
#define RESIZE_MAX_ELEMENTS ((gint64) 1 << 31)

typedef enum {
  COORD_HALF_PIXEL, COORD_PYTORCH_HALF_PIXEL, COORD_ALIGN_CORNERS,
  COORD_ASYMMETRIC, COORD_HALF_PIXEL_SYMMETRIC,
} resize_coord;

typedef enum {
  NEAREST_ROUND_PREFER_FLOOR, NEAREST_ROUND_PREFER_CEIL, NEAREST_FLOOR,
  NEAREST_CEIL,
} resize_nearest;

static const char *const coord_names[] = { "half_pixel",
  "pytorch_half_pixel", "align_corners", "asymmetric",
  "half_pixel_symmetric", NULL };
static const char *const nearest_names[] = { "round_prefer_floor",
  "round_prefer_ceil", "floor", "ceil", NULL };

static int
word_index (const char *const *names, const char *word)
{
  for (int i = 0; names[i]; i++)
    if (!strcmp (names[i], word))
      return i;
  return -1;
}

/* ONNX Runtime's float arithmetic, so that nearest picks its pixels even
 * where a coordinate lands on .5. */
static float
source_coord (resize_coord mode, float o, float scale, gint64 in,
    gint64 out)
{
  switch (mode) {
    case COORD_ASYMMETRIC:
      return o / scale;
    case COORD_ALIGN_CORNERS:
      return out == 1 ? 0.0f : o * (float) (in - 1) / (float) (out - 1);
    case COORD_PYTORCH_HALF_PIXEL:
      return out > 1 ? (o + 0.5f) / scale - 0.5f : 0.0f;
    case COORD_HALF_PIXEL_SYMMETRIC: {
      float adjustment = (float) out / (scale * (float) in);
      float center = (float) in / 2.0f;
      float offset = center * (1.0f - adjustment);
      return offset + (o + 0.5f) / scale - 0.5f;
    }
    case COORD_HALF_PIXEL:
    default:
      return (o + 0.5f) / scale - 0.5f;
  }
}

static gint64
nearest_index (resize_nearest mode, float x, gint64 in)
{
  double i;
  switch (mode) {
    case NEAREST_FLOOR: i = floorf (x); break;
    case NEAREST_CEIL: i = ceilf (x); break;
    case NEAREST_ROUND_PREFER_CEIL: i = roundf (x); break;
    case NEAREST_ROUND_PREFER_FLOOR:
    default:
      i = x == floorf (x) + 0.5f ? floorf (x) : roundf (x);
      break;
  }
  return (gint64) CLAMP (i, 0.0, (double) (in - 1));
}

/* A constant of `n` indices on its own axis, as a graph entry. */
static hy_entry
index_weight (hy_onnx_importer *imp, const gint64 *idx, gint64 n)
{
  float *f = g_new (float, n);
  for (gint64 i = 0; i < n; i++)
    f[i] = (float) idx[i];
  hy_shape s = { .ndim = 1, .dims = { n } };
  return hy_onnx_add_weight (imp, "resize_index", &s, f);
}

/* Resizes axis `axis` of `data` (shape *s, updated) to `out`. */
static hy_entry
resize_axis (hy_onnx_importer *imp, hy_entry data, hy_shape *s, int axis,
    gint64 out, float scale, gboolean linear, resize_coord coord,
    resize_nearest nearest, GError **error)
{
  const gint64 in = s->dims[axis];
  g_autofree gint64 *i0 = g_new (gint64, out);
  g_autofree gint64 *i1 = g_new (gint64, out);
  float *w0 = g_new (float, out), *w1 = g_new (float, out);
  gboolean blends = FALSE;
  for (gint64 o = 0; o < out; o++) {
    float x = source_coord (coord, (float) o, scale, in, out);
    if (!linear) {
      i0[o] = nearest_index (nearest, x, in);
      continue;
    }
    x = CLAMP (x, 0.0f, (float) (in - 1));
    i0[o] = (gint64) x;
    i1[o] = MIN (i0[o] + 1, in - 1);
    w1[o] = x - (float) i0[o];
    w0[o] = 1.0f - w1[o];
    blends |= w1[o] != 0.0f && i1[o] != i0[o];
  }
  hy_shape is = { .ndim = 1, .dims = { out } };
  hy_shape before = *s;
  s->dims[axis] = out;
  hy_entry a = add_gather (imp, data, &before, axis,
      index_weight (imp, i0, out), &is, error);
  if (!blends || a.node == G_MAXUINT) {
    g_free (w0);
    g_free (w1);
    return a;
  }
  hy_entry b = add_gather (imp, data, &before, axis,
      index_weight (imp, i1, out), &is, error);
  if (b.node == G_MAXUINT) {
    g_free (w0);
    g_free (w1);
    return b;
  }
  /* weights shaped to broadcast along `axis` only */
  hy_shape ws = { .ndim = s->ndim };
  for (int d = 0; d < s->ndim; d++)
    ws.dims[d] = d == axis ? out : 1;
  hy_entry pa[2] = { a, hy_onnx_add_weight (imp, "resize_weight", &ws, w0) };
  hy_entry pb[2] = { b, hy_onnx_add_weight (imp, "resize_weight", &ws, w1) };
  pa[0] = hy_onnx_add_op (imp, "broadcast_mul", pa, 2, error, NULL);
  if (pa[0].node == G_MAXUINT)
    return pa[0];
  pa[1] = hy_onnx_add_op (imp, "broadcast_mul", pb, 2, error, NULL);
  if (pa[1].node == G_MAXUINT)
    return pa[1];
  return hy_onnx_add_op (imp, "broadcast_add", pa, 2, error, NULL);
}

static gboolean
import_resize (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  hy_onnx_word mode_buf, ct_buf, nm_buf, kp_buf;
  const char *mode = hy_onnx_attr_string (imp->node, "mode", "nearest",
      mode_buf);
  const char *ct = hy_onnx_attr_string (imp->node,
      "coordinate_transformation_mode", "half_pixel", ct_buf);
  const char *nm = hy_onnx_attr_string (imp->node, "nearest_mode",
      "round_prefer_floor", nm_buf);
  gboolean linear = !strcmp (mode, "linear");
  if (!linear && strcmp (mode, "nearest"))
    return hy_onnx_refuse (imp, error, "mode '%s' is not supported (nearest, "
        "linear)", mode);
  int coord = word_index (coord_names, ct);
  if (coord < 0)
    return hy_onnx_refuse (imp, error, "coordinate_transformation_mode '%s' is not "
        "supported (half_pixel, pytorch_half_pixel, align_corners, "
        "asymmetric, half_pixel_symmetric)", ct);
  int nearest = word_index (nearest_names, nm);
  if (!linear && nearest < 0)
    return hy_onnx_refuse (imp, error, "nearest_mode '%s' is not supported", nm);
  int n_axes;
  hy_onnx_attr_ints (imp->node, "axes", &n_axes);
  if (n_axes >= 0 || hy_onnx_attr_int (imp->node, "antialias", 0)
      || strcmp (hy_onnx_attr_string (imp->node, "keep_aspect_ratio_policy",
              "stretch", kp_buf), "stretch"))
    return hy_onnx_refuse (imp, error, "`axes`, `antialias` and "
        "`keep_aspect_ratio_policy` are not supported");
  hy_entry in;
  hy_shape s;
  if (!hy_onnx_input_entry (imp, 0, &in, error)
      || !hy_onnx_input_shape (imp, 0, &s, error))
    return FALSE;
  gint64 out[HY_MAX_DIMS];
  float scale[HY_MAX_DIMS];
  if (hy_onnx_input_name (imp, 3)) {
    hy_onnx_value *sz = hy_onnx_input_const (imp, 3, error);
    if (!sz)
      return FALSE;
    if (!sz->is_int || hy_shape_numel (&sz->shape) != s.ndim)
      return hy_onnx_refuse (imp, error, "sizes must be %d integers", s.ndim);
    for (int d = 0; d < s.ndim; d++) {
      out[d] = sz->ints[d];
      if (out[d] < 1 || out[d] > 1 << 20)
        return hy_onnx_refuse (imp, error, "size %" G_GINT64_FORMAT " of axis %d",
            out[d], d);
      scale[d] = (float) out[d] / (float) s.dims[d];
    }
  } else if (hy_onnx_input_name (imp, 2)) {
    hy_onnx_value *sc = hy_onnx_input_const (imp, 2, error);
    if (!sc)
      return FALSE;
    if (hy_shape_numel (&sc->shape) != s.ndim)
      return hy_onnx_refuse (imp, error, "scales must be %d values", s.ndim);
    for (int d = 0; d < s.ndim; d++) {
      scale[d] = sc->f[d];
      /* ONNX Runtime's truncation of the float product; checked before
       * the conversion, which is undefined out of range. */
      float o = (float) s.dims[d] * scale[d];
      if (!(scale[d] > 0 && o >= 1 && o <= 1 << 20))
        return hy_onnx_refuse (imp, error, "scale %g of axis %d gives an output of "
            "%g", scale[d], d, o);
      out[d] = (gint64) o;
    }
  } else {
    return hy_onnx_refuse (imp, error, "neither scales nor sizes given");
  }
  /* Each axis is bounded above; their product must be too, before shape
   * inference multiplies them. */
  gint64 numel = 1;
  for (int d = 0; d < s.ndim; d++) {
    if (s.dims[d] < 1)
      return hy_onnx_refuse (imp, error, "axis %d of the data is empty", d);
    if (out[d] > (RESIZE_MAX_ELEMENTS) / numel)
      return hy_onnx_refuse (imp, error, "the output would have more than %"
          G_GINT64_FORMAT " elements", (gint64) RESIZE_MAX_ELEMENTS);
    numel *= out[d];
  }
  /* UpSampling: one whole nearest scale on H and W of NCHW, where it
   * picks floor(o / scale) as asymmetric + floor and half_pixel + round
   * do. */
  gboolean nchw_only = s.ndim == 4 && out[0] == s.dims[0]
      && out[1] == s.dims[1];
  if (!linear && nchw_only && out[2] % s.dims[2] == 0
      && out[3] % s.dims[3] == 0 && out[2] / s.dims[2] == out[3] / s.dims[3]
      && scale[2] == (float) (out[2] / s.dims[2]) && scale[3] == scale[2]
      && ((coord == COORD_ASYMMETRIC && nearest == NEAREST_FLOOR)
          || (coord == COORD_HALF_PIXEL && nearest
              <= NEAREST_ROUND_PREFER_CEIL))) {
    g_autofree char *sc = g_strdup_printf ("%" G_GINT64_FORMAT,
        out[2] / s.dims[2]);
    return set_out (imp, hy_onnx_add_op (imp, "UpSampling", &in, 1, error,
            "scale", sc, "sample_type", "nearest", "num_args", "1", NULL));
  }
  /* _contrib_BilinearResize2D: half-pixel (clamped at 0) or corner-aligned
   * coordinates from in/out, which are ONNX's when the scale is out/in. */
  if (linear && nchw_only && out[2] > 1 && out[3] > 1
      && out[2] <= 10000 && out[3] <= 10000
      && scale[2] == (float) out[2] / (float) s.dims[2]
      && scale[3] == (float) out[3] / (float) s.dims[3]
      && (coord == COORD_HALF_PIXEL || coord == COORD_PYTORCH_HALF_PIXEL
          || coord == COORD_ALIGN_CORNERS)) {
    g_autofree char *h = g_strdup_printf ("%" G_GINT64_FORMAT, out[2]);
    g_autofree char *w = g_strdup_printf ("%" G_GINT64_FORMAT, out[3]);
    return set_out (imp, hy_onnx_add_op (imp, "_contrib_BilinearResize2D",
            &in, 1, error, "height", h, "width", w, "align_corners",
            coord == COORD_ALIGN_CORNERS ? "True" : "False", NULL));
  }
  for (int d = 0; d < s.ndim; d++) {
    if (out[d] == s.dims[d] && scale[d] == 1.0f)
      continue;
    in = resize_axis (imp, in, &s, d, out[d], scale[d], linear, coord,
        nearest, error);
    if (in.node == G_MAXUINT)
      return FALSE;
  }
  if (in.node == G_MAXUINT)
    return FALSE;
  return set_out (imp, in);
}

/* TopK with a constant k: MXNet's topk returning both values and
 * indices (as floats, which is how the core carries every index). */
static gboolean
import_topk (hy_onnx_importer *imp, const onnx_op *op G_GNUC_UNUSED,
    GError **error)
{
  hy_entry in;
  hy_shape s;
  if (!hy_onnx_input_entry (imp, 0, &in, error)
      || !hy_onnx_input_shape (imp, 0, &s, error))
    return FALSE;
  hy_onnx_value *kv = hy_onnx_input_const (imp, 1, error);
  if (!kv)
    return FALSE;
  if (!kv->is_int || hy_shape_numel (&kv->shape) != 1)
    return hy_onnx_refuse (imp, error, "K must be one integer");
  gint64 axis = hy_onnx_attr_int (imp->node, "axis", -1);
  if (s.ndim < 1 || !normalize_axes (&axis, 1, s.ndim))
    return hy_onnx_refuse (imp, error, "axis %" G_GINT64_FORMAT " is outside the "
        "data's %d dimensions", axis, s.ndim);
  gint64 k = kv->ints[0];
  if (k < 1 || k > s.dims[axis])
    return hy_onnx_refuse (imp, error, "K = %" G_GINT64_FORMAT " is not in [1, %"
        G_GINT64_FORMAT "] (the size of axis %" G_GINT64_FORMAT ")", k,
        s.dims[axis], axis);
  gboolean largest = hy_onnx_attr_int (imp->node, "largest", 1) != 0;
  g_autofree char *ax = g_strdup_printf ("%" G_GINT64_FORMAT, axis);
  g_autofree char *ks = g_strdup_printf ("%" G_GINT64_FORMAT, k);
  hy_entry out = hy_onnx_add_op (imp, "topk", &in, 1, error, "axis", ax,
      "k", ks, "ret_typ", "both", "is_ascend", largest ? "False" : "True",
      NULL);
  if (out.node == G_MAXUINT)
    return FALSE;
  hy_onnx_set_output (imp, 0, out);
  hy_onnx_set_output (imp, 1, (hy_entry) { out.node, 1 });
  return TRUE;
}

/* QuantizeLinear (arg 0) and DequantizeLinear (arg 1): onnx-qdq.c. */
static gboolean
import_qdq (hy_onnx_importer *imp, const onnx_op *op, GError **error)
{
  return op->arg ? hy_onnx_import_dequantize_linear (imp, error)
      : hy_onnx_import_quantize_linear (imp, error);
}

/* The ops of core/io/onnx-select.c. */
static gboolean
import_select (hy_onnx_importer *imp, const onnx_op *op, GError **error)
{
  return hy_onnx_import_select (imp, op->name, op->core, error);
}

/* Sorted by name but for the block of onnx-select.c's ops at the end:
 * the refusal lists them sorted. */
static const onnx_op ops[] = {
  { "Add", import_binary, NULL, 0, "broadcast_add",
    "numpy broadcasting; a one-value constant operand becomes a scalar "
    "op" },
  { "AveragePool", import_pool, "avg", 0, "Pooling",
    "`ceil_mode`, `count_include_pad`, `auto_pad`; asymmetric pads as a "
    "`Pad` (not for AveragePool with `count_include_pad=0`); dilations 1" },
  { "BatchNormalization", import_batch_norm, NULL, 0, "BatchNorm",
    "inference only (`training_mode=0`)" },
  { "Cast", import_alias, NULL, 0, "nothing",
    "to float only" },
  { "Clip", import_clip, NULL, 0, "clip",
    "`min`/`max` must be constants" },
  { "Concat", import_concat, NULL, 0, "Concat",
    "" },
  { "Constant", import_constant, NULL, 0, "a weight, or a folded value",
    "`value`, `value_float(s)`, `value_int(s)`" },
  { "Conv", import_conv, NULL, FALSE, "Convolution",
    "1-D to 3-D; `auto_pad` (NOTSET, VALID, SAME_UPPER, SAME_LOWER), "
    "`pads`, `group`, `dilations`, `strides`; asymmetric padding of 2-D and "
    "3-D data becomes a `Pad` before" },
  { "ConvTranspose", import_conv, NULL, TRUE, "Deconvolution",
    "symmetric explicit `pads`, `output_padding`, `group`; no "
    "`output_shape`" },
  { "DequantizeLinear", import_qdq, NULL, 1,
    "a folded weight, or _hy_quantize_dequantize",
    "of a constant (int8, uint8, int32): folded into float weights; of a "
    "QuantizeLinear with the same scale and zero point: the pair as one "
    "float op; per tensor or per axis (opset 13)" },
  { "Div", import_binary, NULL, 0, "broadcast_div",
    "numpy broadcasting; a one-value constant operand becomes a scalar "
    "op" },
  { "Dropout", import_alias, NULL, 0, "nothing",
    "" },
  { "Exp", import_unary, "exp", 0, "exp",
    "" },
  { "Flatten", import_flatten, NULL, 0, "Flatten / Reshape",
    "any axis" },
  { "Gather", import_gather, NULL, 0, "gather_nd (+ transpose), slice_axis",
    "any axis, negative indices; on shape values folded at load" },
  { "Gemm", import_gemm, NULL, 0, "FullyConnected",
    "`transA=0`, constant B and C; `transB`, `alpha`, `beta` applied to the "
    "weights at load" },
  { "GlobalAveragePool", import_global_pool, "avg", 0, "Pooling (global)",
    "" },
  { "GlobalMaxPool", import_global_pool, "max", 0, "Pooling (global)",
    "" },
  { "HardSigmoid", import_hard_sigmoid, NULL, FALSE, "hard_sigmoid",
    "" },
  { "HardSwish", import_hard_sigmoid, NULL, TRUE, "hard_sigmoid × x",
    "" },
  { "Identity", import_alias, NULL, 0, "nothing",
    "" },
  { "LeakyRelu", import_leaky, NULL, 0, "LeakyReLU",
    "" },
  { "Log", import_unary, "log", 0, "log",
    "" },
  { "LogSoftmax", import_softmax, "log_softmax", 0, "softmax, log_softmax",
    "opset < 13's coercion to 2-D at `axis` kept" },
  { "MatMul", import_matmul, NULL, 0, "FullyConnected / dot / batch_dot",
    "a constant 2-D B, or two 2-D or two 3-D operands" },
  { "Max", import_binary, NULL, 0, "broadcast_maximum",
    "numpy broadcasting; a one-value constant operand becomes a scalar "
    "op" },
  { "MaxPool", import_pool, "max", 0, "Pooling",
    "`ceil_mode`, `count_include_pad`, `auto_pad`; asymmetric pads as a "
    "`Pad` (not for AveragePool with `count_include_pad=0`); dilations 1" },
  { "Min", import_binary, NULL, 0, "broadcast_minimum",
    "numpy broadcasting; a one-value constant operand becomes a scalar "
    "op" },
  { "Mul", import_binary, NULL, 0, "broadcast_mul",
    "numpy broadcasting; a one-value constant operand becomes a scalar "
    "op" },
  { "Pad", import_pad, NULL, 0, "Pad",
    "4-D and 5-D data, spatial axes only; constant, edge, reflect" },
  { "Pow", import_binary, NULL, 0, "broadcast_power",
    "numpy broadcasting; a one-value constant operand becomes a scalar "
    "op" },
  { "QuantizeLinear", import_qdq, NULL, 0,
    "nothing, until its DequantizeLinear",
    "int8 or uint8 (the zero point's type), per tensor or per axis "
    "(opset 13); constant scale and zero point; no `block_size`, "
    "`output_dtype` (opset 21); its integers are read only by a "
    "DequantizeLinear" },
  { "ReduceMax", import_reduce, "max", 18, "mean, sum, max, min",
    "axes as attribute or input, `keepdims`, `noop_with_empty_axes`" },
  { "ReduceMean", import_reduce, "mean", 18, "mean, sum, max, min",
    "axes as attribute or input, `keepdims`, `noop_with_empty_axes`" },
  { "ReduceMin", import_reduce, "min", 18, "mean, sum, max, min",
    "axes as attribute or input, `keepdims`, `noop_with_empty_axes`" },
  { "ReduceSum", import_reduce, "sum", 13, "mean, sum, max, min",
    "axes as attribute or input, `keepdims`, `noop_with_empty_axes`" },
  { "Relu", import_unary, "relu", 0, "relu",
    "" },
  { "Reshape", import_reshape, NULL, 0, "Reshape",
    "the shape must be constant or folded; `allowzero=1` with a 0 refused" },
  { "Resize", import_resize, NULL, 0,
    "UpSampling, _contrib_BilinearResize2D, or gather_nd and a blend",
    "nearest (every `nearest_mode`) and linear, any axes; "
    "`coordinate_transformation_mode` half_pixel, pytorch_half_pixel, "
    "align_corners, asymmetric, half_pixel_symmetric; constant scales or "
    "sizes; no `axes`, `antialias`, `keep_aspect_ratio_policy`" },
  { "Shape", import_shape, NULL, 0, "folded",
    "its values folded into what reads them" },
  { "Sigmoid", import_unary, "sigmoid", 0, "sigmoid",
    "" },
  { "Slice", import_slice, NULL, 0, "slice",
    "constant starts/ends/axes/steps, negative steps" },
  { "Softmax", import_softmax, "softmax", 0, "softmax, log_softmax",
    "opset < 13's coercion to 2-D at `axis` kept" },
  { "Split", import_split, NULL, 0, "slice_axis per output",
    "equal parts or constant sizes" },
  { "Sqrt", import_unary, "sqrt", 0, "sqrt",
    "" },
  { "Squeeze", import_squeeze, NULL, 0, "squeeze, expand_dims",
    "axes as attribute (opset < 13) or constant input" },
  { "Sub", import_binary, NULL, 0, "broadcast_sub",
    "numpy broadcasting; a one-value constant operand becomes a scalar "
    "op" },
  { "Tanh", import_unary, "tanh", 0, "tanh",
    "" },
  { "TopK", import_topk, NULL, 0, "topk",
    "constant `K`, any `axis`, `largest`; always sorted; indices as floats; "
    "equal values may come in another order than ONNX Runtime's" },
  { "Transpose", import_transpose, NULL, 0, "transpose",
    "" },
  { "Unsqueeze", import_unsqueeze, NULL, 0, "squeeze, expand_dims",
    "axes as attribute (opset < 13) or constant input" },
  /* onnx-select.c: comparing, picking and scattering values */
  { "ArgMax", import_select, "argmax", 0, "argmax",
    "any `axis`, `keepdims`, `select_last_index` (as `reverse`, then the "
    "index counted back); indices as floats" },
  { "ArgMin", import_select, "argmin", 0, "argmin",
    "any `axis`, `keepdims`, `select_last_index` (as `reverse`, then the "
    "index counted back); indices as floats" },
  { "Equal", import_binary, NULL, 0, "broadcast_equal",
    "numpy broadcasting; booleans as floats 0 and 1; a one-value constant "
    "operand becomes a scalar op" },
  { "Expand", import_select, NULL, 0, "Reshape, broadcast_axis",
    "a constant shape" },
  { "GatherND", import_select, NULL, 0, "gather_nd (+ transpose)",
    "`batch_dims` (a constant of the batch coordinates before the indices), "
    "negative indices" },
  { "Greater", import_binary, NULL, 0, "broadcast_greater",
    "numpy broadcasting; booleans as floats 0 and 1; a one-value constant "
    "operand becomes a scalar op" },
  { "GreaterOrEqual", import_binary, NULL, 0, "broadcast_greater_equal",
    "numpy broadcasting; booleans as floats 0 and 1; a one-value constant "
    "operand becomes a scalar op" },
  { "Less", import_binary, NULL, 0, "broadcast_lesser",
    "numpy broadcasting; booleans as floats 0 and 1; a one-value constant "
    "operand becomes a scalar op" },
  { "LessOrEqual", import_binary, NULL, 0, "broadcast_lesser_equal",
    "numpy broadcasting; booleans as floats 0 and 1; a one-value constant "
    "operand becomes a scalar op" },
  { "ScatterND", import_select, NULL, 0, "gather_nd, where (or Reshape)",
    "constant indices, `reduction` none; a gather of the updates by a map "
    "made at load" },
  { "Where", import_select, NULL, 0, "where (+ broadcast_axis)",
    "numpy broadcasting of the three operands; any nonzero condition is "
    "true" },
};

static const onnx_op *
find_op (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (ops); i++)
    if (!strcmp (ops[i].name, name))
      return &ops[i];
  return NULL;
}

static int
cmp_names (const void *a, const void *b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

char *
hy_onnx_supported_ops (void)
{
  const char *names[G_N_ELEMENTS (ops)];
  for (gsize i = 0; i < G_N_ELEMENTS (ops); i++)
    names[i] = ops[i].name;
  qsort (names, G_N_ELEMENTS (ops), sizeof names[0], cmp_names);
  GString *list = g_string_new (NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (ops); i++)
    g_string_append_printf (list, "%s%s", i ? ", " : "", names[i]);
  return g_string_free (list, FALSE);
}

gboolean
hy_onnx_import_node (hy_onnx_importer *imp, GError **error)
{
  const Onnx__NodeProto *node = imp->node;
  const char *op = node->op_type ? node->op_type : "";
  imp->n_made = 0;
  if (!node->op_type) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: node '%s' has no op_type", imp->source,
        node->name ? node->name : "");
    return FALSE;
  }
  if (node->n_output < 1 || !node->output[0] || !node->output[0][0]) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: node '%s' (%s) has no output", imp->source,
        node->name ? node->name : "", op);
    return FALSE;
  }
  /* ONNX graphs are in SSA form: a value defined twice (or a node
   * writing its own input) is corrupt, and would free a value in use. */
  for (size_t k = 0; k < node->n_output; k++)
    if (node->output[k] && node->output[k][0]
        && g_hash_table_contains (imp->values, node->output[k])) {
      g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
          "%s: node '%s' (%s): value '%s' is already defined before it",
          imp->source, HY_ONNX_NODE_NAME (imp), op, node->output[k]);
      return FALSE;
    }
  if (node->domain && node->domain[0] && strcmp (node->domain, "ai.onnx"))
    return hy_onnx_refuse (imp, error, "domain '%s' is not supported (only the "
        "default ai.onnx)", node->domain);
  /* before folding: a tail value has no static shape to fold with */
  if (hy_onnx_tail_takes (imp))
    return hy_onnx_tail_add (imp, error);
  gboolean folded;
  if (!hy_onnx_fold_ints (imp, &folded, error))
    return FALSE;
  if (folded)
    return TRUE;
  const onnx_op *entry = find_op (op);
  if (entry)
    return entry->import (imp, entry, error);
  g_autofree char *known = hy_onnx_supported_ops ();
  return hy_onnx_refuse (imp, error, "op '%s' (opset %d) is not supported (these "
      "are: %s)", op, imp->opset, known);
}

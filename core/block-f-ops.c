/*
 * block-f-ops.c — F's typed wrappers: the common ops with C arguments,
 * spelled into the attribute strings MXNet writes (Python's spellings:
 * "True", "(2, 2)", "1e-05") so that traced graphs export as Gluon's do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/block-impl.h"

/* Python's repr of a float, which MXNet attributes use: the shortest
 * string that reads back the same ("1e-05", "0.5").  Always with a '.'
 * whatever LC_NUMERIC says (an application in a comma-decimal locale must
 * still write what MXNet and attrs.c read): g_ascii_* both ways. */
void
hy_F_format_double (double v, char *buf, size_t size)
{
  for (int precision = 1; precision <= 17; precision++) {
    char format[8];
    snprintf (format, sizeof format, "%%.%dg", precision);
    g_ascii_formatd (buf, (int) size, format, v);
    if (g_ascii_strtod (buf, NULL) == v)
      break;
  }
  if (!strpbrk (buf, ".eEin"))
    g_strlcat (buf, ".0", size);
}

static const char *
py_bool (gboolean b)
{
  return b ? "True" : "False";
}

static hy_value *
unary (hy_F *F, const char *op, hy_value *x)
{
  return hy_F_op (F, op, &x, 1, NULL);
}

hy_value *
hy_F_relu (hy_F *F, hy_value *x)
{
  return unary (F, "relu", x);
}

hy_value *
hy_F_sigmoid (hy_F *F, hy_value *x)
{
  return unary (F, "sigmoid", x);
}

hy_value *
hy_F_tanh (hy_F *F, hy_value *x)
{
  return unary (F, "tanh", x);
}

hy_value *
hy_F_exp (hy_F *F, hy_value *x)
{
  return unary (F, "exp", x);
}

hy_value *
hy_F_identity (hy_F *F, hy_value *x)
{
  return unary (F, "identity", x);
}

hy_value *
hy_F_activation (hy_F *F, hy_value *x, const char *act_type)
{
  return hy_F_op (F, "Activation", &x, 1, "act_type", act_type, NULL);
}

hy_value *
hy_F_softmax (hy_F *F, hy_value *x, int axis)
{
  char a[16];
  snprintf (a, sizeof a, "%d", axis);
  return hy_F_op (F, "softmax", &x, 1, "axis", a, NULL);
}

static hy_value *
binary (hy_F *F, const char *op, hy_value *a, hy_value *b)
{
  hy_value *in[2] = { a, b };
  return hy_F_op (F, op, in, 2, NULL);
}

hy_value *
hy_F_elemwise_add (hy_F *F, hy_value *a, hy_value *b)
{
  return binary (F, "elemwise_add", a, b);
}

hy_value *
hy_F_elemwise_sub (hy_F *F, hy_value *a, hy_value *b)
{
  return binary (F, "elemwise_sub", a, b);
}

hy_value *
hy_F_elemwise_mul (hy_F *F, hy_value *a, hy_value *b)
{
  return binary (F, "elemwise_mul", a, b);
}

hy_value *
hy_F_elemwise_div (hy_F *F, hy_value *a, hy_value *b)
{
  return binary (F, "elemwise_div", a, b);
}

hy_value *
hy_F_broadcast_add (hy_F *F, hy_value *a, hy_value *b)
{
  return binary (F, "broadcast_add", a, b);
}

hy_value *
hy_F_broadcast_sub (hy_F *F, hy_value *a, hy_value *b)
{
  return binary (F, "broadcast_sub", a, b);
}

hy_value *
hy_F_broadcast_mul (hy_F *F, hy_value *a, hy_value *b)
{
  return binary (F, "broadcast_mul", a, b);
}

hy_value *
hy_F_broadcast_div (hy_F *F, hy_value *a, hy_value *b)
{
  return binary (F, "broadcast_div", a, b);
}

static hy_value *
with_scalar (hy_F *F, const char *op, hy_value *x, double scalar)
{
  char s[40];
  hy_F_format_double (scalar, s, sizeof s);
  return hy_F_op (F, op, &x, 1, "scalar", s, NULL);
}

hy_value *
hy_F_plus_scalar (hy_F *F, hy_value *x, double scalar)
{
  return with_scalar (F, "_plus_scalar", x, scalar);
}

hy_value *
hy_F_mul_scalar (hy_F *F, hy_value *x, double scalar)
{
  return with_scalar (F, "_mul_scalar", x, scalar);
}

hy_value *
hy_F_dot (hy_F *F, hy_value *a, hy_value *b, gboolean transpose_a,
    gboolean transpose_b)
{
  hy_value *in[2] = { a, b };
  /* MXNet writes only what differs from the defaults. */
  const char *attrs[5] = { NULL };
  int n = 0;
  if (transpose_a) {
    attrs[n++] = "transpose_a";
    attrs[n++] = "True";
  }
  if (transpose_b) {
    attrs[n++] = "transpose_b";
    attrs[n++] = "True";
  }
  return hy_F_op_array (F, "dot", in, 2, attrs);
}

/* "(0, -1)"; "(6,)" for one entry, as Python writes tuples. */
static char *
format_tuple (int n, const int64_t *v)
{
  GString *s = g_string_new ("(");
  for (int i = 0; i < n; i++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? ", " : "",
        (gint64) v[i]);
  g_string_append (s, n == 1 ? ",)" : ")");
  return g_string_free (s, FALSE);
}

hy_value *
hy_F_reshape (hy_F *F, hy_value *x, int ndim, const int64_t *dims)
{
  g_autofree char *shape = format_tuple (ndim, dims);
  return hy_F_op (F, "Reshape", &x, 1, "shape", shape, NULL);
}

hy_value *
hy_F_flatten (hy_F *F, hy_value *x)
{
  return unary (F, "Flatten", x);
}

hy_value *
hy_F_slice_axis (hy_F *F, hy_value *x, int axis, int64_t begin, int64_t end)
{
  char a[16], b[32], e[32];
  snprintf (a, sizeof a, "%d", axis);
  snprintf (b, sizeof b, "%" G_GINT64_FORMAT, (gint64) begin);
  snprintf (e, sizeof e, "%" G_GINT64_FORMAT, (gint64) end);
  return hy_F_op (F, "slice_axis", &x, 1, "axis", a, "begin", b, "end", e,
      NULL);
}

hy_value *
hy_F_concat (hy_F *F, hy_value *const *values, int n, int dim)
{
  char num[16], d[16];
  snprintf (num, sizeof num, "%d", n);
  snprintf (d, sizeof d, "%d", dim);
  return hy_F_op (F, "Concat", values, n, "dim", d, "num_args", num, NULL);
}

hy_value *
hy_F_fully_connected (hy_F *F, hy_value *x, hy_value *weight, hy_value *bias,
    int64_t num_hidden, gboolean flatten)
{
  hy_value *in[3] = { x, weight, bias };
  char hidden[32];
  snprintf (hidden, sizeof hidden, "%" G_GINT64_FORMAT, (gint64) num_hidden);
  return hy_F_op (F, "FullyConnected", in, bias ? 3 : 2, "flatten",
      py_bool (flatten), "no_bias", py_bool (!bias), "num_hidden", hidden,
      NULL);
}

static void
square_tuple (int v, char *buf, size_t size)
{
  snprintf (buf, size, "(%d, %d)", v, v);
}

hy_value *
hy_F_convolution (hy_F *F, hy_value *x, hy_value *weight, hy_value *bias,
    int64_t num_filter, int kernel, int stride, int pad)
{
  hy_value *in[3] = { x, weight, bias };
  char k[40], s[40], p[40], filters[32];
  square_tuple (kernel, k, sizeof k);
  square_tuple (stride, s, sizeof s);
  square_tuple (pad, p, sizeof p);
  snprintf (filters, sizeof filters, "%" G_GINT64_FORMAT, (gint64) num_filter);
  return hy_F_op (F, "Convolution", in, bias ? 3 : 2, "kernel", k,
      "stride", s, "pad", p, "num_filter", filters, "no_bias",
      py_bool (!bias), NULL);
}

hy_value *
hy_F_pooling (hy_F *F, hy_value *x, const char *pool_type, int kernel,
    int stride, int pad, gboolean global)
{
  char k[40], s[40], p[40];
  square_tuple (global ? 1 : kernel, k, sizeof k);
  square_tuple (global ? 1 : stride, s, sizeof s);
  square_tuple (global ? 0 : pad, p, sizeof p);
  return hy_F_op (F, "Pooling", &x, 1, "kernel", k, "stride", s, "pad", p,
      "pool_type", pool_type, "global_pool", py_bool (global), NULL);
}

hy_value *
hy_F_batch_norm (hy_F *F, hy_value *x, hy_value *gamma, hy_value *beta,
    hy_value *running_mean, hy_value *running_var, double eps, int axis)
{
  hy_value *in[5] = { x, gamma, beta, running_mean, running_var };
  char e[40], a[16];
  hy_F_format_double (eps, e, sizeof e);
  snprintf (a, sizeof a, "%d", axis);
  return hy_F_op (F, "BatchNorm", in, 5, "eps", e, "axis", a, "fix_gamma",
      "False", NULL);
}

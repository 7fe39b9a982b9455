/*
 * reduce.c — sum, mean, max, min, prod and argmax, argmin: attributes and
 * shapes.
 *
 * MXNet 1.9.1 (legacy, non-numpy mode) rules: `axis` is an int, a tuple,
 * or absent/None for every axis; `exclude` reduces the axes not listed;
 * `keepdims` leaves reduced axes as 1.  A result with no axes left has
 * shape (1,), never a 0-d scalar.  argmax/argmin take one axis, or None
 * for the index into the flattened array.
 */
#include "hybrid.h"
#include "core/op.h"
#include "kernels/params/elementwise.h"

static const char *const data_input[] = { "data", NULL };

/* A result that lost every axis is (1,) in MXNet 1.x. */
static void
at_least_1d (hy_shape *s)
{
  if (s->ndim == 0)
    *s = (hy_shape) { .ndim = 1, .dims = { 1 } };
}

/* ---- sum, mean, max, min, prod ----------------------------------------- */

static gboolean
reduce_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_reduce_params *p = params;
  gboolean keepdims, exclude;
  if (!hy_attr_bool (attrs, "keepdims", FALSE, &keepdims, error)
      || !hy_attr_bool (attrs, "exclude", FALSE, &exclude, error))
    return FALSE;
  p->keepdims = keepdims;
  p->exclude = exclude;

  const char *axis = hy_attr_string (attrs, "axis");
  g_autofree char *stripped = axis ? g_strstrip (g_strdup (axis)) : NULL;
  if (!axis || g_strcmp0 (stripped, "None") == 0) {
    p->all = TRUE;
    return TRUE;
  }
  hy_tuple t = { 0 };
  if (!hy_attr_tuple (attrs, "axis", &t, FALSE, error))
    return FALSE;
  if (t.n > HY_MAX_DIMS) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'axis' = '%s' lists %d axes; tensors have at most %d",
        axis, t.n, HY_MAX_DIMS);
    return FALSE;
  }
  for (int i = 0; i < t.n; i++) {
    if (t.v[i] < -HY_MAX_DIMS || t.v[i] >= HY_MAX_DIMS) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute 'axis' = '%s': axis %" G_GINT64_FORMAT " is out of "
          "range for tensors of at most %d dimensions", axis,
          (gint64) t.v[i], HY_MAX_DIMS);
      return FALSE;
    }
    p->axes[i] = (int) t.v[i];
  }
  p->n_axes = t.n;
  return TRUE;
}

static char *
format_axes (const hy_reduce_params *p)
{
  GString *s = g_string_new ("(");
  for (int i = 0; i < p->n_axes; i++)
    g_string_append_printf (s, i ? ", %d" : "%d", p->axes[i]);
  g_string_append (s, p->n_axes == 1 ? ",)" : ")");
  return g_string_free (s, FALSE);
}

static gboolean
reduce_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_reduce_params *p = params;
  const hy_shape *d = &in[0];
  uint32_t mask = 0;
  hy_reduce_axes_status status = hy_reduce_axes_mask (p, d->ndim, &mask);
  if (status != HY_REDUCE_AXES_OK) {
    char buf[HY_SHAPE_STRLEN];
    g_autofree char *axes = format_axes (p);
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        status == HY_REDUCE_AXES_DUPLICATE
        ? "attribute 'axis' = %s names the same axis twice (input shape %s)"
        : "attribute 'axis' = %s is out of range for input shape %s",
        axes, hy_shape_format (d, buf, sizeof buf));
    return FALSE;
  }
  hy_shape o = { .ndim = 0 };
  for (int i = 0; i < d->ndim; i++) {
    if (!(mask & (1u << i)))
      o.dims[o.ndim++] = d->dims[i];
    else if (p->keepdims)
      o.dims[o.ndim++] = 1;
  }
  at_least_1d (&o);
  out[0] = o;
  return TRUE;
}

/* Integer data keeps its dtype: sums wrap, a mean truncates. */
static gboolean
reduce_dtype (void *params, const hy_dtype *in, int n_in, hy_dtype *out,
    int n_out, GError **error)
{
  hy_reduce_params *p = params;
  p->int_dtype = hy_dtype_is_integer (in[0]) ? in[0] : HY_DTYPE_FLOAT32;
  out[0] = in[0];
  return TRUE;
}

const hy_op_def hy_opdef_reduce = {
  .params_size = sizeof (hy_reduce_params),
  .parse = reduce_parse,
  .input_names = data_input,
  .infer_shape = reduce_infer,
  .infer_dtype = reduce_dtype,
};

/* ---- argmax, argmin ---------------------------------------------------- */

static gboolean
arg_reduce_parse (GHashTable *attrs, void *params, GError **error)
{
  hy_arg_reduce_params *p = params;
  int64_t axis;
  gboolean none, keepdims;
  if (!hy_attr_opt_int (attrs, "axis", 0, &axis, &none, error)
      || !hy_attr_bool (attrs, "keepdims", FALSE, &keepdims, error))
    return FALSE;
  /* MXNet's default axis is None: absent means flattened too. */
  p->flatten = none || !hy_attr_has (attrs, "axis");
  if (!p->flatten && (axis < -HY_MAX_DIMS || axis >= HY_MAX_DIMS)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'axis' = '%s' is out of range for tensors of at most %d "
        "dimensions", hy_attr_string (attrs, "axis"), HY_MAX_DIMS);
    return FALSE;
  }
  p->axis = (int) axis;
  p->keepdims = keepdims;
  return TRUE;
}

static gboolean
arg_reduce_infer (const void *params, const hy_shape *in, int n_in,
    hy_shape *out, int n_out, GError **error)
{
  const hy_arg_reduce_params *p = params;
  const hy_shape *d = &in[0];
  hy_shape o = { .ndim = 0 };
  if (p->flatten) {
    if (p->keepdims) {
      o.ndim = d->ndim;
      for (int i = 0; i < d->ndim; i++)
        o.dims[i] = 1;
    }
  } else {
    int axis;
    if (!hy_axis_normalize (p->axis, d->ndim, &axis)) {
      char buf[HY_SHAPE_STRLEN];
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "attribute 'axis' = %d is out of range for input shape %s "
          "(expected %d to %d)", p->axis, hy_shape_format (d, buf, sizeof buf),
          -d->ndim, d->ndim - 1);
      return FALSE;
    }
    for (int i = 0; i < d->ndim; i++) {
      if (i != axis)
        o.dims[o.ndim++] = d->dims[i];
      else if (p->keepdims)
        o.dims[o.ndim++] = 1;
    }
  }
  at_least_1d (&o);
  out[0] = o;
  return TRUE;
}

const hy_op_def hy_opdef_arg_reduce = {
  .params_size = sizeof (hy_arg_reduce_params),
  .parse = arg_reduce_parse,
  .input_names = data_input,
  .infer_shape = arg_reduce_infer,
  .infer_dtype = hy_dtype_like_data,
};
